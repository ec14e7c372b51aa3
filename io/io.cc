#include "tensorkit/io/io.h"

#include <algorithm>
#include <cctype>

namespace tensorkit::io {

Format FormatFromPath(const std::string& path) {
  std::string ext;
  size_t dot = path.find_last_of('.');
  size_t slash = path.find_last_of('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) {
    ext = path.substr(dot + 1);
  }
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == "npy") return Format::kNpy;
  if (ext == "npz") return Format::kNpz;
  if (ext == "mtx") return Format::kMtx;
  if (ext == "tns") return Format::kTns;
  Throw(ErrorCode::kInvalidArgument, "io: cannot tell the format of '", path,
        "' from its extension; use .npy, .npz, .mtx or .tns");
}

const char* FormatName(Format format) {
  switch (format) {
    case Format::kNpy: return "npy";
    case Format::kNpz: return "npz";
    case Format::kMtx: return "mtx";
    case Format::kTns: return "tns";
  }
  return "unknown";
}

}  // namespace tensorkit::io
