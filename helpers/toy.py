"""The small, fixed networks that lessons trace by hand.

The weights are illustrative values chosen by hand (rounded to one decimal), not a trained model's.
Row-vector convention, as in helpers.ffn: W1 is (d, d_ff) and column k of W1 is hidden unit k's pattern.
"""
import numpy as np

# The 2 x 2 trace. W1's rows [1, 1] and [1, -1] are also its columns (it is symmetric), so the trace reads
# the same in the W @ x convention of one source text and the x @ W convention of the other.
HAND_TRACE = {
    "x": np.array([1.0, -1.0]),
    "W1": np.array([[1.0, 1.0],
                    [1.0, -1.0]]),
    "b1": np.zeros(2),
    "W2": np.eye(2),
    "b2": np.zeros(2),
}

# The 4 -> 8 -> 4 picture: one token, "robot", for which ReLU zeroes exactly 3 of the 8 hidden units.
TOKEN = "robot"
X_ROBOT = np.array([0.8, -0.5, 0.3, 1.0])
W1_484 = np.array([[0.2, 0.9, -1.1, 1.0, 0.0, -0.5, -0.5, -0.6],
                   [-0.1, 0.5, 0.4, 0.4, -1.0, -0.9, 0.9, 0.6],
                   [1.3, 0.7, -0.6, 0.8, 0.4, 0.1, -0.5, 0.0],
                   [-0.1, 0.5, 0.1, 1.0, -0.5, 0.3, 0.3, -0.5]])        # (4, 8)
B1_484 = np.array([-0.2, 0.2, 0.1, 0.0, 0.1, -0.1, 0.0, -0.1])          # (8,)
W2_484 = np.array([[0.1, 0.5, -0.2, 0.4],
                   [-0.5, -0.1, -0.7, -0.1],
                   [0.0, -0.1, -0.1, 0.7],
                   [0.7, -0.6, 0.6, -0.9],
                   [-0.4, -0.1, 0.1, -0.5],
                   [-0.4, 0.0, -0.3, -0.3],
                   [0.3, 0.5, 0.0, 0.0],
                   [0.0, -0.2, -0.3, -0.5]])                            # (8, 4)
B2_484 = np.array([0.1, 0.0, 0.0, 0.0])                                 # (4,)
NET_484 = {"W1": W1_484, "b1": B1_484, "W2": W2_484, "b2": B2_484}
