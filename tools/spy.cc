// tensorkit spy FILE [-o OUT.png] [--size N] [--axes I,J] [--text]: a picture of where the
// entries of a sparse file are (see tools/README.md, "Pictures: spy").
//
// Glossary
//   axes     the two axes pictured: I down, J across (default 0,1); entries of other axes are
//            projected onto that plane, so an N-D tensor shows how its entries fall on it.
//   cell     a position (i, j) of the two axes. A pixel (or a character) covers a block of
//            cell_rows x cell_cols cells; its count is the number of entries stored in them
//            (repeats count).
//   PNG grid square blocks of side s = max(1, ceil(rows / N), ceil(cols / N)), so the image is
//            ceil(rows / s) x ceil(cols / s) (at least 1 x 1) pixels: at most N x N, aspect kept.
//   text grid characters are about twice as tall as wide: one covers 2t rows x t cols, with t the
//            least that fits min(N, 78) columns and half as many lines (80 with the frame).
//   shading  max = the largest count of a pixel. PNG gray = 255 (white) for an empty pixel, else
//            round(224 * (1 - log(1 + count) / log(1 + max))): so one entry is never white and
//            the fullest pixel is black. Text: ' ' when empty, else ░ ▒ ▓ █ for
//            ceil(4 * log(1 + count) / log(1 + max)) = 1, 2, 3, 4.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>

#include "tensorkit/common/fast_div.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/libsvm.h"
#include "tensorkit/tools/png.h"
#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

constexpr int64_t kMaxSize = 8192;  // 8 N^2 bytes of counts: 512 MiB at most
constexpr int64_t kTextColumns = 78;
// Counting: a part (a thread's share of the entries) has at least this many entries, and the
// private histograms of all parts at most this many bytes.
constexpr int64_t kEntriesPerPart = int64_t{1} << 16;
constexpr int64_t kPrivateHistogramBytes = int64_t{64} << 20;

struct Args {
  std::string file;
  std::string out;
  std::string size = "512";
  std::string axes = "0,1";
  bool text = false;
  bool timings = false;
};

struct Grid {
  int64_t rows = 0, cols = 0;  // the sizes of the two axes
  int64_t cell_rows = 1, cell_cols = 1;
  int64_t height = 1, width = 1;  // in pixels (characters)
};

int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }  // no overflow near 2^63

// The grid of blocks of cell_rows x cell_cols cells over rows x cols.
Grid MakeGrid(int64_t rows, int64_t cols, int64_t cell_rows, int64_t cell_cols) {
  return Grid{rows,
              cols,
              cell_rows,
              cell_cols,
              std::max<int64_t>(1, CeilDiv(rows, cell_rows)),
              std::max<int64_t>(1, CeilDiv(cols, cell_cols))};
}

Grid PngGrid(int64_t rows, int64_t cols, int64_t n) {
  const int64_t s = std::max({int64_t{1}, CeilDiv(rows, n), CeilDiv(cols, n)});
  return MakeGrid(rows, cols, s, s);
}

Grid TextGrid(int64_t rows, int64_t cols, int64_t n) {
  const int64_t columns = std::min(n, kTextColumns), lines = std::max<int64_t>(1, columns / 2);
  const int64_t t = std::max({int64_t{1}, CeilDiv(cols, columns), CeilDiv(rows, 2 * lines)});
  // 2t rows overflow int64 only for dims near 2^63 on a grid a few characters wide; a character
  // of 2^63 - 1 rows covers them all the same.
  constexpr int64_t kMaxDim = std::numeric_limits<int64_t>::max();
  return MakeGrid(rows, cols, t > kMaxDim / 2 ? kMaxDim : 2 * t, t);
}

