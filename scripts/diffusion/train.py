"""Step 2 of scripts/diffusion/build.sh: trains the digit diffusion pipeline on the 8,000
TRAINING digits of scripts/lib/mnist-split.mjs and the TRAINING phrasings only, then exports
the three ONNX graphs.

  1. VAE (1x28x28 <-> 4x7x7, KL-regularised) for --vae-minutes;
     scalingFactor = 1 / std of the training latents' posterior means;
     preview factors: least squares of decoded pixels average-pooled to 7x7 on the scaled
     latent's 4 channels + a bias, over every training latent position (R^2 recorded).
  2. Text encoder + UNet jointly for --unet-minutes: epsilon prediction under the DDPM linear
     beta schedule, 10% of prompts dropped to the empty prompt (classifier-free guidance),
     an EMA of the weights is what ships.
  3. ONNX export (opset 14, dynamic batch) of text_encoder, unet, vae_decoder (FP32).

Outputs: models/digit-diffusion/*.onnx, .cache/diffusion/{model.pt,training.json}.
"""
import argparse
import copy
import json
import math
import os
import resource
import threading
import time

import numpy as np
import torch
import torch.nn.functional as F

from model import LATENT_CHANNELS, TextEncoder, UNet, Vae
from reference import alphas_cumprod

CACHE = ".cache/diffusion"
MODEL_DIR = "models/digit-diffusion"
SCHEDULER = {
    "numTrainTimesteps": 1000,
    "betaSchedule": "linear",
    "betaStart": 0.0001,
    "betaEnd": 0.02,
    "predictionType": "epsilon",
    "timestepSpacing": "trailing",
    "setAlphaToOne": True,
    "clipSample": False,
}
TEXT_DIM = 64


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class LoadSampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.samples = []

    def run(self):
        while True:
            self.samples.append(os.getloadavg()[0])
            time.sleep(10)


def load_data():
    x = np.fromfile(f"{CACHE}/train.f32", dtype=np.float32).reshape(-1, 1, 28, 28)
    y = np.fromfile(f"{CACHE}/train.labels.u8", dtype=np.uint8).astype(np.int64)
    prompts = json.load(open(f"{CACHE}/prompts.json"))
    held_out = {p["text"] for p in json.load(open("scripts/diffusion/held-out-phrasings.json"))["phrasings"]}
    train_phr = [p for p in prompts["phrasings"] if p["text"] not in held_out]
    if any(p["heldOut"] for p in train_phr) or len(train_phr) + len(held_out) != len(prompts["phrasings"]):
        raise SystemExit("a held-out phrasing is among the training phrasings")
    return torch.from_numpy(x), torch.from_numpy(y), prompts, train_phr


def prompt_table(prompts, phrasings):
    """Per digit: ids [n, L] and masks [n, L] of its training phrasings."""
    l, pad = prompts["promptLength"], prompts["padTokenId"]
    table = {}
    for d in range(10):
        rows = [p["ids"] for p in phrasings if p["digit"] == d]
        ids = torch.full((len(rows), l), pad, dtype=torch.int64)
        mask = torch.zeros((len(rows), l), dtype=torch.int64)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.tensor(r)
            mask[i, : len(r)] = 1
        table[d] = (ids, mask)
    return table


