// TensorkitParseExampleV2 and TensorkitParseSequenceExampleV2 (tf.raw_ops.ParseExampleV2's and
// ParseSequenceExampleV2's inputs, outputs and attributes, on io/tf_example.h), and the TFRecord
// and tf.Example writers exposed for round trips with TensorFlow: TensorkitTFRecordRead,
// TensorkitTFRecordWrite, TensorkitSerializeExamples.
#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/features/jagged_internal.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tf_example_internal.h"
#include "tensorkit/io/tfrecord.h"

namespace tensorkit::tf {
namespace {

using ::tensorflow::shape_inference::InferenceContext;

REGISTER_OP("TensorkitParseExampleV2")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: string")
    .Input("dense_keys: string")
    .Input("ragged_keys: string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: num_sparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: num_sparse * int64")
    .Output("dense_values: Tdense")
    .Output("ragged_values: ragged_value_types")
    .Output("ragged_row_splits: ragged_split_types")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("ragged_value_types: list({float,int64,string}) >= 0")
    .Attr("ragged_split_types: list({int32,int64}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn([](InferenceContext* c) {
      int num_sparse = 0;
      std::vector<tfw::PartialTensorShape> dense_shapes;
      TF_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
      TF_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
      // A scalar `serialized` is one record: no batch dim.
      const bool single = c->RankKnown(c->input(0)) && c->Rank(c->input(0)) == 0;
      const int rank = single ? 1 : 2;
      int k = 0;
      for (int i = 0; i < num_sparse; ++i) c->set_output(k++, c->Matrix(c->UnknownDim(), rank));
      for (int i = 0; i < num_sparse; ++i) c->set_output(k++, c->Vector(c->UnknownDim()));
      for (int i = 0; i < num_sparse; ++i) c->set_output(k++, c->Vector(rank));
      for (const auto& s : dense_shapes) {
        tensorflow::shape_inference::ShapeHandle h;
        TF_RETURN_IF_ERROR(c->MakeShapeFromPartialTensorShape(s, &h));
        if (!single) TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(c->UnknownDim()), h, &h));
        c->set_output(k++, h);
      }
      for (; k < c->num_outputs(); ++k) c->set_output(k, c->Vector(c->UnknownDim()));
      return absl::OkStatus();
    });

std::string_view View(const tfw::tstring& s) { return std::string_view(s.data(), s.size()); }

// The strings of a 1-D string tensor named `what`.
std::vector<std::string> Strings(const tfw::Tensor& t, const char* op, const char* what) {
  TK_CHECK(t.dims() == 1, kInvalidArgument, op, ": ", what, " must be a vector, got shape ",
           ShapeText(t));
  std::vector<std::string> out;
  const auto s = t.flat<tfw::tstring>();
  for (int64_t i = 0; i < t.NumElements(); ++i) out.emplace_back(View(s(i)));
  return out;
}

std::optional<DType> ExampleDType(tfw::DataType dt) {
  switch (dt) {
    case tfw::DT_INT64:
      return DType::kInt64;
    case tfw::DT_FLOAT:
      return DType::kFloat32;
    case tfw::DT_STRING:
      return DType::kString;
    default:
      return std::nullopt;
  }
}

// A tensorkit Tensor of a TensorFlow tensor's elements: wrapped for numbers, copied for strings.
Tensor FromTf(const tfw::Tensor& t) {
  if (t.dtype() != tfw::DT_STRING) return Wrap(t, *BitDType(t.dtype()));
  const auto sizes = t.shape().dim_sizes();
  std::vector<int64_t> dims(sizes.begin(), sizes.end());
  std::vector<std::string> v;
  const auto s = t.flat<tfw::tstring>();
  for (int64_t i = 0; i < t.NumElements(); ++i) v.emplace_back(View(s(i)));
  return Tensor::FromVector(std::move(v), dims);
}

// Output `index` with `src`'s dims and elements.
void OutputOf(tfw::OpKernelContext* ctx, int index, const Tensor& src) {
  if (src.dtype() != DType::kString) {
    Tensor out = AllocateOutput(ctx, index, src.Dims(), src.dtype());
    Copy(src, &out);
    return;
  }
  const Tensor c = src.HostContiguous();
  const std::string* v = c.data<std::string>();
  AssignStrings(AllocateTf(ctx, index, src.Dims()),
                [&](int64_t i) { return std::string_view(v[i]); });
}

// A contiguous [1, ...] tensor as [...].
Tensor DropBatch(const Tensor& t) {
  std::vector<int64_t> dims = t.Dims();
  dims.erase(dims.begin());
  return t.WithPattern(DefaultPattern(dims, "TensorkitParseExampleV2"));
}