// A whole number in [lo, hi], or nullopt.
std::optional<int64_t> ParseInt(std::string_view s, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

// The --axes pair as written (either may be negative, counting from the end).
std::pair<int64_t, int64_t> ParseAxes(const std::string& text) {
  const size_t comma = text.find(',');
  constexpr int64_t kBig = int64_t{1} << 30;
  std::optional<int64_t> i, j;
  if (comma != std::string::npos) {
    i = ParseInt(std::string_view(text).substr(0, comma), -kBig, kBig);
    j = ParseInt(std::string_view(text).substr(comma + 1), -kBig, kBig);
  }
  if (!i || !j) {
    throw UsageError("spy: --axes needs two axes I,J (whole numbers, e.g. 0,1 or 2,0), got '" +
                     text + "'");
  }
  return {*i, *j};
}

// The axis `a` of a rank-`rank` tensor, negative counting from the end; throws when outside.
int ResolveAxis(int64_t a, const std::vector<int64_t>& shape, const Args& args) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  TK_CHECK(a >= -rank && a < rank, kInvalidArgument, "spy: --axes ", args.axes, ": axis ", a,
           " is out of range for the rank-", rank, " tensor of shape ", ShapeString(shape), " in '",
           args.file, "' (axes 0..", rank - 1, ", or -", rank, "..-1 from the end)");
  return static_cast<int>(a < 0 ? a + rank : a);
}

// The number of entries in each pixel of `g`, row-major, in one parallel pass.
std::vector<uint64_t> CountPixels(const SparseTensor& st, int row_axis, int col_axis, const Grid& g,
                                  const std::string& file) {
  const int64_t pixels = g.height * g.width;
  std::vector<uint64_t> counts(static_cast<size_t>(pixels), 0);
  const int64_t nnz = st.nnz(), rank = st.rank();
  if (nnz == 0) return counts;
  const Tensor indices = st.indices().HostContiguous();
  const int64_t* idx = indices.data<int64_t>();
  const FastDivider div_rows(static_cast<uint64_t>(g.cell_rows));
  const FastDivider div_cols(static_cast<uint64_t>(g.cell_cols));
  std::atomic<int64_t> bad{std::numeric_limits<int64_t>::max()};  // the first entry outside
  // Calls add(pixel) for the entries [b, e); one outside the shape is noted instead.
  const auto count = [&](int64_t b, int64_t e, const auto& add) {
    for (int64_t k = b; k < e; ++k) {
      const uint64_t i = static_cast<uint64_t>(idx[k * rank + row_axis]);
      const uint64_t j = static_cast<uint64_t>(idx[k * rank + col_axis]);
      if (i >= static_cast<uint64_t>(g.rows) || j >= static_cast<uint64_t>(g.cols)) [[unlikely]] {
        int64_t cur = bad.load();
        while (k < cur && !bad.compare_exchange_weak(cur, k)) {
        }
        continue;
      }
      add(static_cast<int64_t>(div_rows.Divide(i)) * g.width +
          static_cast<int64_t>(div_cols.Divide(j)));
    }
  };
  // Integer sums are the same in any order and any split, so every path below gives the same
  // counts at any thread count.
  const int64_t parts = std::min<int64_t>(GetNumThreads(), NumChunks(nnz, kEntriesPerPart));
  if (parts <= 1) {
    count(0, nnz, [&](int64_t c) { ++counts[c]; });
  } else if (pixels <= nnz && parts * pixels * 8 <= kPrivateHistogramBytes) {
    // A histogram per part, summed after: no atomics and no branch per entry (about twice as
    // fast as the shared one). Only while the histograms are small next to the entries.
    std::vector<std::vector<uint64_t>> local(static_cast<size_t>(parts - 1));
    ParallelChunks(nnz, CeilDiv(nnz, parts), [&](int64_t part, int64_t b, int64_t e) {
      std::vector<uint64_t>& h = part == 0 ? counts : local[part - 1];
      if (part > 0) h.assign(static_cast<size_t>(pixels), 0);
      count(b, e, [&](int64_t c) { ++h[c]; });
    });
    ParallelFor(0, pixels, GrainFor(8 * parts), [&](int64_t b, int64_t e) {
      for (const std::vector<uint64_t>& h : local) {
        if (h.empty()) continue;  // a part past the last chunk, had the split made fewer
        for (int64_t c = b; c < e; ++c) counts[c] += h[c];
      }
    });
  } else {
    // One shared histogram with atomic adds, whose memory does not grow with the threads. A run
    // of entries in one pixel (sorted files, whose neighbours share a pixel) costs one add.
    uint64_t* hist = counts.data();
    ParallelFor(0, nnz, GrainFor(8 * rank), [&](int64_t b, int64_t e) {
      int64_t run_pixel = -1;
      uint64_t run = 0;
      count(b, e, [&](int64_t c) {
        if (c != run_pixel) {
          if (run > 0) std::atomic_ref<uint64_t>(hist[run_pixel]).fetch_add(run);
          run_pixel = c;
          run = 0;
        }
        ++run;
      });
      if (run > 0) std::atomic_ref<uint64_t>(hist[run_pixel]).fetch_add(run);
    });
  }
  const int64_t k = bad.load();
  if (k != std::numeric_limits<int64_t>::max()) {
    std::vector<int64_t> at(idx + k * rank, idx + (k + 1) * rank);
    Throw(ErrorCode::kCorrupt, "spy: entry ", k, " of '", file, "' at ", ShapeString(at),
          " is outside the shape ", ShapeString(st.shape()),
          "; check the file with tensorkit validate");
  }
  return counts;
}

