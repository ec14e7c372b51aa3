// TensorkitParseExampleV2 and TensorkitParseSequenceExampleV2 (tf.raw_ops.ParseExampleV2's and
// ParseSequenceExampleV2's inputs, outputs and attributes, on io/tf_example.h), and the TFRecord
// and tf.Example writers exposed for round trips with TensorFlow: TensorkitTFRecordRead,
// TensorkitTFRecordWrite, TensorkitSerializeExamples.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/embed/tensorflow/tf_outputs.h"
#include "tensorkit/io/tf_example.h"
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

// Output `index`, int32 or int64 row splits, as a scalar 0.
void ScalarZeroSplits(tfw::OpKernelContext* ctx, int index) {
  tfw::Tensor* t = AllocateTf(ctx, index, {});
  if (t->dtype() == tfw::DT_INT32) {
    t->scalar<int32_t>()() = 0;
  } else {
    t->scalar<int64_t>()() = 0;
  }
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
  // from input `defaults_input` on. (*dense_slot)[i]: dense key i's index among the spec's fixed
  // (>= 0) or fixed_sequence (-1 - index) features.
  io::ExampleSpec Spec(tfw::OpKernelContext* ctx, int keys_input, int defaults_input,
                       const char* prefix, std::vector<int>* dense_slot) const {
    const std::vector<std::string> sparse_keys_ =
        Strings(ctx->input(keys_input), op_, "sparse_keys");
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
    // padded with the (scalar) default.
    dense_slot->clear();
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
        dense_slot->push_back(-1 - static_cast<int>(spec.fixed_sequence.size()));
        spec.fixed_sequence.push_back({dense_keys[i], dtype, std::move(dims), std::move(dflt)});
      } else {
        dense_slot->push_back(static_cast<int>(spec.fixed.size()));
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

  // Where the outputs of `spec` (numbered by `index`) go among the kernel's, from `base` on:
  // (*slots)[io output] = kernel output. With `scalar_splits`, the ragged row splits are
  // scratch (the kernel writes the scalar that TensorFlow's ParseSequenceExampleV2 gives a
  // single record there).
  void Slots(const io::ExampleSpec& spec, const io::ExampleOutputIndex& index,
             const std::vector<int>& dense_slot, int base, bool scalar_splits,
             std::vector<int>* slots) const {
    const int n = num_sparse_, d = static_cast<int>(dense_slot.size());
    const int m = static_cast<int>(ragged_types_.size());
    for (int i = 0; i < n; ++i) {
      (*slots)[index.VarLen(i)] = base + i;
      (*slots)[index.VarLen(i) + 1] = base + n + i;
      (*slots)[index.VarLen(i) + 2] = base + 2 * n + i;
    }
    for (int i = 0; i < d; ++i) {
      const int k = dense_slot[i];
      (*slots)[k >= 0 ? index.Fixed(k) : index.FixedSequence(-1 - k)] = base + 3 * n + i;
    }
    for (int j = 0; j < m; ++j) {
      (*slots)[index.Ragged(j)] = base + 3 * n + d + j;
      (*slots)[index.Ragged(j) + 1] = scalar_splits ? -1 : base + 3 * n + d + m + j;
    }
    static_cast<void>(spec);
  }

  // The scalar row splits of a single record's ragged outputs (see Slots), from `base` on.
  void ScalarSplits(tfw::OpKernelContext* ctx, int base) const {
    const int m = static_cast<int>(ragged_types_.size());
    for (int j = 0; j < m; ++j) ScalarZeroSplits(ctx, base + NumOutputs() - m + j);
  }

  static DType SplitsDType(tfw::DataType t) {
    return t == tfw::DT_INT32 ? DType::kInt32 : DType::kInt64;
  }

 private:
  const char* op_;
  int num_sparse_ = 0;
  std::vector<tfw::DataType> dense_types_, sparse_types_, ragged_types_, ragged_split_types_;
  std::vector<tfw::PartialTensorShape> dense_shapes_;
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
      std::vector<int> dense_slot;
      const io::ExampleSpec spec = args_.Spec(ctx, 2, 5, "", &dense_slot);
      const io::ExampleOutputIndex index(spec);
      std::vector<int> slots(static_cast<size_t>(index.end()), -1);
      args_.Slots(spec, index, dense_slot, 0, false, &slots);
      TfOutputs out(ctx, std::move(slots));
      io::ParseExamples(records, spec, out, !single);
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
      std::vector<int> dense_slot;
      spec.context = context_.Spec(ctx, 2, 9, "context_", &dense_slot);
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
      // The kernel's outputs: the context's, then the feature lists' sparse indices, values and
      // shapes, dense values and lengths, ragged values, outer and inner splits. One record: no
      // batch dim, and the ragged outer splits a scalar 0 (TensorFlow's op gives that shape, its
      // value left uninitialized).
      const io::SequenceOutputIndex index(spec);
      std::vector<int> slots(static_cast<size_t>(index.end()), -1);
      context_.Slots(spec.context, index.context(), dense_slot, 0, single, &slots);
      const int k = context_.NumOutputs(), ns = num_sparse_, nd = num_dense_;
      const int nr = static_cast<int>(ragged_keys.size());
      for (int i = 0; i < ns; ++i) {
        for (int j = 0; j < 3; ++j) slots[index.FeatureListSparse(i) + j] = k + j * ns + i;
      }
      for (int i = 0; i < nd; ++i) {
        slots[index.FeatureListDense(i)] = k + 3 * ns + i;
        slots[index.FeatureListDense(i) + 1] = k + 3 * ns + nd + i;
      }
      const int kr = k + 3 * ns + 2 * nd;
      for (int i = 0; i < nr; ++i) {
        slots[index.FeatureListRagged(i)] = kr + i;
        slots[index.FeatureListRagged(i) + 1] = single ? -1 : kr + nr + i;
        slots[index.FeatureListRagged(i) + 2] = kr + 2 * nr + i;
      }
      TfOutputs out(ctx, std::move(slots));
      io::ParseSequenceExamples(records, spec, out, !single);
      if (single) {
        context_.ScalarSplits(ctx, 0);
        for (int i = 0; i < nr; ++i) ScalarZeroSplits(ctx, kr + nr + i);
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
