"""The quiz as ipywidgets: per question, its options, a Check button and the feedback (helpers.quiz).

It imports nothing of helpers.quiz (which imports this module when a quiz is shown): a question says what it
is by its `kind` ("one", "several" or "number") and its `letters()`, and the quiz lends its `inline_html`.
"""
from __future__ import annotations

import html

import ipywidgets as widgets


def _plain(text: str) -> str:
    """An option for a label that shows plain text only: `code` marks dropped."""
    return text.replace("`", "")


class QuestionWidget(widgets.VBox):
    """One question: the prompt, a way to answer, a Check button and the feedback underneath."""

    def __init__(self, quiz, number: int):
        self.quiz, self.number = quiz, number
        question = quiz.question(number)
        self.letters = question.letters() if question.kind != "number" else ""
        prompt = widgets.HTML(f"<p><strong>{number}.</strong> {quiz.inline_html(question.prompt)} "
                              f"<em>{question.instruction()}</em></p>")
        if question.kind == "one":
            self.input = widgets.RadioButtons(options=[(f"{L}. {_plain(o.text)}", L)
                                                       for L, o in zip(self.letters, question.options)],
                                              value=None, layout=widgets.Layout(width="auto"))
        elif question.kind == "several":
            self.input = widgets.VBox([widgets.Checkbox(value=False, description=f"{L}. {_plain(o.text)}", indent=False,
                                                        layout=widgets.Layout(width="auto"))
                                       for L, o in zip(self.letters, question.options)])
        else:
            self.input = widgets.Text(placeholder="a number", description="answer",
                                      layout=widgets.Layout(width="16em"))
        self.button = widgets.Button(description="Check", tooltip=f"Check your answer to question {number}",
                                     button_style="")
        self.feedback = widgets.HTML(value="")
        self.button.on_click(lambda _: self.check())
        super().__init__([prompt, self.input, self.button, self.feedback])
        self.add_class("ffn-quiz-question")

    def value(self):
        if isinstance(self.input, widgets.RadioButtons):
            return self.input.value or ""
        if isinstance(self.input, widgets.VBox):
            return "".join(self.letters[i] for i, box in enumerate(self.input.children) if box.value)
        return self.input.value

    def check(self) -> None:
        answer = self.value()
        if answer in ("", None):
            self.feedback.value = "<p>Choose an answer first, then press Check.</p>"
            return
        feedback = self.quiz.judge(self.number, answer)
        verdict = "Right" if feedback else "Not yet"
        lines = "".join(f"<p>{self.quiz.inline_html(line)}</p>" for line in feedback.text.splitlines())
        kind = "right" if feedback else "wrong"
        self.feedback.value = (f'<div role="status" class="ffn-quiz-feedback ffn-quiz-{kind}">'
                               f"<p><strong>{html.escape(verdict)}</strong></p>{lines}</div>")


class QuizWidget(widgets.VBox):
    def __init__(self, quiz):
        self.quiz = quiz
        header = widgets.HTML(f"<p><strong>{html.escape(quiz.title)}</strong>: {len(quiz)} questions. "
                              "Choose, press Check, read the feedback, and try again as often as you like.</p>")
        self.questions = [QuestionWidget(quiz, n) for n in range(1, len(quiz) + 1)]
        super().__init__([header, *self.questions])
        self.add_class("ffn-quiz")

    def __repr__(self) -> str:
        return self.quiz.text()
