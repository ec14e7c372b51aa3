// TensorkitStringToHashBucketFast / Strong and TensorkitSparseCross / SparseCrossV2 /
// SparseCrossHashed: TensorFlow's hashing and crossing ops on tensorkit's engine
// (features/hash.h, features/cross.h). TensorFlow's string buffers are read in place; every item
// is hashed once (TensorFlow hashes it again for every cross it is in), and the crosses are
// written straight into TensorFlow's outputs, one task per row.
#include <array>
#include <string_view>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorkit/embed/tensorflow/tf_glue.h"
#include "tensorkit/features/cross_internal.h"
#include "tensorkit/features/hash.h"
#include "tensorkit/features/hash_internal.h"

namespace tensorkit::tf {
namespace {

namespace fi = features_internal;
using ::tensorflow::shape_inference::InferenceContext;

absl::Status HashShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

REGISTER_OP("TensorkitStringToHashBucketFast")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .SetShapeFn(HashShape);

REGISTER_OP("TensorkitStringToHashBucketStrong")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .Attr("key: list(int)")
    .SetShapeFn(HashShape);

std::string_view View(const tfw::tstring& s) { return std::string_view(s.data(), s.size()); }

// Hash buckets of every string of input 0 into output 0 (TensorFlow's buffer).
template <typename Hash>
void HashBuckets(tfw::OpKernelContext* ctx, int64_t num_buckets, const Hash& hash) {
  const tfw::Tensor& in = ctx->input(0);
  tfw::Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
  const auto s = in.flat<tfw::tstring>();
  int64_t* o = out->flat<int64_t>().data();
  const uint64_t buckets = static_cast<uint64_t>(num_buckets);
  fi::ForEachBytes(
      in.NumElements(), [&s](int64_t i) { return View(s(i)); },
      [&](int64_t i, std::string_view b) { o[i] = static_cast<int64_t>(hash(b) % buckets); });
}

class HashBucketFastKernel : public tfw::OpKernel {
 public:
  explicit HashBucketFastKernel(tfw::OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_buckets", &num_buckets_));
  }
  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      HashBuckets(ctx, num_buckets_, [](std::string_view b) { return Fingerprint64(b); });
    });
  }

 private:
  int64_t num_buckets_ = 1;
};

class HashBucketStrongKernel : public tfw::OpKernel {
 public:
  explicit HashBucketStrongKernel(tfw::OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_buckets", &num_buckets_));
    std::vector<int64_t> key;
    OP_REQUIRES_OK(c, c->GetAttr("key", &key));
    OP_REQUIRES(c, key.size() == 2,
                absl::InvalidArgumentError("TensorkitStringToHashBucketStrong: key has " +
                                           std::to_string(key.size()) +
                                           " elements; it must have 2 (a 128-bit key)"));
    key_ = {static_cast<uint64_t>(key[0]), static_cast<uint64_t>(key[1])};
  }
  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      HashBuckets(ctx, num_buckets_,
                  [this](std::string_view b) { return StrongKeyedHash(key_[0], key_[1], b); });
    });
  }

 private:
  int64_t num_buckets_ = 1;
  std::array<uint64_t, 2> key_{};
};

REGISTER_KERNEL_BUILDER(Name("TensorkitStringToHashBucketFast").Device(tfw::DEVICE_CPU),
                        HashBucketFastKernel);
REGISTER_KERNEL_BUILDER(Name("TensorkitStringToHashBucketStrong").Device(tfw::DEVICE_CPU),
                        HashBucketStrongKernel);

// ---------------------------------------------------------------------------------------------
// Crosses
// ---------------------------------------------------------------------------------------------

absl::Status CrossShape(InferenceContext* c) {
  c->set_output(0, c->Matrix(InferenceContext::kUnknownDim, 2));
  c->set_output(1, c->Vector(InferenceContext::kUnknownDim));
  c->set_output(2, c->Vector(2));
  return absl::OkStatus();
}

#define TENSORKIT_CROSS_INPUTS       \
  Input("indices: N * int64")        \
      .Input("values: sparse_types") \
      .Input("shapes: N * int64")    \
      .Input("dense_inputs: dense_types")
#define TENSORKIT_CROSS_ATTRS                           \
  Attr("N: int >= 0")                                   \
      .Attr("sparse_types: list({int64, string}) >= 0") \
      .Attr("dense_types: list({int64, string}) >= 0")

REGISTER_OP("TensorkitSparseCross")
    .TENSORKIT_CROSS_INPUTS.Output("output_indices: int64")
    .Output("output_values: out_type")
    .Output("output_shape: int64")
    .TENSORKIT_CROSS_ATTRS.Attr("hashed_output: bool")
    .Attr("num_buckets: int >= 0")
    .Attr("hash_key: int")
    .Attr("out_type: {int64, string}")
    .Attr("internal_type: {int64, string}")
    .SetShapeFn(CrossShape);

REGISTER_OP("TensorkitSparseCrossV2")
    .TENSORKIT_CROSS_INPUTS.Input("sep: string")
    .Output("output_indices: int64")
    .Output("output_values: string")
    .Output("output_shape: int64")
    .TENSORKIT_CROSS_ATTRS.SetShapeFn(CrossShape);

