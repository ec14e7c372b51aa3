// Table-batched embedding bags over a KeyedJaggedTensor's values and lengths (FBGEMM's
// table-batched embedding forward, TorchRec's EmbeddingBagCollection): one table per feature,
// one [B, sum of D] output, and each table's dense gradient. KeyedJaggedTensor and
// EmbeddingBags / EmbeddingBagBackward of the features library do the work.
#include <optional>
#include <string>
#include <vector>

#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/embed/torch/torch_glue.h"
#include "tensorkit/features/embedding.h"

namespace tensorkit::torch_ops {
namespace {

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
    b.tables.push_back(Wrap(weights[f], op, what.c_str()));
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
  Tensor len = Wrap(lengths, op, "lengths");
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
    w = Wrap(*per_sample_weights, op, "per_sample_weights");
  }
  std::vector<std::string> keys;
  for (int64_t f = 0; f < F; ++f) keys.push_back(std::to_string(f));
  b.kjt = KeyedJaggedTensor(keys, Wrap(values, op, "values"), len, w);
  return b;
}

TorchTensor EmbeddingBagsOp(std::vector<TorchTensor> weights, TorchTensor values,
                            TorchTensor lengths, std::vector<std::string> modes,
                            std::optional<TorchTensor> per_sample_weights) {
  const char* op = "tensorkit::embedding_bags";
  return Run(op, [&] {
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
    const Batch b = MakeBatch(weights, values, lengths, modes, per_sample_weights, op);
    int64_t total_d = 0;
    for (const Tensor& t : b.tables) total_d += t.Dim(1);
    TK_CHECK(grad.dim() == 2 && grad.size(0) == b.kjt.batch_size() && grad.size(1) == total_d,
             kShapeMismatch, op, ": grad must be [B, sum of D] = [", b.kjt.batch_size(), ", ",
             total_d, "], got ", SizesText(grad));
    TK_CHECK(grad.scalar_type() == weights[0].scalar_type(), kDTypeMismatch, op, ": grad (",
             ScalarTypeName(grad.scalar_type()), ") must have the tables' dtype ",
             ScalarTypeName(weights[0].scalar_type()));
    const Tensor g = Wrap(grad, op, "grad");
    std::vector<TorchTensor> out;
    int64_t col = 0;
    for (size_t f = 0; f < b.tables.size(); ++f) {
      const Tensor& table = b.tables[f];
      const int64_t D = table.Dim(1);
      TorchTensor table_grad = Zeros({table.Dim(0), D}, weights[f].scalar_type());
      Tensor tg = Wrap(table_grad, op, "table gradient");
      const Combiner c = b.combiners[f];
      EmbeddingBagBackward(Slice(g, 1, col, col + D), b.kjt.Get(b.kjt.keys()[f]), c, &tg, -1,
                           c == Combiner::kMax || c == Combiner::kMin ? table : Tensor());
      out.push_back(table_grad);
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

}  // namespace tensorkit::torch_ops
