"""Train the fraud GRU (IBM's architecture, explicit quantizable cell) on the generated
TabFormer-schema transactions and export it to ONNX.

  /usr/bin/python3 scripts/fraud/train.py [--csv .cache/fraud/transactions.csv] [--hidden 64]

Split BY TIME on the date of the scored (last) transaction of a window:
  train 2019-01-01 .. 2019-09-30, validation 2019-10-01 .. 2019-10-31, test 2019-11-01 .. 2019-12-31;
  with --split quantile (an export of live decisions, any dates): the first 70% of the rows by
  time, the next 15%, the last 15%. A card is (User, Card) as strings (an export's User is the
  edge's card id, e.g. fingerprint:…).
Vocabularies are fitted on the train period only. Windows: per (User, Card), rows ordered by
time (ties keep file order); a window is the transaction and the 6 before it, time-major
[7, B, F]; fewer than 6 earlier transactions -> LEFT-padded with all-zero feature vectors.
Training windows: every fraud window of the train period plus 3 non-fraud windows per fraud
window, the non-fraud ones re-drawn each epoch (1:3), 30% of them from "hard" non-fraud windows
(an Errors? value on the scored transaction, or fraud earlier in the window), which a uniform
1:3 sample almost never shows; validation/test keep the natural rate.
Augmentation: each training window's Time values (non-padded steps) get one random offset
U(0, 0.6), so the model uses time differences, not absolute dates (held-out Time values are > 1).
Loss: BCE on the last step plus 0.5 x BCE on the earlier (non-padded) steps with their own
labels. The epoch with the best validation AUPRC is exported.

Outputs: models/fraud-gru/model.fp32.onnx, .cache/fraud/{vocab.json, rows.f32, windows-*.i32,
labels-*.u8, ids-*.i32, meta.json} for scripts/fraud/evaluate.mjs (ids: the CSV rows of a split).
"""
import argparse
import calendar
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import features as fx  # noqa: E402

WINDOW = 7
SPLITS = {
    "train": ("2019-01-01", "2019-10-01"),
    "validation": ("2019-10-01", "2019-11-01"),
    "test": ("2019-11-01", "2020-01-01"),
}


def day_ms(s):
    y, m, d = map(int, s.split("-"))
    return calendar.timegm((y, m, d, 0, 0, 0)) * 1000


