// tensorkit/common/dtype.h: element types and the one runtime-to-template dispatch.
//
// Glossary
//   DType        the runtime element type of a Tensor or of SparseTensor values.
//   CType        the C++ type that holds one element (Half for kFloat16, std::string for kString).
//   compute type the type arithmetic happens in: float for the 16-bit floats, else the CType.
//   DTypeSet     a bit set of DTypes that an operation accepts.
//   Dispatch     calls `f.template operator()<CType>()` for a runtime DType, or throws Error
//                (kUnsupported) naming the operation when the DType is outside the set.
//   CheckDType   the same check without a call: for an operation that accepts a set of dtypes
//                but has nothing typed to run yet.
//   BySize       dispatch by element width alone, for code that only moves elements.
#ifndef TENSORKIT_COMMON_DTYPE_H_
#define TENSORKIT_COMMON_DTYPE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "tensorkit/common/error.h"
#include "tensorkit/common/half.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The one list of dtypes: X(enumerator, C++ type, name). Everything else derives from it.
#define TENSORKIT_DTYPES(X)          \
  X(kBool, bool, "bool")             \
  X(kInt8, int8_t, "int8")           \
  X(kUInt8, uint8_t, "uint8")        \
  X(kInt16, int16_t, "int16")        \
  X(kInt32, int32_t, "int32")        \
  X(kInt64, int64_t, "int64")        \
  X(kFloat16, Half, "float16")       \
  X(kBFloat16, BFloat16, "bfloat16") \
  X(kFloat32, float, "float32")      \
  X(kFloat64, double, "float64")     \
  X(kString, std::string, "string")

enum class DType : uint8_t {
#define TK_ENUM(e, t, n) e,
  TENSORKIT_DTYPES(TK_ENUM)
#undef TK_ENUM
};
inline constexpr int kNumDTypes = 11;

using DTypeSet = uint32_t;
constexpr DTypeSet Bit(DType d) { return 1u << static_cast<int>(d); }
inline constexpr DTypeSet kAllDTypes = (1u << kNumDTypes) - 1;
inline constexpr DTypeSet kNumericDTypes = kAllDTypes & ~Bit(DType::kString);
inline constexpr DTypeSet kFloatDTypes =
    Bit(DType::kFloat16) | Bit(DType::kBFloat16) | Bit(DType::kFloat32) | Bit(DType::kFloat64);
inline constexpr DTypeSet kIntDTypes = Bit(DType::kInt8) | Bit(DType::kUInt8) | Bit(DType::kInt16) |
                                       Bit(DType::kInt32) | Bit(DType::kInt64);
// The dtypes the dense engine computes in (dense/ops.h): every numeric dtype, the 16-bit floats
// in float32.
inline constexpr DTypeSet kComputeDTypes = kNumericDTypes;

// Bytes per element (sizeof(std::string) for kString).
int64_t DTypeSize(DType dtype);
// "float32" etc.
const char* DTypeName(DType dtype);
// Inverse of DTypeName; also accepts NumPy spellings ("f4", "float", "double", "bool_").
// Throws Error(kInvalidArgument) listing the known names.
DType DTypeFromName(std::string_view name);
inline bool IsFloat(DType d) { return (kFloatDTypes & Bit(d)) != 0; }
inline bool IsInteger(DType d) { return (kIntDTypes & Bit(d)) != 0; }

// DTypeOf<T>: the DType whose CType is T.
template <typename T>
struct DTypeOfT;
template <typename T>
inline constexpr DType DTypeOf = DTypeOfT<std::remove_cv_t<T>>::value;

// CType<D>: the C++ type of dtype D.
template <DType D>
struct CTypeT;
template <DType D>
using CType = typename CTypeT<D>::type;

// ComputeType<T>: float for Half/BFloat16, T otherwise.
template <typename T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// The one dispatch: runs f.template operator()<T>() for the CType T of `dtype`.
template <DTypeSet kSet = kAllDTypes, typename F>
decltype(auto) Dispatch(DType dtype, const char* op, F&& f);
// Throws what Dispatch<kSet>(dtype, op, ...) throws for a dtype outside kSet; nothing otherwise.
template <DTypeSet kSet>
void CheckDType(DType dtype, const char* op);

// Calls f.template operator()<U>() with U the unsigned integer of `bytes` bytes (1, 2, 4 or 8),
// so that code which only moves elements is compiled once per width rather than once per dtype.
template <typename F>
void BySize(int64_t bytes, F&& f);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

#define TK_TRAITS(e, t, n)                   \
  template <>                                \
  struct DTypeOfT<t> {                       \
    static constexpr DType value = DType::e; \
  };                                         \
  template <>                                \
  struct CTypeT<DType::e> {                  \
    using type = t;                          \
  };
TENSORKIT_DTYPES(TK_TRAITS)
#undef TK_TRAITS

[[noreturn]] void ThrowUnsupportedDType(const char* op, DType dtype, DTypeSet allowed);

template <DTypeSet kSet, typename F>
decltype(auto) Dispatch(DType dtype, const char* op, F&& f) {
  switch (dtype) {
#define TK_CASE(e, t, n)                         \
  case DType::e:                                 \
    if constexpr ((kSet & Bit(DType::e)) != 0) { \
      return f.template operator()<t>();         \
    } else {                                     \
      ThrowUnsupportedDType(op, dtype, kSet);    \
    }
    TENSORKIT_DTYPES(TK_CASE)
#undef TK_CASE
  }
  ThrowUnsupportedDType(op, dtype, kSet);
}

template <DTypeSet kSet>
void CheckDType(DType dtype, const char* op) {
  // Bit() of a value outside the enum would shift past 32 bits.
  if (static_cast<int>(dtype) >= kNumDTypes || (kSet & Bit(dtype)) == 0) {
    ThrowUnsupportedDType(op, dtype, kSet);
  }
}

template <typename F>
void BySize(int64_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
  }
  TK_INTERNAL_CHECK(false);
}

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_DTYPE_H_
