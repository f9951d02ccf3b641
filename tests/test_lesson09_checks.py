"""Lesson 09's graders: right answers in several styles pass; each wrong one gets its own named mistake (a
"Likely mistake" is named only when the mistake reproduces the answer on every case); hidden cases come from the
grading secret."""
import numpy as np
import pytest
from hidden_under_secrets import assert_hidden_cases_are_drawn_from_the_secret

from helpers.checks import check_key_vector, check_rank_one_update, check_value_logits
from helpers.checks import lesson09 as L
from helpers.ffn import gelu_tanh


def grade(check, fn, capsys):
    result = check(fn)
    return result, capsys.readouterr().out


# --------------------------------------------------------------------------------------------------------
# check_value_logits
# --------------------------------------------------------------------------------------------------------
def value_numpy(W2, lnf_g, wte, unit):
    v = W2[unit]
    return ((v - v.mean()) * lnf_g) @ wte.T


def value_loops(W2, lnf_g, wte, unit):
    v = [float(x) for x in W2[unit]]
    mean = sum(v) / len(v)
    scaled = [(x - mean) * g for x, g in zip(v, lnf_g)]
    return np.array([sum(a * b for a, b in zip(scaled, row)) for row in wte])


def value_einsum(W2, lnf_g, wte, unit):
    centred = W2[unit] - np.mean(W2[unit])
    return np.einsum("d,vd->v", centred * lnf_g, wte)


def value_list(W2, lnf_g, wte, unit):
    return list(wte @ ((W2[unit] - W2[unit].mean()) * lnf_g))


def value_in_place(W2, lnf_g, wte, unit):
    W2[unit] -= W2[unit].mean()
    return (W2[unit] * lnf_g) @ wte.T


def value_float32(W2, lnf_g, wte, unit):
    v = W2[unit].astype(np.float32)
    return ((v - v.mean()) * lnf_g.astype(np.float32)) @ wte.T.astype(np.float32)


RIGHT_VALUES = [value_numpy, value_loops, value_einsum, value_list]
WRONG_VALUES = [(mistake.fn, f"Likely mistake: {mistake.name}") for mistake in L._VALUE_MISTAKES] + [
    (value_in_place, "changed its input `W2` in place"),
    (value_float32, "float32"),
    (lambda W2, lnf_g, wte, unit: W2[unit], "That is d numbers"),
    (lambda W2, lnf_g, wte, unit: None, "returned None"),
    (lambda W2, lnf_g, wte, unit: [str(x) for x in value_numpy(W2, lnf_g, wte, unit)], "not a number"),
]


def test_value_logits_stub_and_not_a_function(capsys):
    def stub(W2, lnf_g, wte, unit):
        raise NotImplementedError("your code here")
    assert "not implemented yet" in grade(check_value_logits, stub, capsys)[1]
    assert "expected a function" in grade(check_value_logits, value_numpy(*[np.eye(2)] * 3, 0), capsys)[1]


def test_value_logits_hidden_cases(monkeypatch, capsys):
    assert_hidden_cases_are_drawn_from_the_secret(check_value_logits, L._value_hidden, RIGHT_VALUES[:2],
                                                  WRONG_VALUES[:6], monkeypatch, capsys)


# --------------------------------------------------------------------------------------------------------
# check_key_vector
# --------------------------------------------------------------------------------------------------------
def key_loop(model, prompts, layer):
    total = np.zeros(model.config["d_ff"])
    for p in prompts:
        total += model.hidden(model.encode(p), layer).h[-1]
    return total / len(prompts)


def key_from_z(model, prompts, layer):
    zs = np.stack([model.hidden(model.encode(p), layer).z[-1] for p in prompts])
    return gelu_tanh(zs.astype(float)).mean(axis=0)


def key_stacked(model, prompts, layer):
    return np.vstack([model.hidden(model.encode(p), layer).h[-1:] for p in prompts]).mean(axis=0)


def key_comprehension(model, prompts, layer):
    return np.mean([model.hidden(model.encode(p), layer).h[-1] for p in prompts], axis=0)


