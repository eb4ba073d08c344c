"""Featurizes a freshly generated dataset with the SHIPPED model's vocabularies (from its
manifest), for scripts/fraud/fresh-eval.mjs: an evaluation on data that no training,
tuning or threshold choice ever saw.

  /usr/bin/python3 scripts/fraud/fresh_features.py --csv .cache/fraud-fresh/transactions.csv --out .cache/fraud-fresh
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import features as fx  # noqa: E402

WINDOW = 7


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--manifest", default="models/fraud-gru/manifest.json")
    args = ap.parse_args()

    vocab = json.load(open(args.manifest))["features"]
    rows = fx.load_csv(args.csv)
    feat = fx.Featurizer(vocab)
    X = np.zeros((len(rows) + 1, feat.count), dtype=np.float32)  # last row: zero padding
    X[:-1] = feat.transform(rows)

    # Windows as in training: per (User, Card) by time, the row and the 6 before it, left-padded.
    ms = np.array([fx.time_ms(r) for r in rows], dtype=np.int64)
    cards = {}  # (User, Card) as strings: an export's User is the edge's card id
    key = np.array([cards.setdefault((r["User"], r["Card"]), len(cards)) for r in rows], dtype=np.int64)
    order = np.lexsort((np.arange(len(rows)), ms, key))
    pad = len(rows)
    windows = np.full((len(rows), WINDOW), pad, dtype=np.int32)
    for position, i in enumerate(order):
        for lag in range(WINDOW):
            j = position - lag
            if j >= 0 and key[order[j]] == key[i]:
                windows[i, WINDOW - 1 - lag] = order[j]
    labels = np.array([r["Is Fraud?"] == "Yes" for r in rows], dtype=np.uint8)

    os.makedirs(args.out, exist_ok=True)
    X.tofile(os.path.join(args.out, "rows.f32"))
    windows.tofile(os.path.join(args.out, "windows.i32"))
    labels.tofile(os.path.join(args.out, "labels.u8"))
    json.dump({"rows": len(rows), "features": feat.count, "positives": int(labels.sum())}, open(os.path.join(args.out, "meta.json"), "w"))
    print(f"{len(rows)} transactions, {int(labels.sum())} fraud, {feat.count} features -> {args.out}")


if __name__ == "__main__":
    main()
