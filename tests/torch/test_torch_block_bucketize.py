"""block_bucketize_sparse_features against FBGEMM's CPU operator (fbgemm-gpu 1.9): every output
on random inputs (empty batches and rows, weights, positions, sequence, variable batch sizes,
bucket positions, total_num_blocks, keep_orig_idx), the case of FBGEMM's own test, opcheck and
the malformed inputs as RuntimeErrors."""

import pytest
import torch

from torch_env import FB, HAVE_FBGEMM, TK, random_lengths

needs_fbgemm = pytest.mark.skipif(not HAVE_FBGEMM, reason="fbgemm_gpu is not installed")


def _equal(got, want):
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert (a is None) == (b is None), i
        if a is not None:
            assert a.dtype == b.dtype and torch.equal(a, b), (i, a, b)


def _inputs(gen, T, B, my_size, index_dtype, lengths_dtype, max_id=60):
    lengths = random_lengths(gen, T * B, 5).to(lengths_dtype)
    n = int(lengths.sum())
    indices = torch.randint(0, max_id, (n,), generator=gen).to(index_dtype)
    block_sizes = torch.randint(1, 12, (T,), generator=gen).to(index_dtype)
    return lengths, indices, block_sizes


@needs_fbgemm
@pytest.mark.parametrize("B", [0, 1, 6, 33])
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("lengths_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("my_size", [1, 3])
def test_uniform_equals_fbgemm(B, index_dtype, lengths_dtype, my_size):
    gen = torch.Generator().manual_seed(B * 13 + my_size)
    T = 4
    lengths, indices, block_sizes = _inputs(gen, T, B, my_size, index_dtype, lengths_dtype)
    weights = torch.rand(indices.numel(), generator=gen)
    for pos in (False, True):
        for seq in (False, True):
            for w in (None, weights, weights.double()):
                for keep in (False, True):
                    args = (lengths, indices, pos, seq, block_sizes, my_size, w)
                    kw = dict(keep_orig_idx=keep)
                    _equal(TK.block_bucketize_sparse_features(*args, **kw),
                           FB.block_bucketize_sparse_features(*args, **kw))


@needs_fbgemm
def test_variable_batch_and_options_equal_fbgemm():
    gen = torch.Generator().manual_seed(5)
    T, my_size = 3, 2
    batch = torch.tensor([2, 0, 5])
    lengths = random_lengths(gen, int(batch.sum()), 4)
    n = int(lengths.sum())
    indices = torch.randint(0, 40, (n,), generator=gen)
    block_sizes = torch.tensor([5, 7, 0])  # a 0 block: every id by its remainder
    args = (lengths, indices, True, True, block_sizes, my_size)
    _equal(TK.block_bucketize_sparse_features(*args, batch_size_per_feature=batch),
           FB.block_bucketize_sparse_features(*args, batch_size_per_feature=batch))
    # total_num_blocks: 4 blocks per feature, 2 per bucket.
    total = torch.tensor([4, 4, 6])
    _equal(TK.block_bucketize_sparse_features(*args, batch_size_per_feature=batch,
                                              total_num_blocks=total),
           FB.block_bucketize_sparse_features(*args, batch_size_per_feature=batch,
                                              total_num_blocks=total))
    keep = torch.tensor([True, False, True])
    _equal(TK.block_bucketize_sparse_features(*args, batch_size_per_feature=batch,
                                              keep_orig_idx_per_feature=keep),
           FB.block_bucketize_sparse_features(*args, batch_size_per_feature=batch,
                                              keep_orig_idx_per_feature=keep))


@needs_fbgemm
def test_bucket_positions_equal_fbgemm():
    gen = torch.Generator().manual_seed(9)
    T, B, my_size = 2, 5, 3
    lengths = random_lengths(gen, T * B, 5)
    n = int(lengths.sum())
    indices = torch.randint(0, 50, (n,), generator=gen)
    block_sizes = torch.tensor([10, 0])
    pos = [torch.tensor([0, 9, 21, 30]), torch.tensor([0, 12, 20, 45])]
    for keep in (False, True):
        args = (lengths, indices, True, True, block_sizes, my_size)
        kw = dict(block_bucketize_pos=pos, keep_orig_idx=keep, weights=torch.rand(n))
        _equal(TK.block_bucketize_sparse_features(*args, **kw),
               FB.block_bucketize_sparse_features(*args, **kw))


def test_fbgemm_test_case():
    # FBGEMM's test_block_bucketize_sparse_features: block size 5 and 15 over 2 buckets.
    lengths = torch.tensor([0, 2, 1, 3, 2, 3, 3, 1], dtype=torch.int32)
    indices = torch.tensor([3, 4, 15, 11, 28, 29, 1, 10, 11, 12, 13, 11, 22, 20, 20],
                           dtype=torch.int32)
    block_sizes = torch.tensor([5, 15, 10, 20], dtype=torch.int32)
    out = TK.block_bucketize_sparse_features(lengths, indices, False, True, block_sizes, 2)
    assert out[0].tolist() == [0, 2, 0, 1, 1, 0, 1, 0, 0, 0, 1, 2, 1, 3, 2, 1]
    assert out[1].tolist() == [3, 4, 11, 1, 11, 0, 13, 14, 0, 1, 2, 3, 2, 0, 0]
    perm = out[4]
    # unbucketize_permute: the output position of each input id.
    assert sorted(perm.tolist()) == list(range(15))


def test_opcheck():
    lengths = torch.tensor([1, 2, 0, 3])
    indices = torch.tensor([1, 8, 3, 2, 9, 4])
    torch.library.opcheck(TK.block_bucketize_sparse_features,
                          (lengths, indices, True, True, torch.tensor([5, 5]), 2, torch.rand(6)))
    torch.library.opcheck(TK.block_bucketize_sparse_features,
                          (lengths, indices, False, False, torch.tensor([5, 5]), 2))


@pytest.mark.parametrize("case,needle", [
    (dict(lengths=torch.tensor([1, 2]), indices=torch.arange(4)), "lengths add up to 3"),
    (dict(lengths=torch.tensor([1, -1, 2, 0])), "lengths[1] = -1"),
    (dict(lengths=torch.tensor([9, 0, 0, 0])), "more than the 2 indices"),
    (dict(lengths=torch.tensor([1, 1, 0])), "not a multiple of T = 2"),
    (dict(my_size=0), "my_size = 0"),
    (dict(block_sizes=torch.tensor([], dtype=torch.long)), "T = 0"),
    (dict(block_sizes=torch.tensor([5, -1])), "block_sizes[1] = -1"),
    (dict(total_num_blocks=torch.tensor([3, 4])), "total_num_blocks[0] = 3"),
    (dict(total_num_blocks=torch.tensor([0, 4])), "total_num_blocks[0] = 0"),
    (dict(batch_size_per_feature=torch.tensor([1, 1])), "adds up to 2 rows"),
    (dict(block_bucketize_pos=[torch.tensor([3, 5, 9]), torch.tensor([0, 5, 9])]),
     "is below block_bucketize_pos[0][0] = 3"),
    (dict(block_bucketize_pos=[torch.tensor([0, 5, 2]), torch.tensor([0, 5, 9])]),
     "block_bucketize_pos[0][2] = 2"),
    (dict(weights=torch.ones(3)), "weights must be [N]"),
    (dict(indices=torch.tensor([1.0, 2.0])), "torch.int32 or torch.int64"),
])
def test_malformed(case, needle):
    args = dict(lengths=torch.tensor([1, 0, 1, 0]), indices=torch.tensor([1, 2]),
                bucketize_pos=False, sequence=True, block_sizes=torch.tensor([5, 5]), my_size=2)
    args.update(case)
    with pytest.raises(RuntimeError) as e:
        TK.block_bucketize_sparse_features(**args)
    assert "tensorkit::block_bucketize_sparse_features" in str(e.value)
    assert needle in str(e.value), str(e.value)


@needs_fbgemm
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("my_size", [1, 3, 8])
def test_ids_over_the_whole_range_equal_fbgemm(index_dtype, my_size):
    # Ids anywhere in the dtype's range (negative ones read as unsigned) and block sizes up to
    # 2^30, so that s * n overflows the 32-bit ids' type and ids fall on both sides of s * n:
    # every branch of the (precomputed) divisions against FBGEMM's.
    gen = torch.Generator().manual_seed(11 + my_size)
    T, B = 5, 40
    info = torch.iinfo(index_dtype)
    lengths = random_lengths(gen, T * B, 6)
    n = int(lengths.sum())
    indices = torch.randint(info.min, info.max, (n,), generator=gen, dtype=index_dtype)
    indices[::7] = torch.randint(0, 1000, (len(indices[::7]),), generator=gen).to(index_dtype)
    block_sizes = torch.tensor([1, 7, 1 << 20, 1 << 30, 3], dtype=index_dtype)
    weights = torch.rand(n, generator=gen)
    totals = torch.tensor([my_size * k for k in (1, 2, 5, 1, 3)], dtype=index_dtype)
    for total in (None, totals):
        for keep in (False, True):
            args = (lengths, indices, True, True, block_sizes, my_size, weights)
            kw = dict(keep_orig_idx=keep, total_num_blocks=total)
            _equal(TK.block_bucketize_sparse_features(*args, **kw),
                   FB.block_bucketize_sparse_features(*args, **kw))
