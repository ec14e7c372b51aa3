// tensorkit/io/zlib_memory.h: zlib streams that allocate through tensorkit's allocation hook
// (internal; not installed).
//
// zlib allocates its state in inflateInit2/deflateInit2 and its window in the first inflate()
// call; both fail with Z_MEM_ERROR when memory runs out. The readers and writers report that as
// ResourceExhausted (not as corrupt data), and the tests' allocation-failure hook
// (common/alloc_fault.h) can make it happen.
#ifndef TENSORKIT_IO_ZLIB_MEMORY_H_
#define TENSORKIT_IO_ZLIB_MEMORY_H_

#include <zlib.h>

#include <cstring>
#include <string>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/error.h"

namespace tensorkit::io {

inline voidpf ZlibAlloc(voidpf, uInt items, uInt size) {
  return alloc_fault::Malloc(static_cast<size_t>(items) * size);
}
inline void ZlibFree(voidpf, voidpf p) { alloc_fault::Free(p); }

// Clears *zs and points its allocator at the hooked functions; call before *Init2.
inline void PrepareZStream(z_stream* zs) {
  std::memset(zs, 0, sizeof(z_stream));
  zs->zalloc = ZlibAlloc;
  zs->zfree = ZlibFree;
  zs->opaque = nullptr;
}

// Throws Error(kResourceExhausted) when a zlib call returned Z_MEM_ERROR; `where` names the
// operation and the file.
inline void CheckZlibMemory(int rc, const std::string& where) {
  TK_CHECK(rc != Z_MEM_ERROR, kResourceExhausted, where,
           ": zlib could not allocate its working memory; free memory and retry");
}

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_ZLIB_MEMORY_H_