// Sparse output i of n (indices at base + i, values at base + n + i, dense shape at
// base + 2n + i). One record (`single`): without the batch, its first index column and dim.
void OutputSparse(tfw::OpKernelContext* ctx, int base, int n, int i, const SparseTensor& st,
                  bool single) {
  const int drop = single ? 1 : 0;
  const int rank = st.rank() - drop;
  if (single) {
    const Tensor all = st.indices().HostContiguous();
    Tensor ix = AllocateOutput(ctx, base + i, {st.nnz(), rank}, DType::kInt64);
    const int64_t* from = all.data<int64_t>();
    int64_t* to = ix.data<int64_t>();
    for (int64_t e = 0; e < st.nnz(); ++e) {
      std::copy(from + e * st.rank() + 1, from + (e + 1) * st.rank(), to + e * rank);
    }
  } else {
    OutputOf(ctx, base + i, st.indices());
  }
  OutputOf(ctx, base + n + i, st.values());
  Tensor shape = AllocateOutput(ctx, base + 2 * n + i, {rank}, DType::kInt64);
  std::copy(st.shape().begin() + drop, st.shape().end(), shape.data<int64_t>());
}

// Elements [from, from + n) of a parse output (of io::internal::ParseFixedAndVarLen with
// bytes_as_refs, contiguous on the CPU) into elements [at, at + n) of TensorFlow's `out`: strings
// from their BytesRefs (int64 pairs) into tstrings, numbers by memcpy.
void CopyParsed(const Tensor& t, int64_t from, tfw::Tensor* out, int64_t at, int64_t n) {
  if (out->dtype() == tfw::DT_STRING) {
    const auto* refs = reinterpret_cast<const io::internal::BytesRef*>(t.data<int64_t>()) + from;
    tfw::tstring* to = out->flat<tfw::tstring>().data() + at;
    for (int64_t i = 0; i < n; ++i) {
      // Consecutive values lie a record apart: fetched ahead, as no prefetcher guesses the
      // stride.
      if (i + 16 < n) __builtin_prefetch(refs[i + 16].data);
      to[i].assign(refs[i].data, refs[i].size);
    }
  } else if (n > 0) {
    const int64_t size = DTypeSize(t.dtype());
    std::memcpy(const_cast<char*>(out->tensor_data().data()) + at * size,
                static_cast<const char*>(t.raw_data()) + from * size,
                static_cast<size_t>(n * size));
  }
}
void CopyParsed(const Tensor& t, tfw::Tensor* out, int64_t b, int64_t e) {
  CopyParsed(t, b, out, b, e - b);
}

// Fills run in one parallel pass: Run() splits all their items together, so that many small
// outputs (26 sparse features of a batch) cost one parallel loop rather than one each.
class OutputFills {
 public:
  void Add(int64_t items, std::function<void(int64_t, int64_t)> fill) {
    start_.push_back(start_.back() + items);
    fills_.push_back(std::move(fill));
  }

  // All of `out` from the parse output `t` (CopyParsed).
  void Parsed(const Tensor& t, tfw::Tensor* out) {
    Add(out->NumElements(), [t, out](int64_t b, int64_t e) { CopyParsed(t, out, b, e); });
  }

  void Run() const {
    ParallelFor(0, start_.back(), 4096, [&](int64_t b, int64_t e) {
      size_t j = static_cast<size_t>(std::upper_bound(start_.begin(), start_.end(), b) -
                                     start_.begin() - 1);
      for (int64_t at = b; at < e; ++j) {
        const int64_t stop = std::min(e, start_[j + 1]);
        if (stop > at) fills_[j](at - start_[j], stop - start_[j]);
        at = stop;
      }
    });
  }

 private:
  std::vector<int64_t> start_ = {0};  // job j's items are [start_[j], start_[j + 1])
  std::vector<std::function<void(int64_t, int64_t)>> fills_;
};

// Where ParseAndOutput's VarLenFeature parses go, in the order of io::internal::FlatSpec: the
// first num_sparse are sparse keys; then one per FixedLenSequenceFeature of `sequences` (with
// its dense output index); then one per RaggedFeature of `ragged`, values at ragged_base + j
// and row splits at ragged_base + ragged.size() + j.
struct VarLenLayout {
  int num_sparse = 0;
  std::vector<std::pair<int, const io::FixedLenSequenceFeature*>> sequences;
  int ragged_base = 0;
  const std::vector<io::RaggedFeature>* ragged = nullptr;
};