REGISTER_OP("TensorkitSparseCrossHashed")
    .TENSORKIT_CROSS_INPUTS.Input("num_buckets: int64")
    .Input("strong_hash: bool")
    .Input("salt: int64")
    .Output("output_indices: int64")
    .Output("output_values: int64")
    .Output("output_shape: int64")
    .TENSORKIT_CROSS_ATTRS.SetShapeFn(CrossShape);

// The feature columns of a cross op's inputs, sparse ones first (TensorFlow's order), checked
// more strictly than TensorFlow does: every index inside its shape, the shapes' batch sizes
// equal, every list of the same length. *batch is the batch size (0 without inputs).
std::vector<fi::CrossColumn> CrossColumns(tfw::OpKernelContext* ctx, const char* op,
                                          const CrossOptions& o, bool strings_only,
                                          int64_t* batch) {
  tfw::OpInputList ind, vals, shapes, dense;
  auto list = [&](const char* name, tfw::OpInputList* l) {
    const absl::Status s = ctx->input_list(name, l);
    if (!s.ok()) throw StatusError(s);
  };
  list("indices", &ind);
  list("values", &vals);
  list("shapes", &shapes);
  list("dense_inputs", &dense);
  TK_CHECK(ind.size() == vals.size() && ind.size() == shapes.size(), kInvalidArgument, op, ": ",
           ind.size(), " indices, ", vals.size(), " values and ", shapes.size(),
           " shapes; pass one of each per sparse feature");
  *batch = -1;
  auto same_batch = [&](int64_t b, const char* kind, int i) {
    TK_CHECK(*batch < 0 || b == *batch, kInvalidArgument, op, ": ", kind, " feature ", i,
             " has batch size ", b, " but the first feature has ", *batch,
             "; cross batch-aligned features");
    *batch = b;
  };
  auto check_type = [&](tfw::DataType dt, const char* kind, int i) {
    TK_CHECK(!strings_only || dt == tfw::DT_STRING, kInvalidArgument, op, ": ", kind, " feature ",
             i, " holds ", tfw::DataTypeString(dt),
             " but internal_type is string; pass internal_type int64 to cross integers");
  };
  std::vector<fi::CrossColumn> columns;
  std::vector<int64_t> order;
  for (int i = 0; i < ind.size(); ++i) {
    const tfw::Tensor &ix = ind[i], &v = vals[i];
    TK_CHECK(ix.dims() == 2 && ix.dim_size(1) == 2, kInvalidArgument, op, ": indices ", i,
             " has shape ", ShapeText(ix), "; it must be [nnz, 2]");
    TK_CHECK(v.dims() == 1 && v.dim_size(0) == ix.dim_size(0), kInvalidArgument, op, ": values ", i,
             " has shape ", ShapeText(v), " for indices of shape ", ShapeText(ix),
             "; it must be [nnz]");
    const std::vector<int64_t> shape = ShapeVector(shapes[i], op, "shapes");
    TK_CHECK(shape.size() == 2, kInvalidArgument, op, ": shapes ", i, " has ", shape.size(),
             " dims; crosses take 2-D [B, L] sparse features");
    check_type(v.dtype(), "sparse", i);
    same_batch(shape[0], "sparse", i);
    fi::CrossColumn c;
    fi::SparseCrossRows(ix.flat<int64_t>().data(), ix.dim_size(0), shape[0], shape[1], i, op, &c,
                        &order);
    const int64_t* ord = order.empty() ? nullptr : order.data();
    if (v.dtype() == tfw::DT_STRING) {
      const auto s = v.flat<tfw::tstring>();
      fi::SetStringItems(&c, v.NumElements(), ord, o, [&s](int64_t k) { return View(s(k)); });
    } else {
      const int64_t* x = v.flat<int64_t>().data();
      fi::SetIntItems(&c, v.NumElements(), ord, o, [x](int64_t k) { return x[k]; });
    }
    columns.push_back(std::move(c));
  }
  for (int i = 0; i < dense.size(); ++i) {
    const tfw::Tensor& d = dense[i];
    TK_CHECK(d.dims() == 2, kInvalidArgument, op, ": dense input ", i, " has shape ", ShapeText(d),
             "; it must be a matrix [B, K]");
    check_type(d.dtype(), "dense", i);
    same_batch(d.dim_size(0), "dense", i);
    fi::CrossColumn c;
    c.dense = true;
    c.width = d.dim_size(1);
    if (d.dtype() == tfw::DT_STRING) {
      const auto s = d.flat<tfw::tstring>();
      fi::SetStringItems(&c, d.NumElements(), nullptr, o, [&s](int64_t k) { return View(s(k)); });
    } else {
      const int64_t* x = d.flat<int64_t>().data();
      fi::SetIntItems(&c, d.NumElements(), nullptr, o, [x](int64_t k) { return x[k]; });
    }
    columns.push_back(std::move(c));
  }
  *batch = std::max<int64_t>(*batch, 0);
  return columns;
}

