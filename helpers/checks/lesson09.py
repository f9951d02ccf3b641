"""Checks for lesson 09, a trained language model's FFN read as a key-value memory, and a fact edited in it.

Row-vector convention throughout (x @ W): row u of W2 (d_ff, d) is unit u's value; the unembedding is the
tied token embedding wte (V, d), applied as x @ wte.T.
"""
from __future__ import annotations

import functools

import numpy as np

from helpers import gpt, lm
from helpers.checks._core import (FAIL, PASS, Case, Mistake, array_problem, check_function, close,
                                  close_float64, vector_problem, with_tiers)
from helpers.checks._verdict import grader, hidden_rng
from helpers.ffn import gelu
from helpers.lm_corpus import COUNTRIES, RELATIONS, TEMPLATES, prompt
from helpers.lm_lesson import key_vector as _reference_key
from helpers.lm_lesson import rank_one_update as _reference_update
from helpers.lm_lesson import value_logits as _reference_value

__all__ = ["check_value_logits", "check_key_vector", "check_rank_one_update"]


def _f(a):
    return np.asarray(a, dtype=float)


# --------------------------------------------------------------------------------------------------------
# Exercise 1: value_logits(W2, lnf_g, wte, unit), a unit's value through the logit lens
# --------------------------------------------------------------------------------------------------------
def _centred(v):
    return v - v.mean()


# Lines of the solution, shown only when the check finds the same mistake again (Mistake.later, held_before): the
# first failure says in words what to change (centre first, then scale by the gain).
_CENTRED = "The centred value is W2[unit] - W2[unit].mean()."
_CENTRED_SCALED = "With v = W2[unit], the centred and scaled value is (v - v.mean()) * lnf_g."

_VALUE_MISTAKES = [
    Mistake("the value read from a column of W2",
            "With x @ W, unit u's value is row u of W2 (shape (d_ff, d)): W2[unit], not W2[:, unit].",
            lambda W2, g, wte, u: (_centred(_f(W2)[:, u]) * _f(g)) @ _f(wte).T),
    Mistake("the unembedding applied on the wrong side (wte instead of wte.T)",
            "wte has one row per word, shape (V, d): a d-vector meets it as vector @ wte.T (or wte @ vector), "
            "giving one logit per word.",
            lambda W2, g, wte, u: (_centred(_f(W2)[u]) * _f(g)) @ _f(wte)),
    Mistake("the final layer norm left out (neither centred nor scaled by its gain)",
            "The final layer norm stands between the residual stream and the unembedding: subtract the value's "
            "mean, multiply by lnf_g entry by entry, then unembed.",
            lambda W2, g, wte, u: _f(W2)[u] @ _f(wte).T),
    Mistake("the value not centred (its mean not subtracted)",
            "The final layer norm first subtracts the mean of the d numbers; then it multiplies by lnf_g.",
            lambda W2, g, wte, u: (_f(W2)[u] * _f(g)) @ _f(wte).T),
    Mistake("the gain lnf_g left out",
            "After centring, the final layer norm multiplies each coordinate by its gain, lnf_g, entry by entry.",
            lambda W2, g, wte, u: _centred(_f(W2)[u]) @ _f(wte).T, later=_CENTRED_SCALED),
    Mistake("centred after multiplying by the gain",
            "Centre first, then scale by the gain: layer norm subtracts the value's own mean, then multiplies by "
            "lnf_g. Multiplying first changes the mean that is subtracted.",
            lambda W2, g, wte, u: _centred(_f(W2)[u] * _f(g)) @ _f(wte).T, later=_CENTRED_SCALED),
    Mistake("divided by the gain instead of multiplied",
            "Layer norm's gain multiplies the centred value entry by entry; it does not divide it.",
            lambda W2, g, wte, u: (_centred(_f(W2)[u]) / _f(g)) @ _f(wte).T, later=_CENTRED_SCALED),
    Mistake("divided by the value's own standard deviation",
            "The layer norm's division is by the standard deviation of the whole residual stream of a token, one "
            "positive number that scales every unit's logits alike; the lesson leaves it out. Centre and multiply "
            "by lnf_g only.",
            lambda W2, g, wte, u: (_centred(_f(W2)[u]) / _f(W2)[u].std() * _f(g)) @ _f(wte).T),
    Mistake("the mean of the whole W2 subtracted, not the value's own",
            "Centre the one value: subtract the mean of its own d numbers, one number, not the mean of all of W2.",
            lambda W2, g, wte, u: ((_f(W2)[u] - _f(W2).mean()) * _f(g)) @ _f(wte).T, later=_CENTRED),
    Mistake("the mean over the units subtracted (W2.mean(axis=0)), not the value's own mean",
            "Layer norm centres each token's vector over its own d coordinates: subtract the value's own mean, "
            "one number, not a mean taken over the units.",
            lambda W2, g, wte, u: ((_f(W2)[u] - _f(W2).mean(axis=0)) * _f(g)) @ _f(wte).T, later=_CENTRED),
    Mistake("units counted from 1", "Python counts from 0: unit u is row W2[u].",
            lambda W2, g, wte, u: (_centred(_f(W2)[u - 1]) * _f(g)) @ _f(wte).T),
    Mistake("probabilities returned (a softmax), not logits",
            "Return the logits themselves, one per word; a softmax would also need the rest of the residual stream.",
            lambda W2, g, wte, u: (lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum())(
                (_centred(_f(W2)[u]) * _f(g)) @ _f(wte).T)),
]


