#include "tensorkit/common/error.h"

namespace tensorkit {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "InvalidArgument";
    case ErrorCode::kOutOfRange:
      return "OutOfRange";
    case ErrorCode::kShapeMismatch:
      return "ShapeMismatch";
    case ErrorCode::kDTypeMismatch:
      return "DTypeMismatch";
    case ErrorCode::kDeviceMismatch:
      return "DeviceMismatch";
    case ErrorCode::kUnsupported:
      return "Unsupported";
    case ErrorCode::kIo:
      return "Io";
    case ErrorCode::kCorrupt:
      return "Corrupt";
    case ErrorCode::kResourceExhausted:
      return "ResourceExhausted";
    case ErrorCode::kCancelled:
      return "Cancelled";
    case ErrorCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(message), code_(code) {}

}  // namespace tensorkit
