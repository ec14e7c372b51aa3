// tensorkit/common/alloc_fault.h: the allocation-failure hook of the tests (internal; not
// installed).
//
// Every allocator of tensorkit's own memory asks ShouldFail() before it asks the system: CPU
// storage (cpu_memory::Allocate, the large-block cache included), the CUDA allocator, the memory
// functions handed to SuiteSparse:GraphBLAS and zlib, and the io buffers that are not Storage. A
// test arms the hook with FailNth(k); the k-th allocation counted from then on fails as if the
// system had refused it, so that running an operation with k = 1, 2, ... until it succeeds tries
// every failure point in turn (SQLite's method). Disarmed, ShouldFail is one relaxed atomic load.
#ifndef TENSORKIT_COMMON_ALLOC_FAULT_H_
#define TENSORKIT_COMMON_ALLOC_FAULT_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>

namespace tensorkit::alloc_fault {

// Arms the hook: the k-th allocation (k >= 1) counted from now fails, and with `sticky` every
// later one too. Counting is global (all threads).
void FailNth(int64_t k, bool sticky = false);
// Disarms the hook; returns the number of allocations counted since FailNth.
int64_t Disarm();
// True when the allocation about to be made is to fail; counts it while armed.
bool ShouldFail() noexcept;

// malloc-family functions that honour the hook, for the libraries that take an allocator
// (GraphBLAS, zlib) and for io buffers.
void* Malloc(size_t bytes) noexcept;
void* Calloc(size_t count, size_t size) noexcept;
void* Realloc(void* p, size_t bytes) noexcept;
void Free(void* p) noexcept;

// For buffers in standard containers, which allocate through operator new where the hook cannot
// see: throws std::bad_alloc when the allocation about to be made is to fail. Call it just
// before the growth of a large buffer, inside ReportingAllocationFailure.
inline void MaybeFailBuffer() {
  if (ShouldFail()) throw std::bad_alloc();
}

// Runs body(), reporting a failed host allocation (std::bad_alloc, std::length_error) as
// Error(kResourceExhausted) naming `op`: the one translation of the standard library's
// allocation failures into tensorkit's Error, for operations whose work space lives in standard
// containers.
template <typename Body>
decltype(auto) ReportingAllocationFailure(const char* op, const Body& body);
[[noreturn]] void ThrowAllocationFailure(const char* op, const char* what);

template <typename Body>
decltype(auto) ReportingAllocationFailure(const char* op, const Body& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    ThrowAllocationFailure(op, "out of memory");
  } catch (const std::length_error&) {
    ThrowAllocationFailure(op, "a buffer larger than the address space");
  }
}

}  // namespace tensorkit::alloc_fault

#endif  // TENSORKIT_COMMON_ALLOC_FAULT_H_
