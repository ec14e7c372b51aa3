// tensorkit/common/error.h: the one error type of the library.
//
// Glossary
//   user error      bad input from a caller: always checked, throws Error with a message that
//                   starts with the operation and shows the offending values and the fix.
//   internal check  an invariant of tensorkit itself (TK_INTERNAL_CHECK); a failure is a bug.
#ifndef TENSORKIT_COMMON_ERROR_H_
#define TENSORKIT_COMMON_ERROR_H_

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

enum class ErrorCode {
  kInvalidArgument,
  kOutOfRange,
  kShapeMismatch,
  kDTypeMismatch,
  kDeviceMismatch,
  kUnsupported,
  kIo,
  kCorrupt,
  kResourceExhausted,  // an allocation failed (host or device memory)
  kCancelled,          // stopped at a cancellation request (common/cancel.h)
  kInternal,
};

// Name of an error code, e.g. "InvalidArgument".
const char* ErrorCodeName(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// "[4 10]": how dims, strides and index tuples appear in messages.
template <typename Int>
std::string ShapeString(const std::vector<Int>& v);

// Throws Error(code, concatenation of parts) where each part is streamed.
template <typename... Parts>
[[noreturn]] void Throw(ErrorCode code, const Parts&... parts);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename Int>
std::string ShapeString(const std::vector<Int>& v) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? " " : "") << +v[i];
  os << ']';
  return os.str();
}

template <typename... Parts>
[[noreturn]] void Throw(ErrorCode code, const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(code, os.str());
}

}  // namespace tensorkit

// Checks a condition on user input; the message is only built on failure.
#define TK_CHECK(cond, code, ...)                                               \
  do {                                                                          \
    if (!(cond)) ::tensorkit::Throw(::tensorkit::ErrorCode::code, __VA_ARGS__); \
  } while (0)

// Checks an invariant of tensorkit itself; failure means a bug in the library.
#define TK_INTERNAL_CHECK(cond)                                                                \
  do {                                                                                         \
    if (!(cond))                                                                               \
      ::tensorkit::Throw(::tensorkit::ErrorCode::kInternal, "internal error: ", #cond, " at ", \
                         __FILE__, ":", __LINE__);                                             \
  } while (0)

#endif  // TENSORKIT_COMMON_ERROR_H_
