// tensorkit/dense/elementwise_fns.h: the one list of elementwise functions, as X-macros (the
// model is TENSORKIT_DTYPES in common/dtype.h). Everything per function derives from it: the
// public ops of dense/ops.h (a by-pointer and a value-returning form each), the engine's
// UnaryFn / BinaryFn names, DispatchUnary / DispatchBinary (dense/functors.h) and the CUDA
// executor's ApplyUnary / ApplyBinary (dense/cuda/kernels.cuh).
//
// Glossary
//   X(Name)   one function: the public ops `Name`, the enumerator `UnaryFn::kName` (or
//             BinaryFn::kName) and the functor `engine::NameF` of dense/functors.h, whose
//             Apply says what the function does for every dtype.
//
// Unary functions, dest = f(src):
//   Exp      e^x
//   Log      natural logarithm
//   Relu     max(x, 0)
//   Sigmoid  1 / (1 + e^-x)
//   Tanh     hyperbolic tangent
//   Abs      |x|
//   Sqrt     square root
//   Neg      -x
// Binary functions, c = f(a, b):
//   Add      a + b
//   Sub      a - b
//   Mul      a * b
//   Div      a / b
//   Pow      a^b
//   Max      the larger of a and b (NaN propagates)
//   Min      the smaller of a and b (NaN propagates)
// dense/ops.h says what each does on integers and bool.
#ifndef TENSORKIT_DENSE_ELEMENTWISE_FNS_H_
#define TENSORKIT_DENSE_ELEMENTWISE_FNS_H_

#define TENSORKIT_UNARY_FNS(X) \
  X(Exp)                       \
  X(Log)                       \
  X(Relu)                      \
  X(Sigmoid)                   \
  X(Tanh)                      \
  X(Abs)                       \
  X(Sqrt)                      \
  X(Neg)

#define TENSORKIT_BINARY_FNS(X) \
  X(Add)                        \
  X(Sub)                        \
  X(Mul)                        \
  X(Div)                        \
  X(Pow)                        \
  X(Max)                        \
  X(Min)

#endif  // TENSORKIT_DENSE_ELEMENTWISE_FNS_H_
