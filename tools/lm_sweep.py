"""Where does lesson 09's model keep a fact? Edit facts at each layer and key position and measure the edits.

First prints the shipped model's fact accuracy template by template.

    .venv/bin/python tools/lm_sweep.py [--edits 6]

For each layer (0, 1) and key position ("subject": the subject's token, ROME's choice in large models; "last":
the prompt's last token), helpers.lm.edit_fact rewrites a few facts of each relation to another fact's object
of the same relation (France's capital to the next country's capital, and so on) and reports, averaged over
the edits:
    efficacy   the share of the edited fact's training templates, and of its held-out templates, that now
               complete with the new object; "known" counts only the held-out templates under which the
               unedited model gave the old object (an edit cannot be expected to carry further than the fact did)
    kept       the share of every other (fact, template) pair, training and held-out, whose completion did
               not change
The findings are written up for the lesson in docs/lm_notes.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import lm  # noqa: E402
from helpers.lm_corpus import RELATIONS  # noqa: E402


def edits(n: int) -> list[tuple[str, str, str, tuple]]:
    """n edits per relation: (subject, relation, new object, the old fact), each new object another fact's."""
    out = []
    for relation in RELATIONS:
        facts = [f for f in lm.FACTS if f[1] == relation]
        step = len(facts) // n
        for i in range(0, step * n, step):
            fact = facts[i]
            new = next(f[2] for f in facts[i + 1:] + facts if f[2] != fact[2])
            out.append((fact[0], relation, new, fact))
    return out


def measure(edited: lm.Model, fact: tuple, new: str, before: dict) -> tuple[float, ...]:
    """(efficacy on training templates, on held-out templates, on the held-out ones the model knew (nan if
    none), share of other pairs kept)."""
    efficacy, kept = [], []
    for split in ("train", "heldout"):
        after = lm.fact_predictions(edited, split)
        efficacy.append(np.mean([a[2] == new for a in after if a[1] == fact]))
        kept += [a[2] == b[2] for a, b in zip(after, before[split]) if a[1] != fact]
    known = [a[2] == new for a, b in zip(after, before["heldout"]) if a[1] == fact and b[2] == fact[2]]
    return efficacy[0], efficacy[1], np.mean(known) if known else np.nan, float(np.mean(kept))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=6, help="edits per relation (default 6)")
    args = parser.parse_args(argv)
    model = lm.load()
    for split in ("train", "heldout"):
        print(f"the shipped model, {split} templates: {lm.fact_accuracy(model, split):.1%} of facts completed right")
        for template, share in lm.accuracy_by_template(model, split).items():
            print(f"  {share:7.1%}  {template}")
    before = {split: lm.fact_predictions(model, split) for split in ("train", "heldout")}
    todo = edits(args.edits)
    print(f"{len(todo)} edits ({args.edits} per relation) at each layer and key position; shares averaged over edits")
    print(f"{'layer':>5s} {'key at':>8s} {'efficacy: train':>16s} {'held-out':>9s} {'known':>6s} {'others kept':>12s} "
          f"{'s/edit':>7s}")
    for layer in range(model.config["n_layer"]):
        for position in ("subject", "last"):
            start = time.perf_counter()
            rows = [measure(lm.edit_fact(model, s, r, new, layer=layer, position=position), fact, new, before)
                    for s, r, new, fact in todo]
            seconds = (time.perf_counter() - start) / len(todo)
            train, heldout, known, kept = np.nanmean(rows, axis=0)
            print(f"{layer:5d} {position:>8s} {train:16.1%} {heldout:9.1%} {known:6.1%} {kept:12.2%} {seconds:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
