// Table-batched embedding bags over a KeyedJaggedTensor's values and lengths (FBGEMM's
// table-batched embedding forward, TorchRec's EmbeddingBagCollection): one table per feature,
// one [B, sum of D] output, and each table's dense gradient. KeyedJaggedTensor and
// EmbeddingBags / EmbeddingBagBackward of the features library do the work. With
// per_sample_weights, "mean" is FBGEMM's (the weighted sum over the count of ids) and "sqrtn",
// which FBGEMM lacks, the features library's (over the root of the sum of squared weights);
// "max" and "min" take no weights.
#include <optional>
#include <string>
#include <vector>

#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/embed/torch/torch_glue.h"
#include "tensorkit/features/embedding.h"

namespace tensorkit::torch_ops {
namespace {

// FBGEMM's mean of weighted ids (PoolingMode.MEAN with per_sample_weights): the weighted sum
// over the count of ids in the bag, not over the sum of their weights (the features library's
// kMean rule, TensorFlow's). It is the weighted sum (kSum) of weights each divided by its bag's
// count, so both the forward and the table gradient take the library's weighted sum over these
// weights. lengths: [F, B]; mean[f] marks the features to scale. A copy of `weights`.
Tensor CountMeanWeights(const Tensor& weights, const Tensor& lengths, const std::vector<bool>& mean,
                        const char* op) {
  // On a CUDA device the weights and lengths make a round trip through the host: a device
  // kernel for this one scaling is not worth its own.
  const Tensor len = Converted(lengths.HostContiguous(), DType::kInt64);
  const int64_t F = len.Dim(0), B = len.Dim(1);
  const int64_t* l = len.data<int64_t>();
  Tensor out = weights.device().is_cpu() ? weights.Clone() : weights.To(Device::Cpu());
  TK_CHECK(out.IsContiguous(), kInternal, op, ": a clone of the weights is not contiguous");
  Dispatch<kFloatDTypes>(out.dtype(), op, [&]<typename T>() {
    using C = ComputeType<T>;
    T* w = out.data<T>();
    const int64_t n = out.NumElements();
    int64_t p = 0;
    for (int64_t f = 0; f < F; ++f) {
      for (int64_t b = 0; b < B; ++b) {
        const int64_t count = l[f * B + b];
        // Lengths that do not add up to the values are the KeyedJaggedTensor's Error, later.
        if (count < 0 || count > n - p) return;
        if (mean[f]) {
          for (int64_t q = p; q < p + count; ++q) {
            w[q] = static_cast<T>(static_cast<C>(w[q]) / static_cast<C>(count));
          }
        }
        p += count;
      }
    }
  });
  return OnDevice(out, weights.device());
}

struct Batch {
  std::vector<Tensor> tables;
  std::vector<Combiner> combiners;
  KeyedJaggedTensor kjt;
};

// The tables, combiners and features of embedding_bags' arguments: lengths [F, B] or [F * B],
// F = weights.size().
Batch MakeBatch(const std::vector<TorchTensor>& weights, const TorchTensor& values,
                const TorchTensor& lengths, const std::vector<std::string>& modes,
                const std::optional<TorchTensor>& per_sample_weights, const char* op) {
  const int64_t F = static_cast<int64_t>(weights.size());
  TK_CHECK(F >= 1, kInvalidArgument, op, ": weights must hold one table per feature, got none");
  TK_CHECK(static_cast<int64_t>(modes.size()) == F, kShapeMismatch, op, ": modes has ",
           modes.size(), " entries but there are ", F, " tables (one mode per table)");
  Batch b;
  for (int64_t f = 0; f < F; ++f) {
    const std::string what = "weights[" + std::to_string(f) + "]";
    TK_CHECK(weights[f].dim() == 2, kInvalidArgument, op, ": ", what,
             " must be 2-D [V, D], got shape ", SizesText(weights[f]));
    TK_CHECK(weights[f].scalar_type() == weights[0].scalar_type(), kDTypeMismatch, op, ": ", what,
             " is ", ScalarTypeName(weights[f].scalar_type()), " but weights[0] is ",
             ScalarTypeName(weights[0].scalar_type()), " (the tables share one dtype)");
    b.tables.push_back(WrapAny(weights[f], op, what.c_str()));
    b.combiners.push_back(ParseCombiner(modes[f], op));
  }
  TK_CHECK(values.dim() == 1, kInvalidArgument, op, ": values must be 1-D, got shape ",
           SizesText(values));
  TK_CHECK(values.scalar_type() == ScalarType::Int || values.scalar_type() == ScalarType::Long,
           kDTypeMismatch, op, ": values must be torch.int32 or torch.int64, got ",
           ScalarTypeName(values.scalar_type()));
  TK_CHECK(lengths.dim() == 1 || lengths.dim() == 2, kInvalidArgument, op,
           ": lengths must be [F, B] or [F * B], got shape ", SizesText(lengths));
  TK_CHECK(lengths.dim() == 2 ? lengths.size(0) == F : lengths.size(0) % F == 0, kShapeMismatch, op,
           ": lengths has shape ", SizesText(lengths), " but there are F = ", F,
           " tables; lengths must be [F, B] or [F * B]");
  Tensor len = WrapAny(lengths, op, "lengths");
  if (lengths.dim() == 1) {
    if (!len.IsContiguous()) len = len.Clone();
    len = Reshape(len, {F, lengths.size(0) / F});
  }
  Tensor w;
  if (per_sample_weights) {
    TK_CHECK(per_sample_weights->dim() == 1 && per_sample_weights->size(0) == values.size(0),
             kShapeMismatch, op, ": per_sample_weights must be [N] with N = ", values.size(0),
             ", got shape ", SizesText(*per_sample_weights));
    TK_CHECK(per_sample_weights->scalar_type() == weights[0].scalar_type(), kDTypeMismatch, op,
             ": per_sample_weights (", ScalarTypeName(per_sample_weights->scalar_type()),
             ") must have the tables' dtype ", ScalarTypeName(weights[0].scalar_type()));
    w = WrapAny(*per_sample_weights, op, "per_sample_weights");
    std::vector<bool> mean(static_cast<size_t>(F));
    bool any_mean = false;
    for (int64_t f = 0; f < F; ++f) {
      mean[f] = b.combiners[f] == Combiner::kMean;
      any_mean = any_mean || mean[f];
    }
    if (any_mean) {
      w = CountMeanWeights(w, len, mean, op);
      for (int64_t f = 0; f < F; ++f) {
        if (mean[f]) b.combiners[f] = Combiner::kSum;
      }
    }
  }
  std::vector<std::string> keys;
  for (int64_t f = 0; f < F; ++f) keys.push_back(std::to_string(f));
  b.kjt = KeyedJaggedTensor(keys, WrapAny(values, op, "values"), len, w);
  return b;
}

TorchTensor EmbeddingBagsOp(std::vector<TorchTensor> weights, TorchTensor values,
                            TorchTensor lengths, std::vector<std::string> modes,
                            std::optional<TorchTensor> per_sample_weights) {
  const char* op = "tensorkit::embedding_bags";
  return Run(op, [&] {
    const TorchStream stream(values, op);
    const Batch b = MakeBatch(weights, values, lengths, modes, per_sample_weights, op);
    return Export(EmbeddingBags(b.tables, b.kjt, b.combiners));
  });
}

std::vector<TorchTensor> EmbeddingBagsBackwardOp(TorchTensor grad, std::vector<TorchTensor> weights,
                                                 TorchTensor values, TorchTensor lengths,
                                                 std::vector<std::string> modes,
                                                 std::optional<TorchTensor> per_sample_weights) {
  const char* op = "tensorkit::embedding_bags_backward";
  return Run(op, [&] {
    const TorchStream stream(values, op);
    const Batch b = MakeBatch(weights, values, lengths, modes, per_sample_weights, op);
    int64_t total_d = 0;
    for (const Tensor& t : b.tables) total_d += t.Dim(1);
    TK_CHECK(grad.dim() == 2 && grad.size(0) == b.kjt.batch_size() && grad.size(1) == total_d,
             kShapeMismatch, op, ": grad must be [B, sum of D] = [", b.kjt.batch_size(), ", ",
             total_d, "], got ", SizesText(grad));
    TK_CHECK(grad.scalar_type() == weights[0].scalar_type(), kDTypeMismatch, op, ": grad (",
             ScalarTypeName(grad.scalar_type()), ") must have the tables' dtype ",
             ScalarTypeName(weights[0].scalar_type()));
    const Tensor g = WrapAny(grad, op, "grad");
    std::vector<TorchTensor> out;
    int64_t col = 0;
    for (size_t f = 0; f < b.tables.size(); ++f) {
      const Tensor& table = b.tables[f];
      const int64_t D = table.Dim(1);
      Tensor tg = Tensor::Zeros({table.Dim(0), D}, table.dtype(), table.device());
      const Combiner c = b.combiners[f];
      EmbeddingBagBackward(Slice(g, 1, col, col + D), b.kjt.Get(b.kjt.keys()[f]), c, &tg, -1,
                           c == Combiner::kMax || c == Combiner::kMin ? table : Tensor());
      out.push_back(Export(tg));
      col += D;
    }
    return out;
  });
}

}  // namespace

STABLE_TORCH_LIBRARY_IMPL(tensorkit, CPU, m) {
  m.impl("embedding_bags", TORCH_BOX(&EmbeddingBagsOp));
  m.impl("embedding_bags_backward", TORCH_BOX(&EmbeddingBagsBackwardOp));
}

// The same kernels on CUDA tensors: the features library's device bodies, on torch's stream.
STABLE_TORCH_LIBRARY_IMPL(tensorkit, CUDA, m) {
  m.impl("embedding_bags", TORCH_BOX(&EmbeddingBagsOp));
  m.impl("embedding_bags_backward", TORCH_BOX(&EmbeddingBagsBackwardOp));
}

}  // namespace tensorkit::torch_ops
