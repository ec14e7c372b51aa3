// The pools behind the cuBLAS and cuSPARSE leases (common/handle_pool.h), with integers for
// handles: a handle is never in two leases at once, idle ones are reused last-in first-out, and
// each stream gets one workspace of its own.
#include "tensorkit/common/handle_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tensorkit::handle_pool {
namespace {

TEST(HandlePoolTest, MakesOnlyWhenNoneIsIdleAndReusesTheLastGivenBack) {
  HandlePool<int> pool;
  int next = 1;
  auto make = [&] { return next++; };
  const int a = pool.Take(make);
  const int b = pool.Take(make);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.made(), 2u);
  pool.Give(a);
  pool.Give(b);
  EXPECT_EQ(pool.idle(), 2u);
  EXPECT_EQ(pool.Take(make), b);  // last in, first out
  EXPECT_EQ(pool.Take(make), a);
  EXPECT_EQ(pool.made(), 2u);
}

TEST(HandlePoolTest, AFailedCreationLeavesThePoolAsItWas) {
  HandlePool<int> pool;
  EXPECT_THROW(pool.Take([]() -> int { throw std::runtime_error("cublasCreate failed"); }),
               std::runtime_error);
  EXPECT_EQ(pool.made(), 0u);
  EXPECT_EQ(pool.Take([] { return 7; }), 7);
}

// Concurrent leases never share a handle, and handles number at most the threads at once.
TEST(HandlePoolTest, ConcurrentLeasesHoldDistinctHandles) {
  HandlePool<int> pool;
  std::atomic<int> next{0};
  constexpr int kThreads = 8;
  std::vector<std::atomic<int>> holders(64);
  std::atomic<bool> shared{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        const int h = pool.Take([&] { return next++; });
        if (holders[h].fetch_add(1) != 0) shared = true;
        holders[h].fetch_sub(1);
        pool.Give(h);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(shared);
  EXPECT_LE(pool.made(), static_cast<size_t>(kThreads));
  EXPECT_EQ(pool.idle(), pool.made());
}

TEST(WorkspaceTableTest, OneWorkspacePerStreamMadeOnce) {
  WorkspaceTable<int> table;
  int allocs = 0;
  char a, b;
  auto alloc_a = [&] {
    ++allocs;
    return static_cast<void*>(&a);
  };
  auto alloc_b = [&] {
    ++allocs;
    return static_cast<void*>(&b);
  };
  EXPECT_EQ(table.For(1, alloc_a), &a);
  EXPECT_EQ(table.For(2, alloc_b), &b);
  EXPECT_EQ(table.For(1, alloc_b), &a);  // stream 1 keeps its own
  EXPECT_EQ(allocs, 2);
  EXPECT_EQ(table.size(), 2u);
}

TEST(WorkspaceTableTest, AFailedAllocationIsTriedAgain) {
  WorkspaceTable<int> table;
  char w;
  EXPECT_THROW(table.For(3, []() -> void* { throw std::runtime_error("out of memory"); }),
               std::runtime_error);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.For(3, [&] { return static_cast<void*>(&w); }), &w);
}

TEST(WorkspaceTableTest, ThreadsAskingForOneStreamGetOneWorkspace) {
  WorkspaceTable<int> table;
  std::atomic<int> allocs{0};
  std::vector<char> buffers(16);
  std::vector<std::thread> threads;
  std::vector<void*> got(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back(
        [&, t] { got[t] = table.For(5, [&] { return static_cast<void*>(&buffers[allocs++]); }); });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(allocs.load(), 1);
  EXPECT_EQ(std::set<void*>(got.begin(), got.end()).size(), 1u);
}

}  // namespace
}  // namespace tensorkit::handle_pool