// TensorFlow's outputs of VarLenFeatures parsed with bytes_as_refs, all allocated at once
// (ParallelOutputs) and filled in one parallel pass, strings copied once, from the records.
// Sparse keys: indices at i ([record, position] per value, or [position] for one record, from
// the jagged offsets), values at n + i, dense shapes at 2n + i of n. Sequences: [B, rows, ...]
// (no B for one record), each record's values then its default to the end of its rows. Ragged
// keys: values, and row splits (the offsets, in the feature's row_splits_dtype; empty for one
// record).
void OutputVarLens(tfw::OpKernelContext* ctx, const std::vector<JaggedTensor>& var_len,
                   const VarLenLayout& layout, bool single) {
  const int n = layout.num_sparse, q = static_cast<int>(layout.sequences.size());
  const std::vector<io::RaggedFeature>& ragged = *layout.ragged;
  const int m = static_cast<int>(ragged.size());
  const int rank = single ? 1 : 2;
  ParallelOutputs outs(ctx);
  for (int i = 0; i < n; ++i) {
    const int64_t nnz = var_len[i].values().Dim(0);
    outs.Add(i, {nnz, rank});
    outs.Add(n + i, {nnz});
    outs.Add(2 * n + i, {rank});
  }
  std::vector<int64_t> row_elements(q);  // of a record's output
  for (int s = 0; s < q; ++s) {
    const auto& [index, f] = layout.sequences[s];
    const JaggedTensor& v = var_len[n + s];
    const int64_t B = v.batch_size(), rows = io::internal::SequenceRows(*f, v, B);
    std::vector<int64_t> dims = {rows};
    dims.insert(dims.end(), f->shape.begin(), f->shape.end());
    row_elements[s] = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
    if (!single) dims.insert(dims.begin(), B);
    CheckVolumeFits(dims, "ParseExamples", "the FixedLenSequenceFeature output");
    outs.Add(index, dims);
  }
  for (int j = 0; j < m; ++j) {
    const JaggedTensor& v = var_len[n + q + j];
    const int64_t B = v.batch_size(), nnz = v.values().Dim(0);
    io::internal::CheckSplitsFit(ragged[j], nnz);
    outs.Add(layout.ragged_base + j, {nnz});
    outs.Add(layout.ragged_base + m + j, {single ? 0 : B + 1});
  }
  outs.Allocate();
  OutputFills fills;
  for (int i = 0; i < n; ++i) {
    const int64_t B = var_len[i].batch_size();
    const int64_t* o = var_len[i].offsets().data<int64_t>();
    int64_t* to = outs.Get(3 * i).flat<int64_t>().data();
    fills.Add(o[B],
              [=](int64_t b, int64_t e) { jagged_internal::WriteIndices(o, B, b, e, rank, to); });
    fills.Parsed(var_len[i].values(), &outs.Get(3 * i + 1));
    int64_t* sh = outs.Get(3 * i + 2).flat<int64_t>().data();
    if (!single) *sh++ = B;
    *sh = jagged_internal::MaxLength(o, B);
  }
  for (int s = 0; s < q; ++s) {
    const JaggedTensor& v = var_len[n + s];
    const int64_t* o = v.offsets().data<int64_t>();
    const int64_t row = row_elements[s];
    const Tensor values = v.values();
    const io::FixedLenSequenceFeature& f = *layout.sequences[s].second;
    tfw::Tensor* to = &outs.Get(3 * n + s);
    // Each record's values, then the default (0 or "" when undefined) to the end of its rows.
    Dispatch<io::internal::kExampleDTypes>(f.dtype, "ParseExamples", [&]<typename T>() {
      using Out = std::conditional_t<std::is_same_v<T, std::string>, tfw::tstring, T>;
      const Out pad(f.default_value.defined() ? f.default_value.ToVector<T>()[0] : T{});
      Out* dst = to->flat<Out>().data();
      fills.Add(v.batch_size(), [=](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t k = o[r + 1] - o[r];
          CopyParsed(values, o[r], to, r * row, k);
          std::fill(dst + r * row + k, dst + (r + 1) * row, pad);
        }
      });
    });
  }
  for (int j = 0; j < m; ++j) {
    const JaggedTensor& v = var_len[n + q + j];
    const int slot = 3 * n + q + 2 * j;
    fills.Parsed(v.values(), &outs.Get(slot));
    if (single) continue;
    tfw::Tensor* to = &outs.Get(slot + 1);
    if (ragged[j].row_splits_dtype == DType::kInt64) {
      fills.Parsed(v.offsets(), to);
    } else {
      const int64_t* o = v.offsets().data<int64_t>();
      int32_t* to32 = to->flat<int32_t>().data();
      fills.Add(to->NumElements(), [=](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) to32[i] = static_cast<int32_t>(o[i]);
      });
    }
  }
  fills.Run();
  outs.Commit();
}

// The Features part of a parse op (all of ParseExampleV2; the context of
// ParseSequenceExampleV2): attributes read once, then per call the spec and the outputs.
class FeaturesArgs {
 public:
  // Attribute names: sparse count, sparse types, dense types, dense shapes, ragged value types,
  // ragged split types.
  FeaturesArgs(tfw::OpKernelConstruction* c, const char* op, const char* num_sparse,
               const char* sparse_types, const char* dense_types, const char* dense_shapes,
               const char* ragged_types, const char* ragged_split_types)
      : op_(op) {
    OP_REQUIRES_OK(c, c->GetAttr(num_sparse, &num_sparse_));
    OP_REQUIRES_OK(c, c->GetAttr(sparse_types, &sparse_types_));
    OP_REQUIRES_OK(c, c->GetAttr(dense_types, &dense_types_));
    OP_REQUIRES_OK(c, c->GetAttr(dense_shapes, &dense_shapes_));
    OP_REQUIRES_OK(c, c->GetAttr(ragged_types, &ragged_types_));
    OP_REQUIRES_OK(c, c->GetAttr(ragged_split_types, &ragged_split_types_));
    OP_REQUIRES(
        c,
        static_cast<int>(sparse_types_.size()) == num_sparse_ &&
            ragged_split_types_.size() == ragged_types_.size() &&
            dense_shapes_.size() == dense_types_.size(),
        absl::InvalidArgumentError(std::string(op) + ": the lengths of " + sparse_types + ", " +
                                   ragged_split_types + " and " + dense_shapes + " must match " +
                                   num_sparse + ", " + ragged_types + " and " + dense_types));
  }

