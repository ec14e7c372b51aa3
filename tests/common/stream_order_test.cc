// The stream bookkeeping of device buffers (common/stream_order.h) against a fake runtime that
// logs what the real one would enqueue: which streams a buffer waits for, and in which order the
// waits and the free happen.
#include "tensorkit/common/stream_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tensorkit/common/error.h"

namespace tensorkit::stream_order {
namespace {

using ::testing::ElementsAre;

StreamId S(uintptr_t id) { return reinterpret_cast<StreamId>(id); }
const StreamId kHome = S(0x10);
const StreamId kGuarded = S(0x20);
const StreamId kOther = S(0x30);
const StreamId kPerThread = S(0x2);  // stands for cudaStreamPerThread
void* const kPtr = reinterpret_cast<void*>(0xabc0);

std::string Name(StreamId s) { return std::to_string(reinterpret_cast<uintptr_t>(s)); }

class FakeRuntime final : public Runtime {
 public:
  void Order(int before_device, StreamId before, int after_device, StreamId after) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_orders_ > 0) {
      --fail_orders_;
      Throw(ErrorCode::kInternal, "fake: cudaEventRecord failed");
    }
    log_.push_back("wait " + std::to_string(after_device) + ":" + Name(after) + " for " +
                   std::to_string(before_device) + ":" + Name(before));
  }
  void FreeAsync(int device, void* ptr, StreamId stream) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back("free " + std::to_string(reinterpret_cast<uintptr_t>(ptr)) + " on " +
                   std::to_string(device) + ":" + Name(stream));
  }
  void SynchronizeDevice(int device) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back("host waits for device " + std::to_string(device));
  }
  bool IsPerThread(StreamId stream) const override { return stream == kPerThread; }

  std::vector<std::string> TakeLog() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(log_, {});
  }
  void FailNextOrders(int n) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_orders_ = n;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> log_;
  int fail_orders_ = 0;
};

const std::string kFree = "free " + std::to_string(reinterpret_cast<uintptr_t>(kPtr));

TEST(StreamOrderTest, ABufferUsedOnlyOnItsHomeIsFreedThereWithNoEvent) {
  FakeRuntime rt;
  StreamUses uses(0, kHome);
  for (int i = 0; i < 3; ++i) uses.Use(rt, kHome);
  EXPECT_TRUE(rt.TakeLog().empty());
  uses.Free(rt, kPtr);
  EXPECT_THAT(rt.TakeLog(), ElementsAre(kFree + " on 0:16"));
  EXPECT_TRUE(uses.Users().empty());
}

// The use-after-free of a tensor read under a StreamGuard and dropped after it: the free must
// come after the guarded stream's work, on the stream the memory was allocated on.
TEST(StreamOrderTest, AUseUnderAGuardDelaysTheFreeUntilThatStreamsWork) {
  FakeRuntime rt;
  StreamUses uses(1, kHome);
  uses.Use(rt, kGuarded);
  // The guarded stream first waits for what home enqueued (the tensor's producer).
  EXPECT_THAT(rt.TakeLog(), ElementsAre("wait 1:32 for 1:16"));
  uses.Use(rt, kGuarded);  // once per stream
  uses.Use(rt, kHome);
  EXPECT_TRUE(rt.TakeLog().empty());
  uses.Free(rt, kPtr);
  EXPECT_THAT(rt.TakeLog(), ElementsAre("wait 1:16 for 1:32", kFree + " on 1:16"));
}

TEST(StreamOrderTest, EveryUserIsWaitedForOnceInFirstUseOrder) {
  FakeRuntime rt;
  StreamUses uses(0, kHome);
  uses.Use(rt, kOther);
  uses.Use(rt, kGuarded);
  uses.Use(rt, kOther);
  uses.Use(rt, kGuarded);
  EXPECT_THAT(rt.TakeLog(), ElementsAre("wait 0:48 for 0:16", "wait 0:32 for 0:16"));
  EXPECT_THAT(uses.Users(), ElementsAre(kOther, kGuarded));
  uses.Free(rt, kPtr);
  EXPECT_THAT(rt.TakeLog(),
              ElementsAre("wait 0:16 for 0:48", "wait 0:16 for 0:32", kFree + " on 0:16"));
}

