"""Lesson 09's small language model: load the shipped weights, run them, read their FFN, edit a fact.

    from helpers import lm
    model = lm.load()                                  # 2 layers, d = 64, 2 heads, d_ff = 256, context 16
    model.complete("The capital of France is")         # 'Paris'
    model.top("The capital of France is", k=3)         # [('Paris', 0.99...), ...] next-word probabilities
    z, h = model.hidden(model.encode("The capital of France is"), layer=1)   # (T, 256) each
    lm.fact_accuracy(model, "heldout")                 # share of facts completed right, held-out templates
    edited = lm.edit_fact(model, "France", "capital", "Rome")   # a copy; model itself is unchanged

The model and its training are in helpers.gpt and helpers.lm_train, the corpus in helpers.lm_corpus; the
weights in helpers/data/lm_weights.npz are what `make train-lm` wrote (its manifest: lm_manifest.json).
Where the model keeps a fact, and so where edit_fact writes by default, was measured by tools/lm_sweep.py;
docs/lm_notes.md has its findings (and every other figure of the shipped model) for the lesson.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np

from helpers import gpt
from helpers.gpt import single_blas_thread
from helpers.ffn import gelu_tanh
from helpers.lm_corpus import FACTS, TEMPLATES, prompt, prompts, vocabulary, words

__all__ = ["FACTS", "TEMPLATES", "Model", "Hidden", "load", "random_model", "manifest", "fact_predictions", "fact_accuracy",
           "accuracy_by_template", "knock_out", "edit_fact", "corpus_windows", "covariance", "gpt2_config", "to_gpt2_state_dict"]

DATA = Path(__file__).parent / "data"
WEIGHTS = DATA / "lm_weights.npz"
MANIFEST = DATA / "lm_manifest.json"


class Hidden(NamedTuple):
    """One FFN layer's hidden units for every token: z = LN2(x) W1 + b1 (pre-activation) and h = gelu_tanh(z),
    each (T, d_ff)."""
    z: np.ndarray
    h: np.ndarray


class Model:
    """The decoder's parameters (float32, helpers.gpt's names), its config and its word-level vocabulary."""

    def __init__(self, params: dict, config: dict, vocab: list[str]):
        self.params = params
        self.config = config
        self.vocab = vocab
        self.index = {w: i for i, w in enumerate(vocab)}

    def copy(self) -> "Model":
        """A copy whose weights can be changed without changing this model's."""
        return Model({k: v.copy() for k, v in self.params.items()}, dict(self.config), list(self.vocab))

    def encode(self, text: str) -> list[int]:
        """Token ids of a text: one per word or punctuation mark (0, "<unk>", for a word not in the vocabulary)."""
        return [self.index.get(w, 0) for w in words(text)]

    def decode(self, ids) -> str:
        """The words of token ids, joined by spaces."""
        return " ".join(self.vocab[i] for i in ids)

    def logits(self, ids) -> np.ndarray:
        """Next-token logits (T, vocab) after each of the T <= n_ctx tokens of ids."""
        return self.batch_logits(np.asarray(ids)[None, :])[0]

    @single_blas_thread
    def batch_logits(self, ids: np.ndarray) -> np.ndarray:
        """Logits (B, T, vocab) for a batch of token ids (B, T)."""
        ids = self._checked(ids)
        return gpt.forward(self.params, ids, self.config)[0]

    @single_blas_thread
    def hidden(self, ids, layer: int) -> Hidden:
        """The FFN's pre-activations and activations at a layer (0-based), (T, d_ff) each, for token ids (T,);
        for a batch of token ids (B, T), (B, T, d_ff) each."""
        ids = np.asarray(ids)
        f_in = gpt.forward(self.params, self._checked(ids.reshape(-1, ids.shape[-1])), self.config)[1]["ffn_in"]
        z = f_in[layer] @ self.params[f"h{layer}.W1"] + self.params[f"h{layer}.b1"]   # (B, T, d_ff)
        z = z.reshape(ids.shape + z.shape[-1:])                                     # (T, d_ff) for ids (T,)
        return Hidden(z, gelu_tanh(z))

    def top(self, prompt: str, k: int = 5) -> list[tuple[str, float]]:
        """The k likeliest next words after prompt, with their probabilities."""
        z = self.logits(self.encode(prompt))[-1].astype(np.float64)
        p = np.exp(z - z.max())
        p /= p.sum()
        best = np.argsort(-p, kind="stable")[:k]
        return [(self.vocab[i], float(p[i])) for i in best]

    def complete(self, prompt: str, n: int = 1) -> str:
        """Greedy completion: the n likeliest next words, one at a time, joined by spaces."""
        ids = self.encode(prompt)
        for _ in range(n):
            ids.append(int(np.argmax(self.logits(ids[-self.config["n_ctx"]:])[-1])))
        return self.decode(ids[-n:])

    def _checked(self, ids: np.ndarray) -> np.ndarray:
        if ids.shape[-1] > self.config["n_ctx"]:
            raise ValueError(f"at most {self.config['n_ctx']} tokens of context, got {ids.shape[-1]}")
        return ids


