"""Lesson 06, the FFN as a key-value memory: check your understanding."""
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

THETA, COS = 0.5, 0.75          # question 2: the unit's threshold and the query's cosine with its key

QUIZ = Quiz("06", [
    Choice("value-slice",
           "In the `x @ W` convention (`W1` is `(d, d_ff)`, `W2` is `(d_ff, d)`), which slice is hidden unit k's "
           "value, the vector it writes?",
           [Option("Column k of `W1`",
                   "That is unit k's key: the slice of W1 that meets x in the dot product x . w_k. The value "
                   "comes from the second matrix."),
            Option("Row k of `W2`",
                   "Right: h @ W2 is a weighted sum of the rows of W2, and row k is scaled by unit k's "
                   "activation h_k.", correct=True),
            Option("Column k of `W2`",
                   "That is where the value sits in the `W @ x` convention, where W2 is `(d, d_ff)`. Here W2 is "
                   "`(d_ff, d)` and column k has d_ff numbers, not d."),
            Option("Row k of `W1`",
                   "Row k of W1 has d_ff numbers, one per unit: it belongs to input coordinate k, not to unit k.")]),
    Numeric("threshold-activation",
            "A unit of section 3's memory has threshold THETA = 0.5: it is silent up to cosine 0.5 with its key, "
            "fires with h = 1 on the key itself, and grows in proportion between. A query of length 1 has "
            "cosine 0.75 with the unit's key. What is the unit's activation a?",
            (COS - THETA) / (1 - THETA), tolerance=1e-3,
            why="h grows in proportion from 0 at cosine 0.5 to 1 at cosine 1, so at 0.75, halfway, h = 0.5: "
                "(0.75 - 0.5) / (1 - 0.5).",
            wrong={COS: "That is the cosine itself: the bias subtracts the threshold before the ReLU.",
                   COS - THETA: "That is cos - THETA, the plain unit's activation: the memory's units are rescaled "
                                "so that they fire with h = 1 on their own key.",
                   1.0: "A ReLU unit does not saturate: h = 1 only on the key itself (cosine 1); at cosine 0.75 "
                        "it fires halfway.",
                   0.0: "0.75 is above the threshold 0.5, so the unit fires.",
                   (COS - THETA) / COS: "That divides by the cosine. The unit's scale is set so that it reaches 1 "
                                        "at cosine 1: divide by the distance from the threshold to 1.",
                   COS / THETA: "That is the cosine divided by the threshold: the threshold is subtracted first "
                                "(the bias), and the unit is silent at cosine 0.5, not at 0.",
                   100 * (COS - THETA) / (1 - THETA): "That is a percentage. The activation is a plain number: "
                                                     "h = 1 on the key itself."},
            slips=[Slip("A ReLU unit's activation is never negative: below the threshold it is exactly 0.",
                        test=lambda v: v < 0, shown="a negative number")],
            low="Too small: the cosine is above the threshold, and a grows from 0 at THETA to 1 at cosine 1.",
            high="Too large: a reaches 1 only on the key itself, at cosine 1."),
    Choice("largest-activation",
           "Unit 3 has the largest activation h_j of all units for some token. Is it the unit that writes the most "
           "to that token's output?",
           [Option("Yes: the unit with the largest activation h_j always writes the longest vector to the output",
                   "What a unit writes is h_j u_j, whose length is h_j times the length of its value u_j. A unit "
                   "with a short value can fire hard and still write little."),
            Option("Not necessarily: the length of h_j u_j also depends on the length of its value",
                   "Right: ||h_j u_j|| = h_j ||u_j||, so rank by that product (Exercise 2).", correct=True),
            Option("No: a silent unit (h_j = 0) can write more to the output than any unit that fires",
                   "A silent unit has h_j = 0 and writes exactly nothing, whatever its value.")]),
    Choice("working-picture",
           "What does this lesson's memory show about a trained language model's FFN?",
           [Option("That each fact a trained language model knows sits in exactly one hidden unit of one FFN, "
                   "like France -> Paris here",
                   "The memory was laid out by hand, one clean unit per fact. In trained models a unit responds "
                   "to many unrelated inputs, and a fact, if it sits anywhere, may be spread over many units and "
                   "layers."),
            Option("What an FFN can compute, read as keys and values; where a trained model keeps a particular "
                   "fact is a separate, open question",
                   "Right: the key-value reading (Geva et al. 2021) is a useful way to think about FFNs, not a "
                   "map of where facts live; editing studies find that location and editability can disagree "
                   "(Hase et al. 2023).", correct=True),
            Option("That a trained FFN fires about half of its hidden units for each token, as this lesson's "
                   "random layers did",
                   "Half is what random weights give at initialisation. Trained ReLU transformers are far "
                   "sparser: Li et al. (2023) measured 3.0% of T5-Base's FFN units nonzero per input, on "
                   "average.")]),
])
