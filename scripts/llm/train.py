"""Trains the tiny LLM on the train split (time-budgeted) and reports validation perplexity.

Usage: /usr/bin/python3 scripts/llm/train.py [--minutes M] [--dim …] [--out .cache/llm/model.pt]

Random crops of the train stream (128 tokens for the first 70 % of the budget, then 512, a
constant 2048 tokens per batch) (documents as [<|bos|> … <|eos|>], concatenated),
AdamW, linear warm-up then cosine decay to 10 %. The learning-rate schedule follows the
fraction of the time budget spent (the machine is shared, so a step count fixed in advance
would over- or under-run); the number of steps actually taken is recorded. torch uses 2 threads.
Hyper-parameters were chosen on validation perplexity only.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(__file__))
from data import CACHE_DIR, load_split, perplexity  # noqa: E402
from model import Config, TinyLlm  # noqa: E402

EVAL_STRIDE = 256


def load_average():
    return os.getloadavg()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--minutes", type=float, default=25.0)
    p.add_argument("--tokens", type=int, default=2048, help="tokens per batch")
    p.add_argument("--short-seq", type=int, default=128, help="crop length before --long-from")
    p.add_argument("--long-from", type=float, default=0.7, help="budget fraction from which crops are 512 long")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--warmup", type=float, default=0.03, help="fraction of the budget")
    p.add_argument("--dim", type=int, default=192)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=3)
    p.add_argument("--ffn", type=int, default=576)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--eval-batches", type=int, default=0, help="validation subset size; 0 = full validation at the end")
    p.add_argument("--skip-validation", action="store_true")
    p.add_argument("--out", default=os.path.join(CACHE_DIR, "model.pt"))
    args = p.parse_args()

    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    cfg = Config(vocab_size=args.vocab, dim=args.dim, layers=args.layers, heads=args.heads, ffn_dim=args.ffn, dropout=args.dropout)
    model = TinyLlm(cfg)
    print(f"parameters: {model.parameter_count()}", flush=True)
    train_ids, _ = load_split("train")
    data = torch.from_numpy(train_ids)
    gen = torch.Generator().manual_seed(args.seed)

    decay = [p_ for n, p_ in model.named_parameters() if p_.dim() >= 2]
    no_decay = [p_ for n, p_ in model.named_parameters() if p_.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95))
    budget = args.minutes * 60
    started = time.time()
    cpu_started = time.process_time()
    loads = [load_average()[0]]
    step, seen, ema = 0, 0, None
    model.train()
    while True:
        progress = (time.time() - started) / budget
        if progress >= 1:
            break
        if progress < args.warmup:
            lr = args.lr * max(progress / args.warmup, 0.01)
        else:
            t = (progress - args.warmup) / (1 - args.warmup)
            lr = args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))
        for group in opt.param_groups:
            group["lr"] = lr
        seq = args.short_seq if progress < args.long_from else cfg.context_length
        starts = torch.randint(0, len(data) - seq - 1, (args.tokens // seq,), generator=gen)
        x = torch.stack([data[s:s + seq + 1] for s in starts.tolist()])
        logits = model.logits(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        seen += x[:, 1:].numel()
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if step % 20 == 0:
            loads.append(load_average()[0])
            elapsed = time.time() - started
            print(f"step {step} {elapsed:.0f}s seq {seq} lr {lr:.2e} loss {ema:.3f} tok/s {seen / elapsed:.0f} "
                  f"load {loads[-1]:.2f}", flush=True)
    train_seconds = time.time() - started
    train_cpu = time.process_time() - cpu_started
    model.eval()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    torch.save({"config": cfg.to_dict(), "state": model.state_dict()}, args.out)
    val_ppl, val_tokens = None, 0
    if not args.skip_validation:
        t = time.time()
        val_ppl, val_tokens = perplexity(model, "validation", cfg.context_length, EVAL_STRIDE)
        print(f"validation perplexity {val_ppl:.3f} on {val_tokens} tokens ({time.time() - t:.0f}s)", flush=True)
    info = {
        "parameters": model.parameter_count(), "steps": step, "tokensSeen": seen,
        "epochs": round(seen / len(data), 3), "trainSeconds": round(train_seconds, 1), "trainCpuSeconds": round(train_cpu, 1),
        "budgetMinutes": args.minutes, "loadAverage1m": {"mean": round(float(np.mean(loads)), 2),
                                                         "max": round(float(np.max(loads)), 2)},
        "tokensPerBatch": args.tokens, "sequence": f"{args.short_seq} until {args.long_from:.0%} of the budget, then {cfg.context_length}", "learningRate": args.lr, "weightDecay": args.weight_decay,
        "warmupFraction": args.warmup, "dropout": args.dropout, "seed": args.seed, "torchThreads": 2,
        "finalTrainLoss": round(ema, 4), "validationPerplexity": val_ppl and round(val_ppl, 4), "validationTokens": val_tokens,
        "torch": torch.__version__,
    }
    torch.save({"config": cfg.to_dict(), "state": model.state_dict(), "training": info}, args.out)
    json.dump({"config": cfg.to_dict(), "training": info}, open(args.out + ".json", "w"), indent=2)
    print(json.dumps(info), flush=True)


if __name__ == "__main__":
    main()
