// libFuzzer target for the tf.Example parser: the input is one serialized record, parsed by a
// spec with a fixed and a var-len feature of each dtype; it must parse or throw tensorkit::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tensorkit/common/error.h"
#include "tensorkit/io/tf_example.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorkit;
  io::ExampleSpec spec;
  for (DType d : {DType::kInt64, DType::kFloat32, DType::kString}) {
    io::VarLenFeature v;
    v.key = std::string("v") + DTypeName(d);
    v.dtype = d;
    spec.var_len.push_back(v);
  }
  io::FixedLenFeature f;
  f.key = "label";
  f.dtype = DType::kInt64;
  f.default_value = Tensor::FromVector(std::vector<int64_t>{0}, {});
  spec.fixed.push_back(f);
  const std::string_view record(reinterpret_cast<const char*>(data), size);
  try {
    io::ParsedExamples p = io::ParseExamples({record, record}, spec);
    (void)p;
  } catch (const Error&) {
  }
  return 0;
}