  // Outputs written: 3 per sparse key, 1 per dense key, 2 per ragged key.
  int NumOutputs() const {
    return 3 * num_sparse_ + static_cast<int>(dense_types_.size() + 2 * ragged_types_.size());
  }

  // The spec of the keys at inputs `keys_input` (sparse, dense, ragged) and the dense defaults
  // from input `defaults_input` on.
  io::ExampleSpec Spec(tfw::OpKernelContext* ctx, int keys_input, int defaults_input,
                       const char* prefix) {
    sparse_keys_ = Strings(ctx->input(keys_input), op_, "sparse_keys");
    const std::vector<std::string> dense_keys =
        Strings(ctx->input(keys_input + 1), op_, "dense_keys");
    const std::vector<std::string> ragged_keys =
        Strings(ctx->input(keys_input + 2), op_, "ragged_keys");
    TK_CHECK(static_cast<int>(sparse_keys_.size()) == num_sparse_ &&
                 dense_keys.size() == dense_types_.size() &&
                 ragged_keys.size() == ragged_types_.size(),
             kInvalidArgument, op_, ": ", sparse_keys_.size(), " ", prefix, "sparse_keys for ",
             num_sparse_, " sparse types, ", dense_keys.size(), " ", prefix, "dense_keys for ",
             dense_types_.size(), " dense types and ", ragged_keys.size(), " ", prefix,
             "ragged_keys for ", ragged_types_.size(), " ragged value types");
    io::ExampleSpec spec;
    // A dense shape whose first dim is unknown is a FixedLenSequenceFeature's: [B, rows, ...]
    // padded with the (scalar) default. dense_slot_[i]: its index among fixed (>= 0) or
    // fixed_sequence (-1 - index) outputs.
    dense_slot_.clear();
    for (size_t i = 0; i < dense_keys.size(); ++i) {
      const tfw::PartialTensorShape& shape = dense_shapes_[i];
      const bool sequence = shape.dims() > 0 && shape.dim_size(0) < 0;
      std::vector<int64_t> dims;
      for (int d = sequence ? 1 : 0; d < shape.dims(); ++d) dims.push_back(shape.dim_size(d));
      TK_CHECK(std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; }),
               kInvalidArgument, op_, ": dense key '", dense_keys[i], "' has shape ",
               shape.DebugString(), "; only its first dim may be unknown");
      const tfw::Tensor& def = ctx->input(defaults_input + static_cast<int>(i));
      Tensor dflt = def.NumElements() > 0 ? FromTf(def) : Tensor();
      const DType dtype = *ExampleDType(dense_types_[i]);
      if (sequence) {
        dense_slot_.push_back(-1 - static_cast<int>(spec.fixed_sequence.size()));
        spec.fixed_sequence.push_back({dense_keys[i], dtype, std::move(dims), std::move(dflt)});
      } else {
        dense_slot_.push_back(static_cast<int>(spec.fixed.size()));
        spec.fixed.push_back({dense_keys[i], dtype, std::move(dims), std::move(dflt)});
      }
    }
    for (int i = 0; i < num_sparse_; ++i) {
      spec.var_len.push_back({sparse_keys_[i], *ExampleDType(sparse_types_[i])});
    }
    // A ragged key is a RaggedFeature without partitions: its values and batch row splits
    // (TensorFlow's Python layer applies any partitions to them).
    for (size_t i = 0; i < ragged_keys.size(); ++i) {
      spec.ragged.push_back({ragged_keys[i],
                             *ExampleDType(ragged_types_[i]),
                             ragged_keys[i],
                             {},
                             SplitsDType(ragged_split_types_[i])});
    }
    return spec;
  }

  // Writes the outputs from `base` on. One record: without the batch dim (positions alone as
  // sparse indices; ragged row splits empty, or a scalar 0 with `scalar_splits`, the shapes
  // TensorFlow's ParseExampleV2 and ParseSequenceExampleV2 give them).
  void Output(tfw::OpKernelContext* ctx, const io::ParsedExamples& parsed, bool single, int base,
              bool scalar_splits = false) const {
    for (int i = 0; i < num_sparse_; ++i) {
      OutputSparse(ctx, base, num_sparse_, i, parsed.var_len[i].ToSparse(), single);
    }
    base += 3 * num_sparse_;
    for (size_t i = 0; i < dense_slot_.size(); ++i) {
      const int k = dense_slot_[i];
      const Tensor& t = k >= 0 ? parsed.fixed[k] : parsed.fixed_sequence[-1 - k];
      OutputOf(ctx, base + static_cast<int>(i), single ? DropBatch(t) : t);
    }
    base += static_cast<int>(dense_slot_.size());
    const int num_ragged = static_cast<int>(ragged_types_.size());
    for (int i = 0; i < num_ragged; ++i) {
      OutputOf(ctx, base + i, parsed.ragged[i].flat_values);
      const Tensor& splits = parsed.ragged[i].nested_row_splits[0];
      const Tensor none =
          scalar_splits ? Tensor::Zeros({}, splits.dtype()) : Tensor::Empty({0}, splits.dtype());
      OutputOf(ctx, base + num_ragged + i, single ? none : splits);
    }
  }

  // Parse and Output() of a spec whose composites each read a key of their own (`flat`, its
  // io::internal::FlatSpec), by io::internal::ParseFixedAndVarLen with bytes_as_refs, so that
  // strings are copied once, from the records to the outputs: FixedLenFeature outputs are
  // allocated first and filled chunk by chunk as the parse goes (while the chunk's records are in
  // cache); then the VarLen parses become the sparse, FixedLenSequenceFeature and ragged outputs
  // in one parallel pass (OutputVarLens).
  void ParseAndOutput(tfw::OpKernelContext* ctx, const std::vector<std::string_view>& records,
                      const io::ExampleSpec& spec, const io::ExampleSpec& flat, bool single) const {
    const int64_t B = static_cast<int64_t>(records.size());
    ParallelOutputs dense_outs(ctx);
    VarLenLayout layout;
    layout.num_sparse = num_sparse_;
    std::vector<std::pair<int, int64_t>> fixed;  // (slot in spec.fixed, values per record)
    for (size_t i = 0; i < dense_slot_.size(); ++i) {
      const int index = 3 * num_sparse_ + static_cast<int>(i), k = dense_slot_[i];
      if (k < 0) {
        layout.sequences.push_back({index, &spec.fixed_sequence[-1 - k]});
        continue;
      }
      const io::FixedLenFeature& f = spec.fixed[k];
      std::vector<int64_t> dims = f.shape;
      if (!single) dims.insert(dims.begin(), B);
      dense_outs.Add(index, dims);
      fixed.push_back(
          {k, std::accumulate(f.shape.begin(), f.shape.end(), int64_t{1}, std::multiplies<>())});
    }
    dense_outs.Allocate();
    auto chunk = [&](const std::vector<Tensor>& parsed, int64_t b, int64_t e) {
      for (size_t i = 0; i < fixed.size(); ++i) {
        const auto [k, n] = fixed[i];
        CopyParsed(parsed[k], &dense_outs.Get(static_cast<int>(i)), b * n, e * n);
      }
    };
    const io::ParsedExamples parsed = alloc_fault::ReportingAllocationFailure("ParseExamples", [&] {
      return io::internal::ParseFixedAndVarLen(records, flat, true, chunk);
    });
    dense_outs.Commit();
    layout.ragged_base = NumOutputs() - 2 * static_cast<int>(spec.ragged.size());
    layout.ragged = &spec.ragged;
    OutputVarLens(ctx, parsed.var_len, layout, single);
  }

  static DType SplitsDType(tfw::DataType t) {
    return t == tfw::DT_INT32 ? DType::kInt32 : DType::kInt64;
  }

 private:
  const char* op_;
  int num_sparse_ = 0;
  std::vector<tfw::DataType> dense_types_, sparse_types_, ragged_types_, ragged_split_types_;
  std::vector<tfw::PartialTensorShape> dense_shapes_;
  std::vector<std::string> sparse_keys_;
  std::vector<int> dense_slot_;
};

