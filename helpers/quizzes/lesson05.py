"""Lesson 05, why the nonlinearity: check your understanding."""
from helpers.quiz import Choice, Numeric, Option, Quiz

QUIZ = Quiz("05", [
    Numeric(
        "narrowest",
        "Five layers without an activation have widths 8 -> 32 -> 2 -> 32 -> 8 (random weights). Collapsed into "
        "one 8 x 8 matrix, what is that matrix's rank?",
        2,
        why="A product has at most the rank of its narrowest factor: every token is squeezed through the 2-wide "
            "layer, whatever the wider layers do (the lesson printed rank 2).",
        wrong={
            8: "8 is the matrix's size, not its rank. The rank counts the independent directions its outputs can "
               "take, and every token passes through all five layers on the way: which of them leaves it the "
               "fewest directions?",
            32: "The widest layer does not set the rank; the narrowest does. A product cannot have more rank than "
                "any of its factors.",
        },
        low="Too small: the random weights are full rank, so nothing narrows the map below its narrowest layer.",
        high="Too large: a product cannot have more rank than its narrowest layer.",
    ),
    Choice(
        "residual",
        "96 residual blocks x + FFN(x), with the FFN's activation removed. What is the whole stack?",
        [
            Option("One affine map, x M + c",
                   "Right: each block is x (I + W1 W2) + (b1 W2 + b2), an affine map, and affine maps compose "
                   "into one.", correct=True),
            Option("A nonlinear map, because the skip connections add x back",
                   "Adding x is adding the identity map, which is linear: x + x W1 W2 = x (I + W1 W2)."),
            Option("Linear only if the biases are zero",
                   "Biases make each block affine instead of linear, and affine maps still compose into one "
                   "affine map: one matrix and one bias."),
            Option("One map only if all 96 blocks have the same weights",
                   "The blocks may all differ: folding two affine maps gives one, whatever their weights, so "
                   "folding 96 gives one too."),
        ],
    ),
    Choice(
        "corner-sum",
        "Why can no affine map f(x) = x . w + b output 1 on (A, B, C) = (1, 1, 0) and 0 on the other seven "
        "inputs?",
        [
            Option("A corner sum of four outputs is 0 for every affine map, and 1 for the target",
                   "Right: in f(1,1,0) - f(1,0,0) - f(0,1,0) + f(0,0,0) every weight and the bias cancel, so no "
                   "choice of w and b reaches the target's 1. The proof uses only inputs with C = 0: 'A and B' alone is already out of reach.",
                   correct=True),
            Option("C would need an infinitely negative weight to cancel A and B on the input (1, 1, 1)",
                   "C is not the problem: the proof uses only the four inputs with C = 0. A finite negative "
                   "weight for C is fine once there is a threshold, as in the detector you built."),
            Option("Even its best fit, (A + B - C) / 4, leaves a total squared error of 0.5",
                   "That is the size of the best fit's error, a consequence, not the reason. The reason holds for "
                   "every affine map, fitted or not: the corner sum, which is always 0."),
            Option("It has only four parameters, too few to set eight required outputs exactly",
                   "Counting does not decide it: four parameters fit many eight-output targets exactly (any "
                   "affine one, such as A + B - C). This target fails for a specific reason, its corner sum, and "
                   "what an affine map lacks is a way to let A and B interact (a ReLU FFN with one unit does it "
                   "with six parameters)."),
        ],
    ),
    Choice(
        "attention",
        "A stack of attention-only blocks (softmax attention with residuals, no FFN, no layer norm). Is it one "
        "linear map of the tokens?",
        [
            Option("Yes: attention averages value vectors, and an average is linear",
                   "Only while the averaging weights are held fixed. Real attention computes them as a softmax of "
                   "scores from the tokens themselves, so the map is not linear in the tokens (the lesson's "
                   "check: f(3 X) differs from 3 f(X))."),
            Option("No: its weights are a softmax of scores computed from the tokens",
                   "Right: attention is nonlinear in the tokens because its weights depend on them. With the "
                   "weights held fixed, a stack of such blocks would collapse to one linear map, which is why the "
                   "lesson's claim is the narrow one.",
                   correct=True),
            Option("Yes, once it has several heads whose outputs are added",
                   "Heads do not change this: each head's weights are a softmax of its own scores, computed from "
                   "the tokens, and adding nonlinear maps gives a nonlinear map."),
            Option("No, but only because the residual connections add x back",
                   "Residuals add the identity, which is linear; with fixed weights the residual stack collapsed "
                   "in the lesson's check. The softmax of token-dependent scores is what breaks linearity."),
        ],
    ),
])