def _value_case(name, rng, d_ff, d, V, unit):
    """A case with unrounded weights, gains between 0.5 and 3 (none equal), and a value with a clear mean."""
    W2 = rng.normal(size=(d_ff, d)) + rng.normal(size=(d_ff, 1))          # each value has its own mean
    return Case(name, {"W2": W2, "lnf_g": rng.uniform(0.5, 3.0, size=d), "wte": rng.normal(size=(V, d)),
                       "unit": unit})


def _value_cases():
    rng = np.random.default_rng(91)
    return [
        _value_case("a 6-unit layer, d = 4, 7 words, unit 2", rng, 6, 4, 7, 2),
        # Square: a column of W2 and wte on the wrong side run here (and give other numbers).
        _value_case("square: 5 units, d = 5, 5 words, unit 3", rng, 5, 5, 5, 3),
        _value_case("a 5-unit layer, d = 3, 8 words, unit 0", rng, 5, 3, 8, 0),
    ]


def _value_hidden():
    """Drawn when the work is graded (hidden_rng): a layer of random widths and vocabulary, a random unit; and a
    square one, where the transposes run."""
    rng = hidden_rng(909)
    d = int(rng.integers(3, 7))
    d_ff, V = int(rng.integers(d + 2, 2 * d + 3)), int(rng.integers(d + 3, 2 * d + 6))
    n = int(rng.integers(3, 7))
    return [_value_case("hidden: a layer of random widths and vocabulary, a random unit", rng, d_ff, d, V,
                        int(rng.integers(1, d_ff))),
            _value_case("hidden: a square layer (as many units and words as d), a random unit", rng, n, n, n,
                        int(rng.integers(1, n)))]


def _value_problem(value, case):
    V, d = np.shape(case.args["wte"])
    d_ff = np.shape(case.args["W2"])[0]
    hints = {d: "That is d numbers, a vector in the residual stream: take its dot product with every word's "
                "row of wte (vector @ wte.T) to get one logit per word."}
    if d_ff not in hints:
        hints[d_ff] = "That is one number per unit (a column of W2?); the answer has one logit per word."
    return vector_problem(value.tolist() if isinstance(value, np.ndarray) and value.ndim == 1 else value, V, hints)


@grader
def check_value_logits(fn) -> bool:
    """Grade `value_logits(W2, lnf_g, wte, unit)`: ((W2[unit] - its mean) * lnf_g) @ wte.T, one logit per word."""
    return check_function(
        "value_logits", fn, _value_cases(), _reference_value, _value_problem, _VALUE_MISTAKES,
        compare=lambda got, expected: close(got, expected, rtol=1e-9, atol=1e-12),
        normalize=lambda v: np.asarray(v, dtype=float), hidden=_value_hidden,
        fallback_hint="print the value W2[unit], then its centred and scaled version, for the first failing case: "
                      "one vector of d numbers, then one dot product with each row of wte.")


