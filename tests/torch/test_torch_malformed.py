"""The malformed inputs that crash or are accepted by FBGEMM's and torch's CPU operators (FBGEMM
#1187: jagged operators on empty input; FBGEMM #5879: corrupt offsets; pytorch #175368, #190044:
embedding_bag on bad offsets; pytorch #70170: ids out of range) each raise a RuntimeError naming
the operator and the position. The catalog runs in a child process, so that a crash fails the
test (naming the case it was in) instead of taking pytest down."""

import json
import os
import subprocess
import sys

import pytest

# name: (expression, what the message must contain)
CATALOG = {
    # FBGEMM #1187, #5879: empty and corrupt offsets of the jagged operators.
    "j2pd_no_offsets": ("TK.jagged_to_padded_dense(torch.zeros(0), [torch.zeros(0, dtype=torch.long)], [3])",
                        ["tensorkit::jagged_to_padded_dense", "B + 1"]),
    "j2pd_decreasing": ("TK.jagged_to_padded_dense(torch.ones(5), [torch.tensor([0, 4, 2, 5])], [3])",
                        ["tensorkit::jagged_to_padded_dense", "offsets[2] = 2"]),
    "j2pd_past_end": ("TK.jagged_to_padded_dense(torch.ones(5), [torch.tensor([0, 2, 1 << 40])], [3])",
                      ["tensorkit::jagged_to_padded_dense", "offsets[2] = 1099511627776"]),
    "j2pd_negative": ("TK.jagged_to_padded_dense(torch.ones(5), [torch.tensor([-3, 2, 5])], [3])",
                      ["tensorkit::jagged_to_padded_dense", "offsets[0] = -3"]),
    "j2pd_negative_length": ("TK.jagged_to_padded_dense(torch.ones(5), [torch.tensor([0, 5])], [-1])",
                             ["tensorkit::jagged_to_padded_dense", "max_lengths[0] = -1"]),
    "j2pd_two_jagged_dims": ("TK.jagged_to_padded_dense(torch.ones(5), [torch.tensor([0, 5])] * 2, [3, 3])",
                             ["tensorkit::jagged_to_padded_dense", "one jagged dimension"]),
    "d2j_rows_disagree": ("TK.dense_to_jagged(torch.ones(2, 3, 1), [torch.tensor([0, 1, 2, 3])])",
                          ["tensorkit::dense_to_jagged_forward", "B = 2"]),
    "d2j_past_total": ("TK.dense_to_jagged(torch.ones(2, 3, 1), [torch.tensor([0, 1, 9])], 4)",
                       ["tensorkit::dense_to_jagged_forward", "offsets[2] = 9"]),
    "d2j_decreasing": ("TK.dense_to_jagged(torch.ones(2, 3, 1), [torch.tensor([0, 7, 2])])",
                       ["tensorkit::dense_to_jagged_forward", "offsets[2] = 2"]),
    "j2pd_backward_bad": ("TK.jagged_to_padded_dense_backward(torch.ones(2, 3), [torch.tensor([0, 4, 1])], 4)",
                          ["tensorkit::jagged_to_padded_dense_backward", "offsets[2] = 1"]),
    "cumsum_3d": ("TK.asynchronous_complete_cumsum(torch.ones(2, 2, 2, dtype=torch.long))",
                  ["tensorkit::asynchronous_complete_cumsum", "1-D or 2-D"]),
    # permute_2D_sparse_data: lengths that do not add up, negative lengths, bad permutes.
    "permute_index_out_of_range": (
        "TK.permute_2D_sparse_data(torch.tensor([0, 3], dtype=torch.int32), torch.ones(2, 2, dtype=torch.long), torch.arange(4))",
        ["tensorkit::permute_2D_sparse_data", "permute[1] = 3"]),
    "permute_negative_index": (
        "TK.permute_2D_sparse_data(torch.tensor([-1], dtype=torch.int32), torch.ones(2, 2, dtype=torch.long), torch.arange(4))",
        ["tensorkit::permute_2D_sparse_data", "permute[0] = -1"]),
    "permute_lengths_exceed_values": (
        "TK.permute_2D_sparse_data(torch.tensor([1, 0], dtype=torch.int32), torch.tensor([[1, 2], [3, 100]]), torch.arange(6))",
        ["tensorkit::permute_2D_sparse_data"]),
    "permute_negative_length": (
        "TK.permute_2D_sparse_data(torch.tensor([1, 0], dtype=torch.int32), torch.tensor([[1, -2], [3, 4]]), torch.arange(6))",
        ["tensorkit::permute_2D_sparse_data", "-2"]),
    "permute_wrong_sum": (
        "TK.permute_2D_sparse_data(torch.tensor([1], dtype=torch.int32), torch.tensor([[1, 1], [1, 1]]), torch.arange(4), None, 7)",
        ["tensorkit::permute_2D_sparse_data", "permuted_lengths_sum = 7"]),
    "permute_weights_short": (
        "TK.permute_2D_sparse_data(torch.tensor([1], dtype=torch.int32), torch.tensor([[1, 1], [1, 1]]), torch.arange(4), torch.ones(3))",
        ["tensorkit::permute_2D_sparse_data", "weights"]),
    # pytorch #175368, #190044: embedding_bag on bad offsets.
    "eb_offsets_decreasing": ("tkt.embedding_bag(torch.tensor([1, 2, 3]), W, torch.tensor([0, 3, 1]), mode='sum')",
                              ["tensorkit::embedding_bag", "offsets[2] = 1"]),
    "eb_offsets_past_end": ("tkt.embedding_bag(torch.tensor([1, 2, 3]), W, torch.tensor([0, 1 << 40]), mode='max')",
                            ["tensorkit::embedding_bag", "offsets[1] = 1099511627776"]),
    "eb_offsets_negative": ("tkt.embedding_bag(torch.tensor([1, 2, 3]), W, torch.tensor([0, -5, 2]), mode='mean')",
                            ["tensorkit::embedding_bag", "offsets[1] = -5"]),
    "eb_first_offset": ("tkt.embedding_bag(torch.tensor([1, 2, 3]), W, torch.tensor([2, 3]), mode='sum')",
                        ["tensorkit::embedding_bag", "offsets[0] = 2"]),
    "eb_last_offset_empty": ("tkt.embedding_bag(torch.tensor([1]), W, torch.zeros(0, dtype=torch.long), include_last_offset=True)",
                             ["tensorkit::embedding_bag", "B + 1"]),
    "eb_offsets_2d": ("tkt.embedding_bag(torch.tensor([1, 2]), W, torch.zeros(1, 2, dtype=torch.long))",
                      ["tensorkit::embedding_bag", "offsets must be 1-D"]),
    "eb_backward_bad_offsets": (
        "TK.embedding_bag_backward(torch.ones(2, 4), torch.tensor([1, 2, 3]), W, torch.tensor([0, 9]), 'sum', None, False, None)",
        ["tensorkit::embedding_bag_backward", "offsets[1] = 9"]),
    # pytorch #70170: ids out of range.
    "eb_id_too_large": ("tkt.embedding_bag(torch.tensor([1, 10, 3]), W, torch.tensor([0, 2]), mode='sum')",
                        ["tensorkit::embedding_bag", "id 10", "position 1"]),
    "eb_id_negative": ("tkt.embedding_bag(torch.tensor([1, 2, -1]), W, torch.tensor([0, 2]), mode='max')",
                       ["tensorkit::embedding_bag", "id -1"]),
    "eb_id_huge_2d": ("tkt.embedding_bag(torch.tensor([[1, 1 << 50]]), W, mode='mean')",
                      ["tensorkit::embedding_bag", "id 1125899906842624"]),
    "eb_backward_id": (
        "TK.embedding_bag_backward(torch.ones(1, 4), torch.tensor([1, 99]), W, torch.tensor([0]), 'sum', None, False, None)",
        ["tensorkit::embedding_bag_backward", "id 99"]),
    "eb_padding_idx": ("tkt.embedding_bag(torch.tensor([1]), W, torch.tensor([0]), padding_idx=10)",
                       ["tensorkit::embedding_bag", "padding_idx = 10"]),
    "eb_psw_shape": ("tkt.embedding_bag(torch.tensor([1, 2]), W, torch.tensor([0]), mode='sum', per_sample_weights=torch.ones(3))",
                     ["tensorkit::embedding_bag", "per_sample_weights"]),
    "eb_psw_dtype": ("tkt.embedding_bag(torch.tensor([1, 2]), W, torch.tensor([0]), mode='sum', per_sample_weights=torch.ones(2, dtype=torch.float64))",
                     ["tensorkit::embedding_bag", "per_sample_weights"]),
    "eb_float_ids": ("tkt.embedding_bag(torch.tensor([1.0]), W, torch.tensor([0]))",
                     ["tensorkit::embedding_bag", "torch.int32 or torch.int64"]),
    "eb_mode": ("TK.embedding_bag(torch.tensor([1]), W, torch.tensor([0]), 'median')",
                ["tensorkit::embedding_bag", "median"]),
}

CHILD = r"""
import json, sys, torch
import tensorkit.torch as tkt
TK = torch.ops.tensorkit
W = torch.randn(10, 4)
for name, expr in json.loads(sys.argv[1]).items():
    print(json.dumps({"start": name}), flush=True)
    try:
        eval(expr)
        result = {"name": name, "raised": None}
    except Exception as e:
        result = {"name": name, "raised": type(e).__name__, "message": str(e)}
    print(json.dumps(result), flush=True)
"""


@pytest.fixture(scope="module")
def results():
    cases = {name: expr for name, (expr, _) in CATALOG.items()}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases)], capture_output=True,
                          text=True, env=dict(os.environ), timeout=600)
    lines = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
    done = {r["name"]: r for r in lines if "name" in r}
    started = [r["start"] for r in lines if "start" in r]
    assert proc.returncode == 0, (
        f"the child process died (status {proc.returncode}) in case {started[-1] if started else None}:"
        f"\n{proc.stderr[-3000:]}")
    return done


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_raises_runtime_error(results, name):
    result = results[name]
    assert result["raised"] == "RuntimeError", result
    for needle in CATALOG[name][1]:
        assert needle in result["message"], (needle, result["message"])
