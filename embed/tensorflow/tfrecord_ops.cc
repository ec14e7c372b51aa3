// TensorkitParseExampleV2 (tf.raw_ops.ParseExampleV2's inputs, outputs and attributes, on
// io/tf_example.h), and the TFRecord and tf.Example writers
// exposed for round trips with TensorFlow: TensorkitTFRecordRead, TensorkitTFRecordWrite,
// TensorkitSerializeExamples.
#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
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
      int k = 0;
      for (int i = 0; i < num_sparse; ++i) c->set_output(k++, c->Matrix(c->UnknownDim(), 2));
      for (int i = 0; i < num_sparse; ++i) c->set_output(k++, c->Vector(c->UnknownDim()));
      for (int i = 0; i < num_sparse; ++i) c->set_output(k++, c->Vector(2));
      for (const auto& s : dense_shapes) {
        tensorflow::shape_inference::ShapeHandle h;
        TF_RETURN_IF_ERROR(c->MakeShapeFromPartialTensorShape(s, &h));
        TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(c->UnknownDim()), h, &h));
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
  tfw::Tensor* out = AllocateTf(ctx, index, src.Dims());
  auto o = out->flat<tfw::tstring>();
  const Tensor c = src.HostContiguous();
  const std::string* v = c.data<std::string>();
  for (int64_t i = 0; i < c.NumElements(); ++i) o(i).assign(v[i].data(), v[i].size());
}

// A contiguous [1, ...] tensor as [...].
Tensor DropBatch(const Tensor& t) {
  std::vector<int64_t> dims = t.Dims();
  dims.erase(dims.begin());
  return t.WithPattern(DefaultPattern(dims, "TensorkitParseExampleV2"));
}