# --------------------------------------------------------------------------------------------------------
# Exercise 2: key_vector(model, prompts, layer), the key an edit writes to
# --------------------------------------------------------------------------------------------------------
_COUNTRY_WORDS = {row[0] for row in COUNTRIES}


def _subject_position(model, ids):
    return next(i for i, t in enumerate(ids) if model.vocab[t] in _COUNTRY_WORDS)


def _mean_h(model, prompts, layer, where=lambda model, ids: -1, part="h"):
    rows = []
    for p in prompts:
        ids = model.encode(p)
        rows.append(getattr(model.hidden(ids, layer), part)[where(model, ids)])
    return np.mean(rows, axis=0)


def _other_act(act):
    def key(model, prompts, layer):
        return np.mean([act(model.hidden(model.encode(p), layer).z[-1].astype(float)) for p in prompts], axis=0)
    return key


_KEY_MISTAKES = [
    Mistake("the pre-activation z taken, not the activation h",
            "The key is what the unit's value gets multiplied by: the activation h = gelu(z), model.hidden(...).h.",
            lambda model, prompts, layer: _mean_h(model, prompts, layer, part="z")),
    Mistake("the key read at the subject's token, not the prompt's last token",
            "In this 2-layer model nothing after the last FFN carries the subject's position to the prediction: "
            "read h at the last token, [-1], where the next word is predicted.",
            lambda model, prompts, layer: _mean_h(model, prompts, layer, _subject_position)),
    Mistake("the key read at the first token",
            "h has one row per token, in order: the last token's row is h[-1], not h[0].",
            lambda model, prompts, layer: _mean_h(model, prompts, layer, lambda m, ids: 0)),
    Mistake("averaged over the prompt's tokens, not read at its last token",
            "The prediction is made at the last token: take h[-1] for each prompt, then average over the prompts.",
            lambda model, prompts, layer: np.mean([model.hidden(model.encode(p), layer).h.mean(axis=0)
                                                   for p in prompts], axis=0)),
    Mistake("the other layer's activations",
            "Pass the layer you were given to model.hidden(ids, layer); layers count from 0.",
            lambda model, prompts, layer: _mean_h(model, prompts, 1 - layer)),
    Mistake("layers counted from 1",
            "model.hidden counts layers from 0: the last of 2 layers is layer 1.",
            lambda model, prompts, layer: _mean_h(model, prompts, layer + 1)),
    Mistake("the first prompt's key alone, not the average over the prompts",
            "ROME's key averages over several wordings: one h[-1] per prompt, then their mean.",
            lambda model, prompts, layer: _mean_h(model, prompts[:1], layer)),
    Mistake("the last prompt's key alone, not the average over the prompts",
            "Average h[-1] over every prompt; a loop that overwrites its variable keeps only the last one.",
            lambda model, prompts, layer: _mean_h(model, prompts[-1:], layer)),
    Mistake("summed over the prompts, not averaged",
            "Divide by the number of prompts (np.mean(..., axis=0)).",
            lambda model, prompts, layer: len(prompts) * _mean_h(model, prompts, layer)),
    Mistake("ReLU applied to z, not the model's GELU",
            "The model's activation is GELU (tanh form): take model.hidden(...).h instead of recomputing it.",
            _other_act(lambda z: np.maximum(z, 0))),
    Mistake("the exact GELU applied to z, not the model's tanh form",
            "The model uses GELU's tanh approximation: take model.hidden(...).h instead of recomputing it.",
            _other_act(gelu)),
]


@functools.lru_cache(maxsize=1)
def _trained() -> lm.Model:
    return lm.load()


def _random(seed) -> lm.Model:
    like = _trained()
    return lm.Model(gpt.init_params(like.config, np.random.default_rng(seed), np.float32), dict(like.config),
                    list(like.vocab))


