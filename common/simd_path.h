// tensorkit/common/simd_path.h: which instruction set the CPU's hand-picked loops run on
// (internal; not installed).
//
// Glossary
//   SimdPath  the instruction set that the loops whose speed depends on vector width were
//             compiled for. Chosen once from cpuid, since the library is built without -march.
//             Every path gives bit-identical results (no FMA, same operation order: see
//             dense/simd_math.h). The files with hand-written SIMD (intrinsics, vector types or
//             target attributes), and what picks their copy:
//               ActiveSimdPath():
//               - dense/cpu/unary.cc: the transcendental float32/float64 unary loops;
//               - dense/transpose.cc, dense/transpose_internal.h: the engine's block transposes
//                 (GCC vector types, one copy per target);
//               - common/streaming.h, common/streaming.cc: the streaming (non-temporal) copies;
//               - sparse/products.cc: the sparse SpMM row loops (AVX2);
//               - io/text.h, io/text.cc: the text readers' line counts and line loops (AVX2 with
//                 BMI2 for both wide paths);
//               - io/crc32.h, io/crc32.cc: the zip CRC-32 (PCLMULQDQ on kAvx2, VPCLMULQDQ on
//                 kAvx512);
//               - features/embedding.cc: the EmbeddingBag row kernels (AVX2 with F16C, which
//                 CpuHasF16c() also asks for);
//               - features/fill_empty_rows.cc: FillEmptyRows' branch-free check of the entries'
//                 rows and columns (AVX2, BMI2);
//               - features/jagged_convert.cc: JaggedTensor::ToPadded's masked-vector row copies
//                 (AVX2).
//               their own choice:
//               - io/crc32c.cc: the TFRecord CRC-32C on SSE4.2's crc32 instruction
//                 (__builtin_cpu_supports, Crc32cIsHardware());
//               - features/counts.cc: the rank sort's compare loops, compiled by target_clones
//                 for x86-64-v4, x86-64-v3 and the baseline, which the loader picks.
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