def key_zero_weights(model, prompts, layer):
    key = key_loop(model, prompts, layer)
    model.params[f"h{layer}.W2"][:] = 0.0               # a learner "cleaning up" the model
    return key


def key_per_prompt(model, prompts, layer):
    return np.stack([model.hidden(model.encode(p), layer).h[-1] for p in prompts])


RIGHT_KEYS = [key_comprehension, key_loop, key_from_z, key_stacked]
WRONG_KEYS = [(mistake.fn, f"Likely mistake: {mistake.name}") for mistake in L._KEY_MISTAKES] + [
    (key_zero_weights, "changed its input `model` in place"),
    (key_per_prompt, "one key per prompt"),
    (lambda model, prompts, layer: model.hidden(model.encode(prompts[0]), layer).h, "one row per token"),
    (lambda model, prompts, layer: key_loop(model, prompts, layer)[: model.config["d"]], "That is d numbers"),
]


def test_key_vector_calling_the_reference_is_refused(capsys):
    from helpers import lm_lesson

    def calls(model, prompts, layer):
        return lm_lesson.key_vector(model, prompts, layer)
    result, out = grade(check_key_vector, calls, capsys)
    assert not result and "course's own" in out, out


def test_key_vector_hidden_cases(monkeypatch, capsys):
    assert_hidden_cases_are_drawn_from_the_secret(check_key_vector, L._key_hidden, [key_loop, key_from_z],
                                                  WRONG_KEYS[:4], monkeypatch, capsys)


# --------------------------------------------------------------------------------------------------------
# check_rank_one_update
# --------------------------------------------------------------------------------------------------------
def update_solve(W2, k, v_star, C):
    c_inv_k = np.linalg.solve(C, k)
    return W2 + np.outer(c_inv_k, v_star - k @ W2) / (k @ c_inv_k)


def update_inverse(W2, k, v_star, C):
    C_inv = np.linalg.inv(C)
    return W2 + (C_inv @ k)[:, None] * (v_star - W2.T @ k)[None, :] / (k @ C_inv @ k)


def update_loops(W2, k, v_star, C):
    u = np.linalg.solve(C, k)
    scale = sum(a * b for a, b in zip(k, u))
    new = W2.copy()
    r = v_star - k @ W2
    for i in range(W2.shape[0]):
        for j in range(W2.shape[1]):
            new[i, j] += u[i] * r[j] / scale
    return new


def update_in_place(W2, k, v_star, C):
    c_inv_k = np.linalg.solve(C, k)
    W2 += np.outer(c_inv_k, v_star - k @ W2) / (k @ c_inv_k)
    return W2


def update_float32(W2, k, v_star, C):
    return update_solve(W2, k, v_star, C).astype(np.float32)


def update_full_rank(W2, k, v_star, C):
    return update_solve(W2, k, v_star, C) + 1e-3 * np.ones_like(W2) * np.arange(W2.shape[1])[None, :] ** 2 \
        * np.arange(W2.shape[0])[:, None] ** 2


RIGHT_UPDATES = [update_solve, update_inverse, update_loops]
WRONG_UPDATES = [(mistake.fn, f"Likely mistake: {mistake.name}") for mistake in L._UPDATE_MISTAKES] + [
    (update_in_place, "changed its input `W2` in place"),
    (update_float32, "float32"),
    (update_full_rank, "has rank"),
    (lambda W2, k, v_star, C: update_solve(W2, k, v_star, C).tolist(), "expected a NumPy array"),
]


# Each exercise's right answers, and its wrong ones with the words the check must print for them.
RIGHT = [(check_value_logits, fn) for fn in RIGHT_VALUES] + [(check_key_vector, fn) for fn in RIGHT_KEYS] \
    + [(check_rank_one_update, fn) for fn in RIGHT_UPDATES]
WRONG = [(check_value_logits, *w) for w in WRONG_VALUES] + [(check_key_vector, *w) for w in WRONG_KEYS] \
    + [(check_rank_one_update, *w) for w in WRONG_UPDATES]


@pytest.mark.parametrize("check, fn", RIGHT, ids=[f"{c.__name__}-{f.__name__}" for c, f in RIGHT])
def test_right_answers_are_accepted(check, fn, capsys):
    result, out = grade(check, fn, capsys)
    assert result, out