// The counts of every grid in `grids` from a file that io::StreamsPositions accepts, streamed
// by io::VisitPositions: blocks of positions from several threads add into shared histograms,
// one atomic add per run of entries in one pixel; memory is the histograms, never the tensor.
// `make_grids(shape)` chooses the grids and the axes pictured (ri, ci) once the shape is known.
// Sets *shape and *nnz.
std::vector<std::vector<uint64_t>> CountStreamed(
    const std::string& file, const int& ri, const int& ci,
    const std::function<std::vector<Grid>(const std::vector<int64_t>&)>& make_grids,
    std::vector<Grid>* grids, std::vector<int64_t>* shape, int64_t* nnz) {
  std::vector<std::vector<uint64_t>> counts;
  std::atomic<int64_t> seen{0};
  std::vector<FastDivider> div_rows, div_cols;
  *shape = io::VisitPositions(
      file,
      [&](const std::vector<int64_t>& s) {
        *grids = make_grids(s);  // resolves ri and ci
        for (const Grid& g : *grids) {
          counts.emplace_back(static_cast<size_t>(g.height * g.width), 0);
          div_rows.emplace_back(static_cast<uint64_t>(g.cell_rows));
          div_cols.emplace_back(static_cast<uint64_t>(g.cell_cols));
        }
        return std::make_pair(ri, ci);
      },
      [&](const int64_t* rc, int64_t n) {  // (ri, ci) pairs
        seen += n;
        for (size_t g = 0; g < grids->size(); ++g) {
          const Grid& grid = (*grids)[g];
          uint64_t* hist = counts[g].data();
          int64_t run_pixel = -1;
          uint64_t run = 0;
          for (int64_t k = 0; k < n; ++k) {
            const int64_t c =
                static_cast<int64_t>(div_rows[g].Divide(static_cast<uint64_t>(rc[2 * k]))) *
                    grid.width +
                static_cast<int64_t>(div_cols[g].Divide(static_cast<uint64_t>(rc[2 * k + 1])));
            if (c != run_pixel) {
              if (run > 0) std::atomic_ref<uint64_t>(hist[run_pixel]).fetch_add(run);
              run_pixel = c;
              run = 0;
            }
            ++run;
          }
          if (run > 0) std::atomic_ref<uint64_t>(hist[run_pixel]).fetch_add(run);
        }
      });
  *nnz = seen.load();
  return counts;
}

