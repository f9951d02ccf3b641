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
            8: "8 is the matrix's size, not its rank. Every token passes through the layer of width 2, so the "
               "outputs span at most 2 directions.",
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
            Option("For every affine map f(1,1,0) - f(1,0,0) - f(0,1,0) + f(0,0,0) = 0, and the target gives 1",
                   "Right: the corner sum cancels every weight and the bias, so no choice of w and b reaches the "
                   "target's 1. 'A and B' alone is already out of reach.", correct=True),
            Option("Because C would need an infinite negative weight",
                   "C is not the problem: the proof uses only inputs with C = 0. A finite negative weight for C "
                   "is fine once there is a threshold."),
            Option("Because the best affine fit has a total squared error of 0.5",
                   "That is the size of the best fit's error, a consequence, not the reason. The reason is the "
                   "corner sum, which is 0 for every affine map."),
            Option("Because an affine map cannot have three inputs",
                   "It can have any number of inputs; what it cannot do is let two of them interact, as 'A and B' "
                   "requires."),
        ],
    ),
    Choice(
        "attention",
        "A stack of attention-only blocks (softmax attention with residuals, no FFN, no layer norm). Is it one "
        "linear map of the tokens?",
        [
            Option("Yes: attention is a weighted average of value vectors, which is linear",
                   "Only while the weights are held fixed. Real attention computes them as a softmax of scores "
                   "from the tokens themselves, so the map is not linear in the tokens (the lesson's check: "
                   "f(3 X) differs from 3 f(X))."),
            Option("No: the weights are a softmax of scores computed from the tokens, so attention is nonlinear "
                   "in them; with the weights held fixed, the stack would collapse",
                   "Right: that is why the lesson's claim is the narrow one, for attention weights held fixed.",
                   correct=True),
            Option("Yes, if it has more than one head",
                   "Heads do not change this: each head's weights are a softmax of its own scores, computed from "
                   "the tokens."),
            Option("No, but only because of the residual connections",
                   "Residuals add the identity, which is linear; with fixed weights the residual stack collapsed "
                   "in the lesson's check. The softmax of token-dependent scores is what breaks linearity."),
        ],
    ),
])
