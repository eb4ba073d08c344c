"""Step 4 of scripts/diffusion/build.sh: the parity fixtures and the closed-loop evaluation, both
through the Python reference loop (scripts/diffusion/reference.py) on the exported modules'
torch originals (.cache/diffusion/model.pt; Debian has no Python onnxruntime: the ONNX graphs
are checked against these modules by test/unit/models/digit-diffusion.test.ts with onnxruntime-node).

Fixtures (test/fixtures/digit-diffusion/):
  loops.json   per case: prompt, ids, padded input_ids / attention_mask, seed, scheduler, steps,
               guidance, init noise sigma, the first 8 noise values (before scaling), timesteps,
               the first 4 values of each step's predicted clean latent, the final 28x28 image
               (rounded to 1e-4);
  graphs.json  each graph's outputs on small fixed inputs (ONNX vs torch parity).
Evaluation (.cache/diffusion/evaluation.json, merged into the manifest): for each digit 0-9 and
seeds 0..49, one image per (digit, seed) with the manifest's default scheduler, steps and
guidance; the prompt is the digit's training (resp. held-out) phrasings taken in turn
(seed i -> phrasing i mod count). A CNN trained here on the 8,000 training digits only
classifies them; its penultimate layer (128-d) is the feature space of the spread figures.
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

from model import DigitCnn, TextEncoder, UNet, Vae
import reference

CACHE = ".cache/diffusion"
FIXTURES = "test/fixtures/digit-diffusion"
MODEL_DIR = "models/digit-diffusion"


def load_modules():
    state = torch.load(f"{CACHE}/model.pt")
    text = TextEncoder(state["vocab"], state["promptLength"], out_dim=state["textDim"])
    text.load_state_dict(state["text"])
    unet = UNet(text_dim=state["textDim"])
    unet.load_state_dict(state["unet"])
    vae = Vae()
    vae.load_state_dict(state["vae"])
    return text.eval(), unet.eval(), vae.dec.eval()


def runners(text, unet, dec):
    def run_text(ids, mask):
        with torch.no_grad():
            return text(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()

    def run_unet(sample, t, emb):
        with torch.no_grad():
            return unet(torch.from_numpy(sample), torch.from_numpy(t), torch.from_numpy(emb)).numpy()

    def run_dec(latent):
        with torch.no_grad():
            return dec(torch.from_numpy(latent)).numpy()

    return run_text, run_unet, run_dec


def pad(ids_list, l, pad_id):
    ids = np.full((len(ids_list), l), pad_id, dtype=np.int64)
    mask = np.zeros((len(ids_list), l), dtype=np.int64)
    for i, r in enumerate(ids_list):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return ids, mask


def r4(values):
    return [round(float(v), 4) for v in np.asarray(values).reshape(-1)]


def write_fixtures(diffusion, phrasings, run):
    os.makedirs(FIXTURES, exist_ok=True)
    by_text = {p["text"]: p for p in phrasings}
    cases = [
        ("a handwritten seven", 42, "ddim", 20, 4.0),
        ("digit 3", 7, "euler", 20, 4.0),
        ("the number zero", 1, "ddim", 10, 2.0),
        ("a picture of an 8", 123456789, "euler", 12, 5.0),
        ("handwritten one", 2**40 + 5, "ddim", 20, 4.0),  # a held-out phrasing; a seed above 2^32
        ("a picture of the digit 3", 99, "ddim", 7, 3.0),  # N // steps (142) != the timestep gap (143)
    ]
    out = []
    for text, seed, scheduler, steps, g in cases:
        ids = by_text[text]["ids"]
        input_ids, mask = pad([ids], diffusion["promptLength"], diffusion["padTokenId"])
        x0s = []
        image = reference.sample(*run, diffusion, input_ids, mask, [seed], scheduler, steps, g,
                                 on_step=lambda k, x0: x0s.append(r4(x0[0].reshape(-1)[:4])))
        sched = diffusion["scheduler"]
        out.append({
            "prompt": text, "heldOutPhrasing": by_text[text]["heldOut"], "ids": ids,
            "inputIds": input_ids[0].tolist(), "attentionMask": mask[0].tolist(),
            "seed": seed, "scheduler": scheduler, "steps": steps, "guidanceScale": g,
            "initNoiseSigma": reference.init_noise_sigma(sched, scheduler, steps),
            "timesteps": reference.timesteps(sched, steps).tolist(),
            "noiseFirst8": [float(v) for v in reference.seeded_noise(seed, tuple(diffusion["latentShape"])).reshape(-1)[:8]],
            "predictedLatentFirst4": x0s,
            "image": r4(image[0]),
        })
    json.dump({"description": "Python reference loop (scripts/diffusion/evaluate.py) on the FP32 modules; "
               "image = vae_decoder output [1,28,28] in C order, rounded to 1e-4", "cases": out},
              open(f"{FIXTURES}/loops.json", "w"))
    # Graph parity: fixed small inputs.
    run_text, run_unet, run_dec = run
    ids, mask = pad([by_text["a handwritten seven"]["ids"], []], diffusion["promptLength"], diffusion["padTokenId"])
    emb = run_text(ids, mask)
    sample = np.stack([reference.seeded_noise(s, (4, 7, 7)) for s in (1, 2)]).astype(np.float32)
    t = np.array([999.0, 12.5], dtype=np.float32)
    eps = run_unet(sample, t, emb)
    img = run_dec((sample / np.float32(diffusion["scalingFactor"])).astype(np.float32))
    json.dump({
        "description": "torch outputs of each graph on fixed inputs; sample = seeded noise of seeds 1 and 2",
        "text_encoder": {"input_ids": ids.tolist(), "attention_mask": mask.tolist(), "text_embeds": r4(emb)},
        "unet": {"sampleSeeds": [1, 2], "timestep": t.tolist(), "noise_pred": r4(eps)},
        "vae_decoder": {"latent": "sample / scalingFactor", "image": r4(img)},
    }, open(f"{FIXTURES}/graphs.json", "w"))
    print(f"fixtures: {len(out)} loops -> {FIXTURES}/loops.json, graphs.json")


def load_split(name):
    x = np.fromfile(f"{CACHE}/{name}.f32", dtype=np.float32).reshape(-1, 1, 28, 28)
    y = np.fromfile(f"{CACHE}/{name}.labels.u8", dtype=np.uint8).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


def classifier():
    path = f"{CACHE}/classifier.pt"
    net = DigitCnn()
    if os.path.exists(path):
        net.load_state_dict(torch.load(path))
        return net.eval()
    x, y = load_split("train")
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    for epoch in range(4):
        perm = torch.randperm(len(x), generator=g)
        for i in range(0, len(x), 64):
            idx = perm[i:i + 64]
            # Light shift augmentation so it is not brittle on generated strokes.
            batch = torch.roll(x[idx], shifts=(int(torch.randint(-2, 3, (1,), generator=g)),
                                                int(torch.randint(-2, 3, (1,), generator=g))), dims=(2, 3))
            loss = F.cross_entropy(net(batch), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    torch.save(net.state_dict(), path)
    # Also as ONNX with a minimal manifest, so scripts/diffusion/closed-loop.mjs can use it
    # (--classifier .cache/diffusion/feedback-classifier) when the shipped classifier is absent.
    os.makedirs(f"{CACHE}/feedback-classifier", exist_ok=True)
    net.eval()
    torch.onnx.export(net, (torch.zeros(2, 1, 28, 28),), f"{CACHE}/feedback-classifier/model.onnx",
                      input_names=["pixels"], output_names=["logits"], opset_version=14,
                      dynamic_axes={"pixels": {0: "batch"}, "logits": {0: "batch"}})
    json.dump({"graphs": {"model": {"file": "model.onnx"}}}, open(f"{CACHE}/feedback-classifier/manifest.json", "w"))
    return net


def spread(features):
    return float(torch.linalg.norm(features - features.mean(0), dim=1).mean())


def evaluate(diffusion, phrasings, run, seeds=50):
    d = diffusion["defaults"]
    net = classifier()
    xt, yt = load_split("test")
    xtr, _ = load_split("train")
    with torch.no_grad():
        test_acc = float((net(xt).argmax(1) == yt).float().mean())
    result = {
        "protocol": (f"digits 0-9 x seeds 0..{seeds - 1}, one image each, scheduler {d['scheduler']}, {d['steps']} steps, "
                     f"guidance {d['guidanceScale']}; prompt = the digit's phrasings of the set taken in turn (seed i -> i mod count); "
                     "Python reference loop on the FP32 modules (scripts/diffusion/evaluate.py)"),
        "classifier": {"description": "a CNN (2 conv + 128-d penultimate layer) trained by scripts/diffusion/evaluate.py on the "
                                      "8,000 training digits only (the shipped models/digit-classifier was not on this branch)",
                       "heldOutAccuracy": round(test_acc, 4)},
    }
    train_flat = xtr.reshape(len(xtr), -1)

    def nearest_train(images):
        flat = images.reshape(len(images), -1)
        dists = torch.cdist(flat, train_flat)
        return dists.min(1).values

    with torch.no_grad():
        real_feat = net.features(xt)
        real_nn = nearest_train(xt)
    for name, held in (("trainingPhrasings", False), ("heldOutPhrasings", True)):
        t0 = time.time()
        prompts, labels = [], []
        for digit in range(10):
            mine = [p for p in phrasings if p["digit"] == digit and p["heldOut"] == held]
            for s in range(seeds):
                prompts.append(mine[s % len(mine)]["ids"])
                labels.append(digit)
        ids, mask = pad(prompts, diffusion["promptLength"], diffusion["padTokenId"])
        seeds_list = [s for _ in range(10) for s in range(seeds)]
        images = []
        for i in range(0, len(prompts), 100):
            images.append(reference.sample(*run, diffusion, ids[i:i + 100], mask[i:i + 100], seeds_list[i:i + 100],
                                           d["scheduler"], d["steps"], d["guidanceScale"]))
        images = torch.from_numpy(np.concatenate(images))
        labels = torch.tensor(labels)
        with torch.no_grad():
            pred = net(images).argmax(1)
            feats = net.features(images)
            gen_nn = nearest_train(images)
        per_digit = [round(float((pred[labels == k] == k).float().mean()), 3) for k in range(10)]
        ratios = [spread(feats[labels == k]) / spread(real_feat[yt == k]) for k in range(10)]
        p1, p5, p50 = (float(torch.quantile(real_nn, q)) for q in (0.01, 0.05, 0.5))
        result[name] = {
            "images": len(images),
            "accuracy": round(float((pred == labels).float().mean()), 4),
            "perDigit": per_digit,
            "spreadRatio": {"mean": round(float(np.mean(ratios)), 3), "min": round(float(np.min(ratios)), 3),
                            "perDigit": [round(r, 3) for r in ratios]},
            "nearestTrainingL2": {
                "generated": {"min": round(float(gen_nn.min()), 3), "p1": round(float(torch.quantile(gen_nn, 0.01)), 3),
                              "median": round(float(gen_nn.median()), 3)},
                "heldOutReal": {"min": round(float(real_nn.min()), 3), "p1": round(p1, 3), "p5": round(p5, 3),
                                "median": round(p50, 3)},
                "generatedBelowRealP1": int((gen_nn < p1).sum()),
            },
            "seconds": round(time.time() - t0, 1),
        }
        images.numpy().astype(np.float32).tofile(f"{CACHE}/generated-{name}.f32")
        labels.numpy().astype(np.uint8).tofile(f"{CACHE}/generated-{name}.labels.u8")
        print(name, json.dumps(result[name]))
    result["goals"] = {"trainingPhrasingsAccuracy": 0.9, "heldOutPhrasingsAccuracy": 0.8,
                       "spread": "generated spread / real held-out spread per digit (feature space: the classifier's penultimate layer)",
                       "copies": "nearest training image (pixel L2, 784-d in [0,1]) of each generated image vs of each real held-out digit"}
    json.dump(result, open(f"{CACHE}/evaluation.json", "w"), indent=2)


def sweep(diffusion, phrasings, run, guidances, seeds=10):
    """Validation for the defaults: seeds 1000.. (never the evaluation's 0..49), training
    phrasings only; accuracy per (scheduler, guidance) at 20 steps."""
    net = classifier()
    out = []
    for scheduler in ("ddim",):
        for g in guidances:
            prompts, labels = [], []
            for digit in range(10):
                mine = [p for p in phrasings if p["digit"] == digit and not p["heldOut"]]
                for s in range(seeds):
                    prompts.append(mine[(7 * s + 3) % len(mine)]["ids"])
                    labels.append(digit)
            ids, mask = pad(prompts, diffusion["promptLength"], diffusion["padTokenId"])
            seeds_list = [1000 + s for _ in range(10) for s in range(seeds)]
            images = np.concatenate([reference.sample(*run, diffusion, ids[i:i + 100], mask[i:i + 100], seeds_list[i:i + 100],
                                                      scheduler, 20, g) for i in range(0, len(prompts), 100)])
            with torch.no_grad():
                acc = float((net(torch.from_numpy(images)).argmax(1) == torch.tensor(labels)).float().mean())
            out.append({"scheduler": scheduler, "guidance": g, "steps": 20, "accuracy": round(acc, 4)})
            print(out[-1], flush=True)
    json.dump({"protocol": f"seeds 1000..{1000 + seeds - 1} x 10 digits, training phrasings, 20 steps; feedback classifier",
               "results": out}, open(f"{CACHE}/sweep.json", "w"), indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--skip-eval", action="store_true")
    ap.add_argument("--sweep", type=str, default="", help="comma-separated guidance scales: validation sweep only")
    args = ap.parse_args()
    torch.set_num_threads(2)
    manifest = json.load(open(f"{MODEL_DIR}/manifest.json"))
    diffusion = manifest["diffusion"]
    phrasings = json.load(open(f"{CACHE}/prompts.json"))["phrasings"]
    run = runners(*load_modules())
    if args.sweep:
        sweep(diffusion, phrasings, run, [float(g) for g in args.sweep.split(",")])
        return
    write_fixtures(diffusion, phrasings, run)
    if not args.skip_eval:
        evaluate(diffusion, phrasings, run, args.seeds)


if __name__ == "__main__":
    main()
