#include "tensorkit/common/dtype.h"

#include <array>
#include <sstream>
#include <utility>

namespace tensorkit {
namespace {

struct DTypeInfo {
  const char* name;
  int64_t size;
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
#define TK_INFO(e, t, n) {n, static_cast<int64_t>(sizeof(t))},
    TENSORKIT_DTYPES(TK_INFO)
#undef TK_INFO
}};

std::string NamesOf(DTypeSet set) {
  std::string s;
  for (int i = 0; i < kNumDTypes; ++i) {
    if (set & (1u << i)) s += (s.empty() ? "" : ", ") + std::string(kInfo[i].name);
  }
  return s;
}

}  // namespace

int64_t DTypeSize(DType dtype) {
  int i = static_cast<int>(dtype);
  TK_CHECK(i >= 0 && i < kNumDTypes, kInvalidArgument, "DTypeSize: invalid dtype value ", i);
  return kInfo[i].size;
}

const char* DTypeName(DType dtype) {
  int i = static_cast<int>(dtype);
  TK_CHECK(i >= 0 && i < kNumDTypes, kInvalidArgument, "DTypeName: invalid dtype value ", i);
  return kInfo[i].name;
}

DType DTypeFromName(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kInfo[i].name) return static_cast<DType>(i);
  }
  static const std::pair<const char*, DType> kAliases[] = {
      {"bool_", DType::kBool},     {"b1", DType::kBool},       {"i1", DType::kInt8},
      {"u1", DType::kUInt8},       {"i2", DType::kInt16},      {"i4", DType::kInt32},
      {"i8", DType::kInt64},       {"f2", DType::kFloat16},    {"half", DType::kFloat16},
      {"f4", DType::kFloat32},     {"float", DType::kFloat32}, {"f8", DType::kFloat64},
      {"double", DType::kFloat64}, {"int", DType::kInt32},     {"long", DType::kInt64},
      {"str", DType::kString}};
  for (const auto& [alias, d] : kAliases) {
    if (name == alias) return d;
  }
  Throw(ErrorCode::kInvalidArgument, "DTypeFromName: unknown dtype name '", name,
        "'; known names are ", NamesOf(kAllDTypes));
}

void ThrowUnsupportedDType(const char* op, DType dtype, DTypeSet allowed) {
  int i = static_cast<int>(dtype);
  if (i < 0 || i >= kNumDTypes) {
    Throw(ErrorCode::kInvalidArgument, op, ": invalid dtype value ", i);
  }
  Throw(ErrorCode::kUnsupported, op, ": dtype ", kInfo[i].name,
        " is not supported; supported dtypes are ", NamesOf(allowed));
}

}  // namespace tensorkit
