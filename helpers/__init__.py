"""The course library: reference implementations, graders and plots for the FFN course.

Each module holds one concern and imports nothing at import time beyond NumPy, SciPy and Matplotlib.

References (row-vector convention, x @ W, unless the module says otherwise):
    helpers.ffn            the NumPy FFN, activations (ReLU, GELU, GELU-tanh, SiLU), SwiGLU, mixture of experts,
                           and the backward passes (ffn_backward, swiglu_backward) with the activations' slopes
                           (its speed machinery: helpers._blocks, and helpers._gelu32 for float32 GELU)
    helpers.flat           pure-Python matrices as flat row-major lists, and the FFN built from them (lesson 02)
    helpers.chunking       the FFN over a long sequence a chunk of tokens at a time (lesson 03)
    helpers.attention_min  a minimal single-head attention, for cost and token-mixing comparisons (lesson 03)
    helpers.collapse       affine layers without an activation collapse into one affine map (lesson 05)
    helpers.and_not        "A and B but not C" on the eight binary inputs (lesson 05)
    helpers.tiny_mlp       a one-hidden-layer classifier trained in NumPy with manual backprop (lesson 05)
    helpers.kv_memory      the FFN as a sum over units, and a tiny memory of facts (lesson 06)
    helpers.moe            routing tokens to experts and counting the load (lesson 07)
    helpers.block          a minimal layer norm, the residual wrapper and a toy attention step (lesson 07)
    helpers.gradcheck      gradients by central differences, and a check of a backward pass against them (lesson 08)
    helpers.lm             lesson 09's small language model: load the shipped weights, read its FFN, edit a fact,
                           and the same model under transformers' GPT-2 names
    helpers.gpt            its GPT-2-style decoder, forward and backward (attention, layer norm, embeddings)
    helpers.lm_corpus      its corpus: true facts about 54 countries, templates (training and held-out), filler
    helpers.lm_train       its training: batches, AdamW, a fixed seed (make train-lm: tools/train_lm.py)
Sizes and counts:
    helpers.models         published sizes of the models the course counts, one commented place
    helpers.params         parameter counts of an FFN, attention and SwiGLU; FLOPs of the FFN and attention mixing
    helpers.toy            the small fixed networks traced by hand (lesson 01)
    helpers.measure        peak memory (tracemalloc) and interleaved best-of timings
Figures:
    helpers.plotting       the input / pre-activation / hidden / output strips (lesson 01)
    helpers.explorer       the interactive 4 -> 8 -> 4 explorer (ipywidgets), with a still picture fallback
    helpers.plot_flat, plot_cost, plot_activations, plot_regions, plot_memory, plot_moe, plot_block,
    plot_backward          each lesson's figures (02, 03, 04, 05, 06, 07, 07, 08)
Figures:  (continued)
    helpers.figures        show(fig, alt=...): a figure with its takeaway as alt text, in JupyterLab and on the site
Graders, quizzes and progress:
    helpers.checks         one grader per exercise: check_<exercise>(your_function) -> Verdict (truthy on a pass)
    helpers.quiz           "Check your understanding" questions (each lesson's in helpers.quizzes.lessonNN)
    helpers.progress       a learner's checks and quiz answers, recorded in their workspace (work/)
"""
