// The allocation-failure harness (SQLite's method): an operation runs with its k-th allocation
// failing, for k = 1, 2, ... until it succeeds. Every failure must be an Error with
// kResourceExhausted, must leave no CPU memory behind, and must leave the operation's outputs
// as they were (or the test says that the header documents them as undefined).
#ifndef TENSORKIT_TESTS_API_ALLOC_FAILURE_UTIL_H_
#define TENSORKIT_TESTS_API_ALLOC_FAILURE_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/cpu_memory.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/tensorkit.h"

namespace tensorkit::testing {

// What the failure runs of one operation tried.
struct FailureRun {
  int64_t failure_points = 0;  // k values that failed (the op's allocations)
  int64_t successes = 0;       // 1 when the op finally succeeded
};

// The bytes of a CPU tensor in C order (for comparing outputs before and after a failure).
inline std::vector<uint8_t> BytesOf(const Tensor& t) {
  std::vector<uint8_t> out;
  if (!t.defined() || t.dtype() == DType::kString) return out;
  Tensor c = t.Clone();
  out.resize(static_cast<size_t>(c.NumElements() * DTypeSize(c.dtype())));
  if (!out.empty()) std::memcpy(out.data(), c.raw_data(), out.size());
  return out;
}

// Runs `op` once without failures (so that lazily made process-wide state exists), then with
// the k-th allocation failing for k = 1, 2, ... until it succeeds. `outputs` are tensors the op
// writes into: after each failure they must hold what they held before, unless
// `outputs_undefined_on_error` (the header says so). `after_failure(k)`, when given, checks
// more after each failure (device memory, say). Returns what was tried.
inline FailureRun ExploreAllocationFailures(
    const std::string& name, const std::function<void()>& op,
    const std::vector<Tensor*>& outputs = {}, bool outputs_undefined_on_error = false,
    const std::function<void(int64_t k)>& after_failure = {}) {
  FailureRun run;
  std::vector<std::vector<uint8_t>> before;
  for (Tensor* t : outputs) before.push_back(BytesOf(*t));
  op();  // warm-up: one-time caches and tables
  for (size_t i = 0; i < outputs.size(); ++i) {
    // The op must be repeatable for the comparison: restore what it wrote.
    if (!before[i].empty()) std::memcpy(outputs[i]->raw_data(), before[i].data(), before[i].size());
  }
  cpu_memory::ReleaseCached();
  const int64_t live = cpu_memory::LiveBytes();
  for (int64_t k = 1;; ++k) {
    if (k > 100000) {
      ADD_FAILURE() << name << ": still failing after 100000 allocations";
      return run;
    }
    alloc_fault::FailNth(k);
    bool ok = false;
    try {
      op();
      ok = true;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted)
          << name << ", allocation " << k << " failing: " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ", allocation " << k
                    << " failing: not a tensorkit::Error: " << e.what();
    }
    const int64_t counted = alloc_fault::Disarm();
    cpu_memory::ReleaseCached();
    EXPECT_EQ(cpu_memory::LiveBytes(), live)
        << name << ", allocation " << k << " failing: CPU memory left behind";
    if (ok) {
      // Success means the op made fewer than k allocations: none was refused and ignored.
      EXPECT_LT(counted, k) << name << ": succeeded although allocation " << k << " failed";
      run.successes = 1;
      return run;
    }
    ++run.failure_points;
    if (after_failure) after_failure(k);
    if (!outputs_undefined_on_error) {
      for (size_t i = 0; i < outputs.size(); ++i) {
        EXPECT_EQ(BytesOf(*outputs[i]), before[i])
            << name << ", allocation " << k << " failing: output " << i << " changed";
      }
    }
  }
}

}  // namespace tensorkit::testing

#endif  // TENSORKIT_TESTS_API_ALLOC_FAILURE_UTIL_H_
