// tensorkit/tensorkit.h: the umbrella header; includes every public header of the library (none
// of the internal ones, such as the kernel engine's dense/engine.h).
#ifndef TENSORKIT_TENSORKIT_H_
#define TENSORKIT_TENSORKIT_H_

#include "tensorkit/common/device.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/scalar.h"
#include "tensorkit/common/storage.h"
#include "tensorkit/dense/external.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/pattern.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/bucketize.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/features/counts.h"
#include "tensorkit/features/cross.h"
#include "tensorkit/features/embedding.h"
#include "tensorkit/features/hash.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/features/quantiles.h"
#include "tensorkit/features/segment.h"
#include "tensorkit/features/vocabulary.h"
#include "tensorkit/io/arrow.h"
#include "tensorkit/io/io.h"
#include "tensorkit/io/libsvm.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tfrecord.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/mixed.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/reduce.h"
#include "tensorkit/sparse/sparse_ops.h"
#include "tensorkit/sparse/sparse_tensor.h"

#endif  // TENSORKIT_TENSORKIT_H_
