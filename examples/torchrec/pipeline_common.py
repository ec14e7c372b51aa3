"""What both input pipelines share: the feature names, the id spaces, the batch layout and which
worker reads which batch. Imports neither tensorkit nor TorchRec."""

import numpy as np
import torch

NUM_DENSE = 13
NUM_CATEGORICAL = 26
DENSE_KEYS = [f"I{i + 1}" for i in range(NUM_DENSE)]
CATEGORICAL_KEYS = [f"C{i + 1}" for i in range(NUM_CATEGORICAL)]
# The KeyedJaggedTensor's features: the hashed categorical ones, then the bucketized floats.
SPARSE_KEYS = CATEGORICAL_KEYS + DENSE_KEYS

# As examples/criteo_pipeline.h: every categorical value hashed into BUCKETS ids (TensorFlow's
# StringToHashBucketFast); the floats bucketized by 20 float32 boundaries into 21 ids.
BUCKETS = 10000
# An empty categorical row gets this id (one row past the hashed ones), so that "absent" has an
# embedding of its own.
MISSING_ID = BUCKETS
BOUNDARIES = [i * i * 0.5 for i in range(20)]  # exact in float32


def worker_share():
    """(worker id, number of workers) of the calling DataLoader worker; (0, 1) in the main
    process."""
    info = torch.utils.data.get_worker_info()
    return (0, 1) if info is None else (info.id, info.num_workers)


def my_batches(num_batches, epochs):
    """The batch numbers this worker makes, epoch after epoch (None: for ever). Batch g goes to
    worker g % W: the DataLoader takes one batch from each worker in turn, so the batches come
    out in file order when the number of batches is a multiple of W (and in one fixed order
    otherwise), the same for both pipelines."""
    worker, workers = worker_share()
    epoch = 0
    while epochs is None or epoch < epochs:
        for g in range(worker, num_batches, workers):
            yield g
        epoch += 1


def dense_input(dense_feature_major):
    """The MLP's input [B, 13] from the floats [13, B]: log(1 + x), as DLRM does for Criteo."""
    return torch.log1p(torch.as_tensor(np.ascontiguousarray(dense_feature_major.T)))
