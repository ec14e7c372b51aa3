#include "tensorkit/common/parallel.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "tensorkit/common/error.h"

namespace tensorkit {
namespace {

std::mutex g_mutex;
// Depth of parallel-region bodies running on this thread (a task may run nested regions).
thread_local int t_region_depth = 0;
std::unique_ptr<tbb::global_control> g_control;
int g_threads = 0;  // 0: not initialised yet
// The budget of the RunWithThreadLimit call running on this thread (0: none). Only the calling
// thread sees it; oneTBB workers joining the arena are limited by the arena itself.
thread_local int t_budget = 0;

int ParseEnvThreads() {
  const char* s = std::getenv("TENSORKIT_NUM_THREADS");
  if (s == nullptr || *s == '\0') return 0;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end != '\0' || v < 1 || v > 4096) {
    Throw(ErrorCode::kInvalidArgument, "TENSORKIT_NUM_THREADS: '", s,
          "' is not a thread count; set it to an integer from 1 to 4096 or unset it");
  }
  return static_cast<int>(v);
}

void SetLocked(int n) {
  g_control.reset();
  g_control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                    static_cast<size_t>(n));
  g_threads = n;
}

void EnsureInit() {
  if (g_threads != 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_threads != 0) return;
  int n = ParseEnvThreads();
  if (n > 0) {
    SetLocked(n);
  } else {
    g_threads = static_cast<int>(
        tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  }
}

}  // namespace

void SetNumThreads(int n) {
  TK_CHECK(n >= 1, kInvalidArgument, "SetNumThreads: thread count must be >= 1, got ", n);
  std::lock_guard<std::mutex> lock(g_mutex);
  SetLocked(n);
}

int GetNumThreads() {
  EnsureInit();
  return t_budget > 0 ? std::min(g_threads, t_budget) : g_threads;
}

void RunWithThreadLimit(int n, const std::function<void()>& fn) {
  TK_CHECK(n >= 1, kInvalidArgument, "RunWithThreadLimit: thread count must be >= 1, got ", n);
  EnsureInit();
  const int budget = std::min(n, GetNumThreads());
  tbb::task_arena arena(budget);
  arena.execute([&] {
    // Restored also when fn throws, so that a failed op leaves the caller's thread as it was.
    struct Restore {
      int saved;
      ~Restore() { t_budget = saved; }
    } restore{t_budget};
    t_budget = budget;
    fn();
  });
}

bool InParallelRegion() { return t_region_depth > 0; }

int ForeignPoolThreads() { return InParallelRegion() ? 1 : GetNumThreads(); }

namespace parallel_detail {

void Run(int64_t begin, int64_t end, int64_t grain,
         const std::function<void(int64_t, int64_t)>& fn) {
  tbb::parallel_for(tbb::blocked_range<int64_t>(begin, end, static_cast<size_t>(grain)),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      struct Depth {  // restored also when fn throws
                        Depth() { ++t_region_depth; }
                        ~Depth() { --t_region_depth; }
                      } depth;
                      fn(r.begin(), r.end());
                    });
}

}  // namespace parallel_detail
}  // namespace tensorkit
