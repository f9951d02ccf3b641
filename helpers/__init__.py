"""The course library: reference implementations, graders and plots for the FFN course.

Modules (one concern each):
    helpers.ffn       NumPy reference FFN, activations, SwiGLU and mixture of experts (row-vector convention)
    helpers.toy       the small fixed networks the lessons trace by hand
    helpers.plotting  figures used by more than one cell
    helpers.checks    one grader per exercise: check_<exercise>(your_function) -> bool
"""
