// Uses the installed headers and libraries; exits 0 only when the values come back right.
#include <vector>

#include "tensorkit/tensorkit.h"

int main() {
  tensorkit::Tensor t = tensorkit::Tensor::FromVector<int>({1, 2, 3, 4, 5, 6}, {2, 3});
  std::vector<int> v = t.ToVector<int>();
  return (t.Dim(1) == 3 && v.size() == 6 && v[5] == 6) ? 0 : 1;
}