@pytest.mark.parametrize("check, fn, words", WRONG, ids=[f"{c.__name__}-{w[:40]}" for c, _, w in WRONG])
def test_each_wrong_answer_gets_its_own_message(check, fn, words, capsys):
    result, out = grade(check, fn, capsys)
    assert not result and words in out, out
    assert out.count("Likely mistake") + out.count("Possibly") <= 1, out


def test_rank_one_update_reference_has_the_three_properties():
    case = L._update_cases()[0].args
    W2, k, v_star, C = case["W2"], case["k"], case["v_star"], case["C"]
    new = update_solve(W2, k, v_star, C)
    assert np.allclose(k @ new, v_star) and np.linalg.matrix_rank(new - W2) == 1
    j = np.random.default_rng(0).normal(size=len(k))
    j -= (j @ np.linalg.solve(C, k)) / (k @ np.linalg.solve(C, k)) * k      # j C^-1 k^T = 0
    assert np.allclose(j @ new, j @ W2)


def test_rank_one_update_hidden_cases(monkeypatch, capsys):
    assert_hidden_cases_are_drawn_from_the_secret(check_rank_one_update, L._update_hidden, RIGHT_UPDATES[:2],
                                                  WRONG_UPDATES[:6], monkeypatch, capsys)


# The three properties, said ✔ or ✘ under each failing case of a result shaped like W2.
PROPERTIES = ("k @ W2_new = v_star", "W2_new - W2 has rank 1", "keys j with j C^-1 k^T = 0 keep their output")


def brute_properties(new, case):
    """The three properties worked out another way: k @ new against v*, the rank by NumPy, and 20 random keys
    made C^-1-orthogonal to k."""
    W2, k, v_star, C = (case.args[n] for n in ("W2", "k", "v_star", "C"))
    c_inv_k = np.linalg.solve(C, k)
    j = np.random.default_rng(5).normal(size=(20, len(k)))
    j -= np.outer(j @ c_inv_k / (c_inv_k @ c_inv_k), c_inv_k)                # j C^-1 k^T = 0
    return (np.allclose(k @ new, v_star, rtol=0, atol=1e-6), np.linalg.matrix_rank(new - W2, tol=1e-8) == 1,
            np.allclose(j @ new, j @ W2, rtol=0, atol=1e-6))


