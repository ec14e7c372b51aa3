// tensorkit._tensorkit: the library seen from Python. The package (python/tensorkit) re-exports
// it and adds what is plain Python (the scikit-learn and SciPy drop-ins).
#include "python.h"
#include "tensorkit/common/parallel.h"

NB_MODULE(_tensorkit, m) {
  namespace nb = nanobind;
  using namespace tensorkit::python;
  m.doc() = "tensorkit's C++ library (dense and sparse tensors, files, feature ops) for Python";
  BindErrors(m);
  InitInterrupt();
  BindTensor(m);
  BindSparse(m);
  BindFeatures(m);
  BindArrow(m);
  nb::module_ io = m.def_submodule("_io", "file formats (tensorkit.io wraps these)");
  BindIo(io);
  BindTFRecord(io);
  m.def("set_num_threads", &tensorkit::SetNumThreads, nb::arg("n"),
        "Sets how many threads tensorkit's parallel work uses (TENSORKIT_NUM_THREADS otherwise).");
  m.def("get_num_threads", &tensorkit::GetNumThreads, "The thread count tensorkit uses.");
}
