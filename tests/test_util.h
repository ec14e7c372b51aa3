// Helpers shared by every test suite: checking the Errors that user mistakes must raise, and
// running a computation at several thread counts.
#ifndef TENSORKIT_TESTS_TEST_UTIL_H_
#define TENSORKIT_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
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

// f.template operator()<T>() for each T of Ts, in that order: one test body over several dtypes.
template <typename... Ts, typename F>
void ForEachType(F&& f) {
  (f.template operator()<Ts>(), ...);
}

// Operand dims {a, b, c} of the AddProduct forms the GEMM recognition must handle (matrix
// product, batched, broadcast batch, matrix-vector, vector-matrix, dot, outer, a non-GEMM sum),
// for batch bt and sizes i, j (summed) and k.
inline std::vector<std::array<std::vector<int64_t>, 3>> ProductShapes(int64_t bt, int64_t i,
                                                                      int64_t j, int64_t k) {
  return {{{{i, j, 1}, {1, j, k}, {i, 1, k}}},
          {{{bt, i, j, 1}, {bt, 1, j, k}, {bt, i, 1, k}}},
          {{{1, i, j, 1}, {bt, 1, j, k}, {bt, i, 1, k}}},
          {{{i, j}, {1, j}, {i, 1}}},
          {{{j, 1}, {j, k}, {1, k}}},
          {{{j}, {j}, {1}}},
          {{{i, 1}, {1, k}, {i, k}}},
          {{{i, j, k}, {j, 1}, {1, 1, k}}}};
}

}  // namespace tensorkit::testing

#endif  // TENSORKIT_TESTS_TEST_UTIL_H_
