// Loading cuBLAS and cuSPARSE on first use (see libraries.h).
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

#include "tensorkit/common/cuda/backend.h"
#include "tensorkit/common/cuda/libraries.h"
#include "tensorkit/common/error.h"

namespace tensorkit::common_cuda {
namespace {

#define TK_STRINGIFY_VALUE(x) TK_STRINGIFY(x)
#define TK_STRINGIFY(x) #x

// The library's handle (never closed: its functions stay in use until exit).
void* Open(const char* file, const char* op) {
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    Throw(ErrorCode::kUnsupported, op, ": cannot load ", file, " (", why ? why : "not found",
          "); install the CUDA ", CUDART_VERSION / 1000,
          " libraries or add the folder holding them to LD_LIBRARY_PATH");
  }
  return handle;
}

template <typename F>
void Find(void* handle, const char* file, const char* name, F* slot, const char* op) {
  dlerror();
  void* fn = dlsym(handle, name);
  TK_CHECK(fn != nullptr, kUnsupported, op, ": ", file, " has no function ", name,
           "; it is older than the CUDA ", CUDART_VERSION / 1000,
           " tensorkit was built with: install a matching one");
  *slot = reinterpret_cast<F>(fn);
}

// Api Load(op): opens `file` and looks up every function of `list` in it.
#define TK_FIND(name) Find(handle, file, #name, &api.name, op);
#define TK_DEFINE_LOADER(Load, Api, list, file_name) \
  Api Load(const char* op) {                         \
    static constexpr const char* file = file_name;   \
    void* handle = Open(file, op);                   \
    Api api;                                         \
    list(TK_FIND) return api;                        \
  }
TK_DEFINE_LOADER(LoadCublas, CublasApi, TK_CUBLAS_FUNCTIONS,
                 "libcublas.so." TK_STRINGIFY_VALUE(CUBLAS_VER_MAJOR))
TK_DEFINE_LOADER(LoadCusparse, CusparseApi, TK_CUSPARSE_FUNCTIONS,
                 "libcusparse.so." TK_STRINGIFY_VALUE(CUSPARSE_VER_MAJOR))
#undef TK_DEFINE_LOADER
#undef TK_FIND

}  // namespace

// A static whose initialiser throws is initialised again by the next call, so a failed load is
// retried rather than remembered.
const CublasApi& CublasLibrary(const char* op) {
  static const CublasApi api = LoadCublas(op);
  return api;
}

const CusparseApi& CusparseLibrary(const char* op) {
  static const CusparseApi api = LoadCusparse(op);
  return api;
}

void LoadLibraries(const char* op) {
  CublasLibrary(op);
  CusparseLibrary(op);
}

}  // namespace tensorkit::common_cuda
