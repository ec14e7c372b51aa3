// The Eigen 3.4 peer for bench/peers/dense_peers.py: the memory-bound rows at [4096, 4096]
// float32, compiled -O3 by the script. Prints "name median_seconds" lines.
#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename F>
double Median(F&& f, int repeat = 7) {
  std::vector<double> t;
  f();  // warm-up
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const int n = 4096;
  Matrix a = Matrix::Ones(n, n), c = Matrix::Zero(n, n);
  Eigen::RowVectorXf row = Eigen::RowVectorXf::Constant(n, 2.0f);
  Eigen::VectorXf s(n);
  volatile float one = 1.0f;  // not a compile-time 1: the scaling must happen
  const float factor = one;
  std::printf("BM_Copy %.9f\n", Median([&] { c = a; }));
  std::printf("BM_BroadcastAdd %.9f\n", Median([&] { c = a.rowwise() + row; }));
  std::printf("BM_Scale %.9f\n", Median([&] { a *= factor; }));
  std::printf("BM_Exp %.9f\n", Median([&] { c = a.array().exp().matrix(); }));
  std::printf("BM_Transpose2D %.9f\n", Median([&] { c = a.transpose(); }));
  std::printf("BM_SumAxis0 %.9f\n", Median([&] { s = a.colwise().sum().transpose(); }));
  std::printf("BM_SumAxis1 %.9f\n", Median([&] { s = a.rowwise().sum(); }));
  return c(0, 0) == 12345.0f ? 1 : 0;  // keeps c alive
}
