// tensorkit/common/parallel.h: the one place that talks to oneTBB.
//
// Glossary
//   thread count   SetNumThreads(n) or the environment variable TENSORKIT_NUM_THREADS (read once,
//                  at first use); default: every core.
//   grain          the least work (in items) worth a task; callers pass bytes via GrainFor.
//   ParallelFor    splits [begin, end) into ranges; boundaries may depend on scheduling, so use
//                  it only for work whose result does not depend on how it is split.
//   thread budget  RunWithThreadLimit(n, fn) runs fn with at most n threads (the caller's among
//                  them), for a host framework that hands tensorkit a share of its own pool.
//   ParallelChunks fixed chunks [k*chunk, (k+1)*chunk) whose boundaries never depend on the
//                  thread count: per-chunk partial results combined in chunk order are
//                  bit-identical at any thread count.
//   parallel region the body of a ParallelFor/ParallelChunks that runs as oneTBB tasks.
//   foreign pool   a library's own thread pool (SuiteSparse:GraphBLAS's OpenMP threads). Called
//                  from a parallel region, where oneTBB already keeps every core busy, it gets one
//                  thread; elsewhere tensorkit's thread count.
//   first failure  FirstWhere / FirstFailure: the lowest item of [0, n) that fails a check, found
//                  in fixed chunks (Note [fast pass, slow pass]).
//
// Note [fast pass, slow pass]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Validation is cheap only when the common case (everything valid) costs one branch-free read:
// each fixed chunk of entries ORs a branch-free test over its entries (unsigned compares for
// bounds, a three-way compare for order), and only when some chunk fails does a serial pass
// search that chunk for the first failing entry, which the message names. FirstWhere is the
// pattern; FirstFailure is the same for passes that do other work while they read (packing
// keys, computing destinations). Chunks are fixed, so the answer never depends on threads.
#ifndef TENSORKIT_COMMON_PARALLEL_H_
#define TENSORKIT_COMMON_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "tensorkit/common/cancel.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Limits tensorkit's (and oneTBB's) worker threads to n >= 1. Throws Error for n < 1.
void SetNumThreads(int n);
// The current limit.
int GetNumThreads();
// Runs fn() so that the parallel work it starts uses at most n >= 1 threads (a oneTBB arena);
// the global limit still applies. Exceptions from fn propagate. Throws Error for n < 1.
void RunWithThreadLimit(int n, const std::function<void()>& fn);

// Work below this many bytes runs on the calling thread.
inline constexpr int64_t kParallelMinBytes = 64 * 1024;
// Items per task so that each task moves at least kParallelMinBytes.
inline int64_t GrainFor(int64_t bytes_per_item) {
  return std::max<int64_t>(1, kParallelMinBytes / std::max<int64_t>(1, bytes_per_item));
}

// Calls body(b, e) over disjoint ranges covering [begin, end), in parallel.
template <typename Body>
void ParallelFor(int64_t begin, int64_t end, int64_t grain, const Body& body);

// Calls body(chunk_index, b, e) for each fixed chunk of [0, n), in parallel. Each chunk, like each
// task of ParallelFor, is a poll point of common/cancel.h.
template <typename Body>
void ParallelChunks(int64_t n, int64_t chunk, const Body& body);

// Number of fixed chunks ParallelChunks(n, chunk, ...) makes.
inline int64_t NumChunks(int64_t n, int64_t chunk) { return n <= 0 ? 0 : (n + chunk - 1) / chunk; }

// Fixed chunk size for per-chunk passes (independent of the thread count).
inline constexpr int64_t kChunk = 1 << 16;
// The first i in [0, n) with bad(i), or -1 (Note [fast pass, slow pass]). bad should be
// branch-free; chunks of `chunk` items stop early (per block) once they or an earlier chunk have
// failed.
template <typename Bad>
int64_t FirstWhere(int64_t n, const Bad& bad, int64_t chunk = kChunk);
// The same when the fast pass is chunk_ok(b, e), which returns false when some entry of [b, e)
// fails (and may do other work as it reads them); bad(i) then finds the entry.
template <typename ChunkOk, typename Bad>
int64_t FirstFailure(int64_t n, const ChunkOk& chunk_ok, const Bad& bad);

// True while the calling thread runs the body of a parallel region.
bool InParallelRegion();
// The threads a foreign pool may use for a call made now: 1 inside a parallel region (more would
// oversubscribe the cores), else GetNumThreads().
int ForeignPoolThreads();

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

namespace parallel_detail {
// Runs fn(b, e) over [begin, end) with oneTBB; out of line so that only parallel.cc includes TBB.
void Run(int64_t begin, int64_t end, int64_t grain,
         const std::function<void(int64_t, int64_t)>& fn);
}  // namespace parallel_detail

template <typename Body>
void ParallelFor(int64_t begin, int64_t end, int64_t grain, const Body& body) {
  if (end <= begin) return;
  grain = std::max<int64_t>(grain, 1);
  if (end - begin <= grain || GetNumThreads() == 1) {
    body(begin, end);
    return;
  }
  parallel_detail::Run(begin, end, grain, [&](int64_t b, int64_t e) { body(b, e); });
}

template <typename Body>
void ParallelChunks(int64_t n, int64_t chunk, const Body& body) {
  const int64_t num = NumChunks(n, std::max<int64_t>(chunk, 1));
  chunk = std::max<int64_t>(chunk, 1);
  ParallelFor(0, num, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      ThrowIfCancelled();
      body(c, c * chunk, std::min(n, (c + 1) * chunk));
    }
  });
}

template <typename Bad>
int64_t FirstWhere(int64_t n, const Bad& bad, int64_t chunk) {
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t block = std::max<int64_t>(chunk / 64, 1);  // tests between looks at the exit
  const int64_t num_chunks = NumChunks(n, chunk);
  std::atomic<int64_t> first_bad_chunk{num_chunks};
  ParallelChunks(n, chunk, [&](int64_t c, int64_t b, int64_t e) {
    for (int64_t s = b; s < e; s += block) {
      if (first_bad_chunk.load(std::memory_order_relaxed) < c) return;  // an earlier one failed
      bool any = false;
      for (int64_t i = s; i < std::min(e, s + block); ++i) any |= bad(i);
      if (!any) continue;
      int64_t seen = first_bad_chunk.load(std::memory_order_relaxed);
      while (c < seen && !first_bad_chunk.compare_exchange_weak(seen, c)) {
      }
      return;
    }
  });
  const int64_t c = first_bad_chunk.load();
  for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
    if (bad(i)) return i;
  }
  return -1;
}

template <typename ChunkOk, typename Bad>
int64_t FirstFailure(int64_t n, const ChunkOk& chunk_ok, const Bad& bad) {
  const int64_t num_chunks = NumChunks(n, kChunk);
  std::unique_ptr<uint8_t[]> failed(new uint8_t[static_cast<size_t>(num_chunks) + 1]);
  ParallelChunks(n, kChunk,
                 [&](int64_t c, int64_t b, int64_t e) { failed[c] = chunk_ok(b, e) ? 0 : 1; });
  for (int64_t c = 0; c < num_chunks; ++c) {
    if (!failed[c]) continue;
    for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
      if (bad(i)) return i;
    }
  }
  return -1;
}

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_PARALLEL_H_
