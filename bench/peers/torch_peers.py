#!/usr/bin/python3
"""tensorkit's PyTorch operators (torch.ops.tensorkit.*, embed/torch/) against FBGEMM's CPU
operators (fbgemm-gpu-cpu) and torch's own, side by side in one process, at TorchRec-sized
batches: 26 features, B = 8192, 0..20 ids a row (about 2.1M ids), 2 threads. Medians of
interleaved runs; the ratio is peer time / tensorkit time (above 1: tensorkit is faster).

Operators: permute_2D_sparse_data (what KeyedJaggedTensor.permute calls), jagged_to_padded_dense,
asynchronous_complete_cumsum, block_bucketize_sparse_features (8 buckets), embedding_bag forward
and backward (one table [1M, 64]) against F.embedding_bag, embedding_bags (26 tables [100k, 64])
against FBGEMM's table-batched embedding, and bucketize over the jagged values against
torch.bucketize.

It runs in the Python of .venvs/torch (`make torch-ops`), or --torch-python: another interpreter
reruns this script there.

Usage: /usr/bin/python3 bench/peers/torch_peers.py --build build
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peerlib  # noqa: E402

F_, B, MAX_LEN, BUCKETS = 26, 8192, 20, 8


def run(build):
    peerlib.set_threads(2)
    import torch
    import torch.nn.functional as F

    os.environ.setdefault("TENSORKIT_TORCH_OPS",
                          os.path.join(build, "lib", "libtensorkit_torch_ops.so"))
    import tensorkit.torch as tkt

    torch.set_num_threads(2)
    import fbgemm_gpu  # noqa: F401
    from fbgemm_gpu.split_embedding_configs import EmbOptimType
    from fbgemm_gpu.split_table_batched_embeddings_ops_common import (EmbeddingLocation,
                                                                      PoolingMode)
    from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
        ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)

    TK, FB = torch.ops.tensorkit, torch.ops.fbgemm
    gen = torch.Generator().manual_seed(0)
    lengths = torch.randint(0, MAX_LEN + 1, (F_, B), generator=gen)
    n = int(lengths.sum())
    values = torch.randint(0, 100_000, (n,), generator=gen)
    weights = torch.rand(n, generator=gen)
    perm = torch.randperm(F_, generator=gen).to(torch.int32)
    flat = lengths.reshape(-1)
    offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(flat)
    rows = []

    def both(name, tk_fn, peer_fn, peer="fbgemm"):
        times = peerlib.median_times_interleaved({"tensorkit": tk_fn, peer: peer_fn}, repeat=7)
        rows.append((name, times))

    both("permute_2D_sparse_data (26 x 8192, weighted)",
         lambda: TK.permute_2D_sparse_data(perm, lengths, values, weights),
         lambda: FB.permute_2D_sparse_data(perm, lengths, values, weights))
    dense_vals = torch.rand(n, generator=gen)
    both("jagged_to_padded_dense (212992 rows, L 20)",
         lambda: TK.jagged_to_padded_dense(dense_vals, [offsets], [MAX_LEN], 0.0),
         lambda: FB.jagged_to_padded_dense(dense_vals, [offsets], [MAX_LEN], 0.0))
    both("asynchronous_complete_cumsum (212992)",
         lambda: TK.asynchronous_complete_cumsum(flat),
         lambda: FB.asynchronous_complete_cumsum(flat))
    block_sizes = torch.full((F_,), 100_000 // BUCKETS + 1)
    both("block_bucketize_sparse_features (8 buckets)",
         lambda: TK.block_bucketize_sparse_features(flat, values, False, True, block_sizes,
                                                    BUCKETS, weights),
         lambda: FB.block_bucketize_sparse_features(flat, values, False, True, block_sizes,
                                                    BUCKETS, weights))
    boundaries = torch.linspace(0.0, 100_000.0, 64)
    both("bucketize (jagged values, 64 boundaries)",
         lambda: TK.bucketize(values, boundaries, offsets),
         lambda: torch.bucketize(values, boundaries, right=True, out_int32=True), "torch")

    # One big table: embedding_bag forward and backward against torch's.
    table = torch.randn(1 << 20, 64, generator=gen)
    ids = torch.randint(0, 1 << 20, (B * 40,), generator=gen)
    bag_offsets = torch.arange(0, B * 40, 40)
    for mode in ("sum", "mean", "max"):
        with torch.no_grad():
            both(f"embedding_bag {mode} forward (8192 bags of 40, D 64)",
                 lambda: tkt.embedding_bag(ids, table, bag_offsets, mode=mode),
                 lambda: F.embedding_bag(ids, table, bag_offsets, mode=mode), "torch")
    grad = torch.randn(B, 64, generator=gen)
    leaf = table.clone().requires_grad_(True)
    for mode in ("sum", "mean", "max"):
        # forward and backward through autograd, the dense weight gradient
        def step(fn):
            leaf.grad = None
            fn(ids, leaf, bag_offsets, mode=mode).backward(grad)
        both(f"embedding_bag {mode} forward + backward",
             lambda: step(tkt.embedding_bag), lambda: step(F.embedding_bag), "torch")

    # 26 tables: the table-batched forward against FBGEMM's CPU TBE.
    specs = [(100_000, 64, EmbeddingLocation.HOST, ComputeDevice.CPU)] * F_
    tbe = SplitTableBatchedEmbeddingBagsCodegen(specs, optimizer=EmbOptimType.EXACT_SGD,
                                                learning_rate=0.0, pooling_mode=PoolingMode.SUM)
    tables = [t.detach() for t in tbe.split_embedding_weights()]
    with torch.no_grad():
        both("embedding_bags sum forward (26 tables, D 64)",
             lambda: TK.embedding_bags(tables, values, flat, ["sum"] * F_, None),
             lambda: tbe(values, offsets))
    peerlib.print_table("PyTorch operators (26 features, B = 8192, 2 threads)", rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--torch-python", default=os.environ.get(
        "TORCH_PYTHON", os.path.join(HERE, "..", "..", ".venvs", "torch", "bin", "python")))
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    try:
        import fbgemm_gpu  # noqa: F401
        import torch  # noqa: F401
        here_ok = True
    except (ImportError, OSError):
        here_ok = False
    if here_ok or args.child:
        sys.path.insert(0, os.path.join(build, "python"))
        run(build)
        return
    if not os.path.exists(args.torch_python):
        print(f"torch_peers: SKIPPED, no {args.torch_python} (make torch-ops makes it)")
        return
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    sys.exit(subprocess.run([args.torch_python, os.path.abspath(__file__), "--build", build,
                             "--child"], env=env).returncode)


if __name__ == "__main__":
    main()
