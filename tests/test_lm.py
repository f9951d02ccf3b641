"""Lesson 09's language model: its corpus, its backward pass, its training, the shipped weights, the fact edit,
and the same model in Hugging Face transformers (skipped where transformers is not installed)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import gpt, lm, lm_corpus, lm_train
from helpers.ffn import gelu_tanh
from helpers.gradcheck import numerical_gradient, relative_error


@pytest.fixture(scope="module")
def model():
    return lm.load()


@pytest.fixture(scope="module")
def manifest():
    return lm.manifest()


# ---------------------------------------------------------------- the corpus
def test_every_object_is_one_token_and_last_in_its_template():
    vocab = set(lm_corpus.vocabulary())
    for subject, relation, obj in lm.FACTS:
        assert subject in vocab and obj in vocab, (subject, obj)
    for split in ("train", "heldout"):
        for relation, templates in lm.TEMPLATES[split].items():
            for template in templates:
                assert template.endswith("{object}") and template.count("{subject}") == 1, template


def test_about_50_countries_three_relations_and_the_split():
    countries = {s for s, _, _ in lm.FACTS}
    assert 45 <= len(countries) <= 60 and len(lm.FACTS) == 3 * len(countries)
    for relation in lm_corpus.RELATIONS:
        train, heldout = lm.TEMPLATES["train"][relation], lm.TEMPLATES["heldout"][relation]
        assert len(train) == 8 and len(heldout) == 3 and not set(train) & set(heldout)


def test_no_heldout_sentence_is_in_the_training_corpus():
    corpus = set(lm_corpus.corpus_sentences())
    assert not corpus & set(lm_corpus.fact_sentences("heldout"))
    assert set(lm_corpus.fact_sentences("train")) <= corpus


def test_corpus_windows_are_sentences_of_the_training_corpus(model):
    ids = lm.corpus_windows(8, seed=0)
    assert ids.shape == (8, model.config["n_ctx"])
    sentences = set(lm_corpus.corpus_sentences(0))
    for row in ids:
        first = model.decode(row).split(" . ")[0] + " ."
        assert first in sentences                           # each window starts at a sentence


def test_the_corpus_is_the_same_for_the_same_seed_only():
    assert lm_corpus.corpus_sentences(0) == lm_corpus.corpus_sentences(0)
    assert lm_corpus.corpus_sentences(0) != lm_corpus.corpus_sentences(1)


# ---------------------------------------------------------------- the backward pass
def test_backward_agrees_with_central_differences():
    config = dict(vocab_size=11, n_ctx=6, d=8, n_head=2, d_ff=12, n_layer=2)
    rng = np.random.default_rng(0)
    params = {k: v + rng.normal(0.0, 0.3, v.shape) for k, v in gpt.init_params(config, rng).items()}  # not at init
    ids, targets = rng.integers(0, 11, (3, 5)), rng.integers(0, 11, (3, 5))
    _, grads = gpt.loss_and_grads(params, ids, targets, config)
    for name, value in params.items():
        def loss(a, name=name):
            return gpt.cross_entropy(gpt.forward(dict(params, **{name: a}), ids, config)[0], targets)[0]
        expected = numerical_gradient(loss, value.copy())
        assert np.abs(expected).max() > 0, name               # every parameter matters to the loss
        assert relative_error(grads[name], expected) < 1e-6, name


def test_the_ffn_output_gradient_is_what_an_added_delta_sees():
    """backward's d(FFN output) is the gradient of the loss with respect to a delta added there (edit_fact's v*)."""
    config = dict(vocab_size=7, n_ctx=4, d=6, n_head=2, d_ff=8, n_layer=2)
    rng = np.random.default_rng(1)
    params = gpt.init_params(config, rng)
    ids, targets = rng.integers(0, 7, (2, 4)), rng.integers(0, 7, (2, 4))
    logits, cache = gpt.forward(params, ids, config)
    _, dlogits = gpt.cross_entropy(logits, targets)
    d_out = gpt.backward(params, dlogits, cache, config)[1]
    for layer in range(2):
        def loss(delta, layer=layer):
            return gpt.cross_entropy(gpt.forward(params, ids, config, ffn_delta=(layer, delta))[0], targets)[0]
        assert relative_error(d_out[layer], numerical_gradient(loss, np.zeros((2, 4, 6)))) < 1e-6


# ---------------------------------------------------------------- training and the shipped weights
def test_a_short_retrain_gives_the_manifests_first_losses(manifest):
    """Training is deterministic given the seed: float64 on one BLAS thread, fixed summation orders. On another
    machine BLAS kernels may round differently (1e-16 relative), which 20 Adam steps grow to far below 1e-7."""
    steps = 20
    _, losses = lm_train.train(steps=steps)          # on one BLAS thread
    np.testing.assert_allclose(losses, manifest["loss_first_steps"][:steps], rtol=1e-7)
    assert losses[-1] < losses[0] - 0.5                     # and it learns


def test_the_shipped_weights_are_small_float32_and_load(model, manifest):
    assert lm.WEIGHTS.stat().st_size < 2e6
    assert all(v.dtype == np.float32 for v in model.params.values())
    assert set(model.params) == set(gpt.param_shapes(model.config))
    assert model.config == manifest["config"] and model.config["vocab_size"] == len(model.vocab)
    ids = model.encode("The capital of France is")
    assert model.decode(ids) == "The capital of France is"
    logits = model.logits(ids)
    assert logits.shape == (len(ids), len(model.vocab)) and logits.dtype == np.float32
    z, h = model.hidden(ids, layer=1)
    assert z.shape == h.shape == (len(ids), model.config["d_ff"])
    np.testing.assert_array_equal(h, gelu_tanh(z))
    batch = model.hidden(np.array([ids, ids]), layer=1)     # a batch (B, T): each row as on its own
    assert batch.h.shape == (2, len(ids), model.config["d_ff"])
    np.testing.assert_allclose(batch.h[1], h, rtol=1e-5, atol=1e-6)


def test_a_random_model_has_the_shape_and_not_the_knowledge(model):
    random = lm.random_model(seed=1)
    assert {k: v.shape for k, v in random.params.items()} == {k: v.shape for k, v in model.params.items()}
    assert all(v.dtype == np.float32 for v in random.params.values())
    assert lm.fact_accuracy(random, "train") < 0.1


def test_the_shipped_model_knows_its_facts_as_its_manifest_says(model, manifest):
    for split, goal in (("train", 0.98), ("heldout", 0.80)):
        accuracy = lm.fact_accuracy(model, split)
        assert accuracy == pytest.approx(manifest["fact_accuracy"][split], abs=0.005), split   # a near tie at most
        assert accuracy >= goal, split
        by_template = lm.accuracy_by_template(model, split)     # every template has the same number of facts
        assert np.mean(list(by_template.values())) == pytest.approx(accuracy)


def test_one_batch_of_prompts_gives_each_prompts_own_logits(model):
    texts = ["The capital of France is", "People in Japan speak"]
    together = lm._last_logits(model, texts)
    for text, row in zip(texts, together):
        np.testing.assert_allclose(row, model.logits(model.encode(text))[-1], rtol=1e-5, atol=1e-5)


def test_knocking_out_units_zeroes_exactly_their_writes(model):
    ids = model.encode("The capital of France is")
    assert np.array_equal(lm.knock_out(model, 1, []).logits(ids), model.logits(ids))
    h = model.hidden(ids, 1).h
    units = np.argsort(-np.abs(h[-1]))[:5]                 # the five units most active at the last token
    knocked = lm.knock_out(model, 1, units)
    assert not np.allclose(knocked.logits(ids), model.logits(ids))
    assert np.array_equal(model.params["h1.W2"], lm.load().params["h1.W2"])   # the original is untouched


# ---------------------------------------------------------------- the fact edit
def test_edit_fact_changes_one_fact_rank_one_and_little_else(model):
    edited = lm.edit_fact(model, "France", "capital", "Rome")
    changed = [k for k in model.params if not np.array_equal(model.params[k], edited.params[k])]
    assert changed == [f"h{model.config['n_layer'] - 1}.W2"]
    update = edited.params[changed[0]].astype(np.float64) - model.params[changed[0]]
    singular = np.linalg.svd(update, compute_uv=False)
    assert singular[1] < 1e-3 * singular[0]                 # rank one, up to float32 rounding of W2 + update
    before = {split: lm.fact_predictions(model, split) for split in ("train", "heldout")}
    after = {split: lm.fact_predictions(edited, split) for split in ("train", "heldout")}
    target = [w for _, fact, w in after["train"] if fact == ("France", "capital", "Paris")]
    assert target == ["Rome"] * 8                           # every training template
    kept = [a[2] == b[2] for split in after for a, b in zip(after[split], before[split])
            if a[1] != ("France", "capital", "Paris")]
    assert np.mean(kept) >= 0.98                            # other facts keep their completions


# ---------------------------------------------------------------- the same model in transformers
def test_the_gpt2_state_dict_has_gpt2s_names_and_shapes(model):
    state = lm.to_gpt2_state_dict(model)
    c = model.config
    d, V = c["d"], c["vocab_size"]
    assert state["transformer.wte.weight"].shape == state["lm_head.weight"].shape == (V, d)
    assert state["transformer.wpe.weight"].shape == (c["n_ctx"], d)
    for i in range(c["n_layer"]):
        assert state[f"transformer.h.{i}.attn.c_attn.weight"].shape == (d, 3 * d)    # Conv1D: (in, out)
        assert state[f"transformer.h.{i}.mlp.c_fc.weight"].shape == (d, c["d_ff"])
        assert state[f"transformer.h.{i}.mlp.c_proj.weight"].shape == (c["d_ff"], d)
    assert len(state) == 4 + 1 + 12 * c["n_layer"] and all(v.dtype == np.float32 for v in state.values())


def test_transformers_gives_the_same_logits(model):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(**lm.gpt2_config(model)))
    missing, unexpected = hf.load_state_dict({k: torch.from_numpy(v) for k, v in lm.to_gpt2_state_dict(model).items()},
                                             strict=False)
    assert unexpected == [] and all(k.endswith(("attn.bias", "attn.masked_bias")) for k in missing), missing
    hf.eval()
    texts = ["The capital of France is", "People in Japan speak Japanese . Ghana is in"]
    for text in texts:
        ids = model.encode(text)
        with torch.no_grad():
            theirs = hf(torch.tensor([ids])).logits[0].numpy()
        assert np.abs(theirs - model.logits(ids)).max() < 1e-4
