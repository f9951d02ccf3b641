"""Train lesson 09's language model from scratch and compare it with the shipped one (`make train-lm`).

    make train-lm                      # trains into build/lm/, then compares with helpers/data/ (never overwrites it)
    make train-lm REPLACE=1            # trains and replaces the shipped weights and manifest in helpers/data/
    .venv/bin/python tools/train_lm.py --out DIR [--replace] [--steps N]

Writes lm_weights.npz (the parameters in float32, and the config) and lm_manifest.json (config, training
settings and seed, the loss of every one of the first 50 steps and every 100th after, the final loss, the fact
accuracy under training and held-out templates, and the seconds it took) into the output folder. Training runs
on one BLAS thread (helpers.gpt.single_blas_thread): the matrices are small (512 x 64), a second thread does not pay, and the
result is then the same whatever OPENBLAS_NUM_THREADS says. Exit status 1 if the new model is not within the
stated tolerances of the shipped one: final loss within 1 % (relative), each fact accuracy within 1 percentage
point.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import lm, lm_train  # noqa: E402

FIRST_STEPS = 50            # the manifest keeps every step's loss up to here (tests/test_lm.py retrains them) ...
EVERY = 100                 # ... and every 100th after
FINAL_WINDOW = 100          # the final loss: the mean training loss of the last 100 steps
TOLERANCE = 0.01            # 1 %: of the final loss (relative), of each fact accuracy (absolute)


def summary(model: lm.Model, losses: list[float], seconds: float, load: tuple[float, float]) -> dict:
    """The manifest of a trained model."""
    return {
        "config": model.config,
        "training": lm_train.TRAINING,
        "seed": lm_train.TRAINING["seed"],
        "steps": len(losses),
        "loss_first_steps": [round(x, 10) for x in losses[:FIRST_STEPS]],
        "loss_every_100": {str(s): round(losses[s], 6) for s in range(0, len(losses), EVERY)},
        "final_loss": round(float(np.mean(losses[-FINAL_WINDOW:])), 6),
        "fact_accuracy": {split: round(lm.fact_accuracy(model, split), 6) for split in ("train", "heldout")},
        "seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.2f} before and "
                   f"{load[1]:.2f} after (1 minute), numpy {np.__version__}, 1 BLAS thread",
    }


def save(params: dict, manifest: dict, out: Path) -> None:
    """lm_weights.npz (float32) and lm_manifest.json into out."""
    out.mkdir(parents=True, exist_ok=True)
    arrays = {k: v.astype(np.float32) for k, v in params.items()}
    np.savez_compressed(out / "lm_weights.npz", config=json.dumps(manifest["config"]), **arrays)
    (out / "lm_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def compare(new: dict, shipped: dict) -> list[str]:
    """Lines comparing a new manifest with the shipped one; each ends with "ok" or "DIFFERS"."""
    lines = []
    loss_gap = abs(new["final_loss"] - shipped["final_loss"]) / shipped["final_loss"]
    lines.append(f"final loss {new['final_loss']:.4f} against {shipped['final_loss']:.4f} shipped: "
                 f"{loss_gap:.2%} apart, {'ok' if loss_gap <= TOLERANCE else 'DIFFERS'}")
    for split in ("train", "heldout"):
        a, b = new["fact_accuracy"][split], shipped["fact_accuracy"][split]
        lines.append(f"fact accuracy, {split} templates: {a:.2%} against {b:.2%} shipped, "
                     f"{'ok' if abs(a - b) <= TOLERANCE else 'DIFFERS'}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("build/lm"), help="folder for the new weights")
    parser.add_argument("--replace", action="store_true", help="write into helpers/data/, replacing the shipped ones")
    parser.add_argument("--steps", type=int, default=None, help="train fewer steps (a smoke run; compares badly)")
    args = parser.parse_args(argv)
    out = lm.DATA if args.replace else args.out
    hp = lm_train.TRAINING if args.steps is None else dict(lm_train.TRAINING, steps=args.steps)
    print(f"training {lm_train.CONFIG} for {hp['steps']} steps, seed {hp['seed']}, on 1 BLAS thread")

    def log(step, loss):
        if step % 500 == 0 or step == hp["steps"] - 1:
            print(f"  step {step:5d}  loss {loss:.4f}", flush=True)

    load_before = os.getloadavg()[0]
    params, losses, seconds = lm_train.timed_train(hp=hp, log=log)   # on one BLAS thread
    load_after = os.getloadavg()[0]
    model = lm.Model({k: v.astype(np.float32) for k, v in params.items()}, dict(lm_train.CONFIG), lm.vocabulary())
    new = summary(model, losses, seconds, (load_before, load_after))
    if args.steps is not None:
        new["training"] = hp
    save(params, new, out)
    size = (out / "lm_weights.npz").stat().st_size
    print(f"trained in {seconds:.0f} s ({seconds / len(losses) * 1000:.0f} s per 1,000 steps; {new['machine']})")
    print(f"final loss {new['final_loss']:.4f}; fact accuracy {new['fact_accuracy']['train']:.2%} (training "
          f"templates), {new['fact_accuracy']['heldout']:.2%} (held-out templates)")
    print(f"wrote {out / 'lm_weights.npz'} ({size / 1e6:.2f} MB) and {out / 'lm_manifest.json'}")
    if args.replace:
        print("replaced the shipped weights")
        return 0
    if not lm.MANIFEST.exists():
        print(f"no shipped model in {lm.DATA} to compare with")
        return 0
    lines = compare(new, lm.manifest())
    print("against the shipped model (helpers/data/):\n  " + "\n  ".join(lines))
    shipped = lm.load()
    gap = max(float(np.abs(shipped.params[k] - model.params[k]).max()) for k in model.params)
    print(f"  largest difference of a weight from the shipped one: {gap:.3g}")
    same = all(line.endswith("ok") for line in lines)
    print("the new model reproduces the shipped one within the tolerances" if same else
          "the new model is NOT within the tolerances of the shipped one")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
