// libFuzzer target for the TFRecord reader: any input, read as an uncompressed, GZIP or ZLIB
// file, must give its records or throw tensorkit::Error (never a crash, a hang or a huge
// allocation: compressed records are capped at 1 MiB here).
#include <cstddef>
#include <cstdint>

#include "tensorkit/common/error.h"
#include "tensorkit/io/tfrecord.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorkit;
  for (io::TFRecordCompression c : {io::TFRecordCompression::kNone, io::TFRecordCompression::kGzip,
                                    io::TFRecordCompression::kZlib}) {
    io::TFRecordOptions o;
    o.compression = c;
    o.max_record_bytes = int64_t{1} << 20;
    try {
      io::TFRecordBatch b = io::ReadTFRecordBatchFromMemory(data, size, "fuzz.tfrecord", o);
      (void)b;
    } catch (const Error&) {
    }
  }
  return 0;
}
