#include "tensorkit/common/cancel.h"

#include "tensorkit/common/error.h"

namespace tensorkit {

namespace cancel_detail {

std::atomic<bool> g_requested{false};

void ThrowCancelled() {
  Throw(ErrorCode::kCancelled,
        "cancelled: the operation stopped at a cancellation request (RequestCancel, e.g. from a "
        "Ctrl-C handler) and committed none of its outputs; call ClearCancel() before running "
        "more work");
}

}  // namespace cancel_detail

void RequestCancel() noexcept { cancel_detail::g_requested.store(true, std::memory_order_relaxed); }

void ClearCancel() noexcept { cancel_detail::g_requested.store(false, std::memory_order_relaxed); }

}  // namespace tensorkit