def shown_properties(out, case_name):
    """The ✔/✘ of each property in the lines under the case's verdict."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  \u2718 {case_name}"))
    found = {}
    for line in lines[start + 1:]:
        if not line.startswith("      "):
            break
        mark, text = line.strip()[0], line.strip()[2:]
        found[next(p for p in PROPERTIES if text.startswith(p))] = mark == "\u2714"
    return tuple(found.get(p) for p in PROPERTIES)


SHAPED = [m for m in L._UPDATE_MISTAKES if m.name.split(":")[0] not in ("W2's orientation transposed",
                                                                         "k @ W2 computed as W2 @ k")]


@pytest.mark.parametrize("mistake", SHAPED, ids=lambda m: m.name[:40])
def test_rank_one_update_says_which_property_fails_on_each_failing_case(mistake, capsys):
    result, out = grade(check_rank_one_update, mistake.fn, capsys)
    assert not result and f"Likely mistake: {mistake.name}" in out, out
    for case in L._update_cases():
        new = np.asarray(mistake.fn(**case.args), dtype=float)
        if np.allclose(new, update_solve(**case.args)):
            assert f"\u2714 {case.name}" in out
            continue
        assert shown_properties(out, case.name) == brute_properties(new, case), (case.name, out)


@pytest.mark.parametrize("fn, shown", [
    (L._update("C^-1 k", "residual", "1"), (False, True, True)),       # not scaled: misses v* only
    (L._update("k", "residual", "k k"), (True, True, False)),          # C left out: hits v*, moves other keys
    (L._update_only, (False, False, False)),
    (update_full_rank, (False, False, False)),
    (update_float32, (True, True, True)),                              # right to float32's digits
], ids=["not scaled", "C left out", "update only", "full rank", "float32"])
def test_rank_one_update_properties_on_known_answers(fn, shown, capsys):
    result, out = grade(check_rank_one_update, fn, capsys)
    assert not result
    assert shown_properties(out, L._update_cases()[0].name) == shown, out


@pytest.mark.parametrize("fn", RIGHT_UPDATES + [update_in_place], ids=lambda f: f.__name__)
def test_rank_one_update_shows_no_properties_for_right_numbers(fn, capsys):
    out = grade(check_rank_one_update, fn, capsys)[1]
    assert not any(p in out for p in PROPERTIES), out


# --------------------------------------------------------------------------------------------------------
# The lesson's readings that the notebook prints (helpers.lm_lesson)
# --------------------------------------------------------------------------------------------------------
def test_country_keys_are_key_vector_for_each_country():
    from helpers import lm, lm_lesson
    model = L._trained()
    keys = lm_lesson.country_keys(model, "capital", layer=1)
    assert len(keys) == 54
    for country in ("France", "Gabon"):
        one = lm_lesson.key_vector(model, [lm.prompt(t, country) for t in lm.TEMPLATES["train"]["capital"]], 1)
        assert np.allclose(keys[country], one, rtol=1e-5, atol=1e-6)


def test_confidence_is_the_probability_of_the_models_own_answer():
    from helpers import lm_lesson
    model = L._trained()
    sure, said = lm_lesson.confidence(model), lm_lesson.predictions(model)
    assert sure.shape == (len(lm_lesson.fact_prompts()),) and np.all((sure > 0) & (sure <= 1))
    for i in (0, 500, len(sure) - 1):
        top = model.top(lm_lesson.fact_prompts()[i][1], k=1)[0]
        assert top[0] == said[i] and abs(top[1] - sure[i]) < 1e-5


def test_rank_one_update_not_scaled_holds_the_denominator_to_a_second_failure(capsys, monkeypatch):
    """The first failure says what fails (k @ W2_new misses v*) and names the scale in words; the line to write,
    k @ np.linalg.solve(C, k), shows only after a second failure."""
    from helpers.checks import _verdict
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})
    not_scaled = L._update("C^-1 k", "residual", "1")
    first = grade(check_rank_one_update, not_scaled, capsys)[1]
    assert "not scaled" in first and "k C^-1 k^T" in first and "maps exactly to v*" in first, first
    assert "np.linalg.solve(C,k)" not in first.replace(" ", ""), first
    second = grade(check_rank_one_update, not_scaled, capsys)[1]
    assert "k @ np.linalg.solve(C, k)" in second, second


@pytest.mark.parametrize("mistake", L._UPDATE_MISTAKES, ids=lambda m: m.name)
def test_rank_one_update_first_failures_show_no_line_of_the_solution(mistake):
    for formula in L._UPDATE_FORMULAS:
        assert formula.replace(" ", "") not in mistake.fix.replace(" ", ""), (mistake.name, mistake.fix)


@pytest.mark.parametrize("name", ["centred after multiplying by the gain", "divided by the gain instead of multiplied",
                                  "the gain lnf_g left out", "the mean of the whole W2 subtracted, not the value's own"])
def test_value_logits_holds_the_centred_value_to_the_same_mistake_again(name, capsys, monkeypatch):
    """The first failure says in words what to change (centre first, then scale by the gain); the expression,
    (v - v.mean()) * lnf_g or W2[unit] - W2[unit].mean(), shows when the check finds the same mistake again, and
    not after a different mistake."""
    from helpers.checks import _verdict
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})
    mistake = next(m for m in L._VALUE_MISTAKES if m.name == name)
    expression = mistake.later.split(" is ")[-1].rstrip(".")
    other = next(m for m in L._VALUE_MISTAKES if m.name == "the value not centred (its mean not subtracted)")
    grade(check_value_logits, other.fn, capsys)                 # a different mistake first
    first = grade(check_value_logits, mistake.fn, capsys)[1]
    assert f"Likely mistake: {name}" in first and expression not in first, first
    assert "If the check finds this again, it shows the line to write." in first, first
    second = grade(check_value_logits, mistake.fn, capsys)[1]
    assert expression in second, second


def test_value_logits_first_fix_says_centre_first_then_scale():
    mistake = next(m for m in L._VALUE_MISTAKES if m.name == "centred after multiplying by the gain")
    assert mistake.fix.startswith("Centre first, then scale by the gain"), mistake.fix
    assert "lnf_g" in mistake.later and ".mean()" not in mistake.fix and "*" not in mistake.fix, mistake.fix


def test_moved_prompts_are_the_prompts_changed_counts():
    """The lesson's list of the prompts an edit moved agrees with lm_lesson.changed's counts, and keeps the place of
    each prompt in fact_prompts() (the lesson reads its probability before the edit there)."""
    from helpers import lm, lm_lesson
    model = L._trained()
    others = lambda split, fact: fact[:2] != ("France", "capital")              # noqa: E731
    before = lm_lesson.predictions(model)
    after = lm_lesson.predictions(lm.edit_fact(model, "France", "capital", "Rome"))
    was_right, was_wrong = lm_lesson.moved_prompts(before, after, others)
    counts = lm_lesson.changed(before, after, others)
    assert len(was_right) == counts["right to wrong"] and was_right
    assert len(was_wrong) == counts["wrong to right"] + counts["wrong to other wrong"]
    for m in was_right + was_wrong:
        assert lm_lesson.fact_prompts()[m.index] == (m.split, m.prompt, m.fact) and others(m.split, m.fact)
        assert (before[m.index], after[m.index]) == (m.before, m.after) and m.before != m.after
    assert all(m.before == m.fact[2] for m in was_right) and all(m.before != m.fact[2] for m in was_wrong)


def test_where_an_edit_takes_as_the_lesson_says():
    """Sections 3 and 4 and the recap: in layer 1 an edit takes only with its key at the last token (at the subject's
    token nothing moves); an edit of layer 0 can take, at the last token, but turns more other facts wrong than
    layer 1's; at layer 0's subject token the edit to Tokyo does not take."""
    from helpers import lm, lm_lesson
    model = L._trained()
    before = lm_lesson.predictions(model)
    france = [i for i, (_, _, fact) in enumerate(lm_lesson.fact_prompts()) if fact[:2] == ("France", "capital")]
    others = lambda split, fact: fact[:2] != ("France", "capital")              # noqa: E731

    def edit(word, layer, position):
        after = lm_lesson.predictions(lm.edit_fact(model, "France", "capital", word, layer=layer, position=position))
        return sum(after[i] == word for i in france[:8]), lm_lesson.changed(before, after, others)["right to wrong"]

    assert lm_lesson.predictions(lm.edit_fact(model, "France", "capital", "Rome", 1, "subject")) == before
    took, lost = edit("Rome", 1, "last")
    took0, lost0 = edit("Rome", 0, "last")
    assert took == took0 == 8 and lost0 > 5 * lost
    assert edit("Tokyo", 0, "subject")[0] == 0


def test_c_is_written_in_the_row_convention_everywhere():
    """h is a row (1, d_ff), so ROME's C is E[h^T h] (d_ff, d_ff); E[h h^T] would be a number. Lesson 09, its
    helpers, its checks and its notes say it one way."""
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    files = ["solutions/09_trained_memory.ipynb", "notebooks/09_trained_memory.ipynb", "helpers/lm.py",
             "helpers/lm_lesson.py", "helpers/checks/lesson09.py", "docs/lm_notes.md", "docs/teaching.md"]
    for name in files:
        text = (root / name).read_text().replace("\\\\", "\\")
        for column in ("E[h h^T]", "E[h h^\\top]", "E[hh^T]", "(C^-1 k) delta^T", "k^T C^-1 k"):
            assert column not in text, (name, column)
    assert "C = E[h^T h]" in (root / "helpers/lm.py").read_text()
    from helpers import lm
    model = L._trained()
    h = model.hidden(lm.corpus_windows(4, 0, model.config["n_ctx"]), 1).h.reshape(-1, model.config["d_ff"])
    C = lm.covariance(model, 1, n_windows=4)
    assert np.allclose(C, np.mean([np.outer(row, row) for row in h.astype(float)], axis=0))   # h^T h, h a row
