#!/usr/bin/env bash
# Fraud GRU pipeline, end to end (a few minutes on 2 CPU cores):
#   synthetic TabFormer data -> featurize + train (PyTorch) -> ONNX FP32 -> calibrate on
#   validation -> static INT8 -> evaluate,
#   manifest and edge fixtures.
#
# Needs Debian's Python with torch + onnx (plain pyenv `python3` has no torch):
#   apt-get install python3-torch python3-onnx python3-numpy
# and node >= 20 with onnxruntime-node / onnxruntime-web from node_modules.
#
#   bash scripts/fraud/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/usr/bin/python3}

node scripts/fraud/generate.mjs --seed 20261122 --users 8000 --out .cache/fraud/transactions.csv
"$PY" scripts/fraud/train.py --csv .cache/fraud/transactions.csv --out models/fraud-gru/model.fp32.onnx
node scripts/fraud/calibrate.mjs
"$PY" scripts/quantize.py models/fraud-gru/model.fp32.onnx models/fraud-gru/model.int8.onnx --calibration .cache/fraud/calibration.json
"$PY" scripts/fraud/fixtures.py
node scripts/fraud/evaluate.mjs
# The edge ships the graph optimized at build time (sessions then skip ORT's optimizer).
node scripts/optimize-graphs.mjs models/fraud-gru
