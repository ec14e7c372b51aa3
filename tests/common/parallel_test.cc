#include "tensorkit/common/parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tensorkit/common/error.h"

namespace tensorkit {
namespace {

TEST(ParallelTest, ParallelForCoversEveryIndexOnce) {
  std::vector<std::atomic<int>> hits(100000);
  ParallelFor(0, 100000, 100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  int calls = 0;
  ParallelFor(5, 5, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelTest, ChunksHaveFixedBoundaries) {
  for (int threads : {1, 2}) {
    SetNumThreads(threads);
    EXPECT_EQ(GetNumThreads(), threads);
    std::vector<int64_t> begin(NumChunks(1003, 100), -1), end(NumChunks(1003, 100), -1);
    ParallelChunks(1003, 100, [&](int64_t c, int64_t b, int64_t e) {
      begin[c] = b;
      end[c] = e;
    });
    ASSERT_EQ(begin.size(), 11u);
    for (size_t c = 0; c < begin.size(); ++c) {
      EXPECT_EQ(begin[c], static_cast<int64_t>(c) * 100);
      EXPECT_EQ(end[c], std::min<int64_t>(1003, (c + 1) * 100));
    }
  }
  SetNumThreads(2);
}

TEST(ParallelTest, BadThreadCountIsAnError) {
  EXPECT_THROW(SetNumThreads(0), Error);
  EXPECT_THROW(SetNumThreads(-4), Error);
}

TEST(ParallelTest, ThreadLimitBoundsTheWorkInsideAndIsRestored) {
  SetNumThreads(2);
  for (int budget : {1, 2}) {
    std::mutex m;
    std::set<std::thread::id> ids;
    int inside = 0;
    RunWithThreadLimit(budget, [&] {
      inside = GetNumThreads();
      ParallelFor(0, 1 << 16, 1, [&](int64_t, int64_t) {
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // give workers a chance
      });
    });
    EXPECT_EQ(inside, budget);
    EXPECT_LE(ids.size(), static_cast<size_t>(budget));
    EXPECT_EQ(GetNumThreads(), 2);
  }
  // A budget above the global limit is the global limit; an exception restores the count.
  RunWithThreadLimit(64, [] { EXPECT_EQ(GetNumThreads(), 2); });
  EXPECT_THROW(RunWithThreadLimit(1, [] { Throw(ErrorCode::kInvalidArgument, "inner"); }), Error);
  EXPECT_EQ(GetNumThreads(), 2);
  EXPECT_THROW(RunWithThreadLimit(0, [] {}), Error);
}

// A thread count above the machine's cores is honoured (oneTBB's implicit arena alone would stop
// at the core count), and setting a smaller one afterwards limits the work again.
TEST(ParallelTest, ThreadCountsAboveTheCoreCountAreHonoured) {
  const int saved = GetNumThreads();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int threads : {cores + 2, 1}) {
    SetNumThreads(threads);
    std::mutex m;
    std::set<std::thread::id> ids;
    ParallelFor(0, 256, 1, [&](int64_t, int64_t) {
      {
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
      }
      // Long enough that every worker joins before the work runs out.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    EXPECT_EQ(ids.size(), static_cast<size_t>(threads));
  }
  SetNumThreads(saved);
}

TEST(ParallelTest, ForeignPoolsGetOneThreadInsideParallelRegions) {
  const int saved = GetNumThreads();
  SetNumThreads(3);
  EXPECT_FALSE(InParallelRegion());
  EXPECT_EQ(ForeignPoolThreads(), 3);
  std::atomic<int> inside{0}, one{0}, nested{0};
  ParallelFor(0, 64, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      inside += InParallelRegion();
      one += ForeignPoolThreads() == 1;
      ParallelFor(0, 2, 1, [&](int64_t, int64_t) { nested += InParallelRegion(); });
    }
  });
  EXPECT_EQ(inside.load(), 64);
  EXPECT_EQ(one.load(), 64);
  EXPECT_GE(nested.load(), 64);
  EXPECT_FALSE(InParallelRegion());  // restored after the region, also on this thread
  try {
    ParallelFor(0, 64, 1, [&](int64_t, int64_t) { throw Error(ErrorCode::kInternal, "x"); });
  } catch (const Error&) {
  }
  EXPECT_FALSE(InParallelRegion());  // and after a body threw
  SetNumThreads(saved);
}

TEST(ParallelTest, GrainForRespectsMinimumBytes) {
  EXPECT_EQ(GrainFor(kParallelMinBytes), 1);
  EXPECT_EQ(GrainFor(4), kParallelMinBytes / 4);
  EXPECT_EQ(GrainFor(0), kParallelMinBytes);
}

}  // namespace
}  // namespace tensorkit
