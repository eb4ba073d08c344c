"""Exports a trained checkpoint to ONNX (CONTRACTS.md's decoder-with-past graph) and writes the
greedy fixtures.

Usage: /usr/bin/python3 scripts/llm/export.py [--checkpoint .cache/llm/model.pt]

Writes models/tiny-llm/model.fp32.onnx (opset 17; dynamic batch, sequence and past) and
test/fixtures/tiny-llm/greedy.json: 20 prompts (<|bos|> + the first 8..24 tokens of a test
document's first sentence) with PyTorch's greedy 32-token continuation on the FP32 weights,
each step recomputing the whole prefix (no cache), the argmax tie broken by the lowest id, no
early stop at <|eos|> (an <|eos|> is just another id in the 32). A prompt is kept only if every
step's top-1 logit beats the runner-up by at least MIN_MARGIN, so that the exact-equality checks
elsewhere (ONNX with a KV cache, left-padded batches, WASM) test the engines, not float
round-off at a near-tie; skipped prompts are listed in the fixture. A few prefill logits are
recorded as checkpoints.
"""
import argparse
import hashlib
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from data import CACHE_DIR  # noqa: E402
from model import Config, TinyLlm  # noqa: E402

MODEL_DIR = "models/tiny-llm"
FIXTURE = "test/fixtures/tiny-llm/greedy.json"
OPSET = 17
PROMPTS = 20
NEW_TOKENS = 32
MIN_MARGIN = 0.01


class OnnxDecoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, position_ids, *past_flat):
        past = [(past_flat[2 * i], past_flat[2 * i + 1]) for i in range(len(past_flat) // 2)]
        logits, presents = self.model(input_ids, attention_mask, position_ids, past)
        return (logits, *[t for kv in presents for t in kv])


def io_names(layers):
    past = [f"past_key_values.{l}.{kind}" for l in range(layers) for kind in ("key", "value")]
    present = [f"present.{l}.{kind}" for l in range(layers) for kind in ("key", "value")]
    return ["input_ids", "attention_mask", "position_ids", *past], ["logits", *present]


def export(model, path):
    cfg = model.cfg
    inputs, outputs = io_names(cfg.layers)
    batch, seq, past_len = 2, 3, 4
    example = [
        torch.randint(0, cfg.vocab_size, (batch, seq)),
        torch.tensor([[0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]], dtype=torch.int64),
        torch.tensor([[3, 4, 5], [4, 5, 6]], dtype=torch.int64),
    ] + [torch.randn(batch, cfg.heads, past_len, cfg.head_dim) for _ in range(2 * cfg.layers)]
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
               "position_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}
    for name in inputs[3:]:
        dynamic[name] = {0: "batch", 2: "past_sequence"}
    for name in outputs[1:]:
        dynamic[name] = {0: "batch", 2: "total_sequence"}
    torch.onnx.export(OnnxDecoder(model), tuple(example), path, input_names=inputs, output_names=outputs,
                      dynamic_axes=dynamic, opset_version=OPSET, do_constant_folding=True)


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@torch.no_grad()
def greedy(model, prompt):
    ids = list(prompt)
    margins = []
    for _ in range(NEW_TOKENS):
        logits = model.logits(torch.tensor([ids]))[0, -1]
        best = logits.max()
        token = int(torch.nonzero(logits == best)[0, 0])  # lowest id among the maxima
        top2 = torch.topk(logits, 2).values
        margins.append(float(top2[0] - top2[1]))
        ids.append(token)
    return ids[len(prompt):], min(margins)


@torch.no_grad()
def fixtures(model, onnx_path):
    candidates = json.load(open(os.path.join(CACHE_DIR, "prompts.json")))
    kept, skipped = [], []
    for cand in candidates:
        if len(kept) == PROMPTS:
            break
        continuation, margin = greedy(model, cand["ids"])
        if margin < MIN_MARGIN:
            skipped.append({"document": cand["document"], "minMargin": margin})
            continue
        kept.append({"document": cand["document"], "text": cand["text"], "promptIds": cand["ids"],
                     "greedyIds": continuation, "minMargin": round(margin, 5)})
    if len(kept) < PROMPTS:
        raise SystemExit(f"only {len(kept)} prompts pass the margin check")
    checkpoints = []
    for index in (0, 1, 2):
        prompt = kept[index]["promptIds"]
        logits = model.logits(torch.tensor([prompt]))[0, -1]
        top = torch.topk(logits, 8)
        checkpoints.append({"prompt": index, "position": len(prompt) - 1,
                            "first16": [round(float(v), 5) for v in logits[:16]],
                            "topIds": [int(i) for i in top.indices],
                            "topLogits": [round(float(v), 5) for v in top.values]})
    return {
        "description": "PyTorch greedy continuations of the FP32 tiny LLM (scripts/llm/export.py): "
                       f"{NEW_TOKENS} new tokens per prompt, full-prefix recompute at every step, "
                       "argmax ties broken by the lowest id, no early stop at <|eos|>; prompts are "
                       "<|bos|> + the first 8..24 tokens of the first sentence of held-out test documents, in order, "
                       f"keeping those whose every step has top-1 minus top-2 logit >= {MIN_MARGIN}.",
        "modelSha256": sha256(onnx_path), "newTokens": NEW_TOKENS, "minMargin": MIN_MARGIN,
        "eosTokenId": 2, "logitsTolerance": 1e-3,
        "prompts": kept, "skipped": skipped, "logitsCheckpoints": checkpoints,
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", default=os.path.join(CACHE_DIR, "model.pt"))
    args = p.parse_args()
    torch.set_num_threads(2)
    ckpt = torch.load(args.checkpoint)
    model = TinyLlm(Config(**ckpt["config"]))
    model.load_state_dict(ckpt["state"])
    model.eval()
    os.makedirs(MODEL_DIR, exist_ok=True)
    path = os.path.join(MODEL_DIR, "model.fp32.onnx")
    export(model, path)
    print(f"exported -> {path} ({os.path.getsize(path)} bytes)")
    fixture = fixtures(model, path)
    os.makedirs(os.path.dirname(FIXTURE), exist_ok=True)
    with open(FIXTURE, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print(f"fixtures: {len(fixture['prompts'])} prompts, {len(fixture['skipped'])} skipped -> {FIXTURE}")


if __name__ == "__main__":
    main()