def load(path: str | Path = WEIGHTS) -> Model:
    """The shipped model (or the weights at path, as tools/train_lm.py writes them)."""
    with np.load(path) as data:
        params = {name: data[name] for name in data.files if name != "config"}
        config = json.loads(str(data["config"]))
    return Model(params, config, vocabulary())


def random_model(seed: int = 0) -> Model:
    """A model of the shipped model's shape with GPT-2's random initialisation (helpers.gpt.init_params), float32:
    what the trained model's FFN is to be compared with."""
    config = load().config
    params = gpt.init_params(config, np.random.default_rng(seed), dtype=np.float32)
    return Model(params, config, vocabulary())


def manifest(path: str | Path = MANIFEST) -> dict:
    """The shipped weights' manifest: config, seed, steps, loss curve, final loss, fact accuracy, seconds."""
    return json.loads(Path(path).read_text())


# ---------------------------------------------------------------- facts
@single_blas_thread
def _last_logits(model: Model, texts: list[str]) -> np.ndarray:
    """The next-token logits (n, vocab) after each text. Texts of one length go through as one batch; causal
    attention makes a batch of equal lengths the same as one text at a time."""
    encoded = [model.encode(t) for t in texts]
    out = np.empty((len(texts), len(model.vocab)), np.float32)
    for length in sorted({len(e) for e in encoded}):
        rows = [i for i, e in enumerate(encoded) if len(e) == length]
        out[rows] = model.batch_logits(np.array([encoded[i] for i in rows]))[:, -1]
    return out


def fact_predictions(model: Model, split: str = "train") -> list[tuple[str, tuple, str]]:
    """(prompt, fact, the model's greedy next word) for every fact under every template of the split."""
    pairs = prompts(split)
    best = _last_logits(model, [p for p, _ in pairs]).argmax(axis=-1)
    return [(p, fact, model.vocab[i]) for (p, fact), i in zip(pairs, best)]


def fact_accuracy(model: Model, split: str = "train") -> float:
    """The share of (fact, template) pairs of the split whose greedy completion is the fact's object."""
    return float(np.mean([word == fact[2] for _, fact, word in fact_predictions(model, split)]))


def accuracy_by_template(model: Model, split: str = "train") -> dict[str, float]:
    """The share of facts completed right under each template of the split, by template."""
    templates = [t for fact in FACTS for t in TEMPLATES[split][fact[1]]]   # in fact_predictions' order
    right = {}
    for template, (_, fact, word) in zip(templates, fact_predictions(model, split)):
        right.setdefault(template, []).append(word == fact[2])
    return {t: float(np.mean(r)) for t, r in right.items()}


def knock_out(model: Model, layer: int, units) -> Model:
    """A copy with some hidden units of a layer's FFN knocked out: their rows of W2 zeroed, which gives the same
    output as setting their activations to 0 (a unit writes h_u * W2[u] into the residual stream)."""
    out = model.copy()
    out.params[f"h{layer}.W2"][np.asarray(units, dtype=int)] = 0.0
    return out


# ---------------------------------------------------------------- a rank-one edit of one fact
# Where: tools/lm_sweep.py edited 18 facts at each layer and key position (docs/lm_notes.md). With the key at the
# prompt's last token every edit took at either layer; at the subject's token almost none did (none at the last
# layer, whose FFN output at the subject reaches no later token). The last layer disturbed other facts least.
EDIT_LAYER = -1             # the last layer ...
EDIT_POSITION = "last"      # ... with the key at the prompt's last token
STOP = 0.99                 # edit_value stops once every prompt gives the new object this probability