// Made in one thread, used and dropped in another: the free still happens on the maker's
// stream, after the other thread's stream.
TEST(StreamOrderTest, AHandOffBetweenThreadsOrdersTheUseAndTheFree) {
  FakeRuntime rt;
  auto uses = std::make_unique<StreamUses>(0, kHome);  // made by "thread A" on its stream
  std::thread b([&] {
    uses->Use(rt, kOther);  // thread B's stream
    uses->Free(rt, kPtr);   // B drops the last reference
  });
  b.join();
  EXPECT_THAT(rt.TakeLog(),
              ElementsAre("wait 0:48 for 0:16", "wait 0:16 for 0:48", kFree + " on 0:16"));
}

TEST(StreamOrderTest, ManyThreadsUsingOneBufferAreEachRecordedOnce) {
  FakeRuntime rt;
  StreamUses uses(0, kHome);
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::vector<StreamId> streams;
  for (int t = 0; t < kThreads; ++t) streams.push_back(S(0x100 + 0x10 * t));
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        uses.Use(rt, streams[t]);
        uses.Use(rt, kHome);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<StreamId> users = uses.Users();
  std::sort(users.begin(), users.end());
  EXPECT_EQ(users, streams);  // made in ascending order
  std::vector<std::string> expected, log = rt.TakeLog();
  for (StreamId s : streams) expected.push_back("wait 0:" + Name(s) + " for 0:16");
  std::sort(expected.begin(), expected.end());
  std::sort(log.begin(), log.end());
  EXPECT_EQ(log, expected);
  uses.Free(rt, kPtr);
  const std::vector<std::string> free_log = rt.TakeLog();
  ASSERT_EQ(free_log.size(), static_cast<size_t>(kThreads) + 1);
  EXPECT_EQ(free_log.back(), kFree + " on 0:16");  // after every wait
}

// cudaStreamPerThread means another stream in each thread, so no event can order it from the
// freeing thread: the host waits for the device instead.
TEST(StreamOrderTest, APerThreadUserMakesTheFreeWaitForTheDevice) {
  FakeRuntime rt;
  StreamUses uses(2, kHome);
  uses.Use(rt, kPerThread);
  uses.Use(rt, kOther);
  EXPECT_THAT(rt.TakeLog(), ElementsAre("wait 2:2 for 2:16", "wait 2:48 for 2:16"));
  uses.Free(rt, kPtr);
  EXPECT_THAT(rt.TakeLog(), ElementsAre("host waits for device 2", kFree + " on 2:16"));
}

TEST(StreamOrderTest, APerThreadHomeIsNeverOrderedByEvents) {
  FakeRuntime rt;
  StreamUses uses(0, kPerThread);
  uses.Use(rt, kOther);
  EXPECT_THAT(rt.TakeLog(), ElementsAre("host waits for device 0"));
  uses.Free(rt, kPtr);
  EXPECT_THAT(rt.TakeLog(), ElementsAre("host waits for device 0", kFree + " on 0:2"));
}

TEST(StreamOrderTest, AFailedFirstUseIsAnErrorAndIsTriedAgain) {
  FakeRuntime rt;
  StreamUses uses(0, kHome);
  rt.FailNextOrders(1);
  EXPECT_THROW(uses.Use(rt, kOther), Error);
  EXPECT_TRUE(uses.Users().empty());
  uses.Use(rt, kOther);
  EXPECT_THAT(uses.Users(), ElementsAre(kOther));
  EXPECT_THAT(rt.TakeLog(), ElementsAre("wait 0:48 for 0:16"));
}

// A free never throws: when the events cannot be had, the host waits for the device and the
// memory is still returned, after the work.
TEST(StreamOrderTest, AFreeWhoseEventsFailWaitsForTheDeviceInstead) {
  FakeRuntime rt;
  StreamUses uses(0, kHome);
  uses.Use(rt, kOther);
  uses.Use(rt, kGuarded);
  rt.TakeLog();
  rt.FailNextOrders(1);
  uses.Free(rt, kPtr);
  EXPECT_THAT(rt.TakeLog(), ElementsAre("host waits for device 0", kFree + " on 0:16"));
}

// Wrapped memory: before the owner's deleter, the owner's stream waits for tensorkit's users;
// nothing is freed by tensorkit.
TEST(StreamOrderTest, WrappedMemoryOrdersTheOwnersStreamBeforeItsDeleter) {
  FakeRuntime rt;
  StreamUses uses(0, kHome);
  uses.OrderHomeAfterUsers(rt);
  EXPECT_TRUE(rt.TakeLog().empty());
  uses.Use(rt, kOther);
  rt.TakeLog();
  uses.OrderHomeAfterUsers(rt);
  EXPECT_THAT(rt.TakeLog(), ElementsAre("wait 0:16 for 0:48"));
}

}  // namespace
}  // namespace tensorkit::stream_order
