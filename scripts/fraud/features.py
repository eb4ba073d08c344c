"""TabFormer featurizer: IBM's 220-feature recipe (see /work/shared/FRAUD.md), fitted on the
TRAIN period only, with explicit handling of values the edge may meet that training did not.

Blocks, in this order (column count follows from the fitted vocabularies):

  1. Merchant State: '' -> 'missing_value'; label-encode (classes sorted, then '__unknown__'
     appended last; unseen value -> '__unknown__'); index -> 5 decimal digits, least
     significant first (d_i = idx % 10; idx //= 10); each digit column one-hot over the digit
     values seen in that column in training (sorted). Unseen digit value -> all zeros.
  2. Zip: '' -> 0; integer value of the zip -> 5 digits -> one-hot (as above).
  3. Merchant Name: label-encode (values with < minCount=3 training rows -> '__unknown__',
     also in training; classes sorted numerically as signed 64-bit ints (as strings when one is not a number,
     e.g. an export's "self"), '__unknown__' last)
     -> digits -> one-hot.
  4. Merchant City: as Merchant Name (minCount 3, classes sorted as strings by code point).
  5. MCC: label-encode (classes sorted numerically, '__unknown__' last; minCount 1) -> digits
     -> one-hot.
  6. Use Chip: label-binarize over the sorted training values (one column each); unseen -> zeros.
  7. Errors?: '' -> 'missing_value'; the WHOLE string (e.g. 'Bad PIN,Insufficient Balance')
     is one category; label-binarize over the sorted training strings; unseen -> zeros.
  8. Time: datetime(Year, Month, Day, HH, MM) read as UTC; t_ms = ms since the Unix epoch;
     (t_ms - minMs) / (maxMs - minMs) with training min/max (identical to the ns version);
     not clipped (later periods give values > 1).
  9. Amount: strip '$' -> float a; log(max(1, a)) (natural log) -> (v - min) / (max - min)
     with training min/max; not clipped.

All arithmetic in float64, the final vector cast to float32.
"""
import calendar
import csv
import json
import math
import sys

import numpy as np

UNKNOWN = "__unknown__"
MISSING = "missing_value"
DIGITS = 5
MIN_COUNT = 3

COLUMNS = ["User", "Card", "Year", "Month", "Day", "Time", "Amount", "Use Chip", "Merchant Name",
           "Merchant City", "Merchant State", "Zip", "MCC", "Errors?", "Is Fraud?"]