// The records of `serialized`, a scalar (one record) or a vector; *single tells which.
std::vector<std::string_view> Records(const tfw::Tensor& serialized, const char* op, bool* single) {
  TK_CHECK(serialized.dims() <= 1, kInvalidArgument, op,
           ": serialized must be a scalar (one record, as the parse_single_* functions pass "
           "it) or a vector of records, got shape ",
           ShapeText(serialized));
  *single = serialized.dims() == 0;
  std::vector<std::string_view> records(static_cast<size_t>(serialized.NumElements()));
  const auto s = serialized.flat<tfw::tstring>();
  for (size_t i = 0; i < records.size(); ++i) records[i] = View(s(i));
  return records;
}

class ParseExampleV2Kernel : public tfw::OpKernel {
 public:
  explicit ParseExampleV2Kernel(tfw::OpKernelConstruction* c)
      : OpKernel(c),
        args_(c, "TensorkitParseExampleV2", "num_sparse", "sparse_types", "Tdense", "dense_shapes",
              "ragged_value_types", "ragged_split_types") {}

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      bool single = false;
      const std::vector<std::string_view> records =
          Records(ctx->input(0), "TensorkitParseExampleV2", &single);
      const io::ExampleSpec spec = args_.Spec(ctx, 2, 5, "");
      if (const std::optional<io::ExampleSpec> flat = io::internal::FlatSpec(spec)) {
        args_.ParseAndOutput(ctx, records, spec, *flat, single);
      } else {
        args_.Output(ctx, io::ParseExamples(records, spec), single, 0);
      }
    });
  }

 private:
  FeaturesArgs args_;
};

