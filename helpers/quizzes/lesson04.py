"""Lesson 04, activations: check your understanding."""
import math

from helpers.models import LLAMA_7B
from helpers.params import swiglu_hidden
from helpers.quiz import Choice, Numeric, Option, Quiz, Slip

# Question 1 asks for Llama's rule at another width than section 7 prints (Llama 7B's d = 4,096 and 11,008), so
# that it takes the two steps, not a reading of the lesson. Its answer and slips are worked out from these.
D, MULTIPLE = 5_120, 256
H = int(2 * 4 * D / 3)                   # 13,653: the first step, two thirds of 4d truncated
ANSWER = swiglu_hidden(D, MULTIPLE)      # 13,824: rounded up to a multiple of 256

QUIZ = Quiz("04", [
    Numeric(
        "swiglu-width",
        f"A model sizes its SwiGLU FFN by Llama's rule of section 7, with d = {D:,} and multiple_of = {MULTIPLE}. "
        "What is its hidden width d_ff?",
        ANSWER,
        whole=True,
        why=f"int(2 * 4 * {D:,} / 3) = {H:,}, which is {H / MULTIPLE:.2f} multiples of {MULTIPLE}; the fraction "
            f"needs a whole multiple more, so d_ff = {ANSWER // MULTIPLE} x {MULTIPLE} = {ANSWER:,}. Three matrices "
            f"of {D:,} x {ANSWER:,} hold about as many weights as two of {D:,} x {4 * D:,}.",
        wrong={
            H: "That is two thirds of 4d truncated, the first step. Llama's code then rounds it up to a multiple "
               "of 256 ('make SwiGLU hidden layer size multiple of large power of 2').",
            math.ceil(8 * D / 3): "That is 8/3 · d rounded up to a whole number; the width is then rounded up to a "
                                  "multiple of 256.",
            8 * D / 3: "That is two thirds of 4d, the first step, not yet a whole number. Truncate it to an int, "
                       "then round up to a multiple of 256.",
            MULTIPLE * (H // MULTIPLE): f"That is a multiple of 256 below h = {H:,}: rounded down. Llama rounds up: "
                                        "a fraction of a multiple still needs a whole one, so the width is never "
                                        "below h.",
            4 * D: "That is 4d, the classic FFN's width (already a multiple of 256, so rounding leaves it). SwiGLU "
                   "has a third matrix, so it first takes two thirds of 4d, to keep the parameter count level.",
            swiglu_hidden(D // 4, MULTIPLE): "That starts from two thirds of d. The classic width is 4d, and SwiGLU "
                                             "takes two thirds of that.",
            2 * D / 3: "That is two thirds of d, not of 4d: the classic width is 4d, and SwiGLU takes two thirds of "
                       "that.",
            MULTIPLE * math.ceil(int(4 * D / 3) / MULTIPLE):
                "That takes one third of 4d; SwiGLU keeps two thirds of it, so that its three matrices hold as "
                "many weights as the classic two.",
            1024 * math.ceil(H / 1024): "That rounds up to a multiple of 1,024; the question's multiple_of is 256.",
            3 * ANSWER: "That adds up the widths of the three matrices' hidden layers; they share one hidden layer "
                        "of d_ff units.",
            LLAMA_7B["d_ff"]: f"That is Llama 7B's width, for d = {LLAMA_7B['d']:,}, as section 7 printed it. This "
                              f"model has d = {D:,}: take the same two steps from its own d.",
        },
        slips=[Slip(lambda v: f"{v:,.10g} is not a multiple of 256, and the width is: after taking two thirds of "
                              "4d, round up to the next multiple of 256.",
                    test=lambda v: v % MULTIPLE != 0, shown="a number that is not a multiple of 256")],
        low=f"Too small: start from the classic width 4d = {4 * D:,}, take two thirds of it, and round up, never "
            "down.",
        high=f"Too large: SwiGLU shrinks the classic width 4d = {4 * D:,} to about two thirds, and the rounding "
             "goes up to the first multiple of 256 at or above that, no further.",
    ),
    Choice(
        "exact-zeros",
        "In a layer whose pre-activations are about N(0, 1), which activations set about half of the hidden "
        "values to exactly 0?",
        [
            Option("ReLU only",
                   "Right: ReLU sends every z <= 0 to exactly 0, half of symmetric inputs. GELU and SiLU return a "
                   "small negative number there instead; with the erf formula GELU reaches exactly 0 only below "
                   "z = -8.37 (float64) or -5.54 (float32), which N(0, 1) values almost never reach.",
                   correct=True),
            Option("ReLU and GELU, but not SiLU",
                   "GELU is z times Phi(z), and Phi(z) is small but not 0 for negative z: GELU(-1) = -0.16, "
                   "GELU(-3) = -0.004. Small is not zero: the lesson counted 0.0% exact zeros for GELU."),
            Option("All three: they all turn negative inputs into zeros",
                   "Only ReLU has a hard step. GELU and SiLU are smooth and slightly negative for negative z "
                   "(SiLU's lowest value is -0.28), so they set none of these values to exactly 0."),
            Option("None of them: an activation never outputs exactly 0",
                   "ReLU does, for every z <= 0: max(0, z) = 0. That is why ReLU's 'silent detectors' are "
                   "literally silent."),
        ],
    ),
    Choice(
        "dead-unit",
        "A ReLU unit's pre-activation is negative for every input it sees. What does plain gradient descent on "
        "the loss (no weight decay) do to the weights coming into it?",
        [
            Option("Nothing: every gradient into them is exactly 0",
                   "Right: each gradient into the unit is multiplied by ReLU's slope, which is 0 for all those "
                   "inputs. The lesson nudged such a unit's weights and the output did not move at all. The unit "
                   "stays dead unless its inputs change; lesson 08 counts dead units over training.",
                   correct=True),
            Option("It pulls them up until the unit fires again",
                   "Nothing pulls: every gradient into the unit is multiplied by ReLU's slope, which is 0 for "
                   "negative z. That is the difference with GELU, whose slope there is small but not 0."),
            Option("It shrinks them towards 0, like weight decay",
                   "Without a gradient there is no pull of any kind from the loss; weight decay is a separate term "
                   "that the lesson did not add."),
            Option("It gives them a small gradient, as GELU would",
                   "GELU's slope is small but not 0 for negative z; ReLU's is exactly 0, so no gradient at all "
                   "reaches this unit's weights."),
        ],
    ),
    Choice(
        "swiglu",
        "Which statements about SwiGLU, (silu(x W_gate) * x W_up) W_down, are true?",
        [
            Option("SiLU is applied to the gate path x W_gate only",
                   "Right: the value path x W_up passes through unchanged and supplies the sign.", correct=True),
            Option("A hidden value can be strongly negative",
                   "Right: the gate says how much passes, and the value path can be negative.", correct=True),
            Option("A ReLU after W_down would do no harm",
                   "It would: the block adds the FFN's output back onto x, and an output clamped at 0 could never "
                   "lower a coordinate of x. Nothing follows W_down."),
            Option("At d_ff = 4d it has as many weights as a classic FFN",
                   "Three matrices of d x 4d hold 12 d^2 weights, 1.5 times the classic 8 d^2. That is why Llama "
                   "shrinks d_ff to about 8/3 · d."),
        ],
        several=True,
    ),
])
