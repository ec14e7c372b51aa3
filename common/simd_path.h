// tensorkit/common/simd_path.h: which instruction set the CPU's hand-picked loops run on
// (internal; not installed).
//
// Glossary
//   SimdPath  the instruction set that the loops whose speed depends on vector width were
//             compiled for: the transcendental float32/float64 unary loops (dense/cpu/unary.cc),
//             the engine's block transposes (dense/transpose_internal.h), the streaming copies
//             (common/streaming.h), the sparse SpMM row loops (sparse/products.cc), the
//             text readers' line counts and line loops (io/text.h, AVX2 for both wide paths)
//             and the zip CRC-32 (io/crc32.h: PCLMULQDQ on kAvx2, VPCLMULQDQ on kAvx512).
//             Chosen once from cpuid, since the library is built without -march. Every path gives
//             bit-identical results (no FMA, same operation order: see dense/simd_math.h).
#ifndef TENSORKIT_COMMON_SIMD_PATH_H_
#define TENSORKIT_COMMON_SIMD_PATH_H_

namespace tensorkit {

// kAvx2 includes BMI1, BMI2 and POPCNT (which every AVX2 CPU has); kAvx512 includes kAvx2.
enum class SimdPath { kDefault, kAvx2, kAvx512 };

// Whether this CPU (and OS) can run `path`.
bool SimdPathSupported(SimdPath path);
// The widest supported path.
SimdPath BestSimdPath();
// The path in use: BestSimdPath() unless a test forced another.
SimdPath ActiveSimdPath();
// Makes later kernel choices pick `path` (which must be supported); for tests that check every
// path the machine has.
void SetSimdPathForTesting(SimdPath path);
// Whether the CPU converts float16 in hardware (F16C), from cpuid: GCC's and Clang's
// __builtin_cpu_supports do not agree on that feature's name.
bool CpuHasF16c();

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_SIMD_PATH_H_
