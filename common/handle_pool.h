// Internal: the pools behind the cuBLAS and cuSPARSE handle leases (cuda/cuda_util.h). Plain
// C++ with no CUDA include, so tests/common/handle_pool_test.cc checks them on any machine.
//
// Glossary
//   HandlePool      the idle handles of one device. A lease takes one (or makes one when none is
//                   idle) and gives it back when it ends, so each thread that is inside a
//                   library call holds its own handle and no lock is held across the call;
//                   handles number at most the threads that ever used the library at once.
//                   Last in, first out, so a thread that leases again usually gets the handle
//                   it had (and the library's per-handle caches with it).
//   WorkspaceTable  one cuBLAS workspace per stream, made on a stream's first GEMM and kept: a
//                   workspace is only ever used by work on its own stream, so two streams never
//                   share one (sharing makes cuBLAS results depend on timing).
#ifndef TENSORKIT_COMMON_HANDLE_POOL_H_
#define TENSORKIT_COMMON_HANDLE_POOL_H_

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace tensorkit::handle_pool {

template <typename H>
class HandlePool {
 public:
  // An idle handle, or create() (called without the lock held; it may throw).
  template <typename Create>
  H Take(Create&& create) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        H h = idle_.back();
        idle_.pop_back();
        return h;
      }
    }
    H h = create();
    std::lock_guard<std::mutex> lock(mutex_);
    ++made_;
    idle_.reserve(made_);  // so that Give never allocates (on failure the new handle is lost)
    return h;
  }
  // Returns a handle taken from this pool.
  void Give(H h) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(h);  // within the capacity Take reserved
  }
  size_t idle() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return idle_.size();
  }
  // Handles made so far (idle or leased).
  size_t made() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return made_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<H> idle_;
  size_t made_ = 0;
};

template <typename Stream>
class WorkspaceTable {
 public:
  // The workspace of `stream`, made by alloc() on its first request (under the lock: making one
  // is a quick stream-ordered allocation). When alloc throws, the next request tries again.
  template <typename Alloc>
  void* For(Stream stream, Alloc&& alloc) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [s, w] : table_) {
      if (s == stream) return w;
    }
    table_.reserve(table_.size() + 1);  // before alloc, so that nothing made is then lost
    void* w = alloc();
    table_.emplace_back(stream, w);
    return w;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return table_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<Stream, void*>> table_;  // few streams: a list beats a map
};

}  // namespace tensorkit::handle_pool

#endif  // TENSORKIT_COMMON_HANDLE_POOL_H_
