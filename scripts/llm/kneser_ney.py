"""Interpolated Kneser-Ney trigram baseline on the tiny LLM's own tokens.

Usage: /usr/bin/python3 scripts/llm/kneser_ney.py   (writes .cache/llm/kneser-ney.json)

Counts come from the train split only; each document is read as [<|bos|>, <|bos|>, …, <|eos|>]
(the second <|bos|> gives the first token a trigram context) and every token after the
document's <|bos|> is predicted, <|eos|> included: exactly the tokens the neural model's
perplexity scores. Interpolated KN (Chen & Goodman 1998) with one absolute discount per order:

  P3(c|a,b) = max(c(abc) - D3, 0) / c(ab.) + D3 N1+(ab.) / c(ab.) * P2(c|b)      (P2 if c(ab.) = 0)
  P2(c|b)   = max(N1+(.bc) - D2, 0) / N1+(.b.) + D2 N1+(b.) / N1+(.b.) * P1(c)   (P1 if N1+(.b.) = 0)
  P1(c)     = max(N1+(.c) - D1, 0) / N1+(..) + D1 N1+(types) / N1+(..) / V

The three discounts are tuned on validation only (coordinate search over a grid); the test
split is read once, with the chosen discounts.
"""
import itertools
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from data import CACHE_DIR, load_split  # noqa: E402

V = int(os.environ.get("LLM_VOCAB_SIZE", 512))
BOS = 1
GRID = [round(0.05 * i, 2) for i in range(2, 20)] + [0.975, 0.99]


def triples(split):
    ids, documents = load_split(split)
    a, b, c = [], [], []
    for doc in documents:
        seq = np.concatenate(([BOS], ids[doc["start"]:doc["start"] + doc["length"]]))
        a.append(seq[:-2])
        b.append(seq[1:-1])
        c.append(seq[2:])
    return np.concatenate(a), np.concatenate(b), np.concatenate(c)


def lookup(keys, values, query):
    """values[keys == query] or 0 (keys sorted unique)."""
    pos = np.clip(np.searchsorted(keys, query), 0, len(keys) - 1)
    return np.where(keys[pos] == query, values[pos], 0)


class KneserNey:
    def __init__(self, a, b, c):
        tri, tri_count = np.unique((a * V + b) * V + c, return_counts=True)
        self.tri, self.tri_count = tri, tri_count
        ab = tri // V
        self.ab, ab_start = np.unique(ab, return_index=True)
        self.ab_count = np.add.reduceat(tri_count, ab_start)  # c(ab.)
        self.ab_types = np.diff(np.append(ab_start, len(tri)))  # N1+(ab.)
        bc = tri % (V * V)
        self.bc, self.bc_cont = np.unique(bc, return_counts=True)  # N1+(.bc)
        middle = self.bc // V
        self.b, b_start = np.unique(middle, return_index=True)
        self.b_cont = np.add.reduceat(self.bc_cont, b_start)  # N1+(.b.)
        self.b_types = np.diff(np.append(b_start, len(self.bc)))  # N1+(b.) among continuation bigrams
        last = self.bc % V
        self.c_cont = np.bincount(last, minlength=V)  # N1+(.c)
        self.bigram_types = len(self.bc)  # N1+(..)
        self.unigram_types = int((self.c_cont > 0).sum())

    def log_prob(self, a, b, c, d1, d2, d3):
        p1 = (np.maximum(self.c_cont[c] - d1, 0) + d1 * self.unigram_types / V) / self.bigram_types
        n_bc = lookup(self.bc, self.bc_cont, b * V + c)
        n_b = lookup(self.b, self.b_cont, b)
        t_b = lookup(self.b, self.b_types, b)
        safe_b = np.maximum(n_b, 1)
        p2 = np.where(n_b > 0, (np.maximum(n_bc - d2, 0) + d2 * t_b * p1) / safe_b, p1)
        n_abc = lookup(self.tri, self.tri_count, (a * V + b) * V + c)
        n_ab = lookup(self.ab, self.ab_count, a * V + b)
        t_ab = lookup(self.ab, self.ab_types, a * V + b)
        safe_ab = np.maximum(n_ab, 1)
        p3 = np.where(n_ab > 0, (np.maximum(n_abc - d3, 0) + d3 * t_ab * p2) / safe_ab, p2)
        return np.log(p3)

    def perplexity(self, data, discounts):
        return math.exp(-self.log_prob(*data, *discounts).mean())


def main():
    model = KneserNey(*triples("train"))
    validation = triples("validation")
    discounts = [0.75, 0.75, 0.75]
    best = model.perplexity(validation, discounts)
    for _ in range(4):  # coordinate search, validation only
        for i, value in itertools.product(range(3), GRID):
            trial = list(discounts)
            trial[i] = value
            ppl = model.perplexity(validation, trial)
            if ppl < best:
                best, discounts = ppl, trial
    test = triples("test")
    test_ppl = model.perplexity(test, discounts)
    result = {"discounts": {"unigram": discounts[0], "bigram": discounts[1], "trigram": discounts[2]},
              "validationPerplexity": round(best, 4), "testPerplexity": round(test_ppl, 4),
              "validationTokens": int(len(validation[0])), "testTokens": int(len(test[0])),
              "trainTokens": int(len(model.tri_count.nonzero()[0]) and model.tri_count.sum())}
    json.dump(result, open(os.path.join(CACHE_DIR, "kneser-ney.json"), "w"), indent=2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
