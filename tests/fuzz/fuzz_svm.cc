// libFuzzer target for the libsvm reader: any input must read or throw tensorkit::Error, with
// and without multilabel, in every index base.
#include <cstddef>
#include <cstdint>

#include "tensorkit/io/libsvm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorkit;
  for (int mode = 0; mode < 3; ++mode) {
    io::LibsvmReadOptions o;
    o.multilabel = mode == 1;
    o.base = mode == 2 ? io::IndexBase::kOne : io::IndexBase::kAuto;
    try {
      io::LibsvmData d = io::ReadLibsvmFromMemory(data, size, "fuzz.svm", o);
      (void)d.features.IndicesValid();  // what a reader returns must be usable
    } catch (const Error&) {
    }
  }
  return 0;
}
