"""The digit diffusion pipeline's modules: VAE (28x28 <-> 4x7x7), text encoder, UNet, and the
small CNN used only for this script's own feedback evaluation.

Every op exports to ONNX opset 14 ops that onnxruntime-node and onnxruntime-web (WASM) run:
Conv, ConvTranspose, Gemm/MatMul, Softmax, Sigmoid, Mul/Add, InstanceNormalization (from
GroupNorm), Sin/Cos, Gather, ReduceSum, Where.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

LATENT_CHANNELS = 4


def silu(x):
    return x * torch.sigmoid(x)


class Vae(nn.Module):
    """KL-regularised autoencoder: 1x28x28 in [0,1] <-> 4x7x7 (mean, log-variance)."""

    def __init__(self, width=16):
        super().__init__()
        w = width
        self.enc = nn.Sequential(
            nn.Conv2d(1, w, 3, padding=1), nn.SiLU(),
            nn.Conv2d(w, w * 2, 4, stride=2, padding=1), nn.SiLU(),  # 14
            nn.Conv2d(w * 2, w * 2, 3, padding=1), nn.SiLU(),
            nn.Conv2d(w * 2, w * 2, 4, stride=2, padding=1), nn.SiLU(),  # 7
            nn.Conv2d(w * 2, 2 * LATENT_CHANNELS, 3, padding=1),
        )
        self.dec = VaeDecoder(width)

    def encode(self, x):
        mean, logvar = self.enc(x).chunk(2, dim=1)
        return mean, logvar.clamp(-20, 10)


class VaeDecoder(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        w = width
        self.net = nn.Sequential(
            nn.Conv2d(LATENT_CHANNELS, w * 2, 3, padding=1), nn.SiLU(),
            nn.Conv2d(w * 2, w * 2, 3, padding=1), nn.SiLU(),
            nn.ConvTranspose2d(w * 2, w * 2, 4, stride=2, padding=1), nn.SiLU(),  # 14
            nn.Conv2d(w * 2, w, 3, padding=1), nn.SiLU(),
            nn.ConvTranspose2d(w, w, 4, stride=2, padding=1), nn.SiLU(),  # 28
            nn.Conv2d(w, 1, 3, padding=1),
        )

    def logits(self, z):
        return self.net(z)

    def forward(self, latent):
        return torch.sigmoid(self.net(latent))


class TextEncoder(nn.Module):
    """Token + position embeddings -> one pre-norm self-attention block -> masked mean pool
    -> linear. An all-pad prompt (mask all 0) returns the learned null embedding."""

    def __init__(self, vocab, length, dim=64, out_dim=64, heads=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(length, dim))
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))
        self.out = nn.Linear(dim, out_dim)
        self.null = nn.Parameter(torch.zeros(out_dim))

    def forward(self, input_ids, attention_mask):
        b, l = input_ids.shape
        d = self.pos.shape[1]
        mask = attention_mask.to(torch.float32)  # [B, L]
        x = self.tok(input_ids) + self.pos[:l]
        h = self.norm1(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        hd = d // self.heads
        q = q.reshape(b, l, self.heads, hd).transpose(1, 2)
        k = k.reshape(b, l, self.heads, hd).transpose(1, 2)
        v = v.reshape(b, l, self.heads, hd).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd) + (1.0 - mask)[:, None, None, :] * -1e4
        att = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(att.transpose(1, 2).reshape(b, l, d))
        x = x + self.ff(self.norm2(x))
        count = mask.sum(dim=1, keepdim=True)
        pooled = (x * mask[:, :, None]).sum(dim=1) / count.clamp(min=1.0)
        emb = self.out(pooled)
        return torch.where(count > 0, emb, self.null[None, :].expand(b, -1))


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].to(torch.float32) * freqs[None, :]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, emb_dim):
        super().__init__()
        self.n1 = nn.GroupNorm(8, cin)
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.film = nn.Linear(emb_dim, 2 * cout)
        self.n2 = nn.GroupNorm(8, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.c1(silu(self.n1(x)))
        scale, shift = self.film(emb)[:, :, None, None].chunk(2, dim=1)
        h = self.n2(h) * (1 + scale) + shift
        h = self.c2(silu(h))
        return self.skip(x) + h


class UNet(nn.Module):
    """Epsilon prediction on 4x7x7 latents; time + text conditioning by FiLM in every block.
    7x7 (width c) -> 4x4 (2c) -> 7x7, one skip."""

    def __init__(self, text_dim=64, c=48, emb_dim=128):
        super().__init__()
        self.emb_dim = emb_dim
        self.t_mlp = nn.Sequential(nn.Linear(emb_dim, emb_dim), nn.SiLU(), nn.Linear(emb_dim, emb_dim))
        self.txt = nn.Sequential(nn.Linear(text_dim, emb_dim), nn.SiLU(), nn.Linear(emb_dim, emb_dim))
        self.inp = nn.Conv2d(LATENT_CHANNELS, c, 3, padding=1)
        self.d1 = ResBlock(c, c, emb_dim)
        self.d2 = ResBlock(c, c, emb_dim)
        self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)  # 7 -> 4
        self.m1 = ResBlock(2 * c, 2 * c, emb_dim)
        self.m2 = ResBlock(2 * c, 2 * c, emb_dim)
        self.up = nn.ConvTranspose2d(2 * c, c, 3, stride=2, padding=1)  # 4 -> 7
        self.u1 = ResBlock(2 * c, c, emb_dim)
        self.u2 = ResBlock(c, c, emb_dim)
        self.out_norm = nn.GroupNorm(8, c)
        self.out = nn.Conv2d(c, LATENT_CHANNELS, 3, padding=1)

    def forward(self, sample, timestep, text_embeds):
        emb = self.t_mlp(timestep_embedding(timestep, self.emb_dim)) + self.txt(text_embeds)
        emb = silu(emb)
        h = self.inp(sample)
        h = self.d2(self.d1(h, emb), emb)
        skip = h
        m = self.m2(self.m1(self.down(h), emb), emb)
        h = torch.cat([self.up(m), skip], dim=1)
        h = self.u2(self.u1(h, emb), emb)
        return self.out(silu(self.out_norm(h)))


class DigitCnn(nn.Module):
    """The feedback classifier (trained on the training split only); `features` is the
    penultimate layer used for the diversity figures when the shipped classifier is absent."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.fc = nn.Linear(64 * 49, 128)
        self.head = nn.Linear(128, 10)

    def features(self, x):
        return F.relu(self.fc(self.conv(x).flatten(1)))

    def forward(self, x):
        return self.head(self.features(x))