REGISTER_KERNEL_BUILDER(Name("TensorkitParseExampleV2").Device(::tensorflow::DEVICE_CPU),
                        ParseExampleV2Kernel);

// --- tf.SequenceExample -----------------------------------------------------------------------

REGISTER_OP("TensorkitParseSequenceExampleV2")
    .Input("serialized: string")
    .Input("debug_name: string")
    .Input("context_sparse_keys: string")
    .Input("context_dense_keys: string")
    .Input("context_ragged_keys: string")
    .Input("feature_list_sparse_keys: string")
    .Input("feature_list_dense_keys: string")
    .Input("feature_list_ragged_keys: string")
    .Input("feature_list_dense_missing_assumed_empty: bool")
    .Input("context_dense_defaults: Tcontext_dense")
    .Output("context_sparse_indices: Ncontext_sparse * int64")
    .Output("context_sparse_values: context_sparse_types")
    .Output("context_sparse_shapes: Ncontext_sparse * int64")
    .Output("context_dense_values: Tcontext_dense")
    .Output("context_ragged_values: context_ragged_value_types")
    .Output("context_ragged_row_splits: context_ragged_split_types")
    .Output("feature_list_sparse_indices: Nfeature_list_sparse * int64")
    .Output("feature_list_sparse_values: feature_list_sparse_types")
    .Output("feature_list_sparse_shapes: Nfeature_list_sparse * int64")
    .Output("feature_list_dense_values: feature_list_dense_types")
    .Output("feature_list_dense_lengths: Nfeature_list_dense * int64")
    .Output("feature_list_ragged_values: feature_list_ragged_value_types")
    .Output("feature_list_ragged_outer_splits: feature_list_ragged_split_types")
    .Output("feature_list_ragged_inner_splits: feature_list_ragged_split_types")
    .Attr("Ncontext_sparse: int >= 0 = 0")
    .Attr("Tcontext_dense: list({float,int64,string}) >= 0 = []")
    .Attr("context_sparse_types: list({float,int64,string}) >= 0 = []")
    .Attr("context_ragged_value_types: list({float,int64,string}) >= 0 = []")
    .Attr("context_ragged_split_types: list({int32,int64}) >= 0 = []")
    .Attr("context_dense_shapes: list(shape) >= 0 = []")
    .Attr("Nfeature_list_sparse: int >= 0 = 0")
    .Attr("Nfeature_list_dense: int >= 0 = 0")
    .Attr("feature_list_dense_types: list({float,int64,string}) >= 0 = []")
    .Attr("feature_list_sparse_types: list({float,int64,string}) >= 0 = []")
    .Attr("feature_list_ragged_value_types: list({float,int64,string}) >= 0 = []")
    .Attr("feature_list_ragged_split_types: list({int32,int64}) >= 0 = []")
    .Attr("feature_list_dense_shapes: list(shape) >= 0 = []")
    .SetShapeFn([](InferenceContext* c) {
      for (int k = 0; k < c->num_outputs(); ++k) c->set_output(k, c->UnknownShape());
      return absl::OkStatus();
    });