// Runs the cross and writes the three outputs.
void CrossOutputs(tfw::OpKernelContext* ctx, const char* op, const CrossOptions& o,
                  bool strings_only) {
  int64_t batch = 0;
  const std::vector<fi::CrossColumn> columns = CrossColumns(ctx, op, o, strings_only, &batch);
  const fi::CrossPlan plan = fi::PlanCross(columns, batch, op);
  Tensor indices = AllocateOutput(ctx, 0, {plan.total(), 2}, DType::kInt64);
  fi::CrossIndices(plan, indices.data<int64_t>());
  tfw::Tensor* values = AllocateTf(ctx, 1, {plan.total()});
  if (o.output == CrossOutput::kStrings) {
    auto out = values->flat<tfw::tstring>();
    fi::StringCrosses(columns, plan, o.separator,
                      [&out](int64_t p, std::string_view s) { out(p).assign(s.data(), s.size()); });
  } else {
    fi::HashedCrosses(columns, plan, o, values->flat<int64_t>().data());
  }
  Tensor shape = AllocateOutput(ctx, 2, {2}, DType::kInt64);
  shape.data<int64_t>()[0] = batch;
  shape.data<int64_t>()[1] = plan.max_count;
}

class SparseCrossKernel : public tfw::OpKernel {
 public:
  explicit SparseCrossKernel(tfw::OpKernelConstruction* c) : OpKernel(c) {
    int64_t key = 0;
    tfw::DataType out_type, internal_type;
    OP_REQUIRES_OK(c, c->GetAttr("num_buckets", &options_.num_buckets));
    OP_REQUIRES_OK(c, c->GetAttr("hash_key", &key));
    OP_REQUIRES_OK(c, c->GetAttr("out_type", &out_type));
    OP_REQUIRES_OK(c, c->GetAttr("internal_type", &internal_type));
    // out_type alone picks the crosses, as TensorFlow registers its kernels by out_type:
    // int64 gives hashed crosses and string gives joined strings, whatever hashed_output says
    // (tf.sparse.cross and cross_hashed always pass the two in agreement).
    options_.output = out_type == tfw::DT_INT64 ? CrossOutput::kHashed : CrossOutput::kStrings;
    options_.hash_key = static_cast<uint64_t>(key);
    strings_only_ = internal_type == tfw::DT_STRING;
  }
  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] { CrossOutputs(ctx, "TensorkitSparseCross", options_, strings_only_); });
  }

 private:
  CrossOptions options_;
  bool strings_only_ = false;
};

class SparseCrossV2Kernel : public tfw::OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseCrossV2";
      const tfw::Tensor* sep = nullptr;
      OP_REQUIRES_OK(ctx, ctx->input("sep", &sep));
      TK_CHECK(sep->dims() == 0, kInvalidArgument, op, ": sep has shape ", ShapeText(*sep),
               "; it must be a scalar string");
      CrossOptions o;
      o.output = CrossOutput::kStrings;
      o.separator = std::string(View(sep->scalar<tfw::tstring>()()));
      CrossOutputs(ctx, op, o, false);
    });
  }
};

class SparseCrossHashedKernel : public tfw::OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(tfw::OpKernelContext* ctx) override {
    RunKernel(ctx, [&] {
      const char* op = "TensorkitSparseCrossHashed";
      const tfw::Tensor *nb = nullptr, *strong = nullptr, *salt = nullptr;
      OP_REQUIRES_OK(ctx, ctx->input("num_buckets", &nb));
      OP_REQUIRES_OK(ctx, ctx->input("strong_hash", &strong));
      OP_REQUIRES_OK(ctx, ctx->input("salt", &salt));
      TK_CHECK(nb->dims() == 0 && strong->dims() == 0, kInvalidArgument, op,
               ": num_buckets and strong_hash must be scalars, got shapes ", ShapeText(*nb),
               " and ", ShapeText(*strong));
      TK_CHECK(salt->NumElements() == 2, kInvalidArgument, op, ": salt has ", salt->NumElements(),
               " elements; it must have 2 (a 128-bit key)");
      CrossOptions o;
      o.output = CrossOutput::kHashedKeyed;
      o.num_buckets = nb->scalar<int64_t>()();
      TK_CHECK(o.num_buckets >= 0, kInvalidArgument, op, ": num_buckets ", o.num_buckets,
               " is negative; pass a count >= 1, or 0 to keep the full hash");
      o.strong_hash = strong->scalar<bool>()();
      const auto s = salt->flat<int64_t>();
      o.salt = {static_cast<uint64_t>(s(0)), static_cast<uint64_t>(s(1))};
      CrossOutputs(ctx, op, o, false);
    });
  }
};

REGISTER_KERNEL_BUILDER(Name("TensorkitSparseCross").Device(tfw::DEVICE_CPU), SparseCrossKernel);
REGISTER_KERNEL_BUILDER(Name("TensorkitSparseCrossV2").Device(tfw::DEVICE_CPU),
                        SparseCrossV2Kernel);
REGISTER_KERNEL_BUILDER(Name("TensorkitSparseCrossHashed").Device(tfw::DEVICE_CPU),
                        SparseCrossHashedKernel);

}  // namespace
}  // namespace tensorkit::tf
