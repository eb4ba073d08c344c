"""Token streams written by scripts/llm/encode.mjs, and the sliding-window perplexity protocol."""
import json
import math
import os

import numpy as np
import torch

CACHE_DIR = os.environ.get("LLM_CACHE_DIR", ".cache/llm")


def load_split(split):
    ids = np.fromfile(os.path.join(CACHE_DIR, f"{split}.bin"), dtype="<u2").astype(np.int64)
    documents = json.load(open(os.path.join(CACHE_DIR, f"{split}.json")))["documents"]
    return ids, documents


def windows(length, context, stride):
    """Evaluation windows over one document of `length` tokens ([bos] … [eos]).

    Yields (start, end, first_scored): the model reads ids[start:end] and its predictions of
    ids[first_scored:end] count (positions start+1 … are predictable). Every token after the
    leading <|bos|> is scored exactly once, with at least context - stride tokens of left context
    once the document is longer than one window. Mirrored by scripts/llm/evaluate.mjs.
    """
    start = 0
    scored = 1
    while True:
        end = min(start + context, length)
        yield start, end, scored
        if end == length:
            return
        scored = end
        start = end - (context - stride)


@torch.no_grad()
def perplexity(model, split, context, stride, batch=8):
    ids, documents = load_split(split)
    jobs = []
    for doc in documents:
        for start, end, scored in windows(doc["length"], context, stride):
            jobs.append((doc["start"] + start, doc["start"] + end, doc["start"] + scored))
    total_nll, total_tokens = 0.0, 0
    jobs.sort(key=lambda j: j[1] - j[0])
    for i in range(0, len(jobs), batch):
        group = [j for j in jobs[i:i + batch]]
        width = max(e - s for s, e, _ in group)
        same = [j for j in group if j[1] - j[0] == width]
        rest = [j for j in group if j[1] - j[0] != width]
        for part in ([same] + [[j] for j in rest]):
            x = torch.stack([torch.from_numpy(ids[s:e]) for s, e, _ in part])
            logp = torch.log_softmax(model.logits(x[:, :-1]), dim=-1)
            for row, (s, e, first) in enumerate(part):
                targets = x[row, 1:]
                nll = -logp[row].gather(1, targets.unsqueeze(1)).squeeze(1)
                keep = nll[first - s - 1:]
                total_nll += keep.double().sum().item()
                total_tokens += keep.numel()
    return math.exp(total_nll / total_tokens), total_tokens
