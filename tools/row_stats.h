// tensorkit/tools/row_stats.h: per-row entry counts for `tensorkit info --rows`.
//
// Glossary
//   row           a slice at one index of axis 0 of a 2-D sparse tensor; its length is the number
//                 of entries stored there (a repeated coordinate counts each time, as nnz does).
//   length table  (length, rows) pairs in increasing length: everything the statistics need.
//                 It holds only the distinct lengths (at most sqrt(2 nnz) + 1 of them), so a
//                 [10^12, 5] matrix costs no more than a [10, 5] one.
//   quantile      NumPy's default (`method="linear"`, Hyndman and Fan's type 7) over the lengths
//                 of all rows, empty ones included: at h = q (rows - 1), x[floor h] interpolated
//                 towards x[floor h + 1], computed as np.quantile computes it.
//   histogram     the empty rows [0, 0], then up to 10 log-spaced bins [lo, hi] tiling [1, max]:
//                 with B = min(10, max) the bin k starts at round((max + 1)^(k / B)), pushed up to
//                 be past the previous start and down to leave one length for each later bin.
//   extension     a format whose rows are not axis 0 of a sparse tensor (one feature of the
//                 examples of a TFRecord file) needs only its own LengthTable producer; RowStatsOf
//                 and the printing work on any table. (A .svm file reads as a sparse matrix, one
//                 row a line, so it needs none.)
#ifndef TENSORKIT_TOOLS_ROW_STATS_H_
#define TENSORKIT_TOOLS_ROW_STATS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::tools {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

struct LengthTable {
  int64_t rows = 0;                                // every row, empty ones included
  int64_t entries = 0;                             // the sum of the lengths
  std::vector<std::pair<int64_t, int64_t>> count;  // (length, rows of that length), increasing
};

struct LengthBin {
  int64_t lo = 0, hi = 0;  // lengths lo..hi, both included
  int64_t rows = 0;
};

struct RowStats {
  int64_t rows = 0, entries = 0, empty = 0;
  // Absent when there are no rows.
  std::optional<int64_t> min, max;
  std::optional<double> mean, p50, p90, p99;
  std::vector<LengthBin> histogram;
};

// The row lengths of a 2-D sparse tensor (rows = axis 0). Throws Error(kInvalidArgument) for
// another rank, naming `file`. Costs one parallel pass over the entries and memory for one count
// a row, or, when rows far outnumber the entries, a sort of a copy of the row indices.
LengthTable RowLengths(const SparseTensor& st, const std::string& file);

// The statistics and histogram of a table (see the glossary).
RowStats RowStatsOf(const LengthTable& table);

// NumPy's linear quantile q in [0, 1] of the table's lengths; the table must have a row.
double LinearQuantile(const LengthTable& table, double q);

// One JSON object: {"rows", "entries", "empty", "min", "max", "mean", "p50", "p90", "p99",
// "histogram": [{"lo", "hi", "rows"}, ...]}, the optional ones null when absent.
std::string RowStatsJson(const RowStats& s);

// The lines `info --rows` prints: first `rows_line` (by default "rows: N (axis 0), E empty"),
// then the lengths and the histogram, each line after `indent`.
std::string RowStatsText(const RowStats& s, const std::string& rows_line = "",
                         const std::string& indent = "");

}  // namespace tensorkit::tools

#endif  // TENSORKIT_TOOLS_ROW_STATS_H_