class ParseSequenceExampleV2Kernel : public tfw::OpKernel {
 public:
  explicit ParseSequenceExampleV2Kernel(tfw::OpKernelConstruction* c)
      : OpKernel(c),
        context_(c, kOp, "Ncontext_sparse", "context_sparse_types", "Tcontext_dense",
                 "context_dense_shapes", "context_ragged_value_types",
                 "context_ragged_split_types") {
    OP_REQUIRES_OK(c, c->GetAttr("Nfeature_list_sparse", &num_sparse_));
    OP_REQUIRES_OK(c, c->GetAttr("Nfeature_list_dense", &num_dense_));
    OP_REQUIRES_OK(c, c->GetAttr("feature_list_dense_types", &dense_types_));
    OP_REQUIRES_OK(c, c->GetAttr("feature_list_sparse_types", &sparse_types_));
    OP_REQUIRES_OK(c, c->GetAttr("feature_list_ragged_value_types", &ragged_types_));
    OP_REQUIRES_OK(c, c->GetAttr("feature_list_ragged_split_types", &ragged_split_types_));
    OP_REQUIRES_OK(c, c->GetAttr("feature_list_dense_shapes", &dense_shapes_));
    OP_REQUIRES(c,
                static_cast<int>(sparse_types_.size()) == num_sparse_ &&
                    static_cast<int>(dense_types_.size()) == num_dense_ &&
                    dense_shapes_.size() == dense_types_.size() &&
                    ragged_split_types_.size() == ragged_types_.size(),
                absl::InvalidArgumentError(std::string(kOp) +
                                           ": the feature_list type and shape lists must match "
                                           "Nfeature_list_sparse and Nfeature_list_dense"));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      bool single = false;
      const std::vector<std::string_view> records = Records(ctx->input(0), kOp, &single);
      io::SequenceExampleSpec spec;
      spec.context = context_.Spec(ctx, 2, 9, "context_");
      const std::vector<std::string> sparse_keys =
          Strings(ctx->input(5), kOp, "feature_list_sparse_keys");
      const std::vector<std::string> dense_keys =
          Strings(ctx->input(6), kOp, "feature_list_dense_keys");
      const std::vector<std::string> ragged_keys =
          Strings(ctx->input(7), kOp, "feature_list_ragged_keys");
      const tfw::Tensor& missing = ctx->input(8);
      TK_CHECK(static_cast<int>(sparse_keys.size()) == num_sparse_ &&
                   static_cast<int>(dense_keys.size()) == num_dense_ &&
                   ragged_keys.size() == ragged_types_.size() &&
                   missing.NumElements() == num_dense_,
               kInvalidArgument, kOp, ": ", sparse_keys.size(), " feature_list_sparse_keys for ",
               num_sparse_, ", ", dense_keys.size(), " feature_list_dense_keys (and ",
               missing.NumElements(), " feature_list_dense_missing_assumed_empty) for ", num_dense_,
               ", ", ragged_keys.size(), " feature_list_ragged_keys for ", ragged_types_.size());
      for (int i = 0; i < num_dense_; ++i) {
        TK_CHECK(dense_shapes_[i].IsFullyDefined(), kInvalidArgument, kOp,
                 ": feature_list_dense key '", dense_keys[i], "' has shape ",
                 dense_shapes_[i].DebugString(), "; a step's shape must be fully defined");
        const auto sizes = dense_shapes_[i].dim_sizes();
        std::vector<int64_t> dims(sizes.begin(), sizes.end());
        spec.feature_list_dense.push_back({dense_keys[i],
                                           *ExampleDType(dense_types_[i]),
                                           std::move(dims),
                                           {},
                                           missing.flat<bool>()(i)});
      }
      for (int i = 0; i < num_sparse_; ++i) {
        spec.feature_list_sparse.push_back({sparse_keys[i], *ExampleDType(sparse_types_[i])});
      }
      for (size_t i = 0; i < ragged_keys.size(); ++i) {
        spec.feature_list_ragged.push_back({ragged_keys[i],
                                            *ExampleDType(ragged_types_[i]),
                                            ragged_keys[i],
                                            {},
                                            FeaturesArgs::SplitsDType(ragged_split_types_[i])});
      }
      const io::ParsedSequenceExamples parsed = io::ParseSequenceExamples(records, spec);
      context_.Output(ctx, parsed.context, single, 0, true);
      int k = context_.NumOutputs();
      // One record: no batch dim (step and position as sparse indices, lengths a scalar, and
      // the outer splits a scalar 0: TensorFlow's op gives that shape, its value left
      // uninitialized).
      for (int i = 0; i < num_sparse_; ++i) {
        OutputSparse(ctx, k, num_sparse_, i, parsed.feature_list_sparse[i], single);
      }
      k += 3 * num_sparse_;
      for (int i = 0; i < num_dense_; ++i) {
        const Tensor& t = parsed.feature_list_dense[i];
        const Tensor& n = parsed.feature_list_lengths[i];
        OutputOf(ctx, k + i, single ? DropBatch(t) : t);
        OutputOf(ctx, k + num_dense_ + i, single ? DropBatch(n) : n);
      }
      k += 2 * num_dense_;
      const int num_ragged = static_cast<int>(ragged_keys.size());
      for (int i = 0; i < num_ragged; ++i) {
        const io::RaggedOutput& r = parsed.feature_list_ragged[i];
        OutputOf(ctx, k + i, r.flat_values);
        const Tensor& outer = r.nested_row_splits[0];
        OutputOf(ctx, k + num_ragged + i, single ? Tensor::Zeros({}, outer.dtype()) : outer);
        OutputOf(ctx, k + 2 * num_ragged + i, r.nested_row_splits[1]);
      }
    });
  }

 private:
  static constexpr const char* kOp = "TensorkitParseSequenceExampleV2";
  FeaturesArgs context_;
  int num_sparse_ = 0, num_dense_ = 0;
  std::vector<tfw::DataType> dense_types_, sparse_types_, ragged_types_, ragged_split_types_;
  std::vector<tfw::PartialTensorShape> dense_shapes_;
};

REGISTER_KERNEL_BUILDER(Name("TensorkitParseSequenceExampleV2").Device(::tensorflow::DEVICE_CPU),
                        ParseSequenceExampleV2Kernel);

