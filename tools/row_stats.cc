// Row statistics of a sparse matrix for `info --rows` (see row_stats.h).
#include "tensorkit/tools/row_stats.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <limits>

#include "tensorkit/common/parallel.h"

namespace tensorkit::tools {
namespace {

// Rows beyond this many per entry are counted by sorting rather than by a count per row, so that
// a [10^12, n] matrix allocates nothing per row.
constexpr int64_t kDenseRowsPerEntry = 2;
constexpr int64_t kDenseRowsAlways = int64_t{1} << 16;
constexpr int kMaxBins = 10;

// The table of `lengths` (those of some rows; the other rows up to `rows` are empty).
LengthTable Tabulate(int64_t rows, int64_t entries, const std::vector<int64_t>& lengths) {
  LengthTable t;
  t.rows = rows;
  t.entries = entries;
  int64_t max = 0;
  for (int64_t l : lengths) max = std::max(max, l);
  // max <= entries, so this is no larger than the indices already in memory.
  std::vector<int64_t> freq(static_cast<size_t>(max) + 1, 0);
  for (int64_t l : lengths) ++freq[l];
  freq[0] += rows - static_cast<int64_t>(lengths.size());
  for (int64_t l = 0; l <= max; ++l) {
    if (freq[l] > 0) t.count.emplace_back(l, freq[l]);
  }
  return t;
}

// The k-th smallest length (0-based, k < rows).
int64_t KthLength(const LengthTable& t, int64_t k) {
  for (const auto& [length, n] : t.count) {
    if (k < n) return length;
    k -= n;
  }
  return t.count.back().first;
}

// Starts of the nonempty bins tiling [1, max], and max + 1 last (see the glossary).
std::vector<int64_t> BinStarts(int64_t max) {
  const int64_t bins = std::min<int64_t>(kMaxBins, max);
  std::vector<int64_t> start(static_cast<size_t>(bins) + 1);
  start[0] = 1;
  start[bins] = max + 1;
  for (int64_t k = 1; k < bins; ++k) {
    const double edge = std::pow(static_cast<double>(max) + 1, static_cast<double>(k) / bins);
    int64_t s = std::llround(edge);
    s = std::max(s, start[k - 1] + 1);
    s = std::min(s, max + 1 - (bins - k));  // leaves a length for every later bin
    start[k] = s;
  }
  return start;
}

std::string Number(double v) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest text that reads back
  return std::string(buf, p);
}

// `s` right-aligned in `width` columns.
std::string PadLeft(const std::string& s, size_t width) {
  return std::string(width - std::min(width, s.size()), ' ') + s;
}

template <typename T>
std::string JsonOr(const std::optional<T>& v) {
  if (!v) return "null";
  if constexpr (std::is_floating_point_v<T>) {
    return Number(*v);
  } else {
    return std::to_string(*v);
  }
}

}  // namespace

LengthTable RowLengths(const SparseTensor& st, const std::string& file) {
  TK_CHECK(st.rank() == 2, kInvalidArgument, "info --rows: '", file, "' holds a rank-", st.rank(),
           " sparse tensor of shape ", ShapeString(st.shape()),
           "; row statistics need a 2-D one (rows are axis 0)");
  const int64_t rows = st.shape()[0], nnz = st.nnz();
  if (nnz == 0) return Tabulate(rows, 0, {});
  const Tensor indices = st.indices().HostContiguous();
  const int64_t* idx = indices.data<int64_t>();
  std::atomic<int64_t> bad{std::numeric_limits<int64_t>::max()};  // first out-of-range entry
  const auto note_bad = [&](int64_t k) {
    int64_t cur = bad.load();
    while (k < cur && !bad.compare_exchange_weak(cur, k)) {
    }
  };
  std::vector<int64_t> lengths;
  if (rows <= kDenseRowsPerEntry * nnz + kDenseRowsAlways) {
    // A count a row. Integer atomics give the same counts in any order; a run of entries in one
    // row (the common, sorted case) costs one atomic add.
    lengths.assign(static_cast<size_t>(rows), 0);
    ParallelFor(0, nnz, GrainFor(16), [&](int64_t b, int64_t e) {
      int64_t run_row = -1, run = 0;
      for (int64_t k = b; k < e; ++k) {
        const int64_t r = idx[2 * k];
        if (static_cast<uint64_t>(r) >= static_cast<uint64_t>(rows)) {
          note_bad(k);
          continue;
        }
        if (r != run_row) {
          if (run > 0) std::atomic_ref<int64_t>(lengths[run_row]).fetch_add(run);
          run_row = r;
          run = 0;
        }
        ++run;
      }
      if (run > 0) std::atomic_ref<int64_t>(lengths[run_row]).fetch_add(run);
    });
  } else {
    // Far more rows than entries: the nonempty rows' lengths from the sorted row indices.
    std::vector<int64_t> r(static_cast<size_t>(nnz));
    for (int64_t k = 0; k < nnz; ++k) {
      r[k] = idx[2 * k];
      if (static_cast<uint64_t>(r[k]) >= static_cast<uint64_t>(rows)) note_bad(k);
    }
    if (!(st.OrderKnown() && st.order()[0] == 0)) std::sort(r.begin(), r.end());
    for (int64_t k = 0; k < nnz;) {
      int64_t j = k;
      while (j < nnz && r[j] == r[k]) ++j;
      lengths.push_back(j - k);
      k = j;
    }
  }
  const int64_t first_bad = bad.load();
  TK_CHECK(first_bad == std::numeric_limits<int64_t>::max(), kCorrupt, "info --rows: entry ",
           first_bad, " of '", file, "' has row ", idx[2 * first_bad], ", outside the shape ",
           ShapeString(st.shape()), "; check the file with tensorkit validate");
  return Tabulate(rows, nnz, lengths);
}

