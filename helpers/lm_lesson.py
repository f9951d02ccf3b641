"""Lesson 09's readings of the shipped language model (helpers.lm): keys and values of its FFN units, how many
units fire, knocking units out, and the three exercises' references.

    from helpers import lm, lm_lesson as ll
    model = lm.load()
    ctx = ll.corpus_contexts(model)              # every distinct training prefix, its FFN pre-activations
    ll.top_contexts(model, ctx, layer=1, unit=73, n=5)
    ll.top_values(model, layer=1, unit=73, n=8)  # the words the unit's row of W2 promotes (the logit lens)
    ll.agreeing_units(model, ctx, layer=1)       # units whose keys and values agree

The logit lens here: a unit's value (its row of W2) goes through the final layer norm's *linear part*, centred
(its mean subtracted) and multiplied by the gain lnf_g entry by entry, then through the unembedding (wte^T, tied).
The layer norm's division by the standard deviation is left out: it divides the whole residual stream of a
token by one positive number, which scales every unit's logits alike and changes no ranking. Its bias is left
out too: it adds the same logits whatever the units write.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from helpers import gpt, lm
from helpers.ffn import gelu_tanh
from helpers.gpt import single_blas_thread
from helpers.lm import random_model  # noqa: F401  (the lesson calls it as ll.random_model)
from helpers.lm_corpus import COUNTRIES, FACTS, TEMPLATES, fact_sentences, filler_sentences, prompt

__all__ = ["value_logits", "key_vector", "rank_one_update", "random_model", "Contexts", "corpus_contexts",
           "top_contexts", "top_values", "overlaps", "agreeing_units", "firing_share", "units_for",
           "predictions", "confidence", "changed", "moved_prompts", "fact_prompts", "country_keys", "value_change",
           "corpus_covariance"]

# The class of each object and subject word: what kind of word a unit's contexts precede or its value promotes.
WORD_CLASS = {word: kind for row in COUNTRIES
              for word, kind in zip(row, ("country", "capital", "language", "continent"))}


# ---------------------------------------------------------------- the exercises' references
def value_logits(W2, lnf_g, wte, unit):
    """Unit `unit`'s value through the logit lens: (V,) logits = ((W2[unit] - mean) * lnf_g) @ wte.T."""
    value = np.asarray(W2, dtype=float)[unit]             # (d,) row `unit` of W2: what the unit writes
    centred = value - value.mean()                        # the final layer norm subtracts the mean ...
    return (centred * np.asarray(lnf_g, dtype=float)) @ np.asarray(wte, dtype=float).T   # ... and scales by g


def key_vector(model, prompts, layer):
    """The key for an edit: the FFN activations h (d_ff,) of `layer` at each prompt's last token, averaged."""
    return np.mean([model.hidden(model.encode(p), layer).h[-1] for p in prompts], axis=0)


def rank_one_update(W2, k, v_star, C):
    """W2 + (C^-1 k^T)(v* - k W2) / (k C^-1 k^T), in the row-vector convention (k and v* rows, W2 of shape
    (d_ff, d)): the outer product of the column C^-1 k^T (d_ff) and the row v* - k W2 (d), divided by the number
    k C^-1 k^T (C is symmetric). Rank one, k @ W2_new = v*, unchanged for keys j with j C^-1 k^T = 0."""
    c_inv_k = np.linalg.solve(C, k)                       # (d_ff,)
    residual = v_star - k @ W2                            # (d,) what k must gain
    return W2 + np.outer(c_inv_k, residual) / (k @ c_inv_k)


# ---------------------------------------------------------------- keys: where a unit fires in the corpus
class Contexts(NamedTuple):
    """Every distinct prefix of the training corpus's sentences: z[layer] (n, d_ff) the FFN pre-activations at its
    last token, next (n,) the id of the word that follows it in the corpus, prefixes the token ids."""
    z: list
    next: np.ndarray
    prefixes: list


