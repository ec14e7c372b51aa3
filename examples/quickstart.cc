// A first look at tensorkit: a dense tensor and a sparse tensor made from it.
#include <iostream>

#include "tensorkit/tensorkit.h"

int main() {
  using tensorkit::Tensor;
  Tensor t = Tensor::FromVector<float>({1, 0, 2, 0, 0, 3}, {2, 3});
  std::cout << t << "\n";
  return 0;
}
