#!/usr/bin/env bash
# Rebuilds the shipped spam classifier from scratch:
#   tokenizer -> encode -> train the SEEDS members on train + validation (in parallel)
#   -> export ensemble -> quantize -> evaluate on test
# Needs Node 20 with this repo's node_modules, and Debian's PyTorch + onnx:
#   apt-get install python3-torch python3-onnx
# Outputs: models/spam-classifier/{tokenizer.json,tokenizer_config.json,tokenizer.bin,
#   model.fp32.onnx,model.int8.onnx,manifest.json} and
#   test/fixtures/spam-classifier/reference.json. Exits non-zero if the
#   tokenizer parity check, a training run or an evaluation target fails.
# Seeds are fixed in scripts/spam/train.py (SEEDS, chosen on validation with
# `train.py --member N` for every candidate, then `train.py --select`); each
# member trains on one thread, so reruns give the same weights.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}

node scripts/spam/train-tokenizer.mjs
node scripts/spam/encode.mjs
SEEDS=$("$PYTHON" -c 'import sys; sys.path.insert(0, "scripts/spam"); import train; print(*train.SEEDS)')
pids=()
for seed in $SEEDS; do
  "$PYTHON" scripts/spam/train.py --member "$seed" --refit &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
"$PYTHON" scripts/spam/train.py --export
"$PYTHON" scripts/quantize.py models/spam-classifier/model.fp32.onnx models/spam-classifier/model.int8.onnx
node scripts/spam/evaluate.mjs
# The edge ships the graph optimized at build time (sessions then skip ORT's optimizer).
node scripts/optimize-graphs.mjs models/spam-classifier
# The edge loads the compact tokenizer: build tokenizer.bin and point the manifest at it.
node scripts/build-tokenizer.mjs models/spam-classifier