@single_blas_thread
def corpus_contexts(model: lm.Model) -> Contexts:
    """The FFN pre-activations of every layer at the last token of every distinct prefix of the training
    sentences (fact sentences and filler), one forward pass per sentence length."""
    encoded = [model.encode(s) for s in sorted(set(fact_sentences("train") + filler_sentences()))]
    seen, nxt, prefixes, zs = set(), [], [], [[] for _ in range(model.config["n_layer"])]
    for length in sorted({len(e) for e in encoded}):
        rows = [e for e in encoded if len(e) == length]
        cache = gpt.forward(model.params, np.array(rows), model.config)[1]
        z = [f_in @ model.params[f"h{i}.W1"] + model.params[f"h{i}.b1"] for i, f_in in enumerate(cache["ffn_in"])]
        for b, row in enumerate(rows):
            for t in range(length - 1):
                prefix = tuple(row[: t + 1])
                if prefix in seen:
                    continue
                seen.add(prefix)
                prefixes.append(prefix)
                nxt.append(row[t + 1])
                for i in range(len(zs)):
                    zs[i].append(z[i][b, t])
    return Contexts([np.array(z) for z in zs], np.array(nxt), prefixes)


def top_contexts(model: lm.Model, ctx: Contexts, layer: int, unit: int, n: int = 5) -> list[tuple[str, str, float]]:
    """The n prefixes where the unit's activation h is largest: (prefix, the word that follows, h)."""
    h = gelu_tanh(ctx.z[layer][:, unit])
    best = np.argsort(-h, kind="stable")[:n]
    return [(model.decode(ctx.prefixes[i]), model.vocab[ctx.next[i]], float(h[i])) for i in best]


def _all_value_logits(model: lm.Model, layer: int) -> np.ndarray:
    """value_logits for every unit of a layer at once, (d_ff, V)."""
    W2 = model.params[f"h{layer}.W2"].astype(float)
    return ((W2 - W2.mean(axis=1, keepdims=True)) * model.params["lnf_g"]) @ model.params["wte"].T.astype(float)


def top_values(model: lm.Model, layer: int, unit: int, n: int = 8) -> list[str]:
    """The n words the unit's value promotes most through the logit lens."""
    logits = value_logits(model.params[f"h{layer}.W2"], model.params["lnf_g"], model.params["wte"], unit)
    return [model.vocab[i] for i in np.argsort(-logits, kind="stable")[:n]]


def overlaps(model: lm.Model, ctx: Contexts, layer: int, n_contexts: int = 20, n_values: int = 10) -> np.ndarray:
    """For every unit (d_ff,): how many of the n_values words its value promotes most are words that follow
    one of its n_contexts top contexts in the corpus: 0 when keys and values have nothing to do with each other."""
    h = gelu_tanh(ctx.z[layer])                                            # (n, d_ff)
    tops = np.argpartition(-h, n_contexts - 1, axis=0)[:n_contexts].T      # (d_ff, n_contexts), any order
    values = np.argsort(-_all_value_logits(model, layer), axis=1, kind="stable")[:, :n_values]   # (d_ff, n_values)
    return np.array([len(set(ctx.next[t].tolist()) & set(v.tolist())) for t, v in zip(tops, values)])


def agreeing_units(model: lm.Model, ctx: Contexts, layer: int, at_least: int = 3, **kwargs) -> np.ndarray:
    """The units whose value's top words include at least `at_least` words that follow their top contexts."""
    return np.flatnonzero(overlaps(model, ctx, layer, **kwargs) >= at_least)


def firing_share(ctx: Contexts, layer: int) -> np.ndarray:
    """For every context (n,): the share of the layer's units that fire, z > 0 (GELU's input above 0, where the
    unit's output h is above 0 and grows)."""
    return (ctx.z[layer] > 0).mean(axis=1)


# ---------------------------------------------------------------- knock-out and the facts
def units_for(model: lm.Model, text: str, word: str, layer: int) -> np.ndarray:
    """The layer's units ordered by how much each adds to `word`'s logit after text: h_u times the unit's value
    logit for the word (the logit lens), largest first."""
    h = model.hidden(model.encode(text), layer).h[-1].astype(float)       # (d_ff,)
    push = h * _all_value_logits(model, layer)[:, model.index[word]]      # (d_ff,)
    return np.argsort(-push, kind="stable")


def fact_prompts() -> list[tuple[str, str, tuple]]:
    """(split, prompt, fact) for every fact under every training and held-out template."""
    return [(split, prompt(template, fact[0]), fact) for split in ("train", "heldout")
            for fact in FACTS for template in TEMPLATES[split][fact[1]]]


def predictions(model: lm.Model) -> list[str]:
    """The model's greedy next word for every prompt of fact_prompts(), in that order."""
    return [word for split in ("train", "heldout") for _, _, word in lm.fact_predictions(model, split)]


