"""Lesson 01's questions: what a hidden unit detects, a one-unit trace, where a unit's pattern sits, and how
wide the hidden layer is."""
from helpers.models import GPT2_SMALL, VASWANI_BASE
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

# Question 2's unit, and GPT-2 small's widths: every slip below is worked out from these.
W, B, X = (2, -1), 0.5, (1, 3)
Z = W[0] * X[0] + W[1] * X[1] + B           # -0.5


def relu(z):
    return max(z, 0.0)


D, D_FF = GPT2_SMALL["d"], GPT2_SMALL["d_ff"]

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
            answer=relu(Z), tolerance=1e-9,
            why="z = 2·1 + (-1)·3 + 0.5 = -0.5, and relu(-0.5) = 0: the unit is silent.",
            wrong={Z: "That is z, the pre-activation. h = relu(z) turns a negative z into exactly 0.",
                   W[0] * X[0] + -W[1] * X[1] + B: "That drops the minus sign of the pattern (2·1 + 1·3 + 0.5), "
                                                  "or pairs the weights with the wrong inputs (-1·1 + 2·3 + 0.5): "
                                                  "the -1 multiplies x2 = 3.",
                   W[0] * X[0] + W[1] * X[1]: "That is the dot product alone: add the bias 0.5 to get z, then "
                                              "apply ReLU.",
                   abs(Z): "That is |z|: ReLU does not flip a negative z to positive, it sets it to 0.",
                   W[0] * X[0] + W[1] * X[1] - B: "That subtracts the bias: z = x · w + b adds it."},
            low="h = relu(z) is never negative: ReLU sets a negative z to 0 and passes a positive one.",
            high="A positive h means the unit fires, so z would be positive. Work z out term by term: 2·1, then "
                 "(-1)·3, then the bias; its sign decides."),
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
            answer=D_FF,
            whole=True,
            why="GPT-2 expands by 4, as the original Transformer did: d_ff = 4 · 768 = 3,072.",
            wrong={D: "That is the token's width, which the output has again. The hidden layer in between is "
                      "wider: the FFN expands first.",
                   VASWANI_BASE["d_ff"]: "That is the original Transformer's d_ff, for its d = 512 (4 · 512).",
                   2 * D: "That is 2 · 768: a whole multiple of the token's width, as it should be, but GPT-2 takes "
                          "its factor from the original Transformer (d = 512, d_ff = 2,048).",
                   D_FF // D: "That is the expansion factor, not the number of hidden units.",
                   3 * D: "That is 3 · 768, the width of GPT-2's fused query, key and value projection (c_attn) "
                          "in attention, not of the FFN's hidden layer.",
                   8 * D: "That is 8 · 768, the hidden layer counted once per matrix: W1 and W2 meet the same "
                          "hidden units, so count them once.",
                   GPT2_SMALL["context"]: "That is GPT-2's context length, the most tokens it reads at once, "
                                          "not the width of a token's hidden layer.",
                   GPT2_SMALL["n_layers"] * D_FF: "That counts the hidden units of all 12 blocks' FFNs; the "
                                                  "question asks for one FFN."},
            slips=[Slip("Fewer hidden units than the token's 768 numbers: the FFN first expands the token, then "
                        "projects it back, so its hidden layer is wider than 768.",
                        test=lambda v: 0 < v < D, shown="a number below 768"),
                   Slip(lambda v: f"GPT-2's hidden width is the token's width times a whole expansion factor, so "
                                  f"it is a multiple of 768; {v:,.10g} is not. Which factor does GPT-2 use?",
                        test=lambda v: v > D and v % D != 0, shown="a number above 768 that is not a multiple of it"),
                   Slip(lambda v: f"That is {v / D:.0f} · 768: a whole factor times the token's width, as it "
                                  "should be, but not GPT-2's factor, which it took from the original "
                                  "Transformer.",
                        test=lambda v: v > D and v % D == 0 and v != D_FF, shown="another multiple of 768")],
            low="The hidden layer is wider than the token: more than 768.",
            high="Too large: GPT-2 takes its expansion factor from the original Transformer (d = 512, "
                 "d_ff = 2,048)."),
])
