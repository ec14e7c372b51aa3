// A C ABI over io/arrow.h for tests/io/pyarrow_test.py (ctypes + pyarrow's _export_to_c /
// _import_from_c): arrays go from pyarrow into tensorkit and back out, and tensorkit makes
// arrays for pyarrow to read. Test-only: not installed.
#include <cstdint>
#include <cstring>
#include <string>

#include "tensorkit/common/error.h"
#include "tensorkit/io/arrow.h"

namespace {

using namespace tensorkit;

int Fail(const std::string& what, char* err, int64_t err_size) {
  if (err_size > 0) {
    const size_t n = std::min(what.size(), static_cast<size_t>(err_size - 1));
    std::memcpy(err, what.data(), n);
    err[n] = '\0';
  }
  return 1;
}

template <typename F>
int Guard(char* err, int64_t err_size, const F& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    return Fail(e.what(), err, err_size);
  }
}

}  // namespace

extern "C" {

// Imports `in` as kind 0 (Tensor), 1 (JaggedTensor), 2 (KeyedJaggedTensor) or 3 (a
// JaggedTensor's weights, exported as a tensor), with options bit 0 null_lists_as_empty and bit
// 1 null_values_as_zero_weight, and exports the result into `out`. 0, or 1 and the Error.
int tk_arrow_reexport(int kind, int options, ArrowArray* in, ArrowSchema* in_schema,
                      ArrowArray* out, ArrowSchema* out_schema, char* err, int64_t err_size) {
  return Guard(err, err_size, [&] {
    io::ArrowImportOptions o;
    o.null_lists_as_empty = options & 1;
    o.null_values_as_zero_weight = options & 2;
    switch (kind) {
      case 0:
        io::ExportArrow(io::ImportArrowTensor(in, in_schema, o), out, out_schema);
        return;
      case 1:
        io::ExportArrow(io::ImportArrowJagged(in, in_schema, o), out, out_schema);
        return;
      case 2:
        io::ExportArrow(io::ImportArrowKeyedJagged(in, in_schema, o), out, out_schema);
        return;
      default:
        io::ExportArrow(io::ImportArrowJagged(in, in_schema, o).weights(), out, out_schema);
    }
  });
}

// Makes an array for pyarrow to read: kind 0 a float64 tensor [0, 0.5, ..., (n - 1) / 2], 1 a
// JaggedTensor of int64 with row i holding i % 4 values (i, i + 1, ...), 2 a KeyedJaggedTensor
// {"a", "b"} of float32 over n rows, 3 an int32 [n, 3] tensor, 4 a string tensor.
int tk_arrow_make(int kind, int64_t n, ArrowArray* out, ArrowSchema* out_schema, char* err,
                  int64_t err_size) {
  return Guard(err, err_size, [&] {
    if (kind == 0 || kind == 3 || kind == 4) {
      Tensor t = Tensor::Empty(kind == 3 ? std::vector<int64_t>{n, 3} : std::vector<int64_t>{n},
                               kind == 0   ? DType::kFloat64
                               : kind == 3 ? DType::kInt32
                                           : DType::kString);
      for (int64_t i = 0; i < t.NumElements(); ++i) {
        if (kind == 0) t.data<double>()[i] = static_cast<double>(i) / 2;
        if (kind == 3) t.data<int32_t>()[i] = static_cast<int32_t>(i);
        if (kind == 4) t.data<std::string>()[i] = "s" + std::to_string(i);
      }
      io::ExportArrow(t, out, out_schema);
      return;
    }
    std::vector<int64_t> lengths, values;
    for (int64_t i = 0; i < n; ++i) {
      lengths.push_back(i % 4);
      for (int64_t k = 0; k < i % 4; ++k) values.push_back(i + k);
    }
    if (kind == 1) {
      io::ExportArrow(
          JaggedTensor::FromLengths(Tensor::FromVector(values), Tensor::FromVector(lengths)), out,
          out_schema);
      return;
    }
    std::vector<float> fv;
    std::vector<int64_t> kl;
    for (int f = 0; f < 2; ++f) {
      for (int64_t i = 0; i < n; ++i) {
        kl.push_back((i + f) % 3);
        for (int64_t k = 0; k < (i + f) % 3; ++k) fv.push_back(static_cast<float>(10 * f + k));
      }
    }
    io::ExportArrow(
        KeyedJaggedTensor({"a", "b"}, Tensor::FromVector(fv), Tensor::FromVector(kl, {2, n})), out,
        out_schema);
  });
}

}  // extern "C"
