// tensorkit/io/io.h: reading and writing tensor files.
//
// Glossary
//   Format      chosen from the file extension: .npy, .npz, .mtx, .tns.
//   TensorData  what a file holds: a dense Tensor or a SparseTensor (exactly one is defined).
//   atomic write  writers write "<path>.tmp.<pid>" and rename it over `path` on success, so a
//                 failure never leaves a half-written output.
#ifndef TENSORKIT_IO_IO_H_
#define TENSORKIT_IO_IO_H_

#include <string>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::io {

enum class Format { kNpy, kNpz, kMtx, kTns };

struct TensorData {
  Tensor dense;         // defined when the file holds a dense array
  SparseTensor sparse;  // used when dense is undefined
  bool is_sparse() const { return !dense.defined(); }
};

// Format from the extension of `path`; throws Error(kInvalidArgument) for an unknown one.
Format FormatFromPath(const std::string& path);
const char* FormatName(Format format);

// Reads any supported file. Errors name the file and the byte or line at fault.
TensorData Read(const std::string& path);
// Writes `data` to `path` in the format of its extension (atomically).
void Write(const std::string& path, const TensorData& data);
void Write(const std::string& path, const Tensor& dense);
void Write(const std::string& path, const SparseTensor& sparse);

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_IO_H_
