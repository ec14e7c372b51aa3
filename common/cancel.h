// tensorkit/common/cancel.h: stopping a long operation at the caller's request (Ctrl-C).
//
// Glossary
//   request      RequestCancel() sets one process-wide flag; it is async-signal-safe, so a signal
//                handler (SIGINT) may call it. Every operation running at the time stops at its
//                next poll point; ClearCancel() lets new work run again.
//   poll point   ThrowIfCancelled(), called at chunk boundaries of long loops: each chunk of
//                ParallelChunks and each task of ParallelFor (common/parallel.h), so the
//                readers' line chunks (about 1 MiB) notice a request within milliseconds.
//   cancelled    the poll throws Error(kCancelled). The operation unwinds as for any other
//                error: its outputs are not committed (common/outputs.h), files it was writing
//                are not renamed into place (common/file_util.h).
#ifndef TENSORKIT_COMMON_CANCEL_H_
#define TENSORKIT_COMMON_CANCEL_H_

#include <atomic>
#include <string_view>

#include "tensorkit/common/error.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Asks every running operation to stop at its next poll point. Async-signal-safe.
void RequestCancel() noexcept;
// Withdraws the request (the caller who made it does this once the interrupted work returned).
void ClearCancel() noexcept;
// Whether a request is pending.
inline bool CancelRequested() noexcept;
// Throws Error(kCancelled) when a request is pending; a relaxed load otherwise.
inline void ThrowIfCancelled();
// Runs fn(); a cancellation inside it is rethrown with "<what>: " in front, so that the message
// names the operation (and file) that stopped.
template <typename F>
decltype(auto) NamingCancellation(std::string_view what, const F& fn);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

namespace cancel_detail {
// The flag; defined in cancel.cc so that every shared library sees the same one.
extern std::atomic<bool> g_requested;
static_assert(std::atomic<bool>::is_always_lock_free, "RequestCancel must be signal-safe");
[[noreturn]] void ThrowCancelled();
}  // namespace cancel_detail

inline bool CancelRequested() noexcept {
  return cancel_detail::g_requested.load(std::memory_order_relaxed);
}

inline void ThrowIfCancelled() {
  if (CancelRequested()) [[unlikely]]
    cancel_detail::ThrowCancelled();
}

template <typename F>
decltype(auto) NamingCancellation(std::string_view what, const F& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kCancelled) throw;
    Throw(ErrorCode::kCancelled, what, ": ", e.what());
  }
}

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_CANCEL_H_
