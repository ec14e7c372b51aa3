// Typed inner loops of the unary functions (see ops_internal.h).
#include <cstdint>
#include <new>

#include "tensorkit/common/error.h"
#include "tensorkit/dense/ops_internal.h"
#include "tensorkit/dense/simd_math.h"

namespace tensorkit::ops_internal {
namespace {

using engine::ExpF;
using engine::LogF;
using engine::SigmoidF;
using engine::TanhF;

// The transcendental loops over float and double: the only unary loops whose speed depends on
// vector width (the others are memory-bound already with SSE), so the only ones compiled for
// several instruction sets. flatten inlines the engine's loop and the simd_math function into
// each copy, which the compiler then vectorises for that copy's target. AVX-512 brings FMA,
// which GCC would contract a*b+c into (C++ defaults to -ffp-contract=fast): fp-contract=off
// keeps every path's rounding that of the default path.
template <typename T>
inline constexpr bool kIsFloatOrDouble = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <typename T, typename F>
inline constexpr bool kHotLoop = kIsFloatOrDouble<T> &&
                                 (std::is_same_v<F, ExpF> || std::is_same_v<F, LogF> ||
                                  std::is_same_v<F, SigmoidF> ||
                                  (std::is_same_v<F, TanhF> &&
                                   std::is_same_v<T, float>));  // libm tanh

// GCC and clang spell "compile this for AVX-512 with 512-bit vectors and no contraction"
// differently (clang: contraction is switched off in simd_math.h).
#if defined(__clang__)
#define TK_AVX2_LOOP gnu::target("avx2"), gnu::flatten
#define TK_AVX512_LOOP \
  gnu::target("avx512f,avx512dq,avx512vl,avx512bw"), gnu::flatten, clang::min_vector_width(512)
#else
#define TK_AVX2_LOOP gnu::target("avx2"), gnu::optimize("fp-contract=off"), gnu::flatten
#define TK_AVX512_LOOP                                                       \
  gnu::target("avx512f,avx512dq,avx512vl,avx512bw,prefer-vector-width=512"), \
      gnu::optimize("fp-contract=off"), gnu::flatten
#endif

template <typename T, typename F, engine::Mode M>
[[TK_AVX2_LOOP]] void LoopAvx2(char* const* p, const int64_t* s, int64_t n, const void* ctx) {
  engine::UnaryLoop<T, F, M>(p, s, n, ctx);
}

template <typename T, typename F, engine::Mode M>
[[TK_AVX512_LOOP]] void LoopAvx512(char* const* p, const int64_t* s, int64_t n, const void* ctx) {
  engine::UnaryLoop<T, F, M>(p, s, n, ctx);
}

// The loop of mode M for functor F on the active instruction-set path.
template <typename T, typename F, engine::Mode M>
engine::InnerLoop PathLoop() {
  if constexpr (kHotLoop<T, F>) {
    switch (ActiveSimdPath()) {
      case SimdPath::kAvx512:
        return &LoopAvx512<T, F, M>;
      case SimdPath::kAvx2:
        return &LoopAvx2<T, F, M>;
      case SimdPath::kDefault:
        break;
    }
  }
  return &engine::UnaryLoop<T, F, M>;
}

// The loop for functor F in `mode`; kScale exists only for the identity (Scale, CopyScaled).
template <typename T, typename F>
engine::InnerLoop Pick(engine::Mode mode) {
  using engine::Mode;
  if (mode == Mode::kAssign) return PathLoop<T, F, Mode::kAssign>();
  if constexpr (std::is_same_v<F, engine::Identity>) {
    if (mode == Mode::kScale) return &engine::UnaryLoop<T, F, Mode::kScale>;
  }
  TK_INTERNAL_CHECK(mode == Mode::kAxpby);
  return PathLoop<T, F, Mode::kAxpby>();
}

}  // namespace

engine::InnerLoop UnaryKernel(UnaryFn fn, DType dtype, engine::Mode mode, const char* op) {
  return Dispatch<kComputeDTypes>(dtype, op, [&]<typename T>() -> engine::InnerLoop {
    return engine::DispatchUnary(fn, [&]<typename F>() { return Pick<T, F>(mode); });
  });
}

engine::SumRowsLoop UnarySumRowsKernel(UnaryFn fn, DType dtype) {
  if ((Bit(dtype) & kComputeDTypes) == 0) return nullptr;
  return Dispatch<kComputeDTypes>(dtype, "Sum", [&]<typename T>() -> engine::SumRowsLoop {
    // Only the identity (Sum, AddTo into a summed output): the functions with SIMD-path loops
    // keep those, and the others are rarely summed.
    if (fn == UnaryFn::kIdentity) return &engine::UnarySumRows<T, engine::Identity>;
    return nullptr;
  });
}

CoeffsBuf MakeCoeffs(DType dtype, Scalar alpha, Scalar beta, const char* op) {
  CoeffsBuf buf;
  Dispatch<kComputeDTypes>(dtype, op, [&]<typename T>() {
    using C = ComputeType<T>;
    static_assert(sizeof(engine::Coeffs<C>) <= sizeof(buf.bytes));
    engine::Coeffs<C> k{ScalarAs<C>(alpha), ScalarAs<C>(beta)};
    new (buf.bytes) engine::Coeffs<C>(k);
    buf.alpha_is_one = k.alpha == C{1};
    buf.beta_is_zero = k.beta == C{0};
    buf.beta_is_one = k.beta == C{1};
  });
  return buf;
}

}  // namespace tensorkit::ops_internal
