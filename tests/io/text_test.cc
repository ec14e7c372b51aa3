// The text-parsing core of .mtx, .tns and libsvm: the fast-path scanners against std::from_chars
// and strtod, the readers' values bit-equal to strtod on a corpus of tricky numbers whichever
// path takes a line, and the parallel writers' text byte-equal to a serial formatting.
#include "tensorkit/io/text.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "io/io_test_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/simd_path.h"
#include "tensorkit/io/io.h"
#include "tensorkit/io/libsvm.h"

namespace tensorkit::io {
namespace {

using testing::CatchError;
using testing::ReadText;
using testing::TempDir;

// Numbers whose parse is easy to get wrong: subnormals and the edges of the double range,
// 20-digit and longer mantissas, halfway cases, signs, leading zeros, points at either end.
const std::vector<std::string>& TrickyNumbers() {
  static const std::vector<std::string> corpus = {"0",
                                                  "-0",
                                                  "0.0",
                                                  "-0.0",
                                                  "00000",
                                                  "007",
                                                  "1.",
                                                  ".5",
                                                  "-.5",
                                                  "-1.",
                                                  "0.1",
                                                  "0.3",
                                                  "1e0",
                                                  "1E5",
                                                  "1e-5",
                                                  "1e+5",
                                                  "-1e+05",
                                                  "2.5e-3",
                                                  "123456789012345678",
                                                  "1234567890123456789",
                                                  "12345678901234567890",
                                                  "123456789012345678901234567890",
                                                  "0.12345678901234567890",
                                                  "9007199254740992",
                                                  "9007199254740993",
                                                  "9007199254740995",
                                                  "-9007199254740993",
                                                  "900719925474099.3",
                                                  "9007199254740992.5",
                                                  "4503599627370496.5",
                                                  "4503599627370497.5",
                                                  "0.1000000000000000055511151231257827",
                                                  "0.1000000000000000055511151231257828",
                                                  "2.2250738585072011e-308",
                                                  "2.2250738585072014e-308",
                                                  "2.2250738585072012e-308",
                                                  "4.9406564584124654e-324",
                                                  "4.9e-324",
                                                  "2.4703282292062327e-324",
                                                  "2.4703282292062328e-324",
                                                  "5e-324",
                                                  "1e-323",
                                                  "1.7976931348623157e308",
                                                  "1.7976931348623158e308",
                                                  "1.7976931348623159e308",
                                                  "1e308",
                                                  "1e309",
                                                  "-1e309",
                                                  "1e-400",
                                                  "-1e-400",
                                                  "0e999999",
                                                  "1e-99999999999",
                                                  "1e99999999999",
                                                  "0.0000000000000000000000001",
                                                  "000000000000000000000000000000000000001.5",
                                                  "1.00000000000000000000000000000000000001",
                                                  "3.14159265358979323846264338327950288",
                                                  "72057594037927945",
                                                  "7.2057594037927945e16",
                                                  "0.9999999999999999999",
                                                  "1.0000000000000002",
                                                  "1.00000000000000011102230246251565",
                                                  "8.5070591730234615847396907784232501e37",
                                                  "123.456e-2",
                                                  "-0.000001",
                                                  "1e22",
                                                  "1e23",
                                                  "9.999999999999999e22",
                                                  "123456789e-22",
                                                  "1234567890123456e-38",
                                                  "4e-320"};
  return corpus;
}

// n random decimal digits.
std::string RandomDigits(std::mt19937_64& rng, int n) {
  std::string d;
  for (int k = 0; k < n; ++k) d.push_back(static_cast<char>('0' + rng() % 10));
  return d;
}

double Strtod(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

// Bit-equal (so -0 differs from 0), or both NaN of the same sign.
::testing::AssertionResult SameDouble(double got, double want, const std::string& text) {
  if (std::isnan(want) ? (std::isnan(got) && std::signbit(got) == std::signbit(want))
                       : std::bit_cast<uint64_t>(got) == std::bit_cast<uint64_t>(want)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "'" << text << "' read as " << got << " (bits " << std::bit_cast<uint64_t>(got)
         << "), strtod gives " << want << " (bits " << std::bit_cast<uint64_t>(want) << ")";
}

TEST(TextScan, DigitsAgreeWithFromCharsAtAnyLengthAndPlace) {
  std::mt19937_64 rng(7);
  for (int len = 0; len <= 26; ++len) {
    for (int trial = 0; trial < 40; ++trial) {
      const std::string digits = RandomDigits(rng, len);
      // At the end of the buffer (the byte-at-a-time tail) and followed by more text (the
      // eight-byte path), with every kind of terminator byte.
      const char after = static_cast<char>(rng() % 256);
      for (const std::string& text : {digits, digits + after + "12345678901234567"}) {
        const char* p = text.data();
        int64_t v = -1;
        const bool ok = ScanDigits(&p, text.data() + text.size(), &v);
        const size_t run = std::min(text.find_first_not_of("0123456789"), text.size());
        if (run == 0 || run > 18) {
          EXPECT_FALSE(ok) << "'" << text << "'";
          EXPECT_EQ(p, text.data());
          continue;
        }
        ASSERT_TRUE(ok) << "'" << text << "'";
        int64_t want = 0;
        std::from_chars(text.data(), text.data() + run, want);
        EXPECT_EQ(v, want) << "'" << text << "'";
        EXPECT_EQ(p - text.data(), static_cast<ptrdiff_t>(run)) << "'" << text << "'";
      }
    }
  }
  // Every byte value right after a digit, at each of the eight places of a word.
  for (int place = 1; place < 8; ++place) {
    for (int b = 0; b < 256; ++b) {
      std::string text =
          std::string("98765432").substr(0, place) + static_cast<char>(b) + "7654321";
      const char* p = text.data();
      int64_t v = 0;
      ASSERT_TRUE(ScanDigits(&p, text.data() + text.size(), &v));
      const bool digit = b >= '0' && b <= '9';
      EXPECT_EQ(p - text.data(), digit ? place + 8 : place) << "byte " << b << " at " << place;
    }
  }
}

// "i j" pairs: every length of either number (past the 8 digits the one-look path takes),
// every separator, and texts that end right after the pair.
TEST(TextScan, DigitPairsAreTwoNumbers) {
  std::mt19937_64 rng(9);
  const auto digits = [&](int n) { return RandomDigits(rng, n); };
  for (int n1 = 0; n1 <= 19; ++n1) {
    for (int n2 = 0; n2 <= 19; ++n2) {
      for (const char* sep : {" ", "  ", "\t", " \t", ""}) {
        for (const std::string& tail :
             {std::string(), std::string("\n7 8 0.5\n" + std::string(30, '9'))}) {
          const std::string a = digits(n1), b = digits(n2);
          const std::string text = a + sep + b + tail;
          const char* p = text.data();
          int64_t x = -1, y = -1;
          const bool ok = ScanDigitPair(&p, text.data() + text.size(), &x, &y);
          // Read when both numbers are there (1 to 18 digits) and apart.
          const bool want = n1 > 0 && n1 <= 18 && n2 > 0 && n2 <= 18 && *sep != '\0';
          ASSERT_EQ(ok, want) << "'" << text << "'";
          if (!ok) continue;
          EXPECT_EQ(x, std::stoll(a)) << "'" << text << "'";
          EXPECT_EQ(y, std::stoll(b)) << "'" << text << "'";
          EXPECT_EQ(p - text.data(), static_cast<ptrdiff_t>(a.size() + std::strlen(sep) + n2));
        }
      }
    }
  }
}

TEST(TextScan, IntegersTakeOneMinusAndDeclineThePlus) {
  const std::string text = "-42 +7 - 5";
  const char* p = text.data();
  const char* end = text.data() + text.size();
  int64_t v = 0;
  ASSERT_TRUE(ScanInteger(&p, end, &v));
  EXPECT_EQ(v, -42);
  p = SkipLineBlanks(p, end);
  EXPECT_FALSE(ScanInteger(&p, end, &v));  // the general parser takes '+'
  p += 3;
  EXPECT_FALSE(ScanInteger(&p, end, &v));  // a lone '-'
}

TEST(TextScan, RealsAreBitEqualToStrtodOrDeclined) {
  std::vector<std::string> inputs = TrickyNumbers();
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string s = rng() % 3 == 0 ? "-" : "";
    // Half of them in the readers' common form: 1 to 3 digits, '.', up to 20 more.
    const bool common = trial % 2 == 0;
    const int whole = static_cast<int>(common ? 1 + rng() % 3 : rng() % 22);
    const int frac = static_cast<int>(common ? rng() % 21 : rng() % 26);
    s += RandomDigits(rng, whole);
    if (frac > 0 || rng() % 2 == 0) s.push_back('.');
    s += RandomDigits(rng, frac);
    if (whole + frac == 0) s.push_back('1');
    if (rng() % 3 == 0) {
      s.push_back(rng() % 2 ? 'e' : 'E');
      if (rng() % 2) s.push_back(rng() % 2 ? '-' : '+');
      s += std::to_string(rng() % 330);
    }
    inputs.push_back(s);
  }
  int taken = 0;
  for (const std::string& s : inputs) {
    // Short texts take the byte-at-a-time path, long ones the 16-byte looks.
    for (const std::string& text : {s, s + " 1", s + "\n", s + "\n" + std::string(40, '7'),
                                    s + " 1234567890123456789012345678901234567890"}) {
      const char* p = text.data();
      double v = 0;
      const bool ok = ScanReal(&p, text.data() + text.size(), &v);
      const double want = Strtod(s);
      if (!std::isfinite(want)) {
        EXPECT_FALSE(ok) << "'" << s << "' is out of range: the general parser's to read";
        continue;
      }
      // Every finite decimal without a '+' is taken, and ends where strtod ends.
      ASSERT_TRUE(ok) << "'" << text << "'";
      EXPECT_TRUE(SameDouble(v, want, s));
      EXPECT_EQ(p - text.data(), static_cast<ptrdiff_t>(s.size())) << "'" << text << "'";
      ++taken;
    }
  }
  EXPECT_GT(taken, 50000);
  for (const char* declined : {"+1", "inf", "-inf", "nan", "infinity", "+.5", "e5", ".", "-", ""}) {
    const std::string text = declined;
    const char* p = text.data();
    double v = 0;
    EXPECT_FALSE(ScanReal(&p, text.data() + text.size(), &v)) << "'" << text << "'";
    EXPECT_EQ(p, text.data());
  }
}

// The one-look line scan against the field-by-field one, for K indices: lines in its form
// ("i j v\n": indices of 1 to 8 digits, single spaces, [-]W.F[e[+-]X] with W of 1 to 3 digits,
// 19 digits at most and X of 1 to 3, the '\n' among the first 48 bytes) and near it (other
// digit counts, blanks, '+', other exponents, CRLF, blanks at the end, no final newline), at
// every distance from the end of the text. A line in the form with 64 bytes left is taken, any
// other declined; what is taken is the indices' digits and strtod's value, and ends at the
// line's '\n'.
template <int K>
void CheckIndexRealLines(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto digits = [&](int n) { return RandomDigits(rng, n); };
  const auto pick = [&](std::initializer_list<const char*> options) {
    return std::string(options.begin()[rng() % options.size()]);
  };
  int taken = 0;
  for (int trial = 0; trial < 8000; ++trial) {
    const bool form = trial % 2 == 0;  // half drawn in the form, half near it
    bool in_form = true;
    std::string line;
    std::vector<int64_t> want_indices;
    for (int k = 0; k < K; ++k) {
      const int n = static_cast<int>(form ? 1 + rng() % 8 : rng() % 11);
      const std::string index = digits(n);
      const std::string sep = form ? " " : pick({" ", " ", "  ", "\t", ""});
      in_form &= n >= 1 && n <= 8 && sep == " ";
      line += index + sep;
      want_indices.push_back(n >= 1 && n <= 18 ? std::stoll(index) : -1);
    }
    const std::string sign = form ? pick({"", "-"}) : pick({"", "-", "+", "--"});
    const int whole = static_cast<int>(form ? 1 + rng() % 3 : rng() % 5);
    const int frac = static_cast<int>(form ? 1 + rng() % (19 - whole) : rng() % 22);
    const std::string dot = form || rng() % 4 != 0 ? "." : "";
    // Exponents: in the form (1 to 3 digits, a value in range), in the form but at the edges
    // of the range (taken or not: the general parser reads strtod's inf and may take the
    // subnormals), and near it.
    std::string exponent;
    bool edge = false;
    if (form && rng() % 3 == 0) {
      exponent =
          pick({"e", "E"}) + pick({"", "+", "-"}) + std::to_string(rng() % (rng() % 2 ? 10 : 280));
    } else if (!form && rng() % 3 == 0) {
      exponent = pick({"e-5", "E+300", "e7", "e", "e+", "e1234", "e--5", "E-0", "e+-1", "e-999",
                       "e999", "e-330", "e-310", "e308"});
      edge = exponent == "e-999" || exponent == "e999" || exponent == "e-330" ||
             exponent == "e-310" || exponent == "e308";
    }
    const std::string real = sign + digits(whole) + dot + digits(frac) + exponent;
    const size_t e = exponent.find_first_of("0123456789");
    const bool exponent_in_form =
        exponent.empty() || (e != std::string::npos && e <= 2 && exponent.size() - e <= 3 &&
                             exponent.find_first_not_of("0123456789", e) == std::string::npos &&
                             (e == 1 || exponent[1] == '+' || exponent[1] == '-'));
    in_form &= (sign.empty() || sign == "-") && whole >= 1 && whole <= 3 && dot == "." &&
               frac >= 1 && whole + frac <= 19 && exponent_in_form;
    const std::string padding = pick({"", "7 8 0.25\n", "1 2 3 4 5 6 7 8 9 0.5\n"}) +
                                std::string(rng() % 70, static_cast<char>('0' + rng() % 10));
    std::string end = form ? "\n" : pick({"\n", "\n", "\r\n", " \n", "\t\n"});
    if (!form && padding.empty() && rng() % 4 == 0) end.clear();  // the text's last line
    line += real;
    in_form &= end == "\n" && line.size() < 48;  // the '\n' inside the 48-byte look
    const std::string text = line + end + padding;
    int64_t got_indices[K];
    double v = 0;
    const char* le =
        ScanIndicesRealLine<K>(text.data(), text.data() + text.size(), got_indices, &v);
    const bool want = in_form && text.size() >= 64;
    if (!want || !edge) {
      ASSERT_EQ(le != nullptr, want) << "'" << text << "'";
    }
    if (le == nullptr) continue;
    ASSERT_TRUE(std::isfinite(Strtod(real))) << "'" << real << "' is strtod's inf";
    ++taken;
    EXPECT_EQ(le, text.data() + line.size()) << "'" << text << "'";
    for (int k = 0; k < K; ++k) EXPECT_EQ(got_indices[k], want_indices[k]) << "'" << text << "'";
    EXPECT_TRUE(SameDouble(v, Strtod(real), real));
    // The field-by-field scan agrees on the value too.
    const char* q = text.data() + line.size() - real.size();
    double field = 0;
    ASSERT_TRUE(ScanReal(&q, text.data() + text.size(), &field));
    EXPECT_TRUE(SameDouble(v, field, real));
  }
  EXPECT_GT(taken, 1000);
}

TEST(TextScan, IndexRealLinesAreTheFieldByFieldScanOrDeclined) {
  CheckIndexRealLines<1>(21);
  CheckIndexRealLines<2>(22);
  CheckIndexRealLines<3>(23);
  CheckIndexRealLines<4>(24);
}

// The corpus with the signs, words and forms only the general parser takes.
std::vector<std::string> ReaderCorpus() {
  std::vector<std::string> values = TrickyNumbers();
  for (const char* extra : {"+1.5", "+0", "-0", "inf", "-inf", "+inf", "nan", "-nan", "INF",
                            "Infinity", "+1e400", "+.25", "1e400", "-1e400"}) {
    values.push_back(extra);
  }
  return values;
}

// Lines in the forms the fast path takes and in those it leaves to the general parser.
std::string Decorate(const std::string& line, size_t k, char comment) {
  switch (k % 6) {
    case 0:
      return line + "\n";
    case 1:
      return line + "\r\n";
    case 2:
      return "  " + line + " \t\n";
    case 3:
      return line + "\n" + comment + " a comment\n\n";
    case 4: {
      std::string tabbed = line;
      for (char& c : tabbed) c = c == ' ' ? '\t' : c;
      return tabbed + "\n";
    }
    default:
      return line + "   \n";
  }
}

TEST(TextReaders, MtxValuesAreStrtodsOnTrickyNumbersAtAnyThreadCount) {
  const std::vector<std::string> corpus = ReaderCorpus();
  // Repeated past several 1 MiB chunks so the corpus lands at chunk starts and ends too.
  const size_t n = corpus.size() * 1800;
  std::string text =
      "%%MatrixMarket matrix coordinate real general\n7 1000 " + std::to_string(n) + "\n";
  std::vector<double> want;
  for (size_t k = 0; k < n; ++k) {
    const std::string& v = corpus[k % corpus.size()];
    text +=
        Decorate(std::to_string(k % 7 + 1) + " " + std::to_string(k % 1000 + 1) + " " + v, k, '%');
    want.push_back(Strtod(v[0] == '+' ? v.substr(1) : v));
  }
  ASSERT_GT(text.size(), size_t{3} << 20);
  // Both thread counts on the widest path; one on each other path the machine has (the fast
  // path's loop is compiled once for AVX2 CPUs and once for the rest).
  for (auto [threads, path] : {std::pair{1, BestSimdPath()}, std::pair{2, BestSimdPath()},
                               std::pair{2, SimdPath::kAvx2}, std::pair{2, SimdPath::kDefault}}) {
    if (!SimdPathSupported(path)) continue;
    const int saved = GetNumThreads();
    SetNumThreads(threads);
    SetSimdPathForTesting(path);
    TensorData d = ReadFromMemory(text.data(), text.size(), Format::kMtx, "t.mtx");
    SetSimdPathForTesting(BestSimdPath());
    SetNumThreads(saved);
    ASSERT_EQ(d.sparse.nnz(), static_cast<int64_t>(n));
    const std::vector<double> got = d.sparse.values().ToVector<double>();
    const std::vector<int64_t> idx = d.sparse.indices().ToVector<int64_t>();
    for (size_t k = 0; k < n; ++k) {
      ASSERT_TRUE(SameDouble(got[k], want[k], corpus[k % corpus.size()])) << "entry " << k;
      ASSERT_EQ(idx[2 * k], static_cast<int64_t>(k % 7));
      ASSERT_EQ(idx[2 * k + 1], static_cast<int64_t>(k % 1000));
    }
  }
}

// Pass 1 counts lines and data lines a vector at a time; blank lines, comments (indented too),
// CRLF and a missing final newline at every offset of a 16- and 32-byte block, on every SIMD
// path the machine has. A miscount is a size-line mismatch, so the read itself checks it.
TEST(TextReaders, LineCountsAgreeOnEverySimdPath) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    std::string body;
    std::vector<int64_t> rows;
    const int lines = 50 + static_cast<int>(rng() % 400);
    for (int k = 0; k < lines; ++k) {
      switch (rng() % 8) {
        case 0:
          body += std::string(rng() % 40, ' ') + "\n";
          break;
        case 1:
          body += std::string(rng() % 3, '\t') + "% note " + std::string(rng() % 50, 'x') + "\n";
          break;
        case 2:
          body += "\r\n";
          break;
        default: {
          const int64_t r = static_cast<int64_t>(rng() % 9) + 1;
          rows.push_back(r - 1);
          body += std::string(rng() % 2, ' ') + std::to_string(r) + " 1 " +
                  std::to_string(rng() % 100000) + (rng() % 2 ? "\r\n" : "\n");
        }
      }
    }
    if (trial % 2 == 0 && !body.empty() && body.back() == '\n') body.pop_back();
    const std::string text = "%%MatrixMarket matrix coordinate integer general\n9 1 " +
                             std::to_string(rows.size()) + "\n" + body;
    for (SimdPath path : {SimdPath::kDefault, SimdPath::kAvx2, SimdPath::kAvx512}) {
      if (!SimdPathSupported(path)) continue;
      SetSimdPathForTesting(path);
      TensorData d = ReadFromMemory(text.data(), text.size(), Format::kMtx, "c.mtx");
      SetSimdPathForTesting(BestSimdPath());
      std::vector<int64_t> got;
      const std::vector<int64_t> idx = d.sparse.indices().ToVector<int64_t>();
      for (size_t k = 0; k < idx.size(); k += 2) got.push_back(idx[k]);
      ASSERT_EQ(got, rows) << "trial " << trial << ", path " << static_cast<int>(path);
    }
  }
}

TEST(TextReaders, MtxIntegersAndArraysOnBothPaths) {
  const std::string ints =
      "%%MatrixMarket matrix coordinate integer general\n3 3 6\n1 1 -7\n2 2 +8\n"
      "3 3 9223372036854775807\n1 3 -9223372036854775808\n 2 1 007\n3 1 123456789012345678\n";
  TensorData i = ReadFromMemory(ints.data(), ints.size(), Format::kMtx, "i.mtx");
  EXPECT_EQ(i.sparse.values().ToVector<int64_t>(),
            (std::vector<int64_t>{-7, 8, INT64_MAX, INT64_MIN, 7, 123456789012345678}));
  const std::vector<std::string> corpus = ReaderCorpus();
  std::string arr =
      "%%MatrixMarket matrix array real general\n" + std::to_string(corpus.size()) + " 1\n";
  for (size_t k = 0; k < corpus.size(); ++k) arr += Decorate(corpus[k], k, '%');
  TensorData a = ReadFromMemory(arr.data(), arr.size(), Format::kMtx, "a.mtx");
  const std::vector<double> got = a.dense.ToVector<double>();
  ASSERT_EQ(got.size(), corpus.size());
  for (size_t k = 0; k < corpus.size(); ++k) {
    const std::string& v = corpus[k];
    EXPECT_TRUE(SameDouble(got[k], Strtod(v[0] == '+' ? v.substr(1) : v), v));
  }
}

TEST(TextReaders, ErrorsFoundOnTheFastPathStillNameTheLine) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n";
  struct Case {
    std::string body, part;
  };
  for (const Case& c : std::vector<Case>{
           {"3 1 1\n2 2 2\n", "line 4"},                     // row past the size
           {"1 0 1\n2 2 2\n", "line 4"},                     // a 0 index
           {"1 1 1\n2 2 2x\n", "line 5"},                    // a number run into a word
           {"1 1 1\n2 2 2 3\n", "line 5"},                   // a token too many
           {"1 1 1\n2 99999999999999999999 2\n", "line 5"},  // past int64
           {"1 1 1\n2 2\n", "line 5"},                       // no value
       }) {
    const std::string text = head + c.body;
    Error e = CatchError([&] { ReadFromMemory(text.data(), text.size(), Format::kMtx, "e.mtx"); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << c.body;
    EXPECT_HAS(e.what(), c.part);
    EXPECT_HAS(e.what(), "e.mtx");
  }
  // Lines near the one-look form, with more lines after them so that the look is taken.
  std::string good;
  for (int k = 0; k < 10; ++k) good += "2 1 -0.125\n";
  for (const char* bad :
       {"3 1 0.5", "1 0 0.5", "0 1 0.5", "1 1 0.5x", "1,1 0.5", "1 1 0.25 3", "1 1 -0.5.5", "1 1 .",
        "1 1 0.5-", "1 1 -", "1 1 1.5e", "1 99999999999999999999 0.5"}) {
    const std::string text = "%%MatrixMarket matrix coordinate real general\n2 2 12\n2 2 0.5\n" +
                             std::string(bad) + "\n" + good;
    Error e = CatchError([&] { ReadFromMemory(text.data(), text.size(), Format::kMtx, "f.mtx"); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << bad;
    EXPECT_HAS(e.what(), "line 4");
  }
}

TEST(TextReaders, TnsValuesAreStrtods) {
  const std::vector<std::string> corpus = ReaderCorpus();
  std::string text = "# a tensor\n";
  std::vector<double> want;
  const size_t n = corpus.size() * 40;
  for (size_t k = 0; k < n; ++k) {
    const std::string& v = corpus[k % corpus.size()];
    text += Decorate(std::to_string(k % 3 + 1) + " " + std::to_string(k % 5 + 1) + " " +
                         std::to_string(k + 1) + " " + v,
                     k, '#');
    want.push_back(Strtod(v[0] == '+' ? v.substr(1) : v));
  }
  TensorData d = ReadFromMemory(text.data(), text.size(), Format::kTns, "t.tns");
  ASSERT_EQ(d.sparse.nnz(), static_cast<int64_t>(n));
  EXPECT_EQ(d.sparse.shape(), (std::vector<int64_t>{3, 5, static_cast<int64_t>(n)}));
  const std::vector<double> got = d.sparse.values().ToVector<double>();
  for (size_t k = 0; k < n; ++k) {
    ASSERT_TRUE(SameDouble(got[k], want[k], corpus[k % corpus.size()])) << "entry " << k;
  }
}

// Files whose lines are drawn in and near the one-look line form (ScanIndicesRealLine), with
// the form's longest fractions among them: .mtx and .tns of ranks 2 to 4 read every index as
// written and every value as strtod, whichever scan took each line.
TEST(TextReaders, LinesInAndNearTheOneLookFormReadAsStrtod) {
  std::mt19937_64 rng(31);
  const auto digits = [&](int n) { return RandomDigits(rng, n); };
  for (int rank = 2; rank <= 4; ++rank) {
    const int64_t n = 30000;
    const std::vector<int64_t> bound = {99999999, 999, 99, 9};
    std::string body;
    std::vector<int64_t> want_indices;
    std::vector<double> want_values;
    for (int64_t e = 0; e < n; ++e) {
      std::string line;
      for (int a = 0; a < rank; ++a) {
        const int64_t i = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(bound[a]));
        want_indices.push_back(i - 1);
        line += std::to_string(i) + (rng() % 10 == 0 ? "\t" : rng() % 10 == 0 ? "  " : " ");
      }
      const int whole = static_cast<int>(1 + rng() % 4);
      const std::string real = (rng() % 2 ? "-" : "") + digits(whole) + "." +
                               digits(static_cast<int>(rng() % 21)) +
                               (rng() % 10 == 0 ? "e-7" : "");
      want_values.push_back(Strtod(real));
      body += line + real + (rng() % 10 == 0 ? " \n" : rng() % 20 == 0 ? "\r\n" : "\n");
    }
    TensorData d;
    if (rank == 2) {
      const std::string text = "%%MatrixMarket matrix coordinate real general\n99999999 999 " +
                               std::to_string(n) + "\n" + body;
      d = ReadFromMemory(text.data(), text.size(), Format::kMtx, "f.mtx");
    } else {
      d = ReadFromMemory(body.data(), body.size(), Format::kTns, "f.tns");
    }
    ASSERT_EQ(d.sparse.nnz(), n) << "rank " << rank;
    EXPECT_EQ(d.sparse.indices().ToVector<int64_t>(), want_indices) << "rank " << rank;
    const std::vector<double> got = d.sparse.values().ToVector<double>();
    for (int64_t e = 0; e < n; ++e) {
      ASSERT_TRUE(SameDouble(got[e], want_values[e], std::to_string(e))) << "rank " << rank;
    }
  }
}

TEST(TextReaders, LibsvmValuesAndLabelsAreStrtods) {
  std::vector<std::string> corpus;
  for (const std::string& v : ReaderCorpus()) {
    // scikit-learn drops explicit zeros from the matrix; keep the values that stay entries.
    if (Strtod(v[0] == '+' ? v.substr(1) : v) != 0.0) corpus.push_back(v);
  }
  std::string text;
  for (size_t k = 0; k < corpus.size(); ++k) {
    text += corpus[k] + " 1:" + corpus[k] + " 7:" + corpus[(k + 1) % corpus.size()] + "\n";
  }
  LibsvmReadOptions o;
  o.base = IndexBase::kOne;
  const LibsvmData d = ReadLibsvmFromMemory(text.data(), text.size(), "t.svm", o);
  const std::vector<double> labels = d.labels.ToVector<double>();
  const std::vector<double> values = d.features.values().ToVector<double>();
  ASSERT_EQ(labels.size(), corpus.size());
  ASSERT_EQ(values.size(), 2 * corpus.size());
  for (size_t k = 0; k < corpus.size(); ++k) {
    const auto value = [&](size_t j) {
      const std::string& v = corpus[j % corpus.size()];
      return Strtod(v[0] == '+' ? v.substr(1) : v);
    };
    EXPECT_TRUE(SameDouble(labels[k], value(k), corpus[k]));
    EXPECT_TRUE(SameDouble(values[2 * k], value(k), corpus[k]));
    EXPECT_TRUE(SameDouble(values[2 * k + 1], value(k + 1), corpus[(k + 1) % corpus.size()]));
  }
}

// Random doubles of every magnitude: the written text is exactly a serial shortest-round-trip
// formatting (in order, across many chunks and windows), and reads back bit-equal.
TEST(TextWriters, MtxAndTnsTextIsSerialFormattingInOrder) {
  std::mt19937_64 rng(3);
  const int64_t n = 400000, rows = 1000, cols = 1000;
  std::vector<int64_t> idx(2 * n);
  std::vector<double> val(n);
  for (int64_t k = 0; k < n; ++k) {
    idx[2 * k] = static_cast<int64_t>(rng() % rows);
    idx[2 * k + 1] = static_cast<int64_t>(rng() % cols);
    double v = std::bit_cast<double>(rng());
    if (!std::isfinite(v)) v = -0.0;
    val[k] = k % 3 == 0 ? std::ldexp(static_cast<double>(rng() % 1000), -1074 + k % 60) : v;
  }
  SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {n, 2}),
                                         Tensor::FromVector<double>(val, {n}), {rows, cols});
  std::string body;
  char buf[64];
  for (int64_t k = 0; k < n; ++k) {
    for (int a = 0; a < 2; ++a) {
      body.append(buf, std::to_chars(buf, buf + 64, idx[2 * k + a] + 1).ptr);
      body.push_back(' ');
    }
    body.append(buf, std::to_chars(buf, buf + 64, val[k]).ptr);
    body.push_back('\n');
  }
  TempDir dir;
  for (int threads : {1, 2}) {
    const int saved = GetNumThreads();
    SetNumThreads(threads);
    Write(dir / "w.mtx", st);
    Write(dir / "w.tns", st);
    SetNumThreads(saved);
    const std::string mtx = ReadText(dir / "w.mtx");
    ASSERT_GT(mtx.size(), body.size());
    EXPECT_TRUE(mtx.compare(mtx.size() - body.size(), body.size(), body) == 0);
    const std::string tns = ReadText(dir / "w.tns");
    ASSERT_GT(tns.size(), body.size());
    EXPECT_TRUE(tns.compare(tns.size() - body.size(), body.size(), body) == 0);
  }
  TensorData back = Read(dir / "w.mtx");
  const std::vector<double> got = back.sparse.values().ToVector<double>();
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_EQ(std::bit_cast<uint64_t>(got[k]), std::bit_cast<uint64_t>(val[k])) << k;
  }
  EXPECT_EQ(back.sparse.indices().ToVector<int64_t>(), idx);
}

}  // namespace
}  // namespace tensorkit::io
