"""Lesson 01's questions: what a hidden unit detects, a one-unit trace, where a unit's pattern sits, and how
wide the hidden layer is."""
from helpers.quiz import Choice, Numeric, Option, Quiz

QUIZ = Quiz("01", [
    Choice("detects-sum",
           "A hidden unit has the pattern [1, 1] and bias 0. For which token does it fire?", [
               Option("x = [-1, -1]",
                      "Its two numbers are equal, but z = -1 - 1 = -2 < 0, so the unit is silent. The pattern "
                      "[1, 1] does not detect \"x1 and x2 agree\": it detects x1 + x2 > 0."),
               Option("x = [2, -1]", "z = 2 + (-1) = 1 > 0: the unit fires. It fires whenever x1 + x2 > 0.",
                      correct=True),
               Option("x = [1, -1]",
                      "z = 1 + (-1) = 0, and relu(0) = 0: a unit at exactly zero is silent."),
               Option("x = [-3, 2]", "z = -3 + 2 = -1 < 0: silent. ReLU sets a negative pre-activation to 0."),
           ]),
    Numeric("one-unit",
            "A hidden unit's pattern (its column of W1) is [2, -1] and its bias is 0.5. For the token "
            "x = [1, 3], what is its hidden value h = relu(z)?",
            answer=0.0, tolerance=1e-9,
            why="z = 2·1 + (-1)·3 + 0.5 = -0.5, and relu(-0.5) = 0: the unit is silent.",
            wrong={-0.5: "That is z, the pre-activation. h = relu(z) turns a negative z into exactly 0.",
                   5.5: "That drops the minus sign of the pattern (2·1 + 1·3 + 0.5), or pairs the weights with "
                        "the wrong inputs (-1·1 + 2·3 + 0.5): the -1 multiplies x2 = 3.",
                   -1.0: "That is the dot product alone: add the bias 0.5 to get z, then apply ReLU."},
            low="h = relu(z) is never negative.",
            high="Work it out term by term: 2·1, then (-1)·3, then the bias, then ReLU."),
    Choice("pattern-where",
           "In this lesson's convention, z = x W1 + b1 with W1 of shape (d, d_ff). Where is hidden unit k's "
           "pattern?", [
               Option("Row k of W1",
                      "That is the other convention, W x, where W1 has shape (d_ff, d). Here row i holds input "
                      "i's weights to every unit, and reading it as a pattern is the transpose mistake."),
               Option("Column k of W1",
                      "z_k = x · W1[:, k] + b1_k: unit k multiplies the token by column k.", correct=True),
               Option("The entry W1[k][k]",
                      "A pattern has one weight per number of the token, d of them, not a single entry."),
               Option("Row k of W2",
                      "Row k of W2 is what unit k writes into the output when it fires, not the pattern it looks "
                      "for in the input."),
           ]),
    Numeric("gpt2-width",
            "GPT-2 small's tokens have d = 768 numbers. How many hidden units does each of its FFNs have?",
            answer=3072, tolerance=0.5,
            why="GPT-2 expands by 4, as the original Transformer did: d_ff = 4 · 768 = 3,072.",
            wrong={768.0: "That is the token's width, which the output has again. The hidden layer in between is "
                          "wider: the FFN expands first.",
                   2048.0: "That is the original Transformer's d_ff, for its d = 512 (4 · 512).",
                   1536.0: "That is 2 · 768. GPT-2 expands by 4, not 2.",
                   4.0: "That is the expansion factor, not the number of hidden units."},
            low="The hidden layer is wider than the token: more than 768.",
            high="GPT-2 expands by a factor of 4."),
])
