// TFRecord files for the tool's commands (info, validate): which paths are TFRecord files and
// how they are read when the compression is not given.
#include <cctype>

#include "tensorkit/common/file_util.h"
#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

// GZIP or ZLIB when the first bytes are gzip's magic (1f 8b) or a zlib header (deflate, check
// bits holding), else none.
io::TFRecordCompression Sniff(const std::string& path) {
  io::InputFile in(path);
  uint8_t head[2] = {0, 0};
  if (in.size() >= 2) in.ReadAt(0, head, 2);
  if (head[0] == 0x1f && head[1] == 0x8b) return io::TFRecordCompression::kGzip;
  if ((head[0] & 0x0f) == 8 && ((head[0] << 8) | head[1]) % 31 == 0) {
    return io::TFRecordCompression::kZlib;
  }
  return io::TFRecordCompression::kNone;
}

}  // namespace

bool IsTfrecordPath(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return false;
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "tfrecord" || ext == "tfrecords";
}

void WithTfrecordCompression(const std::string& path, const std::string& compression,
                             const std::function<void(const io::TFRecordOptions&)>& read) {
  io::TFRecordOptions o;
  o.compression =
      compression == "auto" ? Sniff(path) : io::TFRecordCompressionFromName(compression);
  try {
    read(o);
  } catch (const Error&) {
    // A plain file whose first length bytes look like a zlib header: read it as plain.
    if (compression != "auto" || o.compression == io::TFRecordCompression::kNone) throw;
    o.compression = io::TFRecordCompression::kNone;
    read(o);
  }
}

}  // namespace tensorkit::tools
