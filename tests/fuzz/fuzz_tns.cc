// libFuzzer target for the .tns reader: any input must read or throw tensorkit::Error.
#include <cstddef>
#include <cstdint>

#include "tensorkit/io/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorkit;
  try {
    io::TensorData d = io::ReadFromMemory(data, size, io::Format::kTns, "fuzz.tns");
    if (d.is_sparse()) (void)d.sparse.IndicesValid();  // what a reader returns must be usable
  } catch (const Error&) {
  }
  return 0;
}
