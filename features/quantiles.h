// tensorkit/features/quantiles.h: approximate quantiles of a stream of numbers, mergeable across
// shards, for the boundaries of Bucketize.
//
// Glossary
//   n               the number of values a sketch has seen (NaNs are skipped and not counted).
//   rank            of a number x among the n values: lo(x) = how many are < x, hi(x) = how many
//                   are <= x.
//   level           the sketch keeps items in levels; an item at level l stands for 2^l values.
//   capacity k      the items a level holds before it is compacted (an even number >= 8).
//   compaction      a full level is sorted and every other item (odd or even positions, taken in
//                   turn per level so errors tend to cancel) moves one level up, with twice the
//                   weight. One compaction at level l moves any estimated rank by at most 2^l.
//   error bound E   RankErrorBound(): the sum of 2^l over every compaction this sketch and the
//                   sketches merged into it ever made. Exact, not probabilistic.
//
// The guarantee (deterministic): for every x, the sketch's estimate of lo(x) and of hi(x) is
// within E of the truth, and so Quantile(q) returns an item v (one of the values seen) with
//     lo(v) <= q * n + E   and   hi(v) >= q * n - E.
// Each level l is compacted at most n / (k * 2^l) times, so E <= (n / k) * H, where H, the number
// of levels that were ever compacted, is at most log2(n / k) + 1: E / n <= (log2(n / k) + 1) / k,
// e.g. 0.37% of n for n = 10^8 and the default k = 4096 (the measured errors are far smaller).
// The sketch holds at most k * (H + 1) doubles. Values are kept as double: int64 values beyond
// 2^53 are rounded. The same values added in the same sequence, and the same merges in the same
// sequence, give the same sketch, bytes and boundaries on any machine and at any thread count.
#ifndef TENSORKIT_FEATURES_QUANTILES_H_
#define TENSORKIT_FEATURES_QUANTILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensorkit/dense/tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

class QuantileSketch {
 public:
  static constexpr int kDefaultCapacity = 4096;

  // capacity: an even number in [8, 2^24], else an Error.
  explicit QuantileSketch(int capacity = kDefaultCapacity);

  // Adds every value of `values` (int32, int64, float32 or float64, any dims, on the CPU) in C
  // order; NaNs are skipped.
  void Add(const Tensor& values);
  // Adds one value (a NaN is skipped).
  void Add(double value);
  // Adds the values `other` summarised: afterwards this sketch summarises both streams, with
  // error bound the sum of both bounds plus those of the compactions the merge makes. Both must
  // have the same capacity (else an Error).
  void Merge(const QuantileSketch& other);

  int64_t count() const { return n_; }
  int capacity() const { return capacity_; }
  // E of the glossary: every estimated rank is within this many values of the truth.
  int64_t RankErrorBound() const { return error_; }
  // The item v at estimated rank q * n (see the guarantee), q in [0, 1]; an Error when the
  // sketch is empty or q is outside [0, 1] or NaN.
  double Quantile(double q) const;
  // The boundaries of num_buckets (>= 1) about equally full buckets for Bucketize: the
  // quantiles at i / num_buckets for i = 1 .. num_buckets - 1 as floats (TensorFlow's
  // boundaries are), repeats removed, so strictly increasing and possibly fewer than
  // num_buckets - 1 (a value that fills several buckets gives one boundary). Empty for an
  // empty sketch or num_buckets == 1.
  std::vector<float> Boundaries(int num_buckets) const;

  // A self-describing byte string (version 1, little-endian) from which FromBytes rebuilds the
  // same sketch, so that shards can be summarised apart and merged by another program.
  std::string ToBytes() const;
  // The sketch of ToBytes; bytes that are not one (wrong magic, version, sizes, weights that do
  // not add up to the count, a NaN, unsorted levels) are an Error(kCorrupt).
  static QuantileSketch FromBytes(const std::string& bytes);

 private:
  // Compacts every level holding at least capacity_ items, from the bottom up.
  void Compress();
  // Sorts level 0 and moves every other item of level l up.
  void CompactLevel(size_t l);

  int capacity_;
  int64_t n_ = 0;
  int64_t error_ = 0;
  // levels_[l]: the items of weight 2^l; level 0 in arrival order, the others sorted.
  std::vector<std::vector<double>> levels_;
  // Per level, which half the next compaction keeps (0: even positions, 1: odd), flipped after
  // each compaction.
  std::vector<uint8_t> parity_;
};

// The boundaries of num_buckets buckets for the values of `chunks` (each as QuantileSketch::Add
// takes): every chunk is cut into fixed pieces of 2^20 values, one sketch per piece, built in
// parallel and merged in sequence, so the result does not depend on the thread count (a chunk of
// at most 2^20 values gives the sketch QuantileSketch::Add makes of it). The guarantee is that of
// the merged sketch (quantiles.h). See QuantileSketch::Boundaries.
std::vector<float> FitQuantileBoundaries(const std::vector<Tensor>& chunks, int num_buckets,
                                         int capacity = QuantileSketch::kDefaultCapacity);

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_QUANTILES_H_
