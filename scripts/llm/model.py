"""The tiny LLM: a Llama-style decoder (RMSNorm, rotary positions, SwiGLU, tied embeddings).

One forward serves training, evaluation, the fixtures and the ONNX export, with the inputs of
the exported graph (CONTRACTS.md): input_ids [B,S], attention_mask [B,P+S] (1 = real token,
0 = padding anywhere), position_ids [B,S] and per layer past keys/values [B,H,P,D]. It returns
logits [B,S,V] and the presents [B,H,P+S,D] (past concatenated with the new keys/values).

Masked scores are replaced by a large finite negative (not -inf) so that a row with every key
masked (a left-pad query) gives a finite uniform softmax instead of NaN, which would otherwise
reach the cache through the next layer's values.
"""
import math
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

MASKED = -1e9


@dataclass
class Config:
    vocab_size: int = 4096
    dim: int = 256
    layers: int = 4
    heads: int = 4
    ffn_dim: int = 704
    context_length: int = 512
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    dropout: float = 0.0

    @property
    def head_dim(self):
        return self.dim // self.heads

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads, self.head_dim = cfg.heads, cfg.head_dim
        self.q = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.k = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.v = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.o = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.dropout = cfg.dropout

    def split(self, x):  # [B,S,dim] -> [B,H,S,D]
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, cos, sin, allowed, past_k, past_v):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat((past_k, k), dim=2)
        v = torch.cat((past_v, v), dim=2)
        scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(self.head_dim))
        scores = torch.where(allowed, scores, torch.full_like(scores, MASKED))
        weights = torch.softmax(scores, dim=-1)
        if self.training and self.dropout > 0:
            weights = F.dropout(weights, self.dropout)
        out = torch.matmul(weights, v).transpose(1, 2)
        out = out.reshape(out.shape[0], out.shape[1], -1)
        return self.o(out), k, v


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.up = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.down = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.ffn = FeedForward(cfg)
        self.dropout = cfg.dropout

    def drop(self, x):
        return F.dropout(x, self.dropout) if self.training and self.dropout > 0 else x

    def forward(self, x, cos, sin, allowed, past_k, past_v):
        h, k, v = self.attn(self.attn_norm(x), cos, sin, allowed, past_k, past_v)
        x = x + self.drop(h)
        x = x + self.drop(self.ffn(self.ffn_norm(x)))
        return x, k, v


class TinyLlm(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2, dtype=torch.float32) / cfg.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.apply(self._init)
        for block in self.blocks:  # scaled residual projections (GPT-2)
            nn.init.normal_(block.attn.o.weight, std=0.02 / math.sqrt(2 * cfg.layers))
            nn.init.normal_(block.ffn.down.weight, std=0.02 / math.sqrt(2 * cfg.layers))

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)

    def parameter_count(self):
        return sum(p.numel() for p in self.parameters())

    def forward(self, input_ids, attention_mask, position_ids, past):
        """past: list of (key, value) per layer, each [B,H,P,D]; returns logits and presents."""
        seq = input_ids.shape[1]
        total = attention_mask.shape[1]
        freqs = position_ids.to(torch.float32).unsqueeze(-1) * self.inv_freq  # [B,S,D/2]
        angles = torch.cat((freqs, freqs), dim=-1).unsqueeze(1)  # [B,1,S,D]
        cos, sin = torch.cos(angles), torch.sin(angles)
        query_pos = torch.arange(seq, device=input_ids.device) + (total - seq)  # absolute index among keys
        key_pos = torch.arange(total, device=input_ids.device)
        causal = key_pos.unsqueeze(0) <= query_pos.unsqueeze(1)  # [S,T]
        allowed = causal.unsqueeze(0).unsqueeze(0) & attention_mask.bool().unsqueeze(1).unsqueeze(2)  # [B,1,S,T]
        x = self.embed(input_ids)
        presents = []
        for block, (past_k, past_v) in zip(self.blocks, past):
            x, k, v = block(x, cos, sin, allowed, past_k, past_v)
            presents.append((k, v))
        logits = F.linear(self.norm(x), self.embed.weight)
        return logits, presents

    def empty_past(self, batch):
        shape = (batch, self.cfg.heads, 0, self.cfg.head_dim)
        return [(torch.zeros(shape), torch.zeros(shape)) for _ in range(self.cfg.layers)]

    def logits(self, input_ids):
        """Training/evaluation forward on full rows (no padding, no cache)."""
        b, s = input_ids.shape
        positions = torch.arange(s).unsqueeze(0).expand(b, s)
        mask = torch.ones(b, s, dtype=torch.int64)
        return self(input_ids, mask, positions, self.empty_past(b))[0]
