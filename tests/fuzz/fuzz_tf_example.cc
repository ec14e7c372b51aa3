// libFuzzer target for the tf.Example parser: the input is one serialized record, parsed twice
// (a batch of two) by each of FuzzExampleSpecs, and as a tf.SequenceExample by
// FuzzSequenceExampleSpec; it must parse or throw tensorkit::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/io/tf_example.h"
#include "tf_example_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorkit;
  static const std::vector<io::ExampleSpec> specs = fuzz::FuzzExampleSpecs();
  const std::string_view record(reinterpret_cast<const char*>(data), size);
  for (const io::ExampleSpec& spec : specs) {
    try {
      io::ParsedExamples p = io::ParseExamples({record, record}, spec);
      (void)p;
    } catch (const Error&) {
    }
  }
  static const io::SequenceExampleSpec sequence = fuzz::FuzzSequenceExampleSpec();
  try {
    io::ParsedSequenceExamples p = io::ParseSequenceExamples({record, record}, sequence);
    (void)p;
  } catch (const Error&) {
  }
  return 0;
}
