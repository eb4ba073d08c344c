"""Edge fixtures from the Python featurizer (the reference the TypeScript featurizer must match).

  /usr/bin/python3 scripts/fraud/fixtures.py

Writes test/fixtures/fraud-gru/features.json (raw transactions + their feature vectors) and
.cache/fraud/fixture-windows.json (card histories + the model's input windows), which
scripts/fraud/evaluate.mjs scores with onnxruntime-node into test/fixtures/fraud-gru/windows.json.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import features as fx  # noqa: E402
import train  # noqa: E402

CSV = ".cache/fraud/transactions.csv"
VOCAB = ".cache/fraud/vocab.json"
INT_FIELDS = ("User", "Card", "Year", "Month", "Day", "MCC")


def as_json(row):
    out = {}
    for k in fx.COLUMNS:
        v = row[k]
        out[k] = int(v) if k in INT_FIELDS else str(v)
    return out


def main():
    with open(VOCAB) as f:
        described = json.load(f)
    feat = fx.Featurizer(described)
    rows = fx.load_csv(CSV)
    test_from = train.day_ms(train.SPLITS["test"][0])
    val_from = train.day_ms(train.SPLITS["validation"][0])
    name_classes = set(described["merchantName"]["classes"])
    city_classes = set(described["merchantCity"]["classes"])

    picks = []  # (why, row)

    def take(why, pred, n=1, start=0):
        got = 0
        for r in rows[start:]:
            if pred(r):
                picks.append((why, dict(r)))
                got += 1
                if got == n:
                    return

    in_test = lambda r: fx.time_ms(r) >= test_from  # noqa: E731
    take("chip, habitual, train period", lambda r: r["Use Chip"] == "Chip Transaction" and r["Errors?"] == "" and r["Is Fraud?"] == "No", 2)
    take("swipe", lambda r: r["Use Chip"] == "Swipe Transaction", 2)
    take("online: empty Merchant State and Zip", lambda r: r["Use Chip"] == "Online Transaction", 2)
    take("foreign: country as Merchant State, empty Zip", lambda r: r["Zip"] == "" and r["Merchant City"] != "ONLINE", 2)
    take("single error", lambda r: r["Errors?"] == "Insufficient Balance", 1)
    take("multi-error", lambda r: r["Errors?"].count(",") >= 1, 2)
    take("three errors", lambda r: r["Errors?"].count(",") == 2, 1)
    take("rare merchant name (-> __unknown__)", lambda r: r["Merchant Name"] not in name_classes, 2)
    take("rare merchant city (-> __unknown__)", lambda r: r["Merchant City"] not in city_classes, 1)
    take("test period: Time > 1 (out of training range)", lambda r: in_test(r) and r["Is Fraud?"] == "No", 2)
    take("fraud, test period", lambda r: in_test(r) and r["Is Fraud?"] == "Yes", 2)
    take("validation period", lambda r: val_from <= fx.time_ms(r) < test_from, 1)
    take("amount below $1 (log clamps to 0)", lambda r: float(r["Amount"][1:]) < 1, 1)
    take("large amount", lambda r: float(r["Amount"][1:]) > 2000, 1)
    base = dict(picks[0][1])
    synthetic = [
        ("never-seen merchant name, city, state, MCC, zip with leading zero",
         {**base, "Merchant Name": "-1234567890123456789", "Merchant City": "Nowhere", "Merchant State": "ZZ", "Zip": "02134", "MCC": "1234"}),
        ("unseen Use Chip value -> all zeros in its block", {**base, "Use Chip": "Contactless Transaction"}),
        ("unseen Errors? string -> all zeros in its block", {**base, "Errors?": "Bad PIN,Bad Zipcode"}),
        ("before the training period: Time < 0", {**base, "Year": "2018", "Month": "12", "Day": "31", "Time": "23:59"}),
        ("after the data: 2020-06-15 Time > 1", {**base, "Year": "2020", "Month": "6", "Day": "15", "Time": "08:05"}),
        ("zero amount", {**base, "Amount": "$0.00"}),
        ("amount above the training max", {**base, "Amount": "$99999.99"}),
        ("zip over 5 digits keeps its 5 least significant", {**base, "Zip": "123456"}),
    ]
    picks += synthetic
    raws = [r for _, r in picks]
    vectors = feat.transform(raws)
    items = [{"why": why, "transaction": as_json(r), "features": [float(v) for v in vec]}
             for (why, r), vec in zip(picks, vectors)]
    os.makedirs("test/fixtures/fraud-gru", exist_ok=True)
    with open("test/fixtures/fraud-gru/features.json", "w") as f:
        json.dump({
            "description": "Raw TabFormer transactions and the Python featurizer's (scripts/fraud/features.py) float32 "
                           "feature vectors under models/fraud-gru/manifest.json's `features`; compare column by column "
                           "(|diff| <= 1e-6).",
            "featureCount": feat.count, "columns": feat.column_names(), "items": items,
        }, f)

    # Card histories for end-to-end scoring: last transaction scored, up to 6 earlier ones before it.
    key = lambda r: (int(r["User"]), int(r["Card"]))  # noqa: E731
    by_card = {}
    for i, r in enumerate(rows):
        by_card.setdefault(key(r), []).append(i)
    for k in by_card:
        by_card[k].sort(key=lambda i: (fx.time_ms(rows[i]), i))
    histories = []
    rng = np.random.default_rng(3)
    cards = sorted(by_card)
    fraud_cards = [k for k in cards if any(rows[i]["Is Fraud?"] == "Yes" and fx.time_ms(rows[i]) >= test_from for i in by_card[k])]
    for k in fraud_cards[:2]:  # a fraud transaction in the test period, full history
        seq = by_card[k]
        j = next(j for j, i in enumerate(seq) if rows[i]["Is Fraud?"] == "Yes" and fx.time_ms(rows[i]) >= test_from)
        histories.append(("fraud, test period, full history", seq[max(0, j - 6):j + 1]))
    for k in [cards[int(x)] for x in rng.choice(len(cards), 2, replace=False)]:
        seq = by_card[k]
        j = next(j for j, i in enumerate(seq) if fx.time_ms(rows[i]) >= test_from)
        histories.append(("legit, test period, full history", seq[max(0, j - 6):j + 1]))
    k = cards[5]
    histories.append(("card's first transaction: 6 padded steps", by_card[k][:1]))
    histories.append(("card's 4th transaction: 3 padded steps", by_card[cards[6]][:4]))
    out = []
    for why, seq in histories:
        x = feat.transform([rows[i] for i in seq])
        window = np.zeros((train.WINDOW, feat.count), dtype=np.float32)
        window[train.WINDOW - len(seq):] = x
        out.append({"why": why, "transactions": [as_json(rows[i]) for i in seq],
                    "isFraud": rows[seq[-1]]["Is Fraud?"] == "Yes", "window": window.tolist()})
    with open(".cache/fraud/fixture-windows.json", "w") as f:
        json.dump(out, f)
    print(f"features.json: {len(items)} transactions; {len(out)} histories")


if __name__ == "__main__":
    main()
