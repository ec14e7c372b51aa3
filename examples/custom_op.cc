// Embedding tensorkit in a host framework's custom op: the framework owns the buffers, tensorkit
// wraps them without copying and computes in place.
#include <iostream>
#include <vector>

#include "tensorkit/tensorkit.h"

using namespace tensorkit;

// The body of a custom op y = x * sigmoid(x) (SiLU), over buffers the caller owns.
void GateOp(const float* x, float* y, int64_t rows, int64_t cols) {
  // const_cast: tensorkit's handle is read-only by convention here; no write goes to x.
  Tensor in = WrapExternal(const_cast<float*>(x), {rows, cols}, {}, DType::kFloat32, Device::Cpu());
  Tensor out = WrapExternal(y, {rows, cols}, {}, DType::kFloat32, Device::Cpu());
  Sigmoid(in, &out);   // out = sigmoid(in), written straight into the host buffer
  Mul(out, in, &out);  // out = out * in, in place
}

int main() {
  std::vector<float> x = {-2, -1, 0, 1, 2, 3};
  std::vector<float> y(x.size());
  try {
    GateOp(x.data(), y.data(), 2, 3);
  } catch (const Error& e) {  // a host framework turns this into its own status
    std::cerr << "GateOp failed: " << e.what() << "\n";
    return 1;
  }
  for (float v : y) std::cout << v << " ";
  std::cout << "\n";
  return 0;
}
