#include "tensorkit/embed/tensorflow/tf_glue.h"

#include <cstring>

#include "tensorkit/common/cpu_memory.h"
#include "tensorkit/dense/ops.h"

namespace tensorkit::tf {

std::optional<DType> BitDType(tfw::DataType dt) {
  switch (dt) {
    case tfw::DT_BOOL:
      return DType::kBool;
    case tfw::DT_INT8:
    case tfw::DT_QINT8:
      return DType::kInt8;
    case tfw::DT_UINT8:
    case tfw::DT_QUINT8:
      return DType::kUInt8;
    case tfw::DT_INT16:
    case tfw::DT_UINT16:
    case tfw::DT_QINT16:
    case tfw::DT_QUINT16:
      return DType::kInt16;
    case tfw::DT_HALF:
      return DType::kFloat16;
    case tfw::DT_BFLOAT16:
      return DType::kBFloat16;
    case tfw::DT_INT32:
    case tfw::DT_UINT32:
      return DType::kInt32;
    case tfw::DT_FLOAT:
      return DType::kFloat32;
    case tfw::DT_INT64:
    case tfw::DT_UINT64:
    case tfw::DT_COMPLEX64:
      return DType::kInt64;
    case tfw::DT_DOUBLE:
      return DType::kFloat64;
    default:
      return std::nullopt;
  }
}

std::optional<DType> SumDType(tfw::DataType dt) {
  // Quantized values carry a scale that a plain sum ignores; TensorFlow's sums refuse them too.
  if (dt == tfw::DT_BOOL || dt == tfw::DT_COMPLEX64 || tfw::DataTypeIsQuantized(dt)) {
    return std::nullopt;
  }
  return BitDType(dt);
}

Tensor Wrap(const tfw::Tensor& t, DType dt, std::optional<std::vector<int64_t>> dims) {
  std::vector<int64_t> d;
  if (dims) {
    d = *dims;
  } else {
    for (int a = 0; a < t.dims(); ++a) d.push_back(t.dim_size(a));
  }
  // const_cast: inputs are only read; tensorkit's handle has no const flavour.
  return WrapExternal(const_cast<char*>(t.tensor_data().data()), d, {}, dt, Device::Cpu());
}

// TensorFlow's allocator gives fresh pages that tensorkit touches first: the same hint that
// tensorkit's own large blocks get (plain elements only: TensorFlow constructed the others).
void AdviseFreshPages(const tfw::Tensor& t) {
  if (tfw::DataTypeCanUseMemcpy(t.dtype()) &&
      static_cast<int64_t>(t.TotalBytes()) >= cpu_memory::kLargeBlockBytes) {
    const absl::string_view data = t.tensor_data();
    cpu_memory::AdviseHugePages(const_cast<char*>(data.data()), static_cast<int64_t>(data.size()));
  }
}

tfw::Tensor* AllocateTf(tfw::OpKernelContext* ctx, int index, const std::vector<int64_t>& dims) {
  tfw::TensorShape shape;
  absl::Status s = tfw::TensorShape::BuildTensorShape(dims, &shape);
  if (!s.ok()) throw StatusError(s);
  tfw::Tensor* t = nullptr;
  s = ctx->allocate_output(index, shape, &t);
  if (!s.ok()) throw StatusError(s);
  AdviseFreshPages(*t);
  return t;
}

Tensor AllocateOutput(tfw::OpKernelContext* ctx, int index, const std::vector<int64_t>& dims,
                      DType dt) {
  return Wrap(*AllocateTf(ctx, index, dims), dt, dims);
}

std::vector<int> StdOrder(int rank) {
  std::vector<int> order(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) order[i] = i;
  return order;
}

std::vector<int64_t> IntVector(const tfw::Tensor& t, const char* op, const char* what,
                               bool allow_scalar) {
  TK_CHECK(t.dims() == 1 || (allow_scalar && t.dims() == 0), kInvalidArgument, op, ": ", what,
           " must be a vector", allow_scalar ? " or a scalar" : "", ", got shape ", ShapeText(t));
  std::vector<int64_t> v(static_cast<size_t>(t.NumElements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = t.dtype() == tfw::DT_INT32 ? t.flat<int32_t>()(i) : t.flat<int64_t>()(i);
  }
  return v;
}

void CheckSparseInputRanks(const tfw::Tensor& ind, const tfw::Tensor& vals,
                           const tfw::Tensor& dense_shape, const char* op) {
  TK_CHECK(ind.dims() == 2, kInvalidArgument, op,
           ": indices must be a matrix [nnz, rank], got shape ", ShapeText(ind));
  TK_CHECK(vals.dims() == 1, kInvalidArgument, op, ": values must be a vector [nnz], got shape ",
           ShapeText(vals));
  TK_CHECK(dense_shape.dims() == 1, kInvalidArgument, op,
           ": dense_shape must be a vector, got shape ", ShapeText(dense_shape));
}

void CheckSparseInputAgrees(const tfw::Tensor& ind, const tfw::Tensor& vals, size_t rank,
                            const char* op) {
  TK_CHECK(ind.dim_size(1) == static_cast<int64_t>(rank) && vals.dim_size(0) == ind.dim_size(0),
           kInvalidArgument, op, ": indices ", ShapeText(ind), ", values ", ShapeText(vals),
           " and dense_shape of ", rank, " dims disagree; they need [nnz, ", rank, "], [nnz]");
}

void CheckVolumeFits(const std::vector<int64_t>& dims, const char* op, const char* what,
                     const char* fix) {
  int64_t volume = 1;
  for (const int64_t d : dims) {
    TK_CHECK(!__builtin_mul_overflow(volume, d, &volume), kInvalidArgument, op, ": ", what, " ",
             ShapeString(dims), " has more elements than int64 can count", fix);
  }
}

std::vector<int64_t> ShapeVector(const tfw::Tensor& t, const char* op, const char* what) {
  const std::vector<int64_t> dims = IntVector(t, op, what);
  for (size_t a = 0; a < dims.size(); ++a) {
    TK_CHECK(dims[a] >= 0, kInvalidArgument, op, ": ", what, " ", ShapeString(dims),
             " has a negative dim at axis ", a);
  }
  CheckVolumeFits(dims, op, what);
  return dims;
}

Tensor IndicesAsInt64(const tfw::Tensor& t, int64_t rows, int64_t cols) {
  if (t.dtype() == tfw::DT_INT64) return Wrap(t, DType::kInt64, std::vector<int64_t>{rows, cols});
  Tensor out = Tensor::Empty({rows, cols}, DType::kInt64);
  Copy(Wrap(t, DType::kInt32, std::vector<int64_t>{rows, cols}), &out);
  return out;
}

SparseTensor FoldAxes(const SparseTensor& st, const std::vector<std::vector<int>>& groups) {
  const int rank = st.rank(), folded = static_cast<int>(groups.size());
  const int64_t n = st.nnz();
  std::vector<int64_t> shape;
  for (const std::vector<int>& g : groups) {
    int64_t d = 1;
    for (int a : g) d *= st.shape()[a];
    shape.push_back(d);
  }
  // The kernels' indices are TensorFlow buffers or their int64 copies: always contiguous.
  TK_CHECK(st.indices().IsContiguous(), kInternal, "FoldAxes: strided indices");
  const int64_t* rows = st.indices().data<int64_t>();
  Tensor out = Tensor::Empty({n, folded}, DType::kInt64);
  int64_t* dst = out.data<int64_t>();
  ParallelFor(0, n, GrainFor(8 * (rank + folded)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      for (int g = 0; g < folded; ++g) {
        int64_t m = 0;
        for (int a : groups[g]) m = m * st.shape()[a] + rows[i * rank + a];
        dst[i * folded + g] = m;
      }
    }
  });
  return SparseTensor::Create(out, st.values(), shape);
}

Tensor Positions(int64_t n, int64_t first) {
  Tensor p = Tensor::Empty({n}, DType::kInt64);
  int64_t* d = p.data<int64_t>();
  ParallelFor(0, n, GrainFor(8), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) d[i] = first + i;
  });
  return p;
}

void GatherByPosition(const tfw::Tensor& in, const Tensor& perm, tfw::Tensor* out) {
  DispatchByPosition(in.dtype(), "GatherByPosition", [&]<typename T>() {
    const T* src = in.flat<T>().data();
    T* dst = out->flat<T>().data();
    const int64_t* p = perm.data<int64_t>();
    ParallelFor(0, perm.NumElements(), GrainFor(sizeof(T) + 8), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = src[p[i]];
    });
  });
}

std::string ShapeText(const tfw::Tensor& t) { return t.shape().DebugString(); }

}  // namespace tensorkit::tf
