"""Lesson 07, mixture of experts: check your understanding."""
import math

from helpers.quiz import Choice, Numeric, Option, Quiz, Slip


def softmax2(a: float, b: float) -> float:
    """The weight of the first of two chosen logits once the softmax is renormalised over the two."""
    return math.exp(a) / (math.exp(a) + math.exp(b))


HIGH, LOW = 2.0, 0.0               # question 1: the two chosen logits
TOP = softmax2(HIGH, LOW)          # 0.8808

QUIZ = Quiz("07", [
    Numeric("top2-weight",
            "A token's two largest router logits are 2.0 (expert 5) and 0.0 (expert 1); the other six are "
            "lower. With top-2 routing as in Mixtral, what weight does expert 5 get?",
            TOP, places=3,
            why="The softmax of the two chosen logits: e^2 / (e^2 + e^0) = 7.389 / 8.389 = 0.881 (0.8808 to four "
                "places). The other six logits do not matter: renormalising the full softmax over the chosen two "
                "cancels them.",
            wrong={HIGH / (HIGH + LOW): "That is 2.0 / (2.0 + 0.0), the logits divided by their sum. The weights are a "
                                        "softmax: exponentiate first.",
                   0.5: "Equal weights would ignore the router's scores; the softmax gives the larger logit the "
                        "larger weight.",
                   softmax2(1.0, 0.0): "That is the softmax of 1 and 0. Here the logits are 2 and 0.",
                   1 - TOP: "That is expert 1's weight, the smaller of the two: the larger logit gets the larger "
                            "weight.",
                   math.exp(HIGH): "That is e^2, the numerator alone: divide it by the sum over the chosen two, "
                                   "e^2 + e^0.",
                   100 * TOP: "That is the weight as a percentage. The question asks for the weight itself, a "
                              "number between 0 and 1 (the two add up to 1)."},
            slips=[Slip("A routing weight is a softmax, so it lies between 0 and 1, and the larger logit's weight "
                        "is above a half.", test=lambda v: v < 0 or 1 < v < 50, shown="a number outside 0 to 1")],
            low="Too small: the larger logit gets more than half of the weight, and e^2 is much larger than e^0.",
            high="Too large: the two weights add up to 1, and expert 1 still gets e^0 / (e^2 + e^0)."),
    Choice("renormalise",
           "A layer takes the softmax over all 8 experts and keeps the chosen two's probabilities as they are, "
           "without renormalising. What goes wrong?",
           [Option("The two weights add up to less than 1, by an amount that changes from token to token",
                   "Right: the chosen pair's share of the full softmax is below 1 and varies with the other six "
                   "logits, so each token's output is shrunk by its own factor.", correct=True),
            Option("A different pair of experts is chosen, as the softmax over all eight ranks them differently",
                   "The softmax keeps the order of the logits, so the top two are the same experts either way; "
                   "only their weights differ."),
            Option("Nothing: the two kept probabilities already add up to 1 for every token",
                   "They add up to 1 only over all eight experts. The two kept are a part of that sum (0.59 for "
                   "token 0 in section 1).")]),
    Choice("capacity-compute",
           "An MoE layer goes from 8 experts to 16 experts of the same size, still routing each token to 2. "
           "What changes?",
           [Option("The expert parameters double; the work per token stays about the same",
                   "Right: the parameters grow with the number of experts, the compute per token with k. "
                   "Only the router's work grows with the number of experts, and it is tiny.", correct=True),
            Option("Both the expert parameters and the work per token double",
                   "A token still runs through only k = 2 experts; the other 14 sit idle for it."),
            Option("The work per token doubles; the expert parameters stay the same",
                   "That is what raising k would do (more experts per token), and even then the parameters "
                   "would not change.")]),
    Choice("calls",
           "In the vectorised layer (`moe_ffn`), how often is each expert called for a batch of n tokens?",
           [Option("Once per token that chose it",
                   "That is the hand computation of section 1, n x k small calls in all. Look at what moe_ffn "
                   "does with the tokens that chose an expert before it calls that expert."),
            Option("Once, on all the tokens routed to it; not at all if no token chose it",
                   "Right: moe_ffn gathers each expert's tokens into one batch (section 2); the first Going "
                   "further section counts the calls, one per expert, their rows adding up to n x k.", correct=True),
            Option("Once on every token, with the unchosen tokens' outputs multiplied by 0",
                   "That is the dense mixture, which does every expert's work for every token and saves "
                   "nothing.")]),
])
