"""The Python reference of the digit diffusion loop: the seeded noise of CONTRACTS2, the DDPM
beta schedule, DDIM (eta 0) and Euler discrete steps, classifier-free guidance with the two
halves run as one batch. It reads every parameter from the manifest's `diffusion` block.

Scheduler maths follows huggingface/diffusers (cited, not copied):
  src/diffusers/schedulers/scheduling_ddim.py            (set_timesteps "trailing", step with
      eta 0, prediction_type "epsilon", clip_sample False, set_alpha_to_one True)
  src/diffusers/schedulers/scheduling_euler_discrete.py  (sigmas = sqrt((1-acp)/acp)
      interpolated at the timesteps, a final 0, init_noise_sigma = sigma_max for "trailing",
      scale_model_input = x / sqrt(sigma^2+1), step with s_churn 0: x + (x - x0)/sigma * dt)
Schedules are computed in float64 here (diffusers computes betas in float32); the difference
is far below the fixtures' 1e-4 rounding.
"""
import math

import numpy as np

MASK32 = 0xFFFFFFFF


def _mix32(z):
    z &= MASK32
    z = ((z ^ (z >> 16)) * 0x85EBCA6B) & MASK32
    z = ((z ^ (z >> 13)) * 0xC2B2AE35) & MASK32
    return (z ^ (z >> 16)) & MASK32


def _rotl(x, k):
    return ((x << k) | (x >> (32 - k))) & MASK32


class Prng:
    """xoshiro128** seeded by SplitMix32, exactly as src/generation/prng.ts createPrng."""

    def __init__(self, seed):
        lo = seed % 2**32
        hi = (seed // 2**32) % 2**32
        state = (lo ^ _mix32(hi)) & MASK32
        words = []
        for _ in range(4):
            state = (state + 0x9E3779B9) & MASK32
            words.append(_mix32(state))
        if all(w == 0 for w in words):
            words[0] = 1
        self.s = words

    def next_u32(self):
        a, b, c, d = self.s
        result = (_rotl((b * 5) & MASK32, 7) * 9) & MASK32
        t = (b << 9) & MASK32
        c ^= a
        d ^= b
        b ^= c
        a ^= d
        c ^= t
        d = _rotl(d, 11)
        self.s = [a, b, c, d]
        return result

    def next(self):
        return (self.next_u32() >> 8) / 2**24


def seeded_noise(seed, shape):
    """Standard normals by Box-Muller in float64 (z0 = r cos, z1 = r sin, r = sqrt(-2 ln(1-u1))),
    emitted z0 then z1, each rounded to float32, filling `shape` in C order."""
    count = int(np.prod(shape))
    prng = Prng(seed)
    out = np.empty(count, dtype=np.float32)
    i = 0
    while i < count:
        u1, u2 = prng.next(), prng.next()
        r = math.sqrt(-2.0 * math.log(1.0 - u1))
        out[i] = r * math.cos(2 * math.pi * u2)
        if i + 1 < count:
            out[i + 1] = r * math.sin(2 * math.pi * u2)
        i += 2
    return out.reshape(shape)


def betas(sched):
    n = sched["numTrainTimesteps"]
    if sched["betaSchedule"] == "linear":
        return np.linspace(sched["betaStart"], sched["betaEnd"], n, dtype=np.float64)
    if sched["betaSchedule"] == "scaled_linear":
        return np.linspace(sched["betaStart"] ** 0.5, sched["betaEnd"] ** 0.5, n, dtype=np.float64) ** 2
    raise ValueError(sched["betaSchedule"])


def alphas_cumprod(sched):
    return np.cumprod(1.0 - betas(sched))


def timesteps(sched, steps):
    """diffusers' timestep_spacing "trailing": round(arange(N, 0, -N/steps)) - 1."""
    n = sched["numTrainTimesteps"]
    assert sched["timestepSpacing"] == "trailing"
    return np.round(np.arange(n, 0, -n / steps)).astype(np.int64) - 1


def euler_sigmas(sched, steps):
    acp = alphas_cumprod(sched)
    all_sigmas = ((1 - acp) / acp) ** 0.5
    ts = timesteps(sched, steps).astype(np.float64)
    sigmas = np.interp(ts, np.arange(len(all_sigmas)), all_sigmas)
    return ts, np.concatenate([sigmas, [0.0]])


def init_noise_sigma(sched, scheduler, steps):
    if scheduler == "ddim":
        return 1.0
    _, sigmas = euler_sigmas(sched, steps)
    return float(sigmas.max())  # "trailing" (and "linspace"): sigma_max; "leading" would be sqrt(max^2+1)


def sample(run_text, run_unet, run_decoder, diffusion, cond_ids, cond_mask, seeds, scheduler, steps, guidance,
           on_step=None):
    """One batch of images. run_* take/return numpy float32 arrays (ONNX graphs or torch modules).
    Returns decoded images [B,1,28,28] float32."""
    sched = diffusion["scheduler"]
    b = cond_ids.shape[0]
    l = diffusion["promptLength"]
    uncond_ids = np.full((b, l), diffusion["padTokenId"], dtype=np.int64)
    uncond_mask = np.zeros((b, l), dtype=np.int64)
    emb = run_text(np.concatenate([uncond_ids, cond_ids]), np.concatenate([uncond_mask, cond_mask]))
    shape = tuple(diffusion["latentShape"])
    x = np.stack([seeded_noise(s, shape) for s in seeds]).astype(np.float32)
    x = (x * np.float32(init_noise_sigma(sched, scheduler, steps))).astype(np.float32)
    acp = alphas_cumprod(sched)

    def guided(model_in, t):
        tt = np.full((2 * b,), t, dtype=np.float32)
        eps = run_unet(np.concatenate([model_in, model_in]).astype(np.float32), tt, emb)
        eu, ec = eps[:b], eps[b:]
        return (eu + np.float32(guidance) * (ec - eu)).astype(np.float32)

    if scheduler == "ddim":
        ts = timesteps(sched, steps)
        final_acp = 1.0 if sched.get("setAlphaToOne", True) else acp[0]
        ratio = sched["numTrainTimesteps"] // steps
        for k, t in enumerate(ts):
            eps = guided(x, float(t)).astype(np.float64)
            prev = t - ratio
            a_t = acp[t]
            a_prev = acp[prev] if prev >= 0 else final_acp
            x0 = (x - (1 - a_t) ** 0.5 * eps) / a_t**0.5
            x = (a_prev**0.5 * x0 + (1 - a_prev) ** 0.5 * eps).astype(np.float32)
            if on_step:
                on_step(k, x0.astype(np.float32))
    elif scheduler == "euler":
        ts, sigmas = euler_sigmas(sched, steps)
        for k, t in enumerate(ts):
            sigma = sigmas[k]
            model_in = (x / (sigma**2 + 1) ** 0.5).astype(np.float32)
            eps = guided(model_in, float(t)).astype(np.float64)
            x0 = x - sigma * eps
            x = (x + (x - x0) / sigma * (sigmas[k + 1] - sigma)).astype(np.float32)
            if on_step:
                on_step(k, x0.astype(np.float32))
    else:
        raise ValueError(scheduler)
    return run_decoder((x / np.float32(diffusion["scalingFactor"])).astype(np.float32))
