# The GEMM rate and the BLAS actually loaded, before a training run: OpenBLAS gives tens of
# GFLOP/s on two idle cores, the reference BLAS a few. Exits non-zero under the reference BLAS.
# Used by scripts/llm/build.sh and scripts/digits/build.sh.
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
    print("warning: GEMM below 8 GFLOP/s: the machine is loaded, or the BLAS is slow; training will take longer (or, with a time budget, see fewer steps)")
