"""Dense kernel engine vs NumPy and PyTorch (and a memcpy baseline), float32, same sizes as
bench/dense_bench.cc. Usage: /usr/bin/python3 bench/peers/dense_peers.py --build build"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

N = 4096
# (benchmark name, label, bytes moved per call or None, numpy fn factory, torch fn factory)
# Each factory gets the module and returns a zero-argument callable over preallocated arrays.


def numpy_cases(np):
    a = np.ones((N, N), np.float32)
    c = np.zeros((N, N), np.float32)
    row = np.full((N,), 2, np.float32)
    p = np.ones((64, 64, 64, 64), np.float32)
    pc = np.zeros((64, 64, 64, 64), np.float32)
    s0 = np.zeros((N,), np.float32)
    g = np.ones((2048, 2048), np.float32)
    gc = np.zeros((2048, 2048), np.float32)
    ba = np.ones((64, 256, 256), np.float32)
    bc = np.zeros((64, 256, 256), np.float32)
    return {
        "BM_Copy": lambda: np.copyto(c, a),
        "BM_BroadcastAdd": lambda: np.add(a, row, out=c),
        "BM_Scale": lambda: np.multiply(a, 1.0, out=a),
        "BM_Exp": lambda: np.exp(a, out=c),
        "BM_Log": lambda: np.log(a, out=c),
        "BM_Tanh": lambda: np.tanh(a, out=c),
        "BM_Sqrt": lambda: np.sqrt(a, out=c),
        "BM_Abs": lambda: np.abs(a, out=c),
        "BM_Relu": lambda: np.maximum(a, 0, out=c),
        "BM_Neg": lambda: np.negative(a, out=c),
        "BM_SumAll": lambda: np.sum(a),
        "BM_Transpose2D": lambda: np.copyto(c, a.T),
        "BM_Permute4D": lambda: np.copyto(pc, p.transpose(0, 2, 3, 1)),
        "BM_SumAxis0": lambda: np.sum(a, axis=0, out=s0),
        "BM_SumAxis1": lambda: np.sum(a, axis=1, out=s0),
        "BM_Gemm": lambda: np.matmul(g, g, out=gc),
        "BM_BatchedGemm": lambda: np.matmul(ba, ba, out=bc),
    }


def torch_cases(torch):
    a = torch.ones((N, N))
    c = torch.zeros((N, N))
    row = torch.full((N,), 2.0)
    p = torch.ones((64, 64, 64, 64))
    pc = torch.zeros((64, 64, 64, 64))
    s0 = torch.zeros((N,))
    g = torch.ones((2048, 2048))
    gc = torch.zeros((2048, 2048))
    ba = torch.ones((64, 256, 256))
    bc = torch.zeros((64, 256, 256))
    return {
        "BM_Copy": lambda: c.copy_(a),
        "BM_BroadcastAdd": lambda: torch.add(a, row, out=c),
        "BM_Scale": lambda: a.mul_(1.0),
        "BM_Exp": lambda: torch.exp(a, out=c),
        "BM_Log": lambda: torch.log(a, out=c),
        "BM_Sigmoid": lambda: torch.sigmoid(a, out=c),
        "BM_Tanh": lambda: torch.tanh(a, out=c),
        "BM_Sqrt": lambda: torch.sqrt(a, out=c),
        "BM_Abs": lambda: torch.abs(a, out=c),
        "BM_Relu": lambda: torch.clamp_min(a, 0, out=c),
        "BM_Neg": lambda: torch.neg(a, out=c),
        "BM_SumAll": lambda: torch.sum(a),
        "BM_Transpose2D": lambda: c.copy_(a.t()),
        "BM_Permute4D": lambda: pc.copy_(p.permute(0, 2, 3, 1)),
        "BM_SumAxis0": lambda: torch.sum(a, dim=0, out=s0),
        "BM_SumAxis1": lambda: torch.sum(a, dim=1, out=s0),
        "BM_Gemm": lambda: torch.matmul(g, g, out=gc),
        "BM_BatchedGemm": lambda: torch.bmm(ba, ba, out=bc),
    }


LABELS = {
    "BM_Copy": ("copy [4096 4096]", 2 * N * N * 4),
    "BM_BroadcastAdd": ("add [4096 4096] + [4096]", 2 * N * N * 4),
    "BM_Scale": ("scale [4096 4096] in place", 2 * N * N * 4),
    "BM_Exp": ("exp [4096 4096]", 2 * N * N * 4),
    "BM_Log": ("log [4096 4096]", 2 * N * N * 4),
    "BM_Sigmoid": ("sigmoid [4096 4096]", 2 * N * N * 4),
    "BM_Tanh": ("tanh [4096 4096]", 2 * N * N * 4),
    "BM_Sqrt": ("sqrt [4096 4096]", 2 * N * N * 4),
    "BM_Abs": ("abs [4096 4096]", 2 * N * N * 4),
    "BM_Relu": ("relu [4096 4096]", 2 * N * N * 4),
    "BM_Neg": ("neg [4096 4096]", 2 * N * N * 4),
    "BM_SumAll": ("sum of all of [4096 4096]", N * N * 4),
    "BM_Transpose2D": ("transpose copy [4096 4096]", 2 * N * N * 4),
    "BM_Permute4D": ("permute [64]*4 -> (0,2,3,1)", 2 * 64 ** 4 * 4),
    "BM_SumAxis0": ("sum axis 0 of [4096 4096]", N * N * 4),
    "BM_SumAxis1": ("sum axis 1 of [4096 4096]", N * N * 4),
    "BM_Gemm": ("AddProduct GEMM 2048^3", None),
    "BM_BatchedGemm": ("AddProduct batched 64 x 256^3", None),
}


def eigen_times(build):
    """Compiles bench/peers/eigen_peer.cc (-O3, no -march: a portable binary like ours) and returns
    {benchmark name: median seconds}; {} when Eigen is not installed."""
    if not os.path.isdir("/usr/include/eigen3"):
        print("Eigen 3 not installed (libeigen3-dev): its column is skipped")
        return {}
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eigen_peer.cc")
    exe = os.path.join(build, "eigen_peer")
    subprocess.run(["g++", "-O3", "-DNDEBUG", "-I/usr/include/eigen3", src, "-o", exe], check=True)
    out = subprocess.run([exe], capture_output=True, text=True).stdout
    return {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.strip()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", default="2", help="comma-separated thread counts")
    args = ap.parse_args()
    binary = os.path.join(args.build, "bin", "bench_dense")
    for threads in [int(t) for t in args.threads.split(",")]:
        peerlib.set_threads(threads)
        import numpy as np
        import torch
        torch.set_num_threads(threads)
        tk = peerlib.run_tensorkit(binary, "BM_", threads=threads)
        tk = {k.replace("/real_time", ""): v for k, v in tk.items()}
        npc, tc = numpy_cases(np), torch_cases(torch)
        eigen = eigen_times(args.build)
        memcpy = tk.get("BM_Memcpy")
        rows, bw = [], []
        for name, (label, nbytes) in LABELS.items():
            times = {"tensorkit": tk.get(name)}
            if name in npc:  # NumPy has no sigmoid
                times["numpy"] = peerlib.median_time(npc[name])
            times["torch"] = peerlib.median_time(tc[name])
            if name in eigen:
                times["eigen"] = eigen[name]
            if nbytes and memcpy:
                times["memcpy"] = memcpy * nbytes / (2 * N * N * 4)
                bw.append((label, nbytes / tk[name] / 1e9, nbytes / memcpy * 0 + 2 * N * N * 4
                           / memcpy / 1e9))
            rows.append((label, times))
        peerlib.print_table(f"dense engine, float32, {threads} thread(s) (x > 1: tensorkit "
                            "faster; memcpy column: memcpy time for the same bytes)", rows)
        print("\nbandwidth (GB/s) tensorkit vs single-thread memcpy:")
        for label, gbs, mgbs in bw:
            print(f"  {label:44s} {gbs:7.2f}  ({100 * gbs / mgbs:5.1f}% of memcpy {mgbs:.2f})")


if __name__ == "__main__":
    main()
