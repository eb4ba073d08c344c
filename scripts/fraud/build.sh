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
#
# Retraining on labelled data, e.g. an export of GET /v1/fraud/export (models/fraud-gru is left
# as it is): train on the first 70% of the rows by time, pick the epoch on the next 15%, and
# print AUPRC and recall of the shipped and the retrained model on the last 15%.
#
#   bash scripts/fraud/build.sh --csv labelled.csv [--out .cache/fraud/retrained]
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/usr/bin/python3}
usage="usage: build.sh [--csv FILE [--out DIR]]"
CSV="" OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --csv | --out)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "$1 needs a value; $usage" >&2; exit 2; }
      if [ "$1" = --csv ]; then CSV=$2; else OUT=$2; fi
      shift 2 ;;
    *) echo "unknown argument $1; $usage" >&2; exit 2 ;;
  esac
done
if [ -n "$OUT" ] && [ -z "$CSV" ]; then echo "--out goes with --csv; $usage" >&2; exit 2; fi

if [ -n "$CSV" ]; then
  [ -f "$CSV" ] || { echo "no such file: $CSV" >&2; exit 2; }
  OUT=${OUT:-.cache/fraud/retrained}
  "$PY" scripts/fraud/train.py --csv "$CSV" --split quantile --cache "$OUT" \
    --out "$OUT/model.fp32.onnx"
  node scripts/fraud/retrain-eval.mjs --csv "$CSV" --dir "$OUT"
  exit 0
fi

node scripts/fraud/generate.mjs --seed 20261122 --users 8000 --out .cache/fraud/transactions.csv
"$PY" scripts/fraud/train.py --csv .cache/fraud/transactions.csv --out models/fraud-gru/model.fp32.onnx
node scripts/fraud/calibrate.mjs
"$PY" scripts/quantize.py models/fraud-gru/model.fp32.onnx models/fraud-gru/model.int8.onnx --calibration .cache/fraud/calibration.json
"$PY" scripts/fraud/fixtures.py
node scripts/fraud/evaluate.mjs
# The edge ships the graph optimized at build time (sessions then skip ORT's optimizer).
node scripts/optimize-graphs.mjs models/fraud-gru
# The attribution batch's graph, cut out of the optimized one at its last step.
"$PY" scripts/fraud/split-attribution.py models/fraud-gru
