// A C interface to the sparse DLPack exchange (sparse/host_outputs.h), so that Python (ctypes)
// can hand a SparseTensor's indices and values to NumPy, PyTorch or TensorFlow and take them
// back, without copies. Every function returns 0 on success, or -1 with the Error's message in
// `error` (at most error_size bytes, NUL-terminated); none lets an exception out.
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <vector>

#include "tensorkit/sparse/host_outputs.h"
#include "tensorkit/sparse/sparse_tensor.h"

#define TENSORKIT_C_API extern "C" __attribute__((visibility("default")))

namespace {

int Fail(const char* message, char* error, int64_t error_size) {
  if (error != nullptr && error_size > 0) {
    std::strncpy(error, message, static_cast<size_t>(error_size - 1));
    error[error_size - 1] = '\0';
  }
  return -1;
}

template <typename Body>
int Guarded(char* error, int64_t error_size, const Body& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    return Fail(e.what(), error, error_size);
  } catch (...) {
    return Fail("unknown C++ exception", error, error_size);
  }
}

tensorkit::SparseTensor& Get(void* handle) {
  TK_CHECK(handle != nullptr, kInvalidArgument, "tensorkit_sparse: null SparseTensor handle");
  return *static_cast<tensorkit::SparseTensor*>(handle);
}

}  // namespace

// A SparseTensor over the two DLPack tensors (ownership taken, also on failure); order may be
// null (unknown). *handle receives it; release it with tensorkit_sparse_free.
TENSORKIT_C_API int tensorkit_sparse_from_dlpack(DLManagedTensor* indices, DLManagedTensor* values,
                                                 const int64_t* shape, int rank, const int* order,
                                                 void** handle, char* error, int64_t error_size) {
  return Guarded(error, error_size, [&] {
    TK_CHECK(handle != nullptr && rank >= 0 && (shape != nullptr || rank == 0), kInvalidArgument,
             "tensorkit_sparse_from_dlpack: null handle or shape, or a negative rank ", rank);
    std::vector<int64_t> dims(shape, shape + rank);
    std::vector<int> ord;
    if (order != nullptr) ord.assign(order, order + rank);
    *handle = new tensorkit::SparseTensor(tensorkit::FromDLPack(indices, values, dims, ord));
  });
}

// Exports the tensor: two DLManagedTensors sharing its memory (the consumer calls each
// deleter), its shape (rank numbers) and order (rank numbers, -1 when unknown).
TENSORKIT_C_API int tensorkit_sparse_to_dlpack(void* handle, DLManagedTensor** indices,
                                               DLManagedTensor** values, int64_t* shape, int* order,
                                               char* error, int64_t error_size) {
  return Guarded(error, error_size, [&] {
    tensorkit::SparseDLPack out = tensorkit::ToDLPack(Get(handle));
    for (size_t a = 0; a < out.shape.size(); ++a) {
      shape[a] = out.shape[a];
      order[a] = out.order.empty() ? -1 : out.order[a];
    }
    *indices = out.indices;
    *values = out.values;
  });
}

TENSORKIT_C_API int tensorkit_sparse_rank(void* handle) {
  return handle == nullptr ? -1 : Get(handle).rank();
}

TENSORKIT_C_API int64_t tensorkit_sparse_nnz(void* handle) {
  return handle == nullptr ? -1 : Get(handle).nnz();
}

// SparseTensor::Reorder(order) on the tensor (order: rank numbers).
TENSORKIT_C_API int tensorkit_sparse_reorder(void* handle, const int* order, char* error,
                                             int64_t error_size) {
  return Guarded(error, error_size, [&] {
    tensorkit::SparseTensor& st = Get(handle);
    st.Reorder(std::vector<int>(order, order + st.rank()));
  });
}

TENSORKIT_C_API void tensorkit_sparse_free(void* handle) {
  delete static_cast<tensorkit::SparseTensor*>(handle);
}