def load_csv(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return [row for row in reader]


def time_ms(row):
    hh, mm = row["Time"].split(":")
    return calendar.timegm((int(row["Year"]), int(row["Month"]), int(row["Day"]), int(hh), int(mm), 0)) * 1000


def amount_value(row):
    return float(str(row["Amount"]).replace("$", ""))


def state_key(row):
    v = str(row.get("Merchant State") or "")
    return v if v != "" else MISSING


def zip_value(row):
    v = str(row.get("Zip") or "").strip()
    if v == "":
        return 0
    try:
        return int(float(v))
    except ValueError:
        return 0


def errors_key(row):
    v = str(row.get("Errors?") or "")
    return v if v != "" else MISSING


def name_key(row):
    return str(row["Merchant Name"]).strip()


def city_key(row):
    return str(row["Merchant City"])


def mcc_key(row):
    return str(int(row["MCC"]))


def digits_of(value):
    out = []
    for _ in range(DIGITS):
        out.append(value % 10)
        value //= 10
    return out


def fit_label(values, min_count, numeric):
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    kept = [v for v, n in counts.items() if n >= min_count]
    # Numeric classes sort as integers; an export's merchant id ("self": the account's own
    # charges) is not a number, and then all sort as strings.
    numeric = numeric and all(v.lstrip("-").isdigit() for v in kept)
    kept.sort(key=(lambda s: int(s)) if numeric else None)
    return kept + [UNKNOWN]


def encode_label(classes_index, value):
    idx = classes_index.get(value)
    return classes_index[UNKNOWN] if idx is None else idx


def fit_digits(indices):
    seen = [set() for _ in range(DIGITS)]
    for idx in indices:
        for j, d in enumerate(digits_of(idx)):
            seen[j].add(d)
    return [sorted(s) for s in seen]


class Featurizer:
    def __init__(self, vocab):
        self.vocab = vocab
        self.index = {}
        for block in ("merchantState", "merchantName", "merchantCity", "mcc"):
            self.index[block] = {c: i for i, c in enumerate(vocab[block]["classes"])}
        for block in ("useChip", "errors"):
            self.index[block] = {c: i for i, c in enumerate(vocab[block]["classes"])}
        self.layout = []  # (name, width)
        for block in ("merchantState", "zip", "merchantName", "merchantCity", "mcc"):
            for j, d in enumerate(vocab[block]["digits"]):
                self.layout.append((f"{block}.d{j}", len(d)))
        self.layout.append(("useChip", len(vocab["useChip"]["classes"])))
        self.layout.append(("errors", len(vocab["errors"]["classes"])))
        self.layout.append(("time", 1))
        self.layout.append(("amount", 1))
        self.count = sum(w for _, w in self.layout)

    def column_names(self):
        names = []
        for block in ("merchantState", "zip", "merchantName", "merchantCity", "mcc"):
            for j, d in enumerate(self.vocab[block]["digits"]):
                names += [f"{block}.d{j}={v}" for v in d]
        names += [f"useChip={c}" for c in self.vocab["useChip"]["classes"]]
        names += [f"errors={c}" for c in self.vocab["errors"]["classes"]]
        return names + ["time", "amount"]

    def transform(self, rows):
        v = self.vocab
        out = np.zeros((len(rows), self.count), dtype=np.float32)
        digit_pos = [{d: k for k, d in enumerate(ds)} for block in ("merchantState", "zip", "merchantName", "merchantCity", "mcc")
                     for ds in v[block]["digits"]]
        tmin, tmax = v["time"]["minMs"], v["time"]["maxMs"]
        amin, amax = v["amount"]["min"], v["amount"]["max"]
        n_chip = len(v["useChip"]["classes"])
        for r, row in enumerate(rows):
            values = [
                encode_label(self.index["merchantState"], state_key(row)),
                zip_value(row),
                encode_label(self.index["merchantName"], name_key(row)),
                encode_label(self.index["merchantCity"], city_key(row)),
                encode_label(self.index["mcc"], mcc_key(row)),
            ]
            col = 0
            g = 0
            for value in values:
                for d in digits_of(value):
                    pos = digit_pos[g].get(d)
                    if pos is not None:
                        out[r, col + pos] = 1.0
                    col += len(digit_pos[g])
                    g += 1
            k = self.index["useChip"].get(str(row["Use Chip"]))
            if k is not None:
                out[r, col + k] = 1.0
            col += n_chip
            k = self.index["errors"].get(errors_key(row))
            if k is not None:
                out[r, col + k] = 1.0
            col += len(v["errors"]["classes"])
            out[r, col] = (time_ms(row) - tmin) / (tmax - tmin)
            out[r, col + 1] = (math.log(max(1.0, amount_value(row))) - amin) / (amax - amin)
        return out


def fit(rows):
    """Fit every vocabulary/constant on the given (training-period) rows."""
    vocab = {}
    for block, key, min_count, numeric in (("merchantState", state_key, 1, False), ("merchantName", name_key, MIN_COUNT, True),
                                           ("merchantCity", city_key, MIN_COUNT, False), ("mcc", mcc_key, 1, True)):
        values = [key(r) for r in rows]
        classes = fit_label(values, min_count, numeric)
        index = {c: i for i, c in enumerate(classes)}
        entry = {"classes": classes, "digits": fit_digits(encode_label(index, x) for x in values)}
        if block in ("merchantName", "merchantCity"):
            entry["minCount"] = min_count
        vocab[block] = entry
    vocab["zip"] = {"digits": fit_digits(zip_value(r) for r in rows)}
    vocab["useChip"] = {"classes": sorted({str(r["Use Chip"]) for r in rows})}
    vocab["errors"] = {"classes": sorted({errors_key(r) for r in rows})}
    times = [time_ms(r) for r in rows]
    vocab["time"] = {"minMs": min(times), "maxMs": max(times)}
    logs = [math.log(max(1.0, amount_value(r))) for r in rows]
    vocab["amount"] = {"min": min(logs), "max": max(logs)}
    vocab["count"] = Featurizer(vocab).count
    return vocab


def describe(vocab):
    """The manifest's `features` object: the vocabularies plus a precise spec of the encoding."""
    out = {"count": vocab["count"]}
    out["order"] = ["merchantState", "zip", "merchantName", "merchantCity", "mcc", "useChip", "errors", "time", "amount"]
    out["encoding"] = {
        "labelEncode": "key -> index in `classes` (classes sorted; '__unknown__' is always the LAST class); a key not in classes -> index of '__unknown__'",
        "digits": "index (or zip value) -> 5 decimal digits, least significant first: d_i = x % 10; x = floor(x / 10); digit group i is one-hot over digits[i] (columns in that order); a digit not in digits[i] -> all zeros in group i",
        "merchantState": "key = Merchant State string; '' -> 'missing_value' (online rows); foreign rows carry the country name",
        "zip": "value = integer of the Zip field; '' or not a number -> 0; then digits (no label encoding)",
        "merchantName": "key = decimal string of the signed 64-bit Merchant Name; training values seen < minCount times were mapped to '__unknown__'",
        "merchantCity": "key = Merchant City string as is (online rows: 'ONLINE'); rare training values -> '__unknown__'",
        "mcc": "key = decimal string of the integer MCC",
        "useChip": "one column per class, 1 for the matching class; unseen value -> all zeros",
        "errors": "key = the whole Errors? string as is (comma-separated, no spaces after commas, e.g. 'Bad PIN,Insufficient Balance'); '' -> 'missing_value'; one column per class; unseen string -> all zeros",
        "time": "t_ms = Date.UTC(Year, Month-1, Day, HH, MM) (wall-clock fields read as UTC); value = (t_ms - minMs) / (maxMs - minMs), float64 then float32, NOT clipped (same value as IBM's ns-since-epoch min-max)",
        "amount": "a = parseFloat(Amount without '$'); value = (ln(max(1, a)) - min) / (max - min), float64 then float32, NOT clipped",
        "datetime": "UTC",
    }
    for block in ("merchantState", "zip", "merchantName", "merchantCity", "mcc", "useChip", "errors", "time", "amount"):
        out[block] = vocab[block]
    return out


if __name__ == "__main__":
    rows = load_csv(sys.argv[1])
    vocab = fit(rows)
    print(json.dumps({k: (len(v["classes"]) if isinstance(v, dict) and "classes" in v else v) for k, v in vocab.items()}, indent=1))