@single_blas_thread
def confidence(model: lm.Model) -> np.ndarray:
    """For every prompt of fact_prompts(), in that order (n,): the probability the model gives its greedy next
    word, how sure it is of what it says. Prompts of one length go through as one batch."""
    encoded = [model.encode(p) for _, p, _ in fact_prompts()]
    out = np.empty(len(encoded))
    for length in sorted({len(e) for e in encoded}):
        rows = [i for i, e in enumerate(encoded) if len(e) == length]
        logits = model.batch_logits(np.array([encoded[i] for i in rows]))[:, -1].astype(float)   # (B, V)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        out[rows] = (p / p.sum(axis=1, keepdims=True)).max(axis=1)
    return out


def changed(before: list[str], after: list[str], keep=lambda split, fact: True) -> dict[str, int]:
    """How the predictions of the prompts that `keep(split, fact)` selects moved: right -> wrong, wrong -> right,
    wrong -> another wrong, and how many prompts were compared."""
    out = {"right to wrong": 0, "wrong to right": 0, "wrong to other wrong": 0, "prompts": 0}
    for (split, _, fact), b, a in zip(fact_prompts(), before, after):
        if not keep(split, fact):
            continue
        out["prompts"] += 1
        if b == fact[2] and a != fact[2]:
            out["right to wrong"] += 1
        elif b != fact[2] and a == fact[2]:
            out["wrong to right"] += 1
        elif b != a:
            out["wrong to other wrong"] += 1
    return out


class Moved(NamedTuple):
    """A prompt whose answer changed: its place in fact_prompts(), its split, text and fact, and both answers."""
    index: int
    split: str
    prompt: str
    fact: tuple
    before: str
    after: str


def moved_prompts(before: list[str], after: list[str],
                  keep=lambda split, fact: True) -> tuple[list[Moved], list[Moved]]:
    """The prompts of the facts `keep` accepts whose answer differs between `before` and `after` (predictions, in
    fact_prompts() order): (those the model answered right before, those it answered wrong before)."""
    moved = [Moved(i, split, text, fact, b, a) for i, ((split, text, fact), b, a)
             in enumerate(zip(fact_prompts(), before, after)) if keep(split, fact) and a != b]
    return [m for m in moved if m.before == m.fact[2]], [m for m in moved if m.before != m.fact[2]]


@single_blas_thread
def country_keys(model: lm.Model, relation: str, layer: int) -> dict[str, np.ndarray]:
    """Every country's key for the relation (d_ff,): what key_vector gives for the relation's training templates
    filled with the country, as an edit of that country's fact reads it; prompts of one length go through as one
    batch."""
    countries = [row[0] for row in COUNTRIES]
    texts = [prompt(t, c) for c in countries for t in TEMPLATES["train"][relation]]
    encoded = [model.encode(t) for t in texts]
    h = np.empty((len(texts), model.config["d_ff"]))
    for length in sorted({len(e) for e in encoded}):
        rows = [i for i, e in enumerate(encoded) if len(e) == length]
        f_in = gpt.forward(model.params, np.array([encoded[i] for i in rows]), model.config)[1]["ffn_in"][layer]
        h[rows] = gelu_tanh(f_in[:, -1] @ model.params[f"h{layer}.W1"] + model.params[f"h{layer}.b1"])
    return dict(zip(countries, h.reshape(len(countries), -1, h.shape[1]).mean(axis=1)))


# ---------------------------------------------------------------- the edit's other two parts
@single_blas_thread
def value_change(model: lm.Model, prompts: list[str], layer: int, word: str) -> np.ndarray:
    """delta (d,): the change of the layer's FFN output at each prompt's last token that makes the model say
    `word` after every prompt (lm.edit_value: Adam, ROME's v* without its KL term); v* = k W2 + delta."""
    positions = [len(model.encode(p)) - 1 for p in prompts]
    return lm.edit_value(model, prompts, layer, positions, model.index[word]).astype(float)


def corpus_covariance(model: lm.Model, layer: int, ridge: float = 1e-3) -> np.ndarray:
    """C = E[h^T h] (d_ff, d_ff), h a row, of the layer's activations over the corpus (lm.covariance), plus ridge
    times its mean diagonal on the diagonal so that it inverts, as lm.edit_fact does."""
    return lm.covariance(model, layer, ridge=ridge)