def _prompts(subject, relation, split="train"):
    return [prompt(t, subject) for t in TEMPLATES[split][relation]]


def _key_cases():
    trained = _trained()
    return [
        Case("the trained model, France's capital under the 8 training templates, layer 1",
             {"model": trained, "prompts": _prompts("France", "capital"), "layer": 1}),
        Case("the trained model, Japan's language under the 8 training templates, layer 0",
             {"model": trained, "prompts": _prompts("Japan", "language"), "layer": 0}),
        Case("a randomly initialised model, Egypt's continent under the 3 held-out templates, layer 1",
             {"model": _random(7), "prompts": _prompts("Egypt", "continent", "heldout"), "layer": 1}),
    ]


def _key_hidden():
    """Drawn when the work is graded (hidden_rng): a random country, relation, template split and layer, on the
    trained model and on a freshly seeded random one."""
    rng = hidden_rng(919)
    cases = []
    for name, model in (("the trained model", _trained()),
                        ("a randomly initialised model", _random(int(rng.integers(2 ** 32))))):
        country = COUNTRIES[int(rng.integers(len(COUNTRIES)))][0]
        relation = RELATIONS[int(rng.integers(len(RELATIONS)))]
        split = ("train", "heldout")[int(rng.integers(2))]
        cases.append(Case(f"hidden: {name}, a random country, relation, template split and layer",
                          {"model": model, "prompts": _prompts(country, relation, split),
                           "layer": int(rng.integers(2))}))
    return cases


def _key_problem(value, case):
    d_ff = case.args["model"].config["d_ff"]
    n, d = len(case.args["prompts"]), case.args["model"].config["d"]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        if value.shape == (n, d_ff):
            return (f"returned shape {value.shape}, one key per prompt; average them over the prompts "
                    "(np.mean(..., axis=0)) into one key of d_ff numbers")
        if value.shape[1] == d_ff:
            return (f"returned shape {value.shape}, one row per token: take the last token's row, h[-1], for each "
                    "prompt, and average those")
    hints = {d: "That is d numbers, the FFN's output or its input: the key is the d_ff activations h."}
    return vector_problem(value.tolist() if isinstance(value, np.ndarray) and value.ndim == 1 else value, d_ff,
                          hints)


@grader
def check_key_vector(fn) -> bool:
    """Grade `key_vector(model, prompts, layer)`: the mean over the prompts of h at each prompt's last token."""
    return check_function(
        "key_vector", fn, _key_cases(), _reference_key, _key_problem, _KEY_MISTAKES,
        compare=lambda got, expected: close(got, expected, rtol=1e-5, atol=1e-6),
        normalize=lambda v: np.asarray(v, dtype=float), hidden=_key_hidden,
        fallback_hint="for one prompt, print model.hidden(model.encode(prompt), layer).h.shape: one row per token, "
                      "and the key uses the last row.")


# --------------------------------------------------------------------------------------------------------
# Exercise 3: rank_one_update(W2, k, v_star, C), ROME's update of W2
# --------------------------------------------------------------------------------------------------------
def _parts(W2, k, v_star, C):
    W2, k, v_star, C = _f(W2), _f(k), _f(v_star), _f(C)
    c_inv_k = np.linalg.solve(C, k)
    return W2, k, v_star, C, c_inv_k, v_star - k @ W2


def _update(direction, change, scale):
    def mistake(W2, k, v_star, C):
        W2, k, v_star, C, c_inv_k, residual = _parts(W2, k, v_star, C)
        u = {"C^-1 k": c_inv_k, "k": k, "C k": C @ k}[direction]
        r = {"residual": residual, "v*": v_star, "-residual": -residual}[change]
        s = {"k C^-1 k": k @ c_inv_k, "1": 1.0, "k k": k @ k, "k C k": k @ C @ k}[scale]
        return W2 + np.outer(u, r) / s
    return mistake


def _transposed(W2, k, v_star, C):
    W2, k, v_star, C, c_inv_k, residual = _parts(W2, k, v_star, C)
    return W2 + np.outer(residual, c_inv_k) / (k @ c_inv_k)