double LinearQuantile(const LengthTable& t, double q) {
  // As np.quantile(x, q) (method="linear"): virtual index (n - 1) q, then np.lib's _lerp.
  const double h = static_cast<double>(t.rows - 1) * q;
  const double lo = std::floor(h);
  const int64_t i = static_cast<int64_t>(lo);
  if (i >= t.rows - 1) return static_cast<double>(KthLength(t, t.rows - 1));
  const double gamma = h - lo;
  const int64_t a = KthLength(t, i), b = KthLength(t, i + 1);
  const double diff = static_cast<double>(b - a);
  if (gamma >= 0.5) return static_cast<double>(b) - diff * (1 - gamma);
  return static_cast<double>(a) + diff * gamma;
}

RowStats RowStatsOf(const LengthTable& t) {
  RowStats s;
  s.rows = t.rows;
  s.entries = t.entries;
  s.empty = !t.count.empty() && t.count[0].first == 0 ? t.count[0].second : 0;
  s.histogram.push_back({0, 0, s.empty});
  if (t.rows == 0) return s;
  s.min = t.count.front().first;
  s.max = t.count.back().first;
  s.mean = static_cast<double>(t.entries) / static_cast<double>(t.rows);
  s.p50 = LinearQuantile(t, 0.5);
  s.p90 = LinearQuantile(t, 0.9);
  s.p99 = LinearQuantile(t, 0.99);
  const std::vector<int64_t> start = BinStarts(*s.max);
  size_t c = 0;  // walks the table, whose lengths increase as the bins do
  for (size_t k = 0; k + 1 < start.size(); ++k) {
    LengthBin bin{start[k], start[k + 1] - 1, 0};
    for (; c < t.count.size() && t.count[c].first <= bin.hi; ++c) {
      if (t.count[c].first >= bin.lo) bin.rows += t.count[c].second;
    }
    s.histogram.push_back(bin);
  }
  return s;
}

std::string RowStatsJson(const RowStats& s) {
  std::string out = "{\"rows\": " + std::to_string(s.rows) +
                    ", \"entries\": " + std::to_string(s.entries) +
                    ", \"empty\": " + std::to_string(s.empty) + ", \"min\": " + JsonOr(s.min) +
                    ", \"max\": " + JsonOr(s.max) + ", \"mean\": " + JsonOr(s.mean) +
                    ", \"p50\": " + JsonOr(s.p50) + ", \"p90\": " + JsonOr(s.p90) +
                    ", \"p99\": " + JsonOr(s.p99) + ", \"histogram\": [";
  for (size_t k = 0; k < s.histogram.size(); ++k) {
    const LengthBin& b = s.histogram[k];
    out += (k ? ", " : "") + std::string("{\"lo\": ") + std::to_string(b.lo) +
           ", \"hi\": " + std::to_string(b.hi) + ", \"rows\": " + std::to_string(b.rows) + "}";
  }
  return out + "]}";
}

std::string RowStatsText(const RowStats& s, const std::string& rows_line,
                         const std::string& indent) {
  std::string out = indent +
                    (rows_line.empty() ? "rows:    " + std::to_string(s.rows) + " (axis 0), " +
                                             std::to_string(s.empty) + " empty"
                                       : rows_line) +
                    "\n";
  if (s.rows == 0) return out;
  out += indent + "length:  min " + std::to_string(*s.min) + ", max " + std::to_string(*s.max) +
         ", mean " + Number(*s.mean) + ", p50 " + Number(*s.p50) + ", p90 " + Number(*s.p90) +
         ", p99 " + Number(*s.p99) + "\n";
  int64_t most = 1;
  for (const LengthBin& b : s.histogram) most = std::max(most, b.rows);
  for (const LengthBin& b : s.histogram) {
    std::string range = std::to_string(b.lo);
    if (b.hi != b.lo) range.append("-").append(std::to_string(b.hi));
    // A bar of up to 40 '#', at least one for a bin that has rows.
    const int64_t bar =
        b.rows == 0 ? 0 : std::max<int64_t>(1, static_cast<int64_t>(40.0 * b.rows / most));
    out.append(indent).append("  ").append(PadLeft(range, 17)).append("  ");
    out.append(PadLeft(std::to_string(b.rows), 12)).append("  ");
    out.append(static_cast<size_t>(bar), '#').append("\n");
  }
  return out;
}

}  // namespace tensorkit::tools