def key_positions(model: Model, texts: list[str], subject: str, position: str) -> list[int]:
    """Where the key is read in each text: its last token ("last") or the subject's token ("subject")."""
    if position == "last":
        return [len(model.encode(t)) - 1 for t in texts]
    if position == "subject":
        return [model.encode(t).index(model.index[subject]) for t in texts]
    raise ValueError(f"position must be 'last' or 'subject', got {position!r}")


def corpus_windows(n_windows: int = 512, seed: int = 0, n_ctx: int = 16) -> np.ndarray:
    """Token ids (n_windows, n_ctx): windows of the training corpus, each starting at a sentence, drawn with the
    seed as training draws its batches. For reading units' keys (the contexts where a unit fires most)."""
    from helpers.lm_train import batch, token_stream   # the corpus as training sees it
    stream, starts = token_stream(seed)
    return batch(stream, starts, np.random.default_rng(seed), n_windows, n_ctx)[0]


@single_blas_thread
def covariance(model: Model, layer: int, n_windows: int = 512, seed: int = 0, ridge: float = 0.0) -> np.ndarray:
    """E[h^T h] (d_ff, d_ff), h a row of d_ff activations: the second moment of a layer's FFN activations over the
    training corpus (ROME's C), from n_windows windows of the corpus (corpus_windows); plus ridge times its mean
    diagonal on the diagonal, so that it inverts, when ridge is given (edit_fact's)."""
    ids = corpus_windows(n_windows, seed, model.config["n_ctx"])                   # (B, T)
    h = model.hidden(ids, layer).h.reshape(-1, model.config["d_ff"])               # (B T, d_ff)
    C = (h.T.astype(np.float64) @ h) / len(h)              # (d_ff, d_ff)
    if ridge:
        C += ridge * np.mean(np.diag(C)) * np.eye(len(C))
    return C


def _padded(encoded: list[list[int]]) -> np.ndarray:
    """Token ids of different lengths in one (B, T) array, padded on the right (causal attention: padding after
    a token never changes what the model computes at that token)."""
    out = np.zeros((len(encoded), max(map(len, encoded))), dtype=int)
    for row, e in zip(out, encoded):
        row[: len(e)] = e
    return out


