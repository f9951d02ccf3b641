"""Lesson 09's questions: the rank-one update by hand, where the key is read, why random units fire half the
time, and why another country's fact follows an edit."""
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

K = (2.0, 0.0, 1.0)                               # question 1: the key, C = I
R = (5.0, -10.0)                                  # v* - k W2
KK = sum(x * x for x in K)                        # k C^-1 k^T with C = I: 5
ENTRY = K[0] * R[1] / KK                          # the change of W2[0, 1]: -4
K_SUM = sum(K)                                    # k's entries summed, not squared: 3

QUIZ = Quiz("09", [
    Numeric("update-entry",
            "An edit of a W2 with 3 units and d = 2 uses C = I, the key k = [2, 0, 1] (a row), and the change the "
            "key needs, v* - k W2 = [5, -10]. By how much does the rank-one update change the entry W2[0, 1] (unit "
            "0, output coordinate 1)?",
            ENTRY,
            why="With C = I the update is the outer product of the column k^T and the row v* - k W2, divided by "
                "k k^T = 4 + 0 + 1 = 5: entry [0, 1] changes by 2 x (-10) / 5 = -4.",
            wrong={K[0] * R[1]: "That is the outer product's entry before the division: the update is divided "
                                "by the number k C^-1 k^T (with C = I, k k^T), or k W2' would miss v*.",
                   K[0] * R[0] / KK: "That is entry [0, 0], output coordinate 0: coordinate 1 meets -10.",
                   -ENTRY: "The sign: the update adds the change the key needs, v* - k W2, whose coordinate 1 "
                           "is -10.",
                   K[1] * R[0] / KK: "That is entry [1, 0]: the update's rows follow k (one per unit), its "
                                     "columns follow v* - k W2 (one per output coordinate).",
                   K[0] * R[1] / KK ** 0.5: "That divides by the length of k; the scale is k C^-1 k^T itself "
                                            "(with C = I, k k^T, the length squared), so that k W2' = v* exactly."},
            slips=[Slip("k k^T is the sum of the squares of k's entries, not of the entries themselves: square "
                        "each before adding.", value=K[0] * R[1] / K_SUM),
                   Slip("That multiplies the outer product's entry by the scale k k^T: the update is divided by "
                        "it, so that k W2' = v* exactly.", value=K[0] * R[1] * KK),
                   Slip("That is unit 2's entry, row 2: row 0 of the update follows k's first entry.",
                        value=K[2] * R[1] / KK),
                   Slip("That is coordinate 1 of the change alone: the update multiplies it by unit 0's entry of "
                        "the column k^T (C = I) and divides by the scale k k^T.", value=R[1])],
            low="Too far below 0: the outer product's entry, 2 x (-10), is divided by the number k k^T: work that "
                "number out again from k's entries.",
            high="Too high: coordinate 1 of the change is -10 and unit 0's entry of k is 2, so the entry moves "
                 "down, and by more than your answer says."),
    Choice("last-token",
           "In the lesson's 2-layer model, an edit of layer 1's W2 with the key read at the subject's token "
           "(\"France\") changes nothing. Why?", [
               Option("No layer after it moves information between tokens",
                      "The final layer norm and the unembedding act on each token alone: only attention moves "
                      "information between tokens, and no attention comes after layer 1's FFN.", correct=True),
               Option("The subject's token is not in the model's vocabulary",
                      "Every country is one word of the vocabulary (the model completes them all); the edit fails "
                      "for a reason about positions, not words."),
               Option("Layer 1's units never fire at the subject's token",
                      "Some do; but whatever they write there stays at that position. Where is the next word "
                      "predicted, and what could carry a change from one token to another?"),
               Option("ROME only works with the key at the last token",
                      "ROME reads its key at the subject's last token, in the middle layers of GPT-2 XL: later "
                      "attention carries what it writes to the prediction. This model has no later layer."),
           ]),
    Choice("random-half",
           "In the randomly initialised model about half of a layer's units fire (z > 0) at each context; in the "
           "trained one far fewer. Why about half at random?", [
               Option("Each z is as likely below 0 as above it",
                      "z = LN(x) W1 + b1 with W1 drawn symmetric around 0 and b1 = 0: each z is as likely positive "
                      "as negative, so about half the units fire for any input.", correct=True),
               Option("GELU is exactly zero for half of its inputs",
                      "GELU is exactly zero only at z = 0 (lesson 04); below 0 it is small and negative. The count "
                      "is about the sign of z, and what decides that at random?"),
               Option("Layer norm forces half of the units to fire",
                      "Layer norm centres and scales the token's d numbers, not the d_ff pre-activations; it "
                      "fixes no share of units."),
               Option("Random models are sparser than trained ones",
                      "Training does the opposite: trained units fire at fewer contexts than random ones (section "
                      "2 prints layer 1's shares, trained and random)."),
           ]),
    Choice("edit-reach",
           "The edit of France's capital to Rome also makes the model answer Rome for Gabon's capital, which it "
           "answered rightly, and surely, before. Why?", [
               Option("Gabon's key gets a large share of the change",
                      "The update moves any key j by (j C^-1 k^T / k C^-1 k^T)(v* - k W2): a key close to France's "
                      "in that measure receives much of the change, enough to tip even a sure answer.", correct=True),
               Option("The update is not rank one, so it moves many keys",
                      "The printed rank of the change is 1. Rank one does not mean one key moves: every key moves "
                      "along the same direction, each by its own amount."),
               Option("The model was unsure of Gabon's capital already",
                      "The exceptions printed show the model's probability for Libreville before the edit: near 1. "
                      "Unsure prompts moved too (one of Gabon's held-out wordings, wrong before the edit, among "
                      "them), but the capital prompts that turned to Rome were sure ones."),
               Option("The edit used Gabon's prompts as well as France's",
                      "The key and v* came from France's 8 training prompts only; Gabon's prompts were never used, "
                      "which is what makes its change a side effect."),
           ]),
])
