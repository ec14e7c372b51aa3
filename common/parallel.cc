#include "tensorkit/common/parallel.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "tensorkit/common/error.h"

// Note [oneTBB under ThreadSanitizer]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// oneTBB hands tasks between threads inside libtbb, which is not instrumented, while half of its
// task code is inlined from its headers into the file that calls it. Instrumented, that file
// makes ThreadSanitizer report races on every task object and on every result a task wrote and
// the caller then read (dozens per parallel_for). The tsan build therefore compiles this file
// alone without instrumentation and states here the ordering oneTBB guarantees: everything the
// caller did before a parallel region happens before each of its tasks, and each task happens
// before the caller returns from the region. Tasks are not ordered among themselves, so a race
// between two tasks of one region is still found.
#if defined(TENSORKIT_TSAN_ANNOTATE)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace tensorkit {
namespace {

// The two synchronisation points of one parallel region (see the Note above), made when the
// region starts and taken when it ends (also when a task throws); no-ops outside the tsan build.
class RegionSync {
 public:
#if defined(TENSORKIT_TSAN_ANNOTATE)
  RegionSync() { __tsan_release(&start_); }
  ~RegionSync() { __tsan_acquire(&done_); }
  void BeginTask() { __tsan_acquire(&start_); }
  void EndTask() { __tsan_release(&done_); }
#else
  RegionSync() = default;
  void BeginTask() {}
  void EndTask() {}
#endif
  RegionSync(const RegionSync&) = delete;
  RegionSync& operator=(const RegionSync&) = delete;

 private:
  char start_ = 0;
  char done_ = 0;
};

std::mutex g_mutex;
// Depth of parallel-region bodies running on this thread (a task may run nested regions).
thread_local int t_region_depth = 0;
std::unique_ptr<tbb::global_control> g_control;
// oneTBB's implicit arena never holds more threads than the machine has cores, whatever the
// global limit; a thread count above that (SetNumThreads(4) on 2 cores, as the race tests ask)
// runs the parallel regions in an arena of that many threads instead. Null otherwise.
std::shared_ptr<tbb::task_arena> g_arena;
// 0: not initialised yet. Atomic: read without the lock by every GetNumThreads.
std::atomic<int> g_threads{0};
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
  std::atomic_store(&g_arena, n > tbb::info::default_concurrency()
                                  ? std::make_shared<tbb::task_arena>(n)
                                  : std::shared_ptr<tbb::task_arena>());
  g_threads.store(n, std::memory_order_release);
}

void EnsureInit() {
  if (g_threads.load(std::memory_order_acquire) != 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_threads.load(std::memory_order_relaxed) != 0) return;
  int n = ParseEnvThreads();
  if (n > 0) {
    SetLocked(n);
  } else {
    g_threads.store(static_cast<int>(tbb::global_control::active_value(
                        tbb::global_control::max_allowed_parallelism)),
                    std::memory_order_release);
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
  const int n = g_threads.load(std::memory_order_acquire);
  return t_budget > 0 ? std::min(n, t_budget) : n;
}

void RunWithThreadLimit(int n, const std::function<void()>& fn) {
  TK_CHECK(n >= 1, kInvalidArgument, "RunWithThreadLimit: thread count must be >= 1, got ", n);
  EnsureInit();
  const int budget = std::min(n, GetNumThreads());
  tbb::task_arena arena(budget);
  // execute() may run fn on another thread of the arena when no slot is free.
  RegionSync sync;
  arena.execute([&] {
    sync.BeginTask();
    // Restored also when fn throws, so that a failed op leaves the caller's thread as it was.
    struct Restore {
      RegionSync& sync;
      int saved;
      ~Restore() {
        t_budget = saved;
        sync.EndTask();
      }
    } restore{sync, t_budget};
    t_budget = budget;
    fn();
  });
}

bool InParallelRegion() { return t_region_depth > 0; }

int ForeignPoolThreads() { return InParallelRegion() ? 1 : GetNumThreads(); }

namespace parallel_detail {

void Run(int64_t begin, int64_t end, int64_t grain,
         const std::function<void(int64_t, int64_t)>& fn) {
  RegionSync sync;
  auto run = [&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(begin, end, static_cast<size_t>(grain)),
                      [&](const tbb::blocked_range<int64_t>& r) {
                        sync.BeginTask();
                        struct Depth {  // restored also when fn throws
                          RegionSync& sync;
                          explicit Depth(RegionSync& s) : sync(s) { ++t_region_depth; }
                          ~Depth() {
                            --t_region_depth;
                            sync.EndTask();
                          }
                        } depth(sync);
                        ThrowIfCancelled();
                        fn(r.begin(), r.end());
                      });
  };
  // Nested regions and RunWithThreadLimit's arena stay where they are.
  std::shared_ptr<tbb::task_arena> arena;
  if (t_region_depth == 0 && t_budget == 0) arena = std::atomic_load(&g_arena);
  if (arena) {
    arena->execute(run);
  } else {
    run();
  }
}

}  // namespace parallel_detail
}  // namespace tensorkit