// --- TFRecord files -------------------------------------------------------------------------

REGISTER_OP("TensorkitTFRecordRead")
    .Input("path: string")
    .Output("records: string")
    .Attr("compression_type: string = ''")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->Vector(InferenceContext::kUnknownDim));
      return absl::OkStatus();
    });

REGISTER_OP("TensorkitTFRecordWrite")
    .Input("path: string")
    .Input("records: string")
    .Attr("compression_type: string = ''")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext*) { return absl::OkStatus(); });

std::string ScalarPath(const tfw::Tensor& t, const char* op) {
  TK_CHECK(t.dims() == 0, kInvalidArgument, op, ": path must be a scalar string, got shape ",
           ShapeText(t));
  return std::string(View(t.scalar<tfw::tstring>()()));
}

class TFRecordReadKernel : public tfw::OpKernel {
 public:
  explicit TFRecordReadKernel(tfw::OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("compression_type", &compression_));
  }
  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      io::TFRecordOptions o;
      o.compression = io::TFRecordCompressionFromName(compression_);
      const io::TFRecordBatch b =
          io::ReadTFRecordBatch(ScalarPath(ctx->input(0), "TensorkitTFRecordRead"), o);
      AssignStrings(AllocateTf(ctx, 0, {b.size()}), [&](int64_t i) { return b[i]; });
    });
  }

 private:
  std::string compression_;
};

class TFRecordWriteKernel : public tfw::OpKernel {
 public:
  explicit TFRecordWriteKernel(tfw::OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("compression_type", &compression_));
  }
  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      io::TFRecordOptions o;
      o.compression = io::TFRecordCompressionFromName(compression_);
      const tfw::Tensor& records = ctx->input(1);
      const auto s = records.flat<tfw::tstring>();
      io::TFRecordWriter w(ScalarPath(ctx->input(0), "TensorkitTFRecordWrite"), o);
      for (int64_t i = 0; i < records.NumElements(); ++i) w.Write(View(s(i)));
      w.Close();
    });
  }

 private:
  std::string compression_;
};

REGISTER_KERNEL_BUILDER(Name("TensorkitTFRecordRead").Device(::tensorflow::DEVICE_CPU),
                        TFRecordReadKernel);
REGISTER_KERNEL_BUILDER(Name("TensorkitTFRecordWrite").Device(::tensorflow::DEVICE_CPU),
                        TFRecordWriteKernel);

// --- tf.Example writer ------------------------------------------------------------------------

REGISTER_OP("TensorkitSerializeExamples")
    .Input("dense_keys: string")
    .Input("dense_values: Tdense")
    .Input("sparse_keys: string")
    .Input("sparse_values: sparse_types")
    .Input("sparse_row_splits: num_sparse * int64")
    .Output("serialized: string")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->Vector(InferenceContext::kUnknownDim));
      return absl::OkStatus();
    });

class SerializeExamplesKernel : public tfw::OpKernel {
 public:
  explicit SerializeExamplesKernel(tfw::OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("Tdense", &dense_types_));
    OP_REQUIRES_OK(c, c->GetAttr("num_sparse", &num_sparse_));
  }
  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      constexpr const char* kOp = "TensorkitSerializeExamples";
      const int nd = static_cast<int>(dense_types_.size());
      const std::vector<std::string> dense_keys = Strings(ctx->input(0), kOp, "dense_keys");
      const std::vector<std::string> sparse_keys = Strings(ctx->input(1 + nd), kOp, "sparse_keys");
      TK_CHECK(static_cast<int>(dense_keys.size()) == nd &&
                   static_cast<int>(sparse_keys.size()) == num_sparse_,
               kInvalidArgument, kOp, ": the key counts do not match the value lists");
      std::vector<std::pair<std::string, Tensor>> fixed;
      for (int i = 0; i < nd; ++i) fixed.emplace_back(dense_keys[i], FromTf(ctx->input(1 + i)));
      std::vector<std::pair<std::string, JaggedTensor>> var_len;
      for (int i = 0; i < num_sparse_; ++i) {
        Tensor values = FromTf(ctx->input(2 + nd + i));
        Tensor splits = FromTf(ctx->input(2 + nd + num_sparse_ + i)).Clone();
        var_len.emplace_back(sparse_keys[i], JaggedTensor::FromOffsets(values, splits));
      }
      const std::vector<std::string> out = io::SerializeExamples(fixed, var_len);
      AssignStrings(AllocateTf(ctx, 0, {static_cast<int64_t>(out.size())}),
                    [&](int64_t i) { return std::string_view(out[static_cast<size_t>(i)]); });
    });
  }

 private:
  std::vector<tfw::DataType> dense_types_;
  int num_sparse_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("TensorkitSerializeExamples").Device(::tensorflow::DEVICE_CPU),
                        SerializeExamplesKernel);

}  // namespace
}  // namespace tensorkit::tf
