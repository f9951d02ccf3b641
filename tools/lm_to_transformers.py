"""Load lesson 09's shipped model into Hugging Face transformers' GPT2LMHeadModel and compare the logits.

Needs torch and transformers, which the course does not install; in a throwaway environment outside .venv:

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install torch transformers numpy scipy threadpoolctl
    PYTHONPATH=. /tmp/tfvenv/bin/python tools/lm_to_transformers.py
    PYTHONPATH=. /tmp/tfvenv/bin/python -m pytest tests/test_lm.py   # the test that needs them then runs too

Prints the versions, the state dict's keys that the model has and the course's does not (the attention's mask
buffers, in the versions that keep them in the state dict), and the largest difference between the two models'
logits over every fact prompt, training and held-out templates (float32 both).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import lm  # noqa: E402
from helpers.lm_corpus import prompts  # noqa: E402


def main() -> int:
    model = lm.load()
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(**lm.gpt2_config(model)))
    state = {k: torch.from_numpy(v) for k, v in lm.to_gpt2_state_dict(model).items()}
    missing, unexpected = hf.load_state_dict(state, strict=False)
    hf.eval()
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    print(f"keys not in to_gpt2_state_dict(): {missing or 'none'}; keys transformers did not expect: "
          f"{unexpected or 'none'}")
    texts = [p for split in ("train", "heldout") for p, _ in prompts(split)]
    worst = 0.0
    for text in texts:
        ids = model.encode(text)
        with torch.no_grad():
            theirs = hf(torch.tensor([ids])).logits[0].numpy()
        worst = max(worst, float(np.abs(theirs - model.logits(ids)).max()))
    print(f"largest |logit difference| over {len(texts)} prompts (every position): {worst:.2e}")
    same = worst < 1e-4 and not unexpected
    print("same model" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
