"""Lesson 02's questions: where a row starts in a flat list, which matrix has stride H, which test finds the
square trap, and what a ReLU after W2 prevents."""
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

D, H, ROW = 4, 16, 3           # question 1: W2 is D x H; where row ROW starts

QUIZ = Quiz("02", [
    Numeric("row-start",
            "W2 is D x H, stored as one flat row-major list, with D = 4 and H = 16. At which index of the list "
            "does row 3 of W2 start (rows and indices counted from 0)?",
            answer=ROW * H,
            whole=True,
            why="Each row of W2 holds H = 16 numbers, so row 3 starts after three full rows: 3 · 16 = 48.",
            wrong={ROW * D: "That is 3 · D, the one-stride bug: W2's rows are H numbers long, not D.",
                   ROW: "That is the row's number, not its position: three full rows come before it.",
                   (ROW + 1) * H: "That is 4 · 16, where row 4 would start; rows count from 0.",
                   ROW * H + ROW: "That is 3 · 16 + 3, element (3, 3): the row starts at column 0.",
                   (ROW - 1) * H: "That is 2 · 16, where row 2 starts: counting rows from 1 makes row 3 the third "
                                  "row, but here rows count from 0, so three full rows come before it.",
                   ROW * H - 1: "That is the last index of row 2; row 3 starts at the next index.",
                   ROW * H + 1: "That counts indices from 1. A Python list's first index is 0."},
            slips=[Slip(lambda v: f"That is where row {v / H:.0f} starts ({v / H:.0f} · 16): the stride is right; "
                                  "count again which row the question asks for, from 0.",
                        test=lambda v: v > 0 and v % H == 0 and v != ROW * H, shown="another multiple of H = 16"),
                   Slip("An index is a whole number: where a row starts is a count of the numbers stored before "
                        "it.", test=lambda v: v != round(v), shown="a number that is not whole")],
            low="Too small: three full rows of W2 come before row 3, each with one weight per hidden unit.",
            high="Too large: row 3 starts right after rows 0, 1 and 2, and no further in."),
    Choice("stride-h",
           "In this lesson's convention (W1 is H x D, W2 is D x H, both flat row-major), whose rows are H "
           "numbers long, so that row k starts at k * H?", [
               Option("W1's", "W1 has H rows of D numbers each: its stride is D, the token's width."),
               Option("W2's", "W2 has D rows of H numbers each, one weight per hidden unit: its stride is H.",
                      correct=True),
               Option("Both", "Only when H = D, the square case, and that is exactly why square tests hide the "
                              "one-stride bug."),
               Option("Neither: the stride of a flat list is always 1",
                      "1 is the step from one column to the next; the stride that finds a row is the row's "
                      "length."),
           ]),
    Choice("square-trap",
           "A forward pass finds row k of W2 at k * D instead of k * H. Which single test case catches it?", [
               Option("Lesson 01's 2 x 2 trace",
                      "There D = H = 2, so k * D equals k * H; the trace's symmetric W1 and identity W2 hide "
                      "more mistakes still."),
               Option("A hundred random networks with D = H = 8",
                      "However many, square cases never catch it: with D = H the two strides are the same "
                      "number."),
               Option("A network with D = 2 and H = 3",
                      "With H > D every index stays inside W2, so it returns wrong numbers from row 1 on, which "
                      "the comparison catches.", correct=True),
               Option("A network with D = 1 and H = 5",
                      "With D = 1, W2 has a single row, which starts at 0 whatever the stride: the bug passes "
                      "(the lesson counted these shapes)."),
           ]),
    Choice("clamp",
           "What would a ReLU after W2 (on the FFN's output) prevent?", [
               Option("Any coordinate of x + FFN(x) from going down",
                      "Every update would be >= 0, so the residual could only raise coordinates: the lesson "
                      "counted 0 of 8,000 pushed down.", correct=True),
               Option("Hidden units from firing",
                      "The hidden units come before W2; a ReLU after it changes only the output."),
               Option("The output from having the token's width",
                      "A ReLU keeps the width; what it removes is the sign."),
               Option("Nothing: it only makes the FFN more nonlinear",
                      "It removes every negative update, which is how the FFN weakens or undoes what earlier "
                      "layers wrote into x."),
           ]),
])
