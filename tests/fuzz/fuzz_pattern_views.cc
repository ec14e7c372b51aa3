// libFuzzer target: the structure-aware pattern_views fuzzer of tests/fuzz/api_fuzz.h (bad inputs
// end in tensorkit::Error; a wrong result aborts).
#include <cstddef>
#include <cstdint>

#include "api_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tensorkit::fuzz::FuzzPatternViews(data, size);
  return 0;
}
