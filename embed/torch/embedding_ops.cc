// torch.nn.functional.embedding_bag's arguments and results on tensorkit's EmbeddingBag, and its
// dense weight gradient. Malformed offsets and ids are Errors naming the position (torch's CPU
// kernel reads out of bounds on some: pytorch #175368, #190044, #70170).
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "tensorkit/dense/external.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/embed/torch/torch_glue.h"
#include "tensorkit/features/embedding.h"

namespace tensorkit::torch_ops {
namespace {

// t as 1-D: a view when t's layout allows one, else a copy.
Tensor Flat(const Tensor& t) {
  if (std::optional<Tensor> f = Flatten(t)) return *f;
  return *Flatten(t.Clone());
}

Combiner ModeCombiner(const std::string& mode, const char* op) {
  if (mode == "sum") return Combiner::kSum;
  if (mode == "mean") return Combiner::kMean;
  if (mode == "max") return Combiner::kMax;
  Throw(ErrorCode::kInvalidArgument, op, ": mode must be \"sum\", \"mean\" or \"max\", got \"",
        mode, "\"");
}

// The bags of embedding_bag's input, offsets and per_sample_weights as one JaggedTensor: a 2-D
// input [B, L] is B bags of L ids (offsets None); a 1-D input has bag b at
// input[offsets[b]:offsets[b + 1]], the last bag ending at the input's end, or, with
// include_last_offset, B = offsets.size(0) - 1 bags, the last ending at offsets[B].
JaggedTensor Bags(const TorchTensor& input, const std::optional<TorchTensor>& offsets,
                  const std::optional<TorchTensor>& per_sample_weights, bool include_last_offset,
                  const char* op) {
  TK_CHECK(input.dim() == 1 || input.dim() == 2, kInvalidArgument, op,
           ": input must be 1-D (with offsets) or 2-D [B, L], got shape ", SizesText(input));
  TK_CHECK(input.scalar_type() == ScalarType::Int || input.scalar_type() == ScalarType::Long,
           kDTypeMismatch, op, ": input must be torch.int32 or torch.int64, got ",
           ScalarTypeName(input.scalar_type()));
  Tensor ids = WrapAny(input, op, "input");
  const Device device = ids.device();
  const int64_t n = ids.NumElements();
  Tensor w;
  if (per_sample_weights) {
    TK_CHECK(per_sample_weights->numel() == n && per_sample_weights->dim() == input.dim(),
             kShapeMismatch, op, ": per_sample_weights must have input's shape ", SizesText(input),
             ", got ", SizesText(*per_sample_weights));
    w = WrapAny(*per_sample_weights, op, "per_sample_weights");
  }
  Tensor off;
  if (input.dim() == 2) {
    TK_CHECK(!offsets.has_value(), kInvalidArgument, op,
             ": offsets must be None for a 2-D input (each row is a bag)");
    const int64_t B = input.size(0), L = input.size(1);
    ids = Flat(ids);
    if (w.defined()) w = Flat(w);
    off = Tensor::Empty({B + 1}, DType::kInt64);
    int64_t* o = off.data<int64_t>();
    for (int64_t b = 0; b <= B; ++b) o[b] = b * L;
    return JaggedTensor::FromOffsets(ids, OnDevice(off, device), w);
  }
  TK_CHECK(offsets.has_value(), kInvalidArgument, op, ": offsets are needed for a 1-D input");
  const Tensor given = IndexVector(*offsets, op, "offsets");
  const int64_t k = given.Dim(0);
  const int64_t* g = given.data<int64_t>();
  TK_CHECK(!include_last_offset || k >= 1, kInvalidArgument, op,
           ": with include_last_offset, offsets need B + 1 >= 1 elements, got none");
  const int64_t B = include_last_offset ? k - 1 : k;
  TK_CHECK(k == 0 || g[0] == 0, kInvalidArgument, op, ": offsets[0] = ", g[0],
           " but the first bag must start at position 0");
  for (int64_t i = 1; i < k; ++i) {
    TK_CHECK(g[i] >= g[i - 1], kInvalidArgument, op, ": offsets[", i, "] = ", g[i],
             " is less than offsets[", i - 1, "] = ", g[i - 1], " (offsets never decrease)");
  }
  TK_CHECK(k == 0 || g[k - 1] <= n, kOutOfRange, op, ": offsets[", k - 1, "] = ", g[k - 1],
           " is past the end of input (", n, " ids)");
  off = Tensor::Empty({B + 1}, DType::kInt64);
  int64_t* o = off.data<int64_t>();
  for (int64_t b = 0; b < B; ++b) o[b] = g[b];
  o[B] = include_last_offset ? g[B] : n;
  if (B == 0) o[0] = 0;
  // With include_last_offset, ids after offsets[B] belong to no bag (torch ignores them).
  ids = SliceRows(ids, 0, o[B]);
  if (w.defined()) w = SliceRows(w, 0, o[B]);
  return JaggedTensor::FromOffsets(ids, OnDevice(off, device), w);
}

struct Table {
  Tensor weight;
  Combiner combiner;
  int64_t padding_id;
};

Table CheckTable(const TorchTensor& weight, const std::string& mode,
                 const std::optional<TorchTensor>& per_sample_weights,
                 std::optional<int64_t> padding_idx, const char* op) {
  TK_CHECK(weight.dim() == 2, kInvalidArgument, op, ": weight must be 2-D [V, D], got shape ",
           SizesText(weight));
  const Combiner combiner = ModeCombiner(mode, op);
  if (per_sample_weights) {
    TK_CHECK(combiner == Combiner::kSum, kUnsupported, op,
             ": per_sample_weights are only supported for mode \"sum\" (as in torch), got \"", mode,
             "\"");
    TK_CHECK(per_sample_weights->scalar_type() == weight.scalar_type(), kDTypeMismatch, op,
             ": per_sample_weights (", ScalarTypeName(per_sample_weights->scalar_type()),
             ") must have weight's dtype ", ScalarTypeName(weight.scalar_type()));
  }
  const int64_t V = weight.size(0);
  int64_t pad = -1;
  if (padding_idx) {
    TK_CHECK(*padding_idx >= -V && *padding_idx < V, kOutOfRange, op,
             ": padding_idx = ", *padding_idx, " is not in [-", V, ", ", V,
             ") (num_embeddings = ", V, ")");
    pad = *padding_idx < 0 ? *padding_idx + V : *padding_idx;
  }
  return {WrapAny(weight, op, "weight"), combiner, pad};
}

TorchTensor EmbeddingBagOp(TorchTensor input, TorchTensor weight,
                           std::optional<TorchTensor> offsets, std::string mode,
                           std::optional<TorchTensor> per_sample_weights, bool include_last_offset,
                           std::optional<int64_t> padding_idx, bool /*sparse: the backward's*/) {
  const char* op = "tensorkit::embedding_bag";
  return Run(op, [&] {
    const TorchStream stream(weight, op);
    const Table t = CheckTable(weight, mode, per_sample_weights, padding_idx, op);
    const JaggedTensor bags = Bags(input, offsets, per_sample_weights, include_last_offset, op);
    return Export(EmbeddingBag(t.weight, bags, t.combiner, t.padding_id));
  });
}

TorchTensor EmbeddingBagBackwardOp(TorchTensor grad, TorchTensor input, TorchTensor weight,
                                   std::optional<TorchTensor> offsets, std::string mode,
                                   std::optional<TorchTensor> per_sample_weights,
                                   bool include_last_offset, std::optional<int64_t> padding_idx) {
  const char* op = "tensorkit::embedding_bag_backward";
  return Run(op, [&] {
    const TorchStream stream(weight, op);
    const Table t = CheckTable(weight, mode, per_sample_weights, padding_idx, op);
    const JaggedTensor bags = Bags(input, offsets, per_sample_weights, include_last_offset, op);
    TK_CHECK(grad.dim() == 2 && grad.size(0) == bags.batch_size() && grad.size(1) == weight.size(1),
             kShapeMismatch, op, ": grad must be [B, D] = [", bags.batch_size(), ", ",
             weight.size(1), "], got ", SizesText(grad));
    TK_CHECK(grad.scalar_type() == weight.scalar_type(), kDTypeMismatch, op, ": grad (",
             ScalarTypeName(grad.scalar_type()), ") must have weight's dtype ",
             ScalarTypeName(weight.scalar_type()));
    Tensor table_grad =
        Tensor::Zeros({weight.size(0), weight.size(1)}, t.weight.dtype(), t.weight.device());
    EmbeddingBagBackward(WrapAny(grad, op, "grad"), bags, t.combiner, &table_grad, t.padding_id,
                         t.combiner == Combiner::kMax ? t.weight : Tensor());
    return Export(table_grad);
  });
}

// The sparse weight gradient as torch.sparse_coo's hybrid form: the distinct ids that occur
// (ascending, padding excluded) and their gradient rows, [U] and [U, D]. The library's
// SparseTensor holds the same rows as U * D (id, column) entries, columns ascending per id, so
// its values are the rows already; only the ids are taken from every D-th index.
std::tuple<TorchTensor, TorchTensor> EmbeddingBagSparseBackwardOp(
    TorchTensor grad, TorchTensor input, TorchTensor weight, std::optional<TorchTensor> offsets,
    std::string mode, std::optional<TorchTensor> per_sample_weights, bool include_last_offset,
    std::optional<int64_t> padding_idx) {
  const char* op = "tensorkit::embedding_bag_sparse_backward";
  return Run(op, [&] {
    const Table t = CheckTable(weight, mode, per_sample_weights, padding_idx, op);
    const JaggedTensor bags = Bags(input, offsets, per_sample_weights, include_last_offset, op);
    const int64_t D = weight.size(1);
    TK_CHECK(grad.dim() == 2 && grad.size(0) == bags.batch_size() && grad.size(1) == D,
             kShapeMismatch, op, ": grad must be [B, D] = [", bags.batch_size(), ", ", D, "], got ",
             SizesText(grad));
    TK_CHECK(grad.scalar_type() == weight.scalar_type(), kDTypeMismatch, op, ": grad (",
             ScalarTypeName(grad.scalar_type()), ") must have weight's dtype ",
             ScalarTypeName(weight.scalar_type()));
    if (D == 0) {
      // No entries to carry the ids: the gradient of a table without columns is empty.
      return std::make_tuple(Empty({0}, ScalarType::Long), Empty({0, 0}, weight.scalar_type()));
    }
    const SparseTensor g =
        EmbeddingBagBackward(Wrap(grad, op, "grad"), bags, t.combiner, weight.size(0), t.padding_id,
                             t.combiner == Combiner::kMax ? t.weight : Tensor());
    const int64_t U = g.nnz() / D;
    TorchTensor rows = Empty({U}, ScalarType::Long);
    int64_t* r = static_cast<int64_t*>(rows.data_ptr());
    const Tensor idx = g.indices().IsContiguous() ? g.indices() : g.indices().Clone();
    const int64_t* gi = idx.data<int64_t>();
    for (int64_t u = 0; u < U; ++u) r[u] = gi[u * D * 2];
    Tensor values = g.values().IsContiguous() ? g.values() : g.values().Clone();
    TorchTensor rows_values = Empty({U, D}, weight.scalar_type());
    Tensor out = Wrap(rows_values, op, "gradient rows");
    std::memcpy(out.raw_data(), values.raw_data(),
                static_cast<size_t>(U * D) * DTypeSize(values.dtype()));
    return std::make_tuple(rows, rows_values);
  });
}

}  // namespace

STABLE_TORCH_LIBRARY_IMPL(tensorkit, CPU, m) {
  m.impl("embedding_bag", TORCH_BOX(&EmbeddingBagOp));
  m.impl("embedding_bag_backward", TORCH_BOX(&EmbeddingBagBackwardOp));
  m.impl("embedding_bag_sparse_backward", TORCH_BOX(&EmbeddingBagSparseBackwardOp));
}

// The same kernels on CUDA tensors: the features library's device bodies, on torch's stream;
// offsets are checked on the host (one copy). The sparse gradient has no device path here.
STABLE_TORCH_LIBRARY_IMPL(tensorkit, CUDA, m) {
  m.impl("embedding_bag", TORCH_BOX(&EmbeddingBagOp));
  m.impl("embedding_bag_backward", TORCH_BOX(&EmbeddingBagBackwardOp));
}

}  // namespace tensorkit::torch_ops