def edit_value(model: Model, texts: list[str], layer: int, positions: list[int], target: int,
               steps: int = 200, lr: float = 0.05, weight: float = 1e-3) -> np.ndarray:
    """delta (d,), the change of the layer's FFN output at the key positions that makes the model predict target
    after every text: minimises the mean -log p(target) + weight |delta|^2 by Adam (ROME's v*, simplified: no
    KL term). Stops early once every text gives target a probability above STOP."""
    ids = _padded([model.encode(t) for t in texts])       # (B, T)
    rows = np.arange(len(texts))
    last = np.array([len(model.encode(t)) - 1 for t in texts])
    delta = np.zeros((len(texts), ids.shape[1], model.config["d"]), np.float32)   # (B, T, d), shared value
    value = np.zeros(model.config["d"], np.float32)
    m, v = np.zeros_like(value), np.zeros_like(value)
    for step in range(1, steps + 1):
        delta[rows, positions] = value
        logits, cache = gpt.forward(model.params, ids, model.config, ffn_delta=(layer, delta))
        z = logits[rows, last].astype(np.float64)          # (B, vocab) at each text's last token
        p = np.exp(z - z.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        if p[:, target].min() > STOP:
            break
        dlogits = np.zeros_like(logits)
        dlogits[rows, last] = p / len(texts)
        dlogits[rows, last, target] -= 1.0 / len(texts)
        d_out = gpt.backward(model.params, dlogits, cache, model.config)[1][layer]   # (B, T, d)
        grad = d_out[rows, positions].sum(axis=0) + 2 * weight * value
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad ** 2
        value -= lr * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return value


@single_blas_thread
def edit_fact(model: Model, subject: str, relation: str, new_object: str, layer: int = EDIT_LAYER,
              position: str = EDIT_POSITION, ridge: float = 1e-3) -> Model:
    """A copy of model that completes (subject, relation) with new_object: a rank-one update of one layer's W2.

    ROME (Meng et al. 2022), simplified:
      1. the key k (d_ff,): the FFN's activations h at the key position, averaged over the relation's training
         templates filled with the subject;
      2. the value: delta (d,), the change of that FFN's output that makes the model say new_object after
         every such prompt (edit_value);
      3. W2 += (C^-1 k^T) delta / (k C^-1 k^T), in the row convention (k, h and delta rows, W2 of shape
         (d_ff, d)), with C = E[h^T h] over the corpus (plus ridge times its mean diagonal, so that it inverts):
         rank one, k W2 moves by exactly delta, and a key h moves the output by (h C^-1 k^T / k C^-1 k^T) delta,
         little for keys unlike k in the directions the corpus uses.
    layer (0-based, -1 the last) and position ("last" or "subject") choose where; see docs/lm_notes.md for which
    work on this model.
    """
    layer = layer % model.config["n_layer"]
    if new_object not in model.index:
        raise ValueError(f"{new_object!r} is not in the vocabulary")
    texts = [prompt(t, subject) for t in TEMPLATES["train"][relation]]
    positions = key_positions(model, texts, subject, position)
    hs = [model.hidden(model.encode(t), layer).h[pos] for t, pos in zip(texts, positions)]
    k = np.mean(hs, axis=0).astype(np.float64)             # (d_ff,) the key
    delta = edit_value(model, texts, layer, positions, model.index[new_object]).astype(np.float64)   # (d,)
    C = covariance(model, layer, ridge=ridge)
    c_inv_k = np.linalg.solve(C, k)                        # (d_ff,)
    edited = model.copy()
    update = np.outer(c_inv_k, delta) / (k @ c_inv_k)      # (d_ff, d) rank one
    edited.params[f"h{layer}.W2"] += update.astype(np.float32)
    return edited


# ---------------------------------------------------------------- the same model in Hugging Face transformers
def gpt2_config(model: Model | None = None) -> dict:
    """Keyword arguments for transformers.GPT2Config that describe this model (dropout off, GPT-2's tanh GELU
    "gelu_new", layer norm eps 1e-5, lm_head tied to wte)."""
    c = (model or load()).config
    return {"vocab_size": c["vocab_size"], "n_positions": c["n_ctx"], "n_embd": c["d"], "n_layer": c["n_layer"],
            "n_head": c["n_head"], "n_inner": c["d_ff"], "activation_function": "gelu_new",
            "layer_norm_epsilon": gpt.LN_EPS, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
            "tie_word_embeddings": True, "scale_attn_weights": True, "bos_token_id": 0, "eos_token_id": 0}


_GPT2_NAMES = {"ln1_g": "ln_1.weight", "ln1_b": "ln_1.bias", "W_qkv": "attn.c_attn.weight",
               "b_qkv": "attn.c_attn.bias", "W_o": "attn.c_proj.weight", "b_o": "attn.c_proj.bias",
               "ln2_g": "ln_2.weight", "ln2_b": "ln_2.bias", "W1": "mlp.c_fc.weight", "b1": "mlp.c_fc.bias",
               "W2": "mlp.c_proj.weight", "b2": "mlp.c_proj.bias"}


def to_gpt2_state_dict(model: Model | None = None) -> dict[str, np.ndarray]:
    """The weights under GPT2LMHeadModel's state_dict names, as float32 NumPy arrays (torch.from_numpy each).

    No transposes: GPT-2's Conv1D stores its weight (in, out) and computes x @ W + b, as helpers.gpt does, and
    c_attn's (d, 3d) weight is q, k, v side by side in that order, as W_qkv is. lm_head.weight is wte (tied).
    The attention's causal-mask buffers (attn.bias, and attn.masked_bias where the version registers it) are not weights and
    are left out: load with model.load_state_dict(state, strict=False) and check that only those are missing.
    """
    p = (model or load()).params
    state = {"transformer.wte.weight": p["wte"], "transformer.wpe.weight": p["wpe"]}
    for name, value in p.items():
        if name.startswith("h"):
            i, short = name.split(".", 1)
            state[f"transformer.h.{i[1:]}.{_GPT2_NAMES[short]}"] = value
    state["transformer.ln_f.weight"], state["transformer.ln_f.bias"] = p["lnf_g"], p["lnf_b"]
    state["lm_head.weight"] = p["wte"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in state.items()}
