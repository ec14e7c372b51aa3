// The README's tour, compiled and run so that the README stays true.
#include <filesystem>
#include <iostream>
#include <string>

#include "tensorkit/tensorkit.h"
using namespace tensorkit;

int main() {
  // Dense: creation, zero-copy views, one engine for every computation.
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor reversed = Slice(a, 1, 2, -1, -1);  // columns 2, 1, 0: a view with a negative stride
  Tensor at = Transpose(a, 0, 1);            // [3 2], shares storage with a
  Tensor col_sums = Tensor::Zeros({1, 3}, DType::kFloat32);
  Copy(a, &col_sums);  // an output dim of 1 means "sum over this axis"
  Tensor b = Tensor::FromVector<float>({1, 0, 0, 1, 1, 1}, {3, 2});
  Tensor c = Tensor::Zeros({2, 1, 2}, DType::kFloat32);
  // Matrix product as broadcast-and-sum: a [2 3 1] * b [1 3 2] summed into c [2 1 2] (GEMM inside).
  AddProduct(1.0f, 0.0f, Unsqueeze(a, 2), Unsqueeze(b, 0), &c);
  Tensor e = Exp(a);  // value-returning forms exist for every op

  // Sparse: COO with validation, sorting, grouping, conversion, products.
  SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>({1, 0, 0, 2}, {2, 2}),
                                         Tensor::FromVector<float>({5, 7}), {2, 3});
  st.ValidateIndices();                // throws, naming the entry, if anything is wrong
  st.Reorder({0, 1});                  // parallel stable radix sort
  for (const auto& g : st.group({0}))  // zero-copy views of each row's entries
    std::cout << "row " << g.group()[0] << ": " << g.values() << "\n";
  Tensor dense = st.ToDense();
  Tensor y = Tensor::Zeros({2, 2}, DType::kFloat32);
  SparseDenseProduct(1.0f, 0.0f, st, Tensor::Zeros({3, 2}, DType::kFloat32), &y);

  // Files.
  const std::string path = std::filesystem::temp_directory_path() / "tensorkit_tour_a.npy";
  io::Write(path, a);
  io::TensorData back = io::Read(path);  // .npy, .npz, .mtx, .tns

  std::filesystem::remove(path);
  std::cout << "tour: " << c << "\n" << dense << "\n" << y << "\n";
  return 0;
}