class ParseExampleV2Kernel : public tfw::OpKernel {
 public:
  explicit ParseExampleV2Kernel(tfw::OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("Tdense", &dense_types_));
    OP_REQUIRES_OK(c, c->GetAttr("num_sparse", &num_sparse_));
    OP_REQUIRES_OK(c, c->GetAttr("sparse_types", &sparse_types_));
    OP_REQUIRES_OK(c, c->GetAttr("ragged_value_types", &ragged_types_));
    OP_REQUIRES_OK(c, c->GetAttr("ragged_split_types", &ragged_split_types_));
    OP_REQUIRES_OK(c, c->GetAttr("dense_shapes", &dense_shapes_));
    OP_REQUIRES(c, static_cast<int>(sparse_types_.size()) == num_sparse_,
                absl::InvalidArgumentError("TensorkitParseExampleV2: len(sparse_types) != "
                                           "num_sparse"));
    OP_REQUIRES(c, ragged_split_types_.size() == ragged_types_.size(),
                absl::InvalidArgumentError("TensorkitParseExampleV2: len(ragged_split_types) != "
                                           "len(ragged_value_types)"));
    OP_REQUIRES(c, dense_shapes_.size() == dense_types_.size(),
                absl::InvalidArgumentError("TensorkitParseExampleV2: len(dense_shapes) != "
                                           "len(Tdense)"));
  }

  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      constexpr const char* kOp = "TensorkitParseExampleV2";
      const tfw::Tensor& serialized = ctx->input(0);
      TK_CHECK(serialized.dims() <= 1, kInvalidArgument, kOp,
               ": serialized must be a scalar (one record, as tf.io.parse_single_example "
               "passes it) or a vector of records, got shape ",
               ShapeText(serialized));
      const bool single = serialized.dims() == 0;
      const std::vector<std::string> sparse_keys = Strings(ctx->input(2), kOp, "sparse_keys");
      const std::vector<std::string> dense_keys = Strings(ctx->input(3), kOp, "dense_keys");
      const std::vector<std::string> ragged_keys = Strings(ctx->input(4), kOp, "ragged_keys");
      TK_CHECK(static_cast<int>(sparse_keys.size()) == num_sparse_ &&
                   dense_keys.size() == dense_types_.size() &&
                   ragged_keys.size() == ragged_types_.size(),
               kInvalidArgument, kOp, ": ", sparse_keys.size(), " sparse_keys for num_sparse ",
               num_sparse_, ", ", dense_keys.size(), " dense_keys for ", dense_types_.size(),
               " Tdense and ", ragged_keys.size(), " ragged_keys for ", ragged_types_.size(),
               " ragged_value_types");
      io::ExampleSpec spec;
      // A dense shape whose first dim is unknown is a FixedLenSequenceFeature's: [B, rows, ...]
      // padded with the (scalar) default. dense_slot[i]: its index among fixed (>= 0) or
      // fixed_sequence (-1 - index) outputs.
      std::vector<int> dense_slot;
      for (size_t i = 0; i < dense_keys.size(); ++i) {
        const tfw::PartialTensorShape& shape = dense_shapes_[i];
        const bool sequence = shape.dims() > 0 && shape.dim_size(0) < 0;
        std::vector<int64_t> dims;
        for (int d = sequence ? 1 : 0; d < shape.dims(); ++d) dims.push_back(shape.dim_size(d));
        TK_CHECK(std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; }),
                 kInvalidArgument, kOp, ": dense key '", dense_keys[i], "' has shape ",
                 shape.DebugString(), "; only its first dim may be unknown");
        const tfw::Tensor& def = ctx->input(5 + static_cast<int>(i));
        Tensor dflt = def.NumElements() > 0 ? FromTf(def) : Tensor();
        const DType dtype = *ExampleDType(dense_types_[i]);
        if (sequence) {
          dense_slot.push_back(-1 - static_cast<int>(spec.fixed_sequence.size()));
          spec.fixed_sequence.push_back({dense_keys[i], dtype, std::move(dims), std::move(dflt)});
        } else {
          dense_slot.push_back(static_cast<int>(spec.fixed.size()));
          spec.fixed.push_back({dense_keys[i], dtype, std::move(dims), std::move(dflt)});
        }
      }
      for (int i = 0; i < num_sparse_; ++i) {
        spec.var_len.push_back({sparse_keys[i], *ExampleDType(sparse_types_[i])});
      }
      // A ragged key is a RaggedFeature without partitions: its values and batch row splits
      // (TensorFlow's Python layer applies any partitions to them).
      for (size_t i = 0; i < ragged_keys.size(); ++i) {
        const DType splits =
            ragged_split_types_[i] == tfw::DT_INT32 ? DType::kInt32 : DType::kInt64;
        spec.ragged.push_back(
            {ragged_keys[i], *ExampleDType(ragged_types_[i]), ragged_keys[i], {}, splits});
      }
      std::vector<std::string_view> records(static_cast<size_t>(serialized.NumElements()));
      const auto s = serialized.flat<tfw::tstring>();
      for (size_t i = 0; i < records.size(); ++i) records[i] = View(s(i));
      const io::ParsedExamples parsed = io::ParseExamples(records, spec);
      // One record: the outputs without the batch dim (positions alone as sparse indices, no
      // ragged row splits), as TensorFlow's op gives them.
      for (int i = 0; i < num_sparse_; ++i) {
        const SparseTensor st = parsed.var_len[i].ToSparse();
        if (single) {
          const JaggedTensor& row = parsed.var_len[i];
          Tensor ix = AllocateOutput(ctx, i, {row.values().NumElements(), 1}, DType::kInt64);
          std::iota(ix.data<int64_t>(), ix.data<int64_t>() + ix.NumElements(), int64_t{0});
        } else {
          OutputOf(ctx, i, st.indices());
        }
        OutputOf(ctx, num_sparse_ + i, st.values());
        Tensor shape = AllocateOutput(ctx, 2 * num_sparse_ + i, {single ? 1 : 2}, DType::kInt64);
        for (int d = single ? 1 : 0; d < 2; ++d)
          shape.data<int64_t>()[d - (single ? 1 : 0)] = st.shape()[d];
      }
      for (size_t i = 0; i < dense_slot.size(); ++i) {
        const int k = dense_slot[i];
        const Tensor& t = k >= 0 ? parsed.fixed[k] : parsed.fixed_sequence[-1 - k];
        OutputOf(ctx, 3 * num_sparse_ + static_cast<int>(i), single ? DropBatch(t) : t);
      }
      const int ragged_base = 3 * num_sparse_ + static_cast<int>(dense_types_.size());
      const int num_ragged = static_cast<int>(ragged_keys.size());
      for (int i = 0; i < num_ragged; ++i) {
        OutputOf(ctx, ragged_base + i, parsed.ragged[i].flat_values);
        const Tensor& splits = parsed.ragged[i].nested_row_splits[0];
        OutputOf(ctx, ragged_base + num_ragged + i,
                 single ? Tensor::Empty({0}, splits.dtype()) : splits);
      }
    });
  }

 private:
  std::vector<tfw::DataType> dense_types_, sparse_types_, ragged_types_, ragged_split_types_;
  std::vector<tfw::PartialTensorShape> dense_shapes_;
  int num_sparse_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("TensorkitParseExampleV2").Device(::tensorflow::DEVICE_CPU),
                        ParseExampleV2Kernel);

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
      tfw::Tensor* out = AllocateTf(ctx, 0, {b.size()});
      auto r = out->flat<tfw::tstring>();
      for (int64_t i = 0; i < b.size(); ++i) r(i).assign(b[i].data(), b[i].size());
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
      tfw::Tensor* t = AllocateTf(ctx, 0, {static_cast<int64_t>(out.size())});
      auto o = t->flat<tfw::tstring>();
      for (size_t i = 0; i < out.size(); ++i) o(i).assign(out[i].data(), out[i].size());
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
