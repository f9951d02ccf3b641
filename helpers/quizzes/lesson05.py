"""Lesson 05, why the nonlinearity: check your understanding."""
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

# Question 1 and its slips, worked out from the widths: a stack of another shape than section 5's 8 -> 32 -> 2 ->
# 32 -> 8, with its narrowest layer inside and an output narrower than its input.
WIDTHS = [16, 64, 6, 48, 10]
D_IN, D_OUT = WIDTHS[0], WIDTHS[-1]
N_MATRICES = len(WIDTHS) - 1
WIDTHS_SHOWN = " -> ".join(str(w) for w in WIDTHS)
SECTION_5 = [8, 32, 2, 32, 8]                     # the lesson's stack, whose rank it printed

QUIZ = Quiz("05", [
    Numeric(
        "narrowest",
        f"Without an activation, {N_MATRICES} random weight matrices take a token through the widths "
        f"{WIDTHS_SHOWN}. Collapsed into one {D_IN} x {D_OUT} matrix, what is that matrix's rank?",
        min(WIDTHS),
        whole=True,
        why="A product has at most the rank of its narrowest factor: every token is squeezed through the "
            f"{min(WIDTHS)}-wide layer, whatever the wider layers do, and random weights narrow it no further.",
        wrong={
            min(D_IN, D_OUT): f"{min(D_IN, D_OUT)} is the most any {D_IN} x {D_OUT} matrix can have, its smaller "
                              "side. But every token passes through all the layers on the way: does one of them "
                              "leave it fewer directions?",
            D_IN: f"{D_IN} is the input width, and a {D_IN} x {D_OUT} matrix cannot even reach it: its rank is at "
                  f"most its smaller side. Then look for the layer that squeezes the tokens most.",
            max(WIDTHS): "The widest layer does not set the rank; the narrowest does. A product cannot have more "
                         "rank than any of its factors.",
            D_IN * D_OUT: f"That counts the matrix's entries, {D_IN} x {D_OUT}. Its rank counts independent "
                          "directions, at most its smaller side, and fewer when a narrow layer squeezes every "
                          "token.",
            N_MATRICES: "That counts the weight matrices. The rank counts the independent directions their "
                        "product's outputs can take: which layer leaves a token the fewest?",
            len(WIDTHS): "That counts the widths listed. The rank counts the independent directions the "
                         "collapsed map's outputs can take: which layer leaves a token the fewest?",
            min(SECTION_5): "That is the rank of section 5's stack, " + " -> ".join(str(w) for w in SECTION_5)
                            + ", read off its narrowest layer. Apply the same rule to this stack's widths.",
            0: "Rank 0 is the zero matrix alone, which maps every token to 0. Random weights are not zero, and "
               "their product is not either.",
        },
        slips=[Slip("A rank is a whole number: it counts independent directions.", test=lambda v: v != round(v),
                    shown="a number that is not whole"),
               Slip("A rank is never negative: it counts independent directions.", test=lambda v: v < 0,
                    shown="a negative number")],
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
                   "The skip connection adds x itself, and the map x -> x (the identity) is as linear as a "
                   "map can be: adding it to another map bends nothing. Nonlinearity has to come from a "
                   "step that bends; look for one in a block whose activation is removed."),
            Option("Linear only if the biases are zero",
                   "A bias shifts every output by the same constant: it makes a block affine instead of "
                   "linear, but a shift bends nothing. Section 2 folded two layers with biases; did the "
                   "biases stop it?"),
            Option("One map only if all 96 blocks have the same weights",
                   "Folding two blocks never used their weights being equal: the expansion works for any two. "
                   "Apply it again and again and ask what 96 different blocks leave."),
        ],
    ),
    Choice(
        "corner-sum",
        "Why can no affine map f(x) = x . w + b output 1 on (A, B, C) = (1, 1, 0) and 0 on the other seven "
        "inputs?",
        [
            Option("A corner sum of four outputs is 0 for every affine map, and 1 for the target",
                   "Right: in f(1,1,0) - f(1,0,0) - f(0,1,0) + f(0,0,0) every weight and the bias cancel, so no "
                   "choice of w and b reaches the target's 1. The proof uses only inputs with C = 0: 'A and "
                   "B' alone is already out of reach.",
                   correct=True),
            Option("C would need an infinitely negative weight to cancel A and B on the input (1, 1, 1)",
                   "C is not the problem: the proof uses only the four inputs with C = 0. A finite negative "
                   "weight for C is fine once there is a threshold, as in the detector you built."),
            Option("Even its best fit, (A + B - C) / 4, leaves a total squared error of 0.5",
                   "That is the size of the best fit's error, a consequence, not the reason. The reason must "
                   "hold for every affine map, fitted or not: look for a quantity that is the same for all of "
                   "them and different for the target."),
            Option("It has only four parameters, too few to set eight required outputs exactly",
                   "Counting does not decide it: four parameters fit many eight-output targets exactly (any "
                   "affine one, such as A + B - C), and a ReLU FFN with one unit, six parameters, fits this one. "
                   "What an affine map lacks is a way to let A and B interact; the proof shows it on four "
                   "inputs."),
        ],
    ),
    Choice(
        "attention",
        "A stack of attention-only blocks (softmax attention with residuals, no FFN, no layer norm). Is it one "
        "linear map of the tokens?",
        [
            Option("Yes: attention averages value vectors, and an average is linear",
                   "An average with fixed weights is linear, yes. Are attention's weights fixed? Ask where they "
                   "come from: section 4's closing paragraph, \"And attention?\", says."),
            Option("No: its weights are a softmax of scores computed from the tokens",
                   "Right: attention is nonlinear in the tokens because its weights depend on them. Only with "
                   "the weights held fixed would a stack of such blocks collapse to one linear map, and that is "
                   "all the lesson claims about attention: it collapses with A held fixed, not as it really "
                   "runs.",
                   correct=True),
            Option("Yes, once it has several heads whose outputs are added",
                   "Heads do not change this: each head's weights are a softmax of its own scores, computed from "
                   "the tokens, and adding nonlinear maps gives a nonlinear map."),
            Option("No, but only because the residual connections add x back",
                   "Residuals add the identity, which is linear: with fixed weights the residual stack collapsed "
                   "in the lesson's check. So the skip path cannot be what breaks linearity; look at what "
                   "attention computes from the tokens."),
        ],
    ),
])
