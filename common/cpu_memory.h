// tensorkit/common/cpu_memory.h: where CPU Storage gets its memory (internal; not installed).
//
// Glossary
//   large block   an allocation of at least kLargeBlockBytes: 2 MiB aligned and advised for
//                 transparent huge pages, as NumPy does for big arrays.
//   medium block  an allocation of at least kMediumBlockBytes and less than kLargeBlockBytes:
//                 64-byte aligned, cached like large blocks in a cache of its own.
//   block cache   freed large blocks kept mapped for the next allocation of about their size, so
//                 repeated operations with big outputs (Reorder, Concat, Coalesce, FromDense)
//                 do not pay the kernel for faulting in and zeroing fresh pages on every call.
//
// Note [large block cache]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// oneTBB's scalable allocator caches large objects too, but only bounded by "never release"
// above its huge-size threshold: allocating and freeing 100, 200, ..., 1200 MB in turn kept
// 7.8 GB resident for 1.2 GB ever live, since a cached block is reused only for its own size
// class. Our cache is small and explicit instead: a request takes a cached block that is at
// least as large and at most 1/4 larger (waste bounded), the cache holds at most
// CachedBytesLimit() bytes (oldest blocks go first), and a block larger than the limit is
// never kept. Under AddressSanitizer nothing is cached, so a use after free is still found.
#ifndef TENSORKIT_COMMON_CPU_MEMORY_H_
#define TENSORKIT_COMMON_CPU_MEMORY_H_

#include <cstdint>

namespace tensorkit::cpu_memory {

inline constexpr int64_t kLargeBlockBytes = int64_t{4} << 20;
// Blocks from this size up to kLargeBlockBytes are kept too, in a second cache of more slots
// and at most MediumCachedBytesLimit() bytes: a batch of feature tensors of a few hundred KiB
// each would otherwise go back to the system and be faulted in again on every call.
inline constexpr int64_t kMediumBlockBytes = int64_t{64} << 10;

// `bytes` (> 0) of memory aligned to at least 64 bytes, or nullptr when the system refuses.
// Not zeroed.
void* Allocate(int64_t bytes);
// Returns memory from Allocate(bytes) (the same `bytes`); never throws.
void Free(void* p, int64_t bytes) noexcept;

// Advises the whole 2 MiB pages inside [p, p + bytes) for transparent huge pages (a hint: the
// first touch of a large block then faults in 2 MiB at a time instead of 4 KiB). For memory
// that another allocator gave out, such as a host framework's output buffer; Allocate does it
// for its own large blocks.
void AdviseHugePages(void* p, int64_t bytes) noexcept;

// The most bytes of freed blocks kept for reuse: 1/16 of physical memory, at most 4 GiB.
int64_t CachedBytesLimit();
// The most bytes of freed medium blocks kept: 1/8 of CachedBytesLimit(), at most 64 MiB.
int64_t MediumCachedBytesLimit();
// Bytes held by the caches now (for tests and diagnostics).
int64_t CachedBytes();
// Bytes allocated and not yet freed (cached blocks not counted): what live CPU storage holds.
int64_t LiveBytes();
// Gives every cached block back to the system.
void ReleaseCached() noexcept;

}  // namespace tensorkit::cpu_memory

#endif  // TENSORKIT_COMMON_CPU_MEMORY_H_