def _w2_times_k(W2, k, v_star, C):
    W2, k, v_star, C, c_inv_k, _ = _parts(W2, k, v_star, C)
    return W2 + np.outer(c_inv_k, v_star - W2 @ k) / (k @ c_inv_k)


def _update_only(W2, k, v_star, C):
    W2, k, v_star, C, c_inv_k, residual = _parts(W2, k, v_star, C)
    return np.outer(c_inv_k, residual) / (k @ c_inv_k)


# Lines of the solution: a fix sentence that shows one is held back to a second failure (with_tiers).
_UPDATE_FORMULAS = ["np.linalg.solve(C, k)", "np.outer("]

_UPDATE_MISTAKES = with_tiers([
    Mistake("not scaled: the update is not divided by k C^-1 k^T",
            "Then k @ W2_new = k @ W2 + (k C^-1 k^T)(v* - k @ W2), not v*: the update must be scaled so that k "
            "maps exactly to v*, by the number k C^-1 k^T (k times C^-1 times k, one number). "
            "Divide the outer product by k @ np.linalg.solve(C, k).",
            _update("C^-1 k", "residual", "1")),
    Mistake("divided by k . k instead of k C^-1 k^T",
            "The update's column is C^-1 k^T, so k meets it as the number k C^-1 k^T, not k @ k: scaled by "
            "k @ k, k @ W2_new misses v*.",
            _update("C^-1 k", "residual", "k k")),
    Mistake("C left out: the update is along k itself",
            "This hits v*, but moves every key j with j @ k != 0, even keys the corpus separates from k "
            "(j C^-1 k^T = 0). The column of the update is C^-1 k^T, and the number it is divided by k C^-1 k^T.",
            _update("k", "residual", "k k")),
    Mistake("C where C^-1 belongs",
            "ROME's column is C^-1 k^T: the x that solves C x = k^T, not C times k. "
            "In NumPy, np.linalg.solve(C, k).",
            _update("C k", "residual", "k C k")),
    Mistake("v* used as the change, without subtracting k @ W2",
            "The new key must map to v*, so the change it needs is v* - k @ W2; adding v* itself gives "
            "k @ W2 + v*.",
            _update("C^-1 k", "v*", "k C^-1 k")),
    Mistake("the change's sign reversed (k @ W2 - v*)",
            "The change k needs is v* - k @ W2 (target minus now), added to W2.",
            _update("C^-1 k", "-residual", "k C^-1 k")),
    Mistake("W2's orientation transposed: the update is (d, d_ff)",
            "W2 is (d_ff, d), one row per unit, and so is the update: its column C^-1 k^T has d_ff numbers, its "
            "row v* - k @ W2 has d. The update is np.outer(C^-1 k, v* - k @ W2).",
            _transposed),
    Mistake("k @ W2 computed as W2 @ k",
            "With W2 of shape (d_ff, d), what the key k writes is k @ W2 (d numbers).",
            _w2_times_k),
    Mistake("only the update returned, not W2 plus the update",
            "Return the new matrix: W2 + the rank-one update.",
            _update_only),
], _UPDATE_FORMULAS)


def _spd(rng, n):
    """A covariance of n activations: E[h^T h] over 4n samples of h = gelu(z) (h a row), plus a little on the
    diagonal."""
    h = gelu(rng.normal(size=(4 * n, n)) + rng.normal(size=n))
    return h.T @ h / len(h) + 0.05 * np.eye(n)


def _update_case(name, rng, d_ff, d, identity=False):
    C = np.eye(d_ff) if identity else _spd(rng, d_ff)
    k = gelu(rng.normal(size=d_ff) + 0.5)
    return Case(name, {"W2": rng.normal(size=(d_ff, d)), "k": k, "v_star": rng.normal(size=d), "C": C})


def _update_cases():
    rng = np.random.default_rng(929)
    return [
        _update_case("6 units, d = 4, C a covariance of activations", rng, 6, 4),
        # Square: the transposed update and W2 @ k run here (and give other numbers).
        _update_case("square: 5 units, d = 5, C a covariance of activations", rng, 5, 5),
        _update_case("7 units, d = 3, C = I (uncorrelated activations)", rng, 7, 3, identity=True),
    ]


