// Helpers shared by every test suite: checking the Errors that user mistakes must raise, and
// running a computation at several thread counts.
#ifndef TENSORKIT_TESTS_TEST_UTIL_H_
#define TENSORKIT_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"

namespace tensorkit::testing {

// Runs `call` and returns the message of the Error it throws; fails the test when none is thrown.
template <typename F>
std::string ErrorOf(F&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

// Expects `call` to throw an Error whose message contains every string in `parts`.
template <typename F>
void ExpectError(F&& call, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "no Error thrown; expected one containing '" << parts.front() << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) {
      EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
    }
  }
}

// The same, and the Error's code must be `code`.
template <typename F>
void ExpectError(F&& call, ErrorCode code, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "no Error thrown; expected one containing '" << parts.front() << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    const std::string msg = e.what();
    for (const std::string& p : parts) {
      EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
    }
  }
}

// f() at each thread count in turn, the results in that order; the thread count is restored
// afterwards (also when f throws).
template <typename F>
auto AtThreadCounts(const std::vector<int>& counts, F&& f) {
  struct Restore {
    int saved = GetNumThreads();
    ~Restore() { SetNumThreads(saved); }
  } restore;
  std::vector<decltype(f())> out;
  for (int n : counts) {
    SetNumThreads(n);
    out.push_back(f());
  }
  return out;
}

}  // namespace tensorkit::testing

#endif  // TENSORKIT_TESTS_TEST_UTIL_H_
