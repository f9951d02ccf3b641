"""Lesson 03's closing questions: position-wise, the parameter count and its share, chunks of tokens."""
from helpers.models import GPT2_MEDIUM, GPT2_SMALL
from helpers.params import attention_params, ffn_params
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

# Question 2 and its slips, worked out from GPT-2 medium's sizes: the lesson printed GPT-2 small's count, so the
# question asks for one it did not print, by the same reasoning.
D, D_FF, LAYERS = GPT2_MEDIUM["d"], GPT2_MEDIUM["d_ff"], GPT2_MEDIUM["n_layers"]
FFN = ffn_params(D, D_FF)                                     # 8,393,728
WEIGHTS = ffn_params(D, D_FF, bias=False)                     # 8,388,608
BLOCK = FFN + attention_params(D, bias=True) + 2 * 2 * D      # with two layer norms (a scale and a shift each)
SMALL = ffn_params(GPT2_SMALL["d"], GPT2_SMALL["d_ff"])       # GPT-2 small's, printed in section 5

QUIZ = Quiz("03", [
    Choice("one-row", "`y = relu(x @ W1 + b1) @ W2 + b2` with `x` of shape `(T, d)`, one token per row. You change "
           "token 5 and nothing else. Which rows of `y` change?", [
               Option("Only row 5",
                      "Row t of `x @ W1` is `x[t] @ W1`: it reads token t and no other. Every later step (the "
                      "bias, relu, `@ W2`) again works row by row.", correct=True),
               Option("Rows 4, 5 and 6: token 5 and its neighbours",
                      "That is a convolution of width 3. The FFN is a convolution of width 1: each output sees "
                      "its own token only."),
               Option("Every row, because all tokens share W1",
                      "Sharing the weights is not sharing information: a shared matrix is a recipe that each "
                      "row follows on its own. Does any step of the formula read one row while computing "
                      "another?"),
               Option("Every row, because one matrix product handles all the tokens together",
                      "Doing all the rows in one call is only faster, not different. Write out entry (t, k) of "
                      "`x @ W1`: which row of x does it read?"),
           ]),
    Numeric("gpt2-medium-ffn", "GPT-2 medium is wider than GPT-2 small: d = 1,024 and d_ff = 4,096. How many "
            "parameters (weights and biases) does one of its FFNs hold?", FFN,
            whole=True,
            why="W1 and W2 hold 1,024 x 4,096 weights each, b1 holds 4,096 (one per hidden unit) and b2 1,024 (one "
                "per output): 8,388,608 + 5,120.",
            wrong={WEIGHTS: "That is the two matrices alone: both biases are left out. Each layer of the FFN has a "
                            "bias, one number per output of that layer.",
                   FFN - D: "That leaves out one bias, b2, the bias of the second layer: it has one number per "
                            "output coordinate.",
                   FFN - D_FF: "That leaves out one bias, b1, the bias of the first layer: it has one number per "
                               "hidden unit.",
                   WEIGHTS + 2 * D_FF: "That gives both biases the hidden width d_ff; b2 has one number per "
                                       "output, d.",
                   WEIGHTS + 2 * D: "That gives both biases the model width d; b1 has one number per hidden "
                                    "unit, d_ff.",
                   WEIGHTS + 2 * (D + D_FF): "That counts each bias twice: b1 and b2 are one vector each.",
                   D * D_FF + D_FF: "That is W1 and b1 only: the FFN has a second layer, W2 and its bias b2.",
                   D_FF * D + D: "That is W2 and b2 only: the FFN has a first layer, W1 and its bias b1.",
                   D * D_FF + D_FF + D: "That counts one weight matrix: W1 and W2 each hold d x d_ff weights.",
                   2 * D * D + 2 * D: "That takes d_ff as d, as if the hidden layer were as wide as the token: "
                                      "it is d_ff wide, so each matrix is d x d_ff.",
                   2 * D * D: "That takes d_ff as d and leaves out the biases: each matrix is d x d_ff, and "
                              "b1 and b2 count too.",
                   BLOCK: "That is a whole block (attention with biases and two layer norms too), not the FFN "
                          "alone.",
                   attention_params(D): "That is attention's four d x d projections, the other half of the "
                                        "block.",
                   LAYERS * FFN: "That is the FFNs of all the model's blocks (24 of them); the question asks for "
                                 "one FFN.",
                   LAYERS * WEIGHTS: "That is the FFNs of all 24 blocks, and without their biases; the question "
                                     "asks for one FFN, weights and biases.",
                   4 * FFN: "That is the FFN's size in bytes at 4 bytes (float32) a parameter; the question counts "
                            "parameters.",
                   SMALL: "That is GPT-2 small's FFN, the count the lesson printed (d = 768); this question is "
                          "about GPT-2 medium, with d = 1,024 and d_ff = 4,096."},
            slips=[Slip("That is the count rounded: the question asks for it exactly, every digit.",
                        test=lambda v: abs(v - FFN) < 0.01 * FFN and v % 100 == 0,
                        shown="the count rounded (to hundreds or more)"),
                   Slip("That looks like the count in millions: the question asks for the exact number of "
                        "parameters, all its digits.", test=lambda v: 0 < v < 100 and v != round(v),
                        shown="a number in millions"),
                   Slip("A count of parameters is a whole number.", test=lambda v: v != round(v),
                        shown="a number that is not whole")],
            low="Too small: count both matrices, d x d_ff each, and both biases, one number per hidden unit for "
                "b1 and one per output for b2.",
            high="Too large: one FFN is W1, b1, W2 and b2 of one block, nothing else."),
    Choice("share", "GPT-2 small has about 124M parameters. About what share of them sit in its 12 FFNs?", [
        Option("About two thirds",
               "Two thirds is the FFN's share of one block's attention plus FFN. The whole model also holds the "
               "token and position embeddings, almost a third of it, outside the blocks."),
        Option("About 45 %",
               "12 x 4,722,432 = 56,669,184 of 124,439,808 parameters: 45.54 %. The embeddings (31.65 %) pull "
               "the share down from a block's two thirds.", correct=True),
        Option("About a half, as in the original Transformer's decoder blocks",
               "Half is the FFN's share of a block that also holds cross-attention. GPT-2's blocks have none, "
               "and the whole model holds more than its blocks: count what sits outside them too."),
        Option("About a third",
               "A third is attention's share of a block with one attention and one FFN, not the FFN's."),
    ]),
    Choice("chunks", "Why does running the FFN on 64 tokens at a time save memory, and what does it cost?", [
        Option("Only 64 rows of the (T, d_ff) hidden layer exist at once; the numbers are the same, at the cost "
               "of more, smaller matrix products",
               "Tokens go through the FFN independently, so chunks change nothing in the result; the peak "
               "drops from T rows of hidden units to 64, and each extra product pays a fixed cost.",
               correct=True),
        Option("It approximates the FFN, trading a little accuracy for memory: each chunk sees fewer tokens, "
               "so its rows come out slightly different",
               "Nothing is approximated: each token's output depends on that token alone, so splitting the "
               "sequence gives exactly the numbers of the whole (to rounding)."),
        Option("W1 and W2 are smaller when fewer tokens go through them, so the weights take less memory, at "
               "no cost in time",
               "The weights are the same for every chunk. What shrinks is the hidden activations, one row of "
               "d_ff numbers per token in the chunk."),
        Option("It saves nothing unless T is a multiple of 64; otherwise the last, shorter chunk needs the "
               "whole hidden layer",
               "The last chunk may simply be shorter: x[s:s + 64] stops at the end of the sequence."),
    ]),
])