def _update_hidden():
    """Drawn when the work is graded (hidden_rng): random widths with a covariance of random activations; and a
    square layer, where the transposes run."""
    rng = hidden_rng(939)
    d = int(rng.integers(3, 7))
    n = int(rng.integers(3, 8))
    return [_update_case("hidden: random widths, C a covariance of random activations", rng,
                         int(rng.integers(d + 2, 2 * d + 4)), d),
            _update_case("hidden: a square layer, C a covariance of random activations", rng, n, n)]


def _update_problem(value, case):
    W2 = case.args["W2"]
    d_ff, d = W2.shape
    problem = array_problem(value, (d_ff, d), shape_hints={
        (d, d_ff): "That is W2's shape transposed: W2 has one row per unit, (d_ff, d), and so does the update."})
    if problem is not None:
        return problem
    change = value.astype(float) - W2
    s = np.linalg.svd(change, compute_uv=False)
    rank = int(np.sum(s > 1e-5 * max(s.max(), np.abs(W2).max())))   # float32 rounding stays below this
    if rank > 1:
        if np.linalg.matrix_rank(value.astype(float)) == 1:
            return ("returned a rank-one matrix, but W2_new - W2 is not rank one: return W2 plus the update, "
                    "not the update alone")
        return (f"returned a matrix whose change from W2 has rank {rank}, not 1: the update is one outer product, "
                "np.outer(column, row)")
    return None


def _update_facts(value, case) -> list[str]:
    """The three properties the exercise names, each ✔ or ✘ for a result of W2's shape that is not the right one:
    k @ W2_new = v*, W2_new - W2 of rank one, and every key j with j C^-1 k^T = 0 writing what it wrote before
    (the largest move of such a key of length 1). What the result does, never a cause."""
    W2, k, v_star, C, c_inv_k, _ = _parts(case.args["W2"], case.args["k"], case.args["v_star"], case.args["C"])
    if not isinstance(value, np.ndarray) or value.shape != W2.shape or not np.all(np.isfinite(value)):
        return []
    new = value.astype(float)
    if close_float64(new, _reference_update(W2, k, v_star, C)):
        return []
    change = new - W2
    scale = max(1.0, np.abs(W2).max(), np.abs(v_star).max())
    miss = np.abs(k @ new - v_star).max()
    s = np.linalg.svd(change, compute_uv=False)
    rank = int(np.sum(s > 1e-5 * max(s.max(), np.abs(W2).max())))   # as _update_problem counts it
    unit = c_inv_k / np.linalg.norm(c_inv_k)
    across = np.linalg.norm(change - np.outer(unit, unit @ change), 2)   # keys j with j . C^-1 k = 0, |j| = 1
    mark = lambda ok: PASS if ok else FAIL                                # noqa: E731
    return [f"{mark(miss <= 1e-6 * scale)} k @ W2_new = v_star"
            + ("" if miss <= 1e-6 * scale else f": off by up to {miss:.4g}"),
            f"{mark(rank == 1)} W2_new - W2 has rank 1" + ("" if rank == 1 else f": its rank is {rank}"),
            f"{mark(across <= 1e-6 * scale)} keys j with j C^-1 k^T = 0 keep their output"
            + ("" if across <= 1e-6 * scale else f": one of length 1 moves by up to {across:.4g}")]


@grader
def check_rank_one_update(fn) -> bool:
    """Grade `rank_one_update(W2, k, v_star, C)`: W2 + (C^-1 k^T)(v* - k W2) / (k C^-1 k^T), k a row."""
    return check_function(
        "rank_one_update", fn, _update_cases(), _reference_update, _update_problem, _UPDATE_MISTAKES,
        compare=close_float64, normalize=lambda v: np.asarray(v, dtype=float), hidden=_update_hidden,
        facts=_update_facts,
        fallback_hint="for the first failing case, print k @ W2_new - v_star (it should be 0) and the rank of "
                      "W2_new - W2 (np.linalg.matrix_rank; it should be 1).")
