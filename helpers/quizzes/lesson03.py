"""Lesson 03's closing questions: position-wise, the parameter count and its share, chunks of tokens."""
from helpers.models import GPT2_SMALL
from helpers.params import attention_params, ffn_params
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

# Question 2 and its slips, worked out from GPT-2 small's sizes.
D, D_FF, LAYERS = GPT2_SMALL["d"], GPT2_SMALL["d_ff"], GPT2_SMALL["n_layers"]
FFN = ffn_params(D, D_FF)                                     # 4,722,432
WEIGHTS = ffn_params(D, D_FF, bias=False)                     # 4,718,592
BLOCK = FFN + attention_params(D, bias=True) + 2 * 2 * D      # with two layer norms (a scale and a shift each)

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
    Numeric("gpt2-ffn", "How many parameters (weights and biases) does one FFN of GPT-2 small hold, with "
            "d = 768 and d_ff = 3,072?", FFN,
            whole=True,
            why="W1 and W2 hold 768 x 3,072 weights each, b1 holds 3,072 and b2 768: 4,718,592 + 3,840.",
            wrong={WEIGHTS: "That is the two matrices alone: the biases b1 (3,072) and b2 (768) are missing.",
                   WEIGHTS + 2 * D_FF: "That gives both biases d_ff = 3,072 numbers; b2 has one number per output, "
                                       "d = 768.",
                   WEIGHTS + 2 * D: "That gives both biases d = 768 numbers; b1 has one number per hidden unit, "
                                    "3,072.",
                   FFN - D: "That leaves out one bias, b2 (768 numbers, one per output); b1 is counted.",
                   FFN - D_FF: "That leaves out one bias, b1 (3,072 numbers, one per hidden unit); b2 is counted.",
                   D * D_FF + D_FF: "That is W1 and b1 only: the FFN has a second matrix, W2, and its bias b2.",
                   D_FF * D + D: "That is W2 and b2 only: the FFN has a first matrix, W1, and its bias b1.",
                   BLOCK: "That is a whole GPT-2 block (attention with biases and two layer norms too), not "
                          "the FFN alone.",
                   attention_params(D): "That is attention's four 768 x 768 projections, the other half of the "
                                        "block.",
                   LAYERS * FFN: "That is all twelve blocks' FFNs; the question asks for one FFN.",
                   LAYERS * WEIGHTS: "That is all twelve blocks' FFNs, and without their biases; the question "
                                     "asks for one FFN, weights and biases.",
                   4 * FFN: "That is the FFN's size in bytes at 4 bytes (float32) a parameter; the question counts "
                            "parameters."},
            slips=[Slip("That is the count rounded: the question asks for it exactly, every digit.", test=lambda v: abs(v - FFN) < 0.01 * FFN and v % 100 == 0,
                        shown="the count rounded (4,722,000)"),
                   Slip("That looks like the count in millions: the question asks for the exact number of "
                        "parameters, all its digits.", test=lambda v: 0 < v < 100 and v != round(v),
                        shown="a number in millions (4.7)"),
                   Slip("A count of parameters is a whole number.", test=lambda v: v != round(v),
                        shown="a number that is not whole")],
            low="Too small: count both matrices, 768 x 3,072 each, and both biases, one number per hidden unit "
                "for b1 and one per output for b2.",
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
