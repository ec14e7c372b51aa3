// The stream bookkeeping of device buffers (see Note [stream-ordered lifetimes] in
// stream_order.h).
#include "tensorkit/common/stream_order.h"

#include <algorithm>

namespace tensorkit::stream_order {

void StreamUses::Use(Runtime& rt, StreamId stream) {
  if (stream == home_) return;  // home is fixed: no lock on the common path
  std::lock_guard<std::mutex> lock(mutex_);
  if (std::find(users_.begin(), users_.end(), stream) != users_.end()) return;
  if (rt.IsPerThread(home_)) {
    // Home means a stream of whichever thread asks, so an event on it could order the wrong
    // one: wait for the whole device instead (only buffers made under such a guard get here).
    rt.SynchronizeDevice(device_);
  } else {
    rt.Order(device_, home_, device_, stream);
  }
  users_.push_back(stream);  // after Order: a failed first use is tried again next time
  if (rt.IsPerThread(stream)) saw_per_thread_ = true;
}

void StreamUses::OrderAfterUsers(Runtime& rt) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (users_.empty() && !rt.IsPerThread(home_)) return;
  if (saw_per_thread_ || rt.IsPerThread(home_)) {
    rt.SynchronizeDevice(device_);
    return;
  }
  try {
    for (StreamId user : users_) rt.Order(device_, user, device_, home_);
  } catch (...) {
    rt.SynchronizeDevice(device_);  // ordering by events failed: the host waits instead
  }
}

void StreamUses::Free(Runtime& rt, void* ptr) noexcept {
  OrderAfterUsers(rt);
  rt.FreeAsync(device_, ptr, home_);
}

void StreamUses::OrderHomeAfterUsers(Runtime& rt) noexcept { OrderAfterUsers(rt); }

std::vector<StreamId> StreamUses::Users() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return users_;
}

}  // namespace tensorkit::stream_order