def train_vae(x, minutes, log):
    vae = Vae()
    opt = torch.optim.Adam(vae.parameters(), lr=2e-3)
    beta_kl = 0.5
    start, step = time.time(), 0
    budget = minutes * 60
    while time.time() - start < budget:
        frac = (time.time() - start) / budget
        for g in opt.param_groups:
            g["lr"] = 2e-3 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        idx = torch.randint(0, len(x), (128,))
        batch = x[idx]
        mean, logvar = vae.encode(batch)
        z = mean + torch.randn_like(mean) * torch.exp(0.5 * logvar)
        rec = F.binary_cross_entropy_with_logits(vae.dec.logits(z), batch, reduction="sum") / len(batch)
        kl = 0.5 * (mean.pow(2) + logvar.exp() - 1 - logvar).sum() / len(batch)
        loss = rec + beta_kl * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 200 == 0:
            log(f"vae step {step} rec {rec.item():.2f} kl {kl.item():.2f}")
    return vae.eval(), step, float(rec.item()), float(kl.item()), beta_kl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vae-minutes", type=float, default=4)
    ap.add_argument("--unet-minutes", type=float, default=22)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    t0, c0 = time.time(), cpu_seconds()
    loads = LoadSampler()
    loads.start()

    def log(msg):
        print(f"[{time.time() - t0:7.1f}s] {msg}", flush=True)

    x, y, prompts, train_phr = load_data()
    log(f"{len(x)} training digits, {len(train_phr)} training phrasings")

    vae, vae_steps, vae_rec, vae_kl, beta_kl = train_vae(x, args.vae_minutes, log)
    with torch.no_grad():
        mean, logvar = vae.encode(x)
        std_post = torch.exp(0.5 * logvar)
        scaling = float(1.0 / mean.std())
        recon = vae.dec(mean)
        recon_mse = float(F.mse_loss(recon, x))
        # Preview factors: decoded pixels average-pooled to 7x7 vs the scaled latent.
        pooled = F.avg_pool2d(recon, 4).reshape(-1)
        lat = (mean * scaling).permute(0, 2, 3, 1).reshape(-1, LATENT_CHANNELS)
        design = torch.cat([lat, torch.ones(len(lat), 1)], dim=1).double()
        sol = torch.linalg.lstsq(design, pooled.double()[:, None]).solution[:, 0]
        fit = design @ sol
        r2 = float(1 - ((pooled.double() - fit) ** 2).sum() / ((pooled.double() - pooled.double().mean()) ** 2).sum())
    log(f"vae: {vae_steps} steps, recon mse {recon_mse:.4f}, scaling {scaling:.4f}, preview R2 {r2:.3f}")

    table = prompt_table(prompts, train_phr)
    l, pad = prompts["promptLength"], prompts["padTokenId"]
    text = TextEncoder(prompts["vocabSize"], l, out_dim=TEXT_DIM)
    unet = UNet(text_dim=TEXT_DIM)
    params = list(text.parameters()) + list(unet.parameters())
    n_params = sum(p.numel() for p in params)
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    ema_text, ema_unet = copy.deepcopy(text), copy.deepcopy(unet)
    ema_params = list(ema_text.parameters()) + list(ema_unet.parameters())
    acp = torch.tensor(alphas_cumprod(SCHEDULER), dtype=torch.float32)
    budget = args.unet_minutes * 60
    start, step, loss_avg = time.time(), 0, None
    mean_s, std_s = mean * scaling, std_post * scaling
    while time.time() - start < budget:
        frac = (time.time() - start) / budget
        lr = 1e-3 * min(1.0, (step + 1) / 200) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        idx = torch.randint(0, len(x), (args.batch,))
        z0 = mean_s[idx] + std_s[idx] * torch.randn_like(mean_s[idx])
        labels = y[idx]
        ids = torch.full((args.batch, l), pad, dtype=torch.int64)
        mask = torch.zeros((args.batch, l), dtype=torch.int64)
        drop = torch.rand(args.batch) < 0.1
        for i in range(args.batch):
            if drop[i]:
                continue
            tids, tmask = table[int(labels[i])]
            j = int(torch.randint(0, len(tids), (1,)))
            ids[i], mask[i] = tids[j], tmask[j]
        t = torch.randint(0, SCHEDULER["numTrainTimesteps"], (args.batch,))
        noise = torch.randn_like(z0)
        a = acp[t][:, None, None, None]
        xt = a.sqrt() * z0 + (1 - a).sqrt() * noise
        pred = unet(xt, t.to(torch.float32), text(ids, mask))
        loss = F.mse_loss(pred, noise)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        step += 1
        decay = min(0.999, (1 + step) / (10 + step))
        with torch.no_grad():
            for pe, p in zip(ema_params, params):
                pe.mul_(decay).add_(p.detach(), alpha=1 - decay)
        loss_avg = loss.item() if loss_avg is None else 0.98 * loss_avg + 0.02 * loss.item()
        if step % 100 == 0:
            log(f"unet step {step} loss {loss_avg:.4f} lr {lr:.2e}")
    unet_seconds = time.time() - start
    log(f"unet: {step} steps, loss (EMA of batches) {loss_avg:.4f}")

    ema_text.eval()
    ema_unet.eval()
    dec = vae.dec.eval()
    os.makedirs(MODEL_DIR, exist_ok=True)
    torch.save({"text": ema_text.state_dict(), "unet": ema_unet.state_dict(), "vae": vae.state_dict(),
                "vocab": prompts["vocabSize"], "promptLength": l, "textDim": TEXT_DIM}, f"{CACHE}/model.pt")
    b = 2
    with torch.no_grad():
        torch.onnx.export(ema_text, (torch.full((b, l), pad, dtype=torch.int64), torch.zeros((b, l), dtype=torch.int64)),
                          f"{MODEL_DIR}/text_encoder.onnx", input_names=["input_ids", "attention_mask"],
                          output_names=["text_embeds"], opset_version=14,
                          dynamic_axes={"input_ids": {0: "batch"}, "attention_mask": {0: "batch"}, "text_embeds": {0: "batch"}})
        torch.onnx.export(ema_unet, (torch.randn(b, LATENT_CHANNELS, 7, 7), torch.full((b,), 500.0), torch.randn(b, TEXT_DIM)),
                          f"{MODEL_DIR}/unet.onnx", input_names=["sample", "timestep", "text_embeds"],
                          output_names=["noise_pred"], opset_version=14,
                          dynamic_axes={"sample": {0: "batch"}, "timestep": {0: "batch"}, "text_embeds": {0: "batch"},
                                        "noise_pred": {0: "batch"}})
        torch.onnx.export(dec, (torch.randn(b, LATENT_CHANNELS, 7, 7),), f"{MODEL_DIR}/vae_decoder.onnx",
                          input_names=["latent"], output_names=["image"], opset_version=14,
                          dynamic_axes={"latent": {0: "batch"}, "image": {0: "batch"}})
    training = {
        "script": "scripts/diffusion/build.sh",
        "architecture": (
            "latent diffusion: VAE 1x28x28 <-> 4x7x7 (conv encoder/decoder, width 16/32, KL weight "
            f"{beta_kl} vs summed BCE); text encoder: byte-level BPE ({prompts['vocabSize']} tokens) -> "
            f"64-d token + position embeddings, one pre-norm 4-head self-attention block, masked mean pool, "
            f"linear to {TEXT_DIM}, a learned null embedding for the empty prompt; UNet: 7x7 (48 ch) -> 4x4 "
            "(96 ch) -> 7x7 with a skip, 6 residual blocks with GroupNorm and FiLM from (sinusoidal time "
            "MLP + text MLP), epsilon prediction"),
        "parameters": {
            "vae": sum(p.numel() for p in vae.parameters()),
            "vaeDecoder": sum(p.numel() for p in dec.parameters()),
            "textEncoder": sum(p.numel() for p in text.parameters()),
            "unet": sum(p.numel() for p in unet.parameters()),
        },
        "data": f"the {len(x)} training digits of scripts/lib/mnist-split.mjs; {len(train_phr)} training phrasings "
                "(scripts/diffusion/phrasings.mjs minus scripts/diffusion/held-out-phrasings.json)",
        "vae": {"steps": vae_steps, "batch": 128, "lastBatchBce": round(vae_rec, 3), "lastBatchKl": round(vae_kl, 3),
                "reconstructionMse": round(recon_mse, 5), "minutes": args.vae_minutes},
        "unet": {"steps": step, "batch": args.batch, "finalLossEma": round(loss_avg, 5), "promptDropout": 0.1,
                 "optimizer": "AdamW (weight decay 0.01), lr 1e-3, warm-up 200 steps, cosine over the time budget to 5%, gradient clip 1.0",
                 "ema": 0.999, "minutes": args.unet_minutes, "seconds": round(unet_seconds, 1),
                 "latents": "posterior samples (mean + std * noise) x scalingFactor"},
        "seed": args.seed,
        "wallSeconds": round(time.time() - t0, 1),
        "cpuSeconds": round(cpu_seconds() - c0, 1),
        "machine": f"2 shared cores, torch {torch.__version__} with OpenBLAS, torch.set_num_threads(2); 1-min load "
                   f"average during training mean {np.mean(loads.samples):.2f}, max {np.max(loads.samples):.2f}",
        "scalingFactor": scaling,
        "preview": {"factors": [float(v) for v in sol[:LATENT_CHANNELS]], "bias": float(sol[LATENT_CHANNELS]),
                    "r2": round(r2, 4)},
        "scheduler": SCHEDULER,
    }
    json.dump(training, open(f"{CACHE}/training.json", "w"), indent=2)
    log(f"done: wall {training['wallSeconds']} s, cpu {training['cpuSeconds']} s; {n_params} text+unet parameters")


if __name__ == "__main__":
    main()
