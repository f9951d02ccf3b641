"""Lesson 08's questions: sums over tokens, relu'(0), dead units, reading a gradient check."""
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

T, D, DY = 5, 3, (3.0, 2.0, -1.0)                 # question 1: T tokens, each with this dy row
DB2 = tuple(T * g for g in DY)                    # dy.sum(axis=0)

QUIZ = Quiz("08", [
    Numeric("db2-sum",
            "A batch of T = 5 tokens reaches an FFN whose output has d = 3 entries, and every token's dy row is "
            "[3, 2, -1]. What is db2[1], the gradient of the second output bias?",
            DB2[1],
            why="b2 is added to every token's output, so each token adds its dy to db2: db2 = dy.sum(axis=0) = "
                "5 x [3, 2, -1], and db2[1] = 10.",
            wrong={DY[1]: "That is one token's dy, and also the mean over the 5 identical rows. The bias is "
                          "shared by all 5 tokens: its gradient sums their rows, dy.sum(axis=0), not their mean.",
                   DY[1] / T: "That divides by T. The gradient of a shared parameter is a sum over tokens; if the "
                              "loss is a mean, its 1/T is already inside dy.",
                   DB2[0]: "That is db2[0], the first output bias: indices count from 0, so db2[1] is the second "
                           "entry.",
                   T: "That counts the tokens: each token adds its own dy[1] to db2[1], not 1.",
                   T * sum(DY): "That sums every entry of dy, over the tokens and the outputs (dy.sum()); db2 keeps "
                                "one entry per output: dy.sum(axis=0).",
                   -DB2[1]: "The sign: b2 is added to the output, so each token adds its dy to db2 as it is.",
                   DB2[2]: "That is db2[2], the third entry: indices count from 0, so db2[1] is the second.",
                   sum(DY): "That sums one token's row over the outputs (dy.sum(axis=1)); db2 sums over the "
                            "tokens, one entry per output: dy.sum(axis=0).",
                   DY[1] * T * D: "That multiplies by the number of outputs as well; db2[1] gathers dy[1] from "
                                  "each token, and from nothing else."},
            slips=[Slip("A sum of whole numbers is whole: db2[1] adds up dy[1] = 2 from each token.",
                        test=lambda v: v != round(v), shown="a number that is not whole")],
            low="Too small: b2 is shared by all 5 tokens, and each adds its dy[1] = 2.",
            high="Too large: 5 tokens each add dy[1] = 2 to db2[1], nothing more."),
    Choice("relu-at-zero",
           "In lesson 01's trace, unit 0 has z = 0 exactly. With relu'(0) = 0, as PyTorch takes it, what "
           "gradient reaches that unit's bias b1[0]?", [
               Option("0: the unit passes no gradient back",
                      "With relu'(0) = 0, dz = dh * relu'(z) is 0 for this unit, so db1[0] = 0 whatever dh is "
                      "(and the unit's column of dW1 is 0 too).", correct=True),
               Option("dh[0], as for a unit that fired",
                      "That takes relu'(0) = 1, the slope from the right (a mask z >= 0). The question fixes the "
                      "other convention, PyTorch's: what does it make dz for this unit?"),
               Option("dh[0] / 2, the average of the slopes on either side",
                      "That is what a central difference measures at the corner, half of each one-sided slope; "
                      "it is why gradient checks avoid z = 0. A backward pass does not average the two sides: "
                      "it uses the one value relu'(0) that it is given."),
               Option("Undefined, so the backward pass raises an error",
                      "ReLU has no derivative at 0, but frameworks do not fail there: they pick a value by "
                      "convention, and the question says which one PyTorch picks."),
           ]),
    Choice("dead-unit",
           "A ReLU unit's pre-activation z is at most 0 for every training input. What does plain SGD do to "
           "its column of W1 and its bias from then on?", [
               Option("Nothing: their gradient is exactly 0 for every batch, so the unit stays off for good",
                      "relu'(z) = 0 wherever z <= 0, so dz is 0 in that column for every token, and so are "
                      "its dW1 column and db1 entry. Only a change of the inputs could revive it.",
                      correct=True),
               Option("It pushes the unit's bias up, a little at each step, until the unit fires again",
                      "What would push it? SGD moves the bias by its gradient, and that gradient passes through "
                      "relu'(z) for every input: what is relu'(z) where z <= 0?"),
               Option("It shrinks W2's row for the unit to 0, which revives the unit",
                      "W2's row gets gradient h^T dy, and h = 0 for this unit, so it stops changing too; and "
                      "W2 does not decide whether the unit fires anyway, W1 and b1 do."),
               Option("The same as with GELU: a small gradient that slowly brings it back",
                      "That is GELU's and SiLU's advantage: their slope below 0 is not 0 (positive just below 0, "
                      "negative further out), so an off unit still gets gradient. Compare ReLU's slope below 0."),
           ]),
    Choice("gradient-check",
           "Your backward pass and a central-difference check disagree on dW1 by a relative error of 0.3, and "
           "agree on dW2 and db2 to 1e-11. Where is the bug most likely?", [
               Option("On the path from dh down: dh, the mask, or dW1 itself",
                      "dW2 and db2 only need h and dy, and they agree; dW1 needs dh = dy @ W2.T and the mask "
                      "as well, so the bug is on that part of the path.", correct=True),
               Option("In the forward pass",
                      "A slip in how your backward pass recomputes z or h would change h, and dW2 = h.T @ dy "
                      "would disagree too; it agrees to 1e-11. (The central differences run the course's own "
                      "forward pass, so they cannot share your slip.)"),
               Option("Nowhere: 0.3 is ordinary rounding",
                      "Rounding in float64 gives errors near 1e-10 here, as dW2 and db2 show. 0.3 is a wrong "
                      "formula."),
               Option("In the central difference: it is unreliable for matrices",
                      "It nudges one entry at a time and works for any shape; it only misleads at a kink, "
                      "where z is within eps of 0."),
           ]),
])