def iso(ms):
    """A split bound as the dates of SPLITS are written (minutes when not midnight)."""
    t = time.gmtime(ms // 1000)
    return time.strftime("%Y-%m-%d" if ms % 86_400_000 == 0 else "%Y-%m-%dT%H:%MZ", t)


class GRULayer(nn.Module):
    """PyTorch GRU semantics (reset gate applied to W_hn h + b_hn, i.e. linear_before_reset=1),
    unrolled over the fixed 7 steps, zero initial state, written with Linear layers:
    one input-projection MatMul for all steps, one recurrent MatMul per step (none at step 0)."""

    def __init__(self, inputs, hidden):
        super().__init__()
        self.hidden = hidden
        self.ih = nn.Linear(inputs, 3 * hidden)
        self.hh = nn.Linear(hidden, 3 * hidden)

    def forward(self, x, sparse=None):  # x [7, B, I]; sparse=(cols, vals) [7*B, K] gives the same x @ W^T, faster
        H = self.hidden
        if sparse is None:
            gi = self.ih(x.reshape(-1, x.shape[-1])).reshape(WINDOW, -1, 3 * H)
        else:
            cols, vals = sparse
            gi = (nn.functional.embedding_bag(cols, self.ih.weight.t(), per_sample_weights=vals, mode="sum")
                  + self.ih.bias).reshape(WINDOW, -1, 3 * H)
        h = None
        outs = []
        for t in range(WINDOW):
            i_r, i_z, i_n = gi[t].split(H, dim=-1)  # exported as one Split with constant sizes
            gh = self.hh.bias if h is None else self.hh(h)  # h0 = 0 -> W_hh h0 = 0
            h_r, h_z, h_n = gh.split(H, dim=-1)
            r = torch.sigmoid(i_r + h_r)
            z = torch.sigmoid(i_z + h_z)
            n = torch.tanh(i_n + r * h_n)
            h = (1 - z) * n if h is None else (1 - z) * n + z * h
            outs.append(h)
        return torch.stack(outs)  # [7, B, H]


class FraudGRU(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.gru1 = GRULayer(features, hidden)
        self.gru2 = GRULayer(hidden, hidden)
        self.head = nn.Linear(hidden, 1)
        self.drop = nn.Dropout(0.25)  # training only (identity in eval / export)

    def all_steps(self, sparse):  # logits [7, B] (training path, sparse input)
        return self.head(self.drop(self.gru2(self.drop(self.gru1(None, sparse))))).squeeze(-1)

    def forward(self, x, sparse=None):  # scores [B] = sigmoid of the last step
        h = self.gru2(self.gru1(x, sparse))[WINDOW - 1]
        return torch.sigmoid(self.head(h)).reshape(-1)


class ExportedGRU(nn.Module):
    """The trained FraudGRU rewritten for inference with as few graph nodes as the math allows
    (same function; onnxruntime-web pays ~1 us of dispatch per node, a third of its run time):
    * every tensor of a step keeps the leading step axis ([1, B, .]), so one Split per tensor
      slices all 7 steps and no Squeeze/Unsqueeze/Gather is exported;
    * the input projection splits once into the (r, z) and n parts; b_hr and b_hz are folded
      into the input bias, so W_hh h carries only b_hn (reset applies to W_hn h + b_hn);
    * r and z come from one Add + one Sigmoid on [1, B, 2H];
    * h' = (1 - z) n + z h is computed as n + z (h - n);
    * layer 2 only returns its last state (the head reads nothing else)."""

    def __init__(self, model):
        super().__init__()
        self.layers = nn.ModuleList()
        for layer in (model.gru1, model.gru2):
            H = layer.hidden
            ih = nn.Linear(layer.ih.in_features, 3 * H)
            hh = nn.Linear(H, 3 * H)
            with torch.no_grad():
                ih.weight.copy_(layer.ih.weight)
                ih.bias.copy_(layer.ih.bias)
                ih.bias[:2 * H] += layer.hh.bias[:2 * H]
                hh.weight.copy_(layer.hh.weight)
                hh.bias.zero_()
                hh.bias[2 * H:] = layer.hh.bias[2 * H:]
            self.layers.append(nn.ModuleDict({"ih": ih, "hh": hh}))
        self.hidden = model.gru1.hidden
        self.head = model.head

    def layer(self, index, x, every_step):  # x [7, B, I] -> list of 7 [1, B, H] states, or the last one
        H = self.hidden
        ih, hh = self.layers[index]["ih"], self.layers[index]["hh"]
        gi_rz, gi_n = ih(x).split([2 * H, H], dim=-1)
        gi_rz, gi_n = gi_rz.split(1, dim=0), gi_n.split(1, dim=0)
        b_hn = hh.bias[2 * H:]
        h, outs = None, []
        for t in range(WINDOW):
            if h is None:  # h0 = 0: W_hh h0 + b = (0, 0, b_hn)
                r, z = torch.sigmoid(gi_rz[t]).split(H, dim=-1)
                n = torch.tanh(gi_n[t] + r * b_hn)
                h = n - z * n
            else:
                gh_rz, gh_n = hh(h).split([2 * H, H], dim=-1)
                r, z = torch.sigmoid(gi_rz[t] + gh_rz).split(H, dim=-1)
                n = torch.tanh(gi_n[t] + r * gh_n)
                h = n + z * (h - n)
            outs.append(h)
        return outs if every_step else h

    def forward(self, x):  # x [7, B, F] -> scores [B]
        h1 = torch.cat(self.layer(0, x, True), 0)
        h2 = self.layer(1, h1, False)
        return torch.sigmoid(self.head(h2)).reshape(-1)


def average_precision(y, s):
    """sklearn's average_precision_score (step-wise, ties grouped)."""
    y = np.asarray(y, dtype=np.int64)
    s = np.asarray(s, dtype=np.float64)
    order = np.argsort(-s, kind="mergesort")
    y, s = y[order], s[order]
    distinct = np.where(np.diff(s))[0]
    idx = np.r_[distinct, y.size - 1]
    tps = np.cumsum(y)[idx]
    fps = (idx + 1) - tps
    precision = tps / (tps + fps)
    recall = tps / max(1, y.sum())
    recall_prev = np.r_[0, recall[:-1]]
    return float(np.sum((recall - recall_prev) * precision))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default=".cache/fraud/transactions.csv")
    ap.add_argument("--cache", default=".cache/fraud")
    ap.add_argument("--out", default="models/fraud-gru/model.fp32.onnx")
    ap.add_argument("--split", choices=("dates", "quantile"), default="dates",
                    help="dates: the fixed 2019 periods; quantile: 70/15/15% of the rows by time")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=22)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--hard-share", type=float, default=0.3,
                    help="share of each epoch's non-fraud windows drawn from hard ones (error on the scored "
                         "transaction, or fraud earlier in the window)")
    ap.add_argument("--input-dropout", type=float, default=0.1)
    ap.add_argument("--time-shift", type=float, default=0.6,
                    help="train-time augmentation: add U(0, s) per window to the Time feature so the model cannot key "
                         "on absolute dates (validation/test Time values lie above 1)")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    t0 = time.time()

    rows = fx.load_csv(args.csv)
    ms = np.array([fx.time_ms(r) for r in rows], dtype=np.int64)
    card_ids = {}  # (User, Card) -> index in order of first appearance (the generator's file is sorted)
    key = np.array([card_ids.setdefault((r["User"], r["Card"]), len(card_ids)) for r in rows], dtype=np.int64)
    labels = np.array([r["Is Fraud?"] == "Yes" for r in rows], dtype=np.uint8)
    order = np.lexsort((np.arange(len(rows)), ms, key))  # by card, time, file order
    bounds = {name: (day_ms(a), day_ms(b)) for name, (a, b) in SPLITS.items()}
    if args.split == "quantile":
        by_time = np.sort(ms)
        cut = [int(by_time[int(q * len(rows))]) for q in (0.7, 0.85)]
        bounds = {"train": (int(by_time[0]), cut[0]), "validation": (cut[0], cut[1]),
                  "test": (cut[1], int(by_time[-1]) + 1)}
    split_of = {name: (ms >= a) & (ms < b) for name, (a, b) in bounds.items()}
    train_rows = [rows[i] for i in np.nonzero(split_of["train"])[0]]
    vocab = fx.fit(train_rows)
    feat = fx.Featurizer(vocab)
    F = feat.count
    X = np.zeros((len(rows) + 1, F), dtype=np.float32)  # last row: the all-zero padding vector
    X[:-1] = feat.transform(rows)
    print(f"featurized {len(rows)} rows x {F} features in {time.time() - t0:.1f}s", flush=True)

    # windows[i] = row indices of the 6 previous transactions of the same card and row i (pad = len(rows))
    pad = len(rows)
    windows = np.full((len(rows), WINDOW), pad, dtype=np.int64)
    key = key[order]
    pos_in_card = np.zeros(len(rows), dtype=np.int64)
    start = 0
    for i in range(1, len(order) + 1):
        if i == len(order) or key[i] != key[start]:
            pos_in_card[start:i] = np.arange(i - start)
            start = i
    for lag in range(WINDOW):
        ok = pos_in_card >= lag
        src = np.where(ok, np.roll(order, lag), pad)
        windows[order, WINDOW - 1 - lag] = src
    ids = {name: np.nonzero(mask)[0] for name, mask in split_of.items()}

    # Sparse view of X for training (rows are one-hot blocks + 2 dense values): K active columns per row.
    # The last two slots are always Time and Amount (weight 0 on the padding row).
    onehot = X[:, :F - 2]
    nnz = (onehot != 0).sum(axis=1)
    K = int(nnz.max()) + 2
    cols = np.zeros((len(X), K), dtype=np.int64)
    vals = np.zeros((len(X), K), dtype=np.float32)
    nz_r, nz_c = np.nonzero(onehot)
    starts = np.cumsum(nnz) - nnz
    pos = np.arange(len(nz_r)) - starts[nz_r]
    cols[nz_r, pos] = nz_c
    vals[nz_r, pos] = onehot[nz_r, nz_c]
    cols[:, K - 2], cols[:, K - 1] = F - 2, F - 1
    vals[:, K - 2], vals[:, K - 1] = X[:, F - 2], X[:, F - 1]
    print(f"sparse view: {K} active columns per row at most ({time.time() - t0:.1f}s)", flush=True)

    def batch(idx, training=False):
        w = windows[idx].T.reshape(-1)  # time-major [7*B]
        v = vals[w]
        if training:  # input dropout on the one-hot slots
            v[:, :K - 2] *= (rng.random((len(w), K - 2)) >= args.input_dropout).astype(np.float32)
        if training and args.time_shift:  # augmentation: one random offset per window on the Time feature (non-padded steps)
            offsets = np.tile(rng.uniform(0.0, args.time_shift, size=len(idx)).astype(np.float32), WINDOW)
            v[:, K - 2] += np.where(w == pad, 0.0, offsets).astype(np.float32)
        sparse = (torch.from_numpy(cols[w]), torch.from_numpy(v))
        step_labels = np.where(w == pad, -1, labels[np.minimum(w, pad - 1)].astype(np.int64)).reshape(WINDOW, -1)
        return sparse, torch.from_numpy(step_labels)

    def predict(model, idx, bs=8192):
        model.eval()
        out = []
        with torch.no_grad():
            for k in range(0, len(idx), bs):
                sparse, _ = batch(idx[k:k + bs])
                out.append(model(None, sparse).numpy())
        return np.concatenate(out) if out else np.zeros(0)

    train_pos = ids["train"][labels[ids["train"]] == 1]
    train_neg = ids["train"][labels[ids["train"]] == 0]
    # "Hard" non-fraud windows, rare at the natural rate and so nearly absent from a plain 1:3 sample:
    # the scored transaction has an Errors? value, or an earlier step of the window is fraud.
    has_error = np.array([r["Errors?"] != "" for r in rows] + [False])
    hist_fraud = np.zeros(len(rows), dtype=bool)
    for t in range(WINDOW - 1):
        w_t = windows[:, t]
        hist_fraud |= (w_t != pad) & (labels[np.minimum(w_t, pad - 1)] == 1)
    hard = has_error[train_neg] | hist_fraud[train_neg]
    train_hard, train_easy = train_neg[hard], train_neg[~hard]
    print(f"train: {len(train_pos)} fraud windows, {len(train_neg)} non-fraud ({len(train_hard)} hard)", flush=True)
    model = FraudGRU(F, args.hidden)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    bce = nn.BCEWithLogitsLoss(reduction="none")
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    best = (-1.0, 0, None)
    t_train = time.time()
    for epoch in range(1, args.epochs + 1):
        model.train()
        n_neg = min(len(train_neg), args.negatives * len(train_pos))
        n_hard = min(len(train_hard), int(args.hard_share * n_neg))
        neg = np.concatenate([rng.choice(train_hard, size=n_hard, replace=False),
                              rng.choice(train_easy, size=n_neg - n_hard, replace=False)])
        epoch_ids = rng.permutation(np.concatenate([train_pos, neg]))
        total = 0.0
        for k in range(0, len(epoch_ids), 128):
            sparse, y = batch(epoch_ids[k:k + 128], training=True)
            logits = model.all_steps(sparse)
            mask = (y >= 0).float()
            losses = bce(logits, y.clamp(min=0).float()) * mask
            last = losses[-1].mean()
            earlier = losses[:-1].sum() / mask[:-1].sum().clamp(min=1)
            loss = last + 0.5 * earlier
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss) * y.shape[1]
        sched.step()
        val = average_precision(labels[ids["validation"]], predict(model, ids["validation"]))
        print(f"epoch {epoch}: loss {total / len(epoch_ids):.4f} val AUPRC {val:.4f} ({time.time() - t_train:.0f}s)", flush=True)
        if val > best[0]:
            best = (val, epoch, {k: v.clone() for k, v in model.state_dict().items()})
    train_seconds = time.time() - t_train
    model.load_state_dict(best[2])
    test_scores = predict(model, ids["test"])
    print(f"best epoch {best[1]} val AUPRC {best[0]:.4f}; test AUPRC (torch) "
          f"{average_precision(labels[ids['test']], test_scores):.4f}", flush=True)
    patterns_file = args.csv[:-4] + ".patterns.txt"
    if os.path.exists(patterns_file):  # per-pattern view of the test period (generator side file)
        with open(patterns_file) as f:
            pats = np.array(f.read().split("\n")[:len(rows)])[ids["test"]]
        legit = np.sort(test_scores[pats == ""])
        for name in sorted(set(pats) - {""}):
            sc = test_scores[pats == name]
            print(f"  {name}: n={len(sc)} median score {np.median(sc):.3f}, "
                  f"above legit p99.9 {np.mean(sc > legit[int(0.999 * len(legit))]):.2f}")

    model.eval()
    exported = ExportedGRU(model).eval()
    with torch.no_grad():  # the export graph computes the trained function: check on held-out windows
        check = ids["validation"][:4096]
        w = windows[check].T.reshape(-1)
        dense = torch.from_numpy(X[w].reshape(WINDOW, len(check), F))
        drift = float((exported(dense) - model(dense)).abs().max())
    print(f"export graph vs trained model: max |score diff| {drift:.2e} on {len(check)} validation windows", flush=True)
    assert drift < 1e-5, drift
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    torch.onnx.export(exported, torch.zeros(WINDOW, 16, F), args.out, input_names=["transactions"], output_names=["scores"],
                      dynamic_axes={"transactions": {1: "batch"}, "scores": {0: "batch"}}, opset_version=13,
                      do_constant_folding=True)

    os.makedirs(args.cache, exist_ok=True)
    X.tofile(os.path.join(args.cache, "rows.f32"))
    for name in ("validation", "test"):
        windows[ids[name]].astype(np.int32).tofile(os.path.join(args.cache, f"windows-{name}.i32"))
        labels[ids[name]].tofile(os.path.join(args.cache, f"labels-{name}.u8"))
        ids[name].astype(np.int32).tofile(os.path.join(args.cache, f"ids-{name}.i32"))
    with open(os.path.join(args.cache, "vocab.json"), "w") as f:
        json.dump(fx.describe(vocab), f)
    meta = {
        "rows": len(rows), "features": F, "pad": pad, "fraudRows": int(labels.sum()),
        "split": {k: {"from": iso(a), "until": iso(b), "windows": int(len(ids[k])),
                      "positives": int(labels[ids[k]].sum())} for k, (a, b) in bounds.items()},
        "training": {
            "script": "scripts/fraud/train.py",
            "architecture": f"2 stacked GRU layers (hidden {args.hidden}, PyTorch GRU semantics = ONNX linear_before_reset=1, "
                            f"zero initial state) unrolled over 7 steps as MatMul/Gemm + Sigmoid/Tanh/Mul/Add "
                            f"(exported as train.py's ExportedGRU: fused r/z gates, one Split per tensor), then Linear({args.hidden},1) + Sigmoid on the last step",
            "hidden": args.hidden, "seed": args.seed, "epochs": best[1], "epochsRun": args.epochs,
            "optimizer": "AdamW lr 3e-3 (cosine to 0 over the epochs run) weight decay 1e-2, batch 128", "balance": f"all fraud windows + {args.negatives}x non-fraud re-drawn each epoch, {args.hard_share:.0%} of them from "
                       f"hard non-fraud windows (Errors? on the scored transaction, or fraud earlier in the window)",
            "regularization": f"dropout 0.25 after each GRU layer, input dropout {args.input_dropout} on one-hot entries, AdamW weight decay 1e-2",
            "augmentation": f"Time feature + U(0, {args.time_shift}) per training window (same offset on its non-padded steps)",
            "trainWindowsPerEpoch": int(len(train_pos) + min(len(train_neg), args.negatives * len(train_pos))),
            "trainWindowsAvailable": int(len(ids["train"])), "trainPositives": int(len(train_pos)),
            "validationAuprcTorch": round(best[0], 4), "trainSeconds": round(train_seconds, 1),
        },
    }
    with open(os.path.join(args.cache, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps(meta["split"]), f"total {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