uint64_t MaxCount(const std::vector<uint64_t>& counts) {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

// The gray of each pixel (see "shading"), in parallel over rows of pixels.
std::vector<uint8_t> Shade(const std::vector<uint64_t>& counts, uint64_t max, const Grid& g) {
  std::vector<uint8_t> gray(counts.size());
  const double scale = std::log1p(static_cast<double>(max));
  ParallelFor(0, g.height, GrainFor(g.width * 9), [&](int64_t b, int64_t e) {
    for (int64_t p = b * g.width; p < e * g.width; ++p) {
      const uint64_t c = counts[p];
      gray[p] = c == 0 ? 255
                       : static_cast<uint8_t>(std::lround(
                             224.0 * (1.0 - std::log1p(static_cast<double>(c)) / scale)));
    }
  });
  return gray;
}

// The framed text picture and a caption (see "text grid" and "shading").
std::string TextPicture(const std::vector<uint64_t>& counts, const Grid& g,
                        const std::vector<int64_t>& shape, int64_t nnz, int row_axis,
                        int col_axis) {
  static const char* const kShades[] = {" ", "\u2591", "\u2592", "\u2593", "\u2588"};
  const uint64_t max = MaxCount(counts);
  const double scale = std::log1p(static_cast<double>(max));
  std::string rule;
  for (int64_t x = 0; x < g.width; ++x) rule += "\u2500";
  std::string out = "\u250c" + rule + "\u2510\n";
  for (int64_t y = 0; y < g.height; ++y) {
    out += "\u2502";
    for (int64_t x = 0; x < g.width; ++x) {
      const uint64_t c = counts[y * g.width + x];
      const int level = c == 0 ? 0
                               : std::clamp(static_cast<int>(std::ceil(
                                                4.0 * std::log1p(static_cast<double>(c)) / scale)),
                                            1, 4);
      out += kShades[level];
    }
    out += "\u2502\n";
  }
  out += "\u2514" + rule + "\u2518\n";
  out += ShapeString(shape) + " axes " + std::to_string(row_axis) + "," + std::to_string(col_axis) +
         ", " + std::to_string(nnz) + " entries; a character is " + std::to_string(g.cell_rows) +
         " x " + std::to_string(g.cell_cols) + " cells; \u2588 = " + std::to_string(max) +
         " entries, shades by log(1 + count)\n";
  return out;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// What the arguments ask for, checked before the file is opened.
struct Request {
  int64_t n = 0;                   // at most n x n pixels
  int64_t axis_i = 0, axis_j = 1;  // as written (negative from the end)
  bool text = false;               // print the text picture
};

Request CheckArgs(const Args& a) {
  const std::optional<int64_t> n = ParseInt(a.size, 1, kMaxSize);
  if (!n) {
    throw UsageError("spy: --size must be a whole number of pixels from 1 to " +
                     std::to_string(kMaxSize) + ", got '" + a.size + "'");
  }
  const auto [axis_i, axis_j] = ParseAxes(a.axes);
  if (!a.out.empty()) {
    const size_t dot = a.out.rfind('.');
    std::string ext = dot == std::string::npos ? "" : a.out.substr(dot + 1);
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext != "png") throw UsageError("spy: -o names the PNG to write, got '" + a.out + "'");
  }
  const bool text = a.text || (a.out.empty() && isatty(STDOUT_FILENO));
  if (a.out.empty() && !text) {
    throw UsageError(
        "spy: standard output is not a terminal; pass -o OUT.png to write the picture, or "
        "--text to print the text picture anyway");
  }
  return {*n, axis_i, axis_j, text};
}

// What is pictured: the counts per pixel of the PNG grid (with -o), then of the text grid.
struct Counted {
  std::vector<int64_t> shape;
  int64_t nnz = 0;
  int ri = 0, ci = 1;  // the axes pictured, resolved
  std::vector<Grid> grids;
  std::vector<std::vector<uint64_t>> counts;
  double read_s = 0, count_s = 0;
};

// The counts of the file: streamed when io::StreamsPositions says it can be, else read whole.
Counted Count(const Args& a, const Request& r) {
  using Clock = std::chrono::steady_clock;
  Counted c;
  const auto make_grids = [&](const std::vector<int64_t>& s) {
    std::vector<Grid> gs;
    if (!a.out.empty()) gs.push_back(PngGrid(s[c.ri], s[c.ci], r.n));
    if (r.text) gs.push_back(TextGrid(s[c.ri], s[c.ci], r.n));
    return gs;
  };
  const auto resolve = [&](const std::vector<int64_t>& s) {
    c.ri = ResolveAxis(r.axis_i, s, a);
    c.ci = ResolveAxis(r.axis_j, s, a);
    TK_CHECK(c.ri != c.ci, kInvalidArgument, "spy: --axes ", a.axes, " names axis ", c.ri,
             " twice; give two different axes, e.g. --axes 0,1");
  };
  const auto check_rank = [&](const std::vector<int64_t>& s) {
    TK_CHECK(s.size() >= 2, kInvalidArgument, "spy: '", a.file, "' holds a rank-", s.size(),
             " sparse tensor of shape ", ShapeString(s),
             "; a picture needs two axes (write a vector as a 1 x n matrix)");
  };
  Clock::time_point t0 = Clock::now();
  if (io::StreamsPositions(a.file)) {
    // A .mtx coordinate file, a .tns, a .svm or a 2-D scipy .npz streams: counted as it is
    // read, memory bounded by the grids.
    c.counts = CountStreamed(
        a.file, c.ri, c.ci,
        [&](const std::vector<int64_t>& s) {
          c.shape = s;
          check_rank(s);
          resolve(s);
          return make_grids(s);
        },
        &c.grids, &c.shape, &c.nnz);
    c.count_s = Seconds(t0);
    return c;
  }
  io::TensorData d = io::Read(a.file);
  c.read_s = Seconds(t0);
  TK_CHECK(d.is_sparse(), kInvalidArgument, "spy: '", a.file, "' holds a dense array of dims ",
           ShapeString(d.dense.Dims()),
           "; spy pictures the entries of a sparse file (.mtx coordinate, .tns, .svm, a "
           "scipy.sparse .npz); make one with e.g. tensorkit convert IN.npy OUT.mtx");
  const SparseTensor& st = d.sparse;
  check_rank(st.shape());
  c.shape = st.shape();
  c.nnz = st.nnz();
  resolve(c.shape);
  c.grids = make_grids(c.shape);
  t0 = Clock::now();
  for (const Grid& g : c.grids) c.counts.push_back(CountPixels(st, c.ri, c.ci, g, a.file));
  c.count_s = Seconds(t0);
  return c;
}

// The PNG of the first grid, with what it shows in its text chunks, written atomically.
void WritePng(const std::string& out, const Counted& c) {
  const Grid& g = c.grids[0];
  const uint64_t max = MaxCount(c.counts[0]);
  const std::vector<uint8_t> gray = Shade(c.counts[0], max, g);
  const std::vector<uint8_t> png = EncodeGrayPng(
      gray, g.width, g.height,
      {{"Software", "tensorkit spy"},
       {"tensorkit:shape", ShapeString(c.shape)},
       {"tensorkit:axes", std::to_string(c.ri) + "," + std::to_string(c.ci)},
       {"tensorkit:entries", std::to_string(c.nnz)},
       {"tensorkit:cell", std::to_string(g.cell_rows) + " x " + std::to_string(g.cell_cols)},
       {"tensorkit:max", std::to_string(max)},
       {"tensorkit:shading",
        "gray = 255 if count == 0 else round(224 * (1 - log(1 + count) / log(1 + max)))"}});
  io::AtomicFile file(out);
  file.Write(png.data(), png.size());
  file.Commit();
}

int Run(const Args& a) {
  const Request r = CheckArgs(a);
  const Counted c = Count(a, r);
  double encode_s = 0;
  if (!a.out.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    WritePng(a.out, c);
    encode_s = Seconds(t0);
  }
  if (r.text) std::cout << TextPicture(c.counts.back(), c.grids.back(), c.shape, c.nnz, c.ri, c.ci);
  if (a.timings) {
    const Grid& g = c.grids.back();
    std::fprintf(
        stderr,
        "spy: read %.3f s, count %.3f s, shade+encode+write %.3f s (%lld entries, "
        "%lld x %lld pixels, %d threads%s)\n",
        c.read_s, c.count_s, encode_s, static_cast<long long>(c.nnz),
        static_cast<long long>(g.height), static_cast<long long>(g.width), GetNumThreads(),
        io::StreamsPositions(a.file) ? ", streamed: counted as read, never held whole" : "");
  }
  return kExitOk;
}

}  // namespace

Subcommand AddSpy(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(
      "spy", "Picture where a sparse file's entries are: a PNG, or text on a terminal");
  sub->add_option("file", args->file, "The sparse file (.mtx, .tns, .svm, .npz)")->required();
  sub->add_option("-o,--output", args->out, "Write the picture to this .png");
  sub->add_option("--size", args->size, "At most N x N pixels (default 512)");
  sub->add_option("--axes", args->axes, "The two axes pictured, I down and J across (default 0,1)");
  sub->add_flag("--text", args->text,
                "Print the text picture to standard output even when it is not a terminal");
  sub->add_flag("--timings", args->timings, "Print the read, count and encode times on stderr");
  sub->footer(
      "A pixel covers s x s positions, s = max(1, ceil(rows/N), ceil(cols/N)); its gray is 255 "
      "when empty, else round(224 (1 - log(1+count)/log(1+max))).\nWithout -o the picture is "
      "printed on a terminal (shades ░▒▓█ by log count, at most 80 columns).\nExit codes: 0 ok, "
      "1 unreadable or unsuitable file, 2 usage error.");
  return {sub, [args]() { return Run(*args); }};
}

}  // namespace tensorkit::tools
