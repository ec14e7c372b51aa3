// common/cancel.h: a request stops parallel work at its next poll point with Error(kCancelled),
// from a signal handler too, and work runs normally once the request is cleared.
#include "tensorkit/common/cancel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <string>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/libsvm.h"

namespace tensorkit {
namespace {

// Clears the request when a test ends, also when it fails, so the next test starts clean.
struct ClearAfter {
  ~ClearAfter() { ClearCancel(); }
};

ErrorCode CodeOf(const std::function<void()>& f, std::string* what = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (what) *what = e.what();
    return e.code();
  }
  return ErrorCode::kInternal;  // "did not throw"
}

TEST(CancelTest, PollThrowsOnlyWhileRequested) {
  ClearAfter clear;
  EXPECT_FALSE(CancelRequested());
  EXPECT_NO_THROW(ThrowIfCancelled());
  RequestCancel();
  EXPECT_TRUE(CancelRequested());
  std::string what;
  EXPECT_EQ(CodeOf([] { ThrowIfCancelled(); }, &what), ErrorCode::kCancelled);
  EXPECT_NE(what.find("cancelled"), std::string::npos) << what;
  EXPECT_STREQ(ErrorCodeName(ErrorCode::kCancelled), "Cancelled");
  ClearCancel();
  EXPECT_FALSE(CancelRequested());
  EXPECT_NO_THROW(ThrowIfCancelled());
}

// A request made by a chunk stops the chunks that have not started: at most the ones already
// running on the other threads finish.
TEST(CancelTest, ParallelChunksStopAtTheNextChunk) {
  ClearAfter clear;
  for (int threads : {1, 2}) {
    SetNumThreads(threads);
    std::atomic<int64_t> ran{0};
    const ErrorCode code = CodeOf([&] {
      ParallelChunks(10000, 1, [&](int64_t c, int64_t, int64_t) {
        ran++;
        if (c == 100) RequestCancel();
      });
    });
    EXPECT_EQ(code, ErrorCode::kCancelled) << threads;
    EXPECT_LT(ran.load(), 10000) << threads;
    if (threads == 1) {
      EXPECT_EQ(ran.load(), 101);
    }
    ClearCancel();
    ran = 0;
    ParallelChunks(10000, 1, [&](int64_t, int64_t, int64_t) { ran++; });
    EXPECT_EQ(ran.load(), 10000) << threads;  // normal again once cleared
  }
  SetNumThreads(2);
}

TEST(CancelTest, ParallelForTasksPoll) {
  ClearAfter clear;
  SetNumThreads(2);
  RequestCancel();
  std::atomic<int64_t> items{0};
  EXPECT_EQ(
      CodeOf([&] { ParallelFor(0, 1 << 20, 1, [&](int64_t b, int64_t e) { items += e - b; }); }),
      ErrorCode::kCancelled);
  EXPECT_EQ(items.load(), 0);
}

extern "C" void OnSignal(int) { RequestCancel(); }

TEST(CancelTest, NamingCancellationNamesOnlyCancellations) {
  ClearAfter clear;
  std::string what;
  EXPECT_EQ(CodeOf(
                [] {
                  NamingCancellation("libsvm: 'a.svm'",
                                     [] { RequestCancel(), ThrowIfCancelled(); });
                },
                &what),
            ErrorCode::kCancelled);
  EXPECT_EQ(what.rfind("libsvm: 'a.svm': cancelled", 0), 0u) << what;
  ClearCancel();
  EXPECT_EQ(
      CodeOf([] { NamingCancellation("x", [] { Throw(ErrorCode::kCorrupt, "bad"); }); }, &what),
      ErrorCode::kCorrupt);
  EXPECT_EQ(what, "bad");
  EXPECT_EQ(NamingCancellation("x", [] { return 7; }), 7);
}

// The use the flag is made for: a signal handler requests, the running read stops naming its
// file, and the same read succeeds after ClearCancel.
TEST(CancelTest, SignalHandlerStopsAReadWhichThenWorks) {
  ClearAfter clear;
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "1 1:0.5 7:2.25 30:-1\n";  // about 4 MiB: 4 chunks
  struct sigaction sa, old;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  std::raise(SIGUSR1);
  ASSERT_EQ(sigaction(SIGUSR1, &old, nullptr), 0);
  std::string what;
  EXPECT_EQ(CodeOf([&] { io::ReadLibsvmFromMemory(text.data(), text.size(), "big.svm"); }, &what),
            ErrorCode::kCancelled);
  EXPECT_NE(what.find("'big.svm': cancelled"), std::string::npos) << what;
  ClearCancel();
  const io::LibsvmData d = io::ReadLibsvmFromMemory(text.data(), text.size(), "big.svm");
  EXPECT_EQ(d.features.shape()[0], 200000);
  EXPECT_EQ(d.features.nnz(), 600000);
}

}  // namespace
}  // namespace tensorkit
