// VocabularyCounter: exact token counts over values, merged across shards, in counts files.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <queue>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/hash_table.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/features/hash.h"
#include "tensorkit/features/vocabulary.h"
#include "tensorkit/features/vocabulary_internal.h"

namespace tensorkit {

namespace fi = features_internal;

namespace {

// Tokens are spread over kParts tables by the top bits of their hash, so that the tables of
// several counters can be merged table by table in parallel.
constexpr int kPartBits = 6;
constexpr int kParts = 1 << kPartBits;

inline int PartOf(uint64_t hash) { return static_cast<int>(hash >> (64 - kPartBits)); }

// Distinct tokens with their counts: a dense vector of entries, and an open-addressing table
// (common/hash_table.h) of their indices, 4 bytes a bucket, that grows.
template <typename Key>
class CountTable {
 public:
  struct Entry {
    Key key;
    uint64_t hash;
    int64_t count;
  };

  // Adds `count` to `key`; false when its count would overflow int64 (then it is unchanged).
  template <typename View>
  bool Add(const View& key, uint64_t hash, int64_t count) {
    if (slots_.Crowded(entries_.size() + 1)) {
      slots_.Rebuild(entries_.size(), 16, [&](size_t k) {
        return std::pair{entries_[k].hash, Slot{{}, static_cast<uint32_t>(k)}};
      });
    }
    Slot* s = slots_.Probe(hash, Same(key, hash));
    if (Slots::IsEmpty(s->index)) {
      entries_.push_back(Entry{Key(key), hash, count});  // first: it may throw
      *s = Slot{{}, static_cast<uint32_t>(entries_.size() - 1)};
      return true;
    }
    Entry& e = entries_[s->index];
    return !__builtin_add_overflow(e.count, count, &e.count);
  }

  template <typename View>
  int64_t CountOf(const View& key, uint64_t hash) const {
    if (slots_.empty()) return 0;
    const uint32_t k = slots_.Find(hash, Same(key, hash));
    return Slots::IsEmpty(k) ? 0 : entries_[k].count;
  }

  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  using Slots = ProbeTable<uint32_t>;
  using Slot = Slots::Slot;

  template <typename View>
  auto Same(const View& key, uint64_t hash) const {
    return [this, &key, hash](const Slot& s) {
      const Entry& e = entries_[s.index];
      return e.hash == hash && e.key == key;
    };
  }

  std::vector<Entry> entries_;
  Slots slots_;
};

inline uint64_t HashOf(std::string_view s) { return Fingerprint64(s); }
inline uint64_t HashOf(int64_t v) { return fi::MixInt64(v); }

enum class Kind { kNone, kString, kInt };

const char* KindName(Kind k) { return k == Kind::kInt ? "integers" : "strings"; }

}  // namespace

struct VocabularyCounter::Impl {
  Kind kind = Kind::kNone;
  std::array<CountTable<std::string>, kParts> strings;
  std::array<CountTable<int64_t>, kParts> ints;
  int64_t total = 0;

  // Fixes the kind on first use; a counter of the other kind is an Error naming `op`.
  void SetKind(Kind k, const char* op) {
    if (kind == Kind::kNone) kind = k;
    TK_CHECK(kind == k, kDTypeMismatch, op, ": this counter holds ", KindName(kind),
             " and cannot count ", KindName(k), "; use one counter per kind of token");
  }
  void AddTotal(int64_t n, const char* op) {
    TK_CHECK(!__builtin_add_overflow(total, n, &total), kOutOfRange, op,
             ": the total count overflows int64");
  }
  template <typename Key>
  std::array<CountTable<Key>, kParts>& Tables() {
    if constexpr (std::is_same_v<Key, std::string>) {
      return strings;
    } else {
      return ints;
    }
  }
  template <typename Key>
  const std::array<CountTable<Key>, kParts>& Tables() const {
    return const_cast<Impl*>(this)->Tables<Key>();
  }
  // Adds one token's count; an overflow is an Error naming the token.
  template <typename Key, typename View>
  void AddOne(const View& key, int64_t count, const char* op) {
    const uint64_t h = HashOf(key);
    if (!Tables<Key>()[PartOf(h)].Add(key, h, count)) {
      if constexpr (std::is_same_v<Key, std::string>) {
        Throw(ErrorCode::kOutOfRange, op, ": the count of token '", io::Excerpt(key),
              "' overflows int64");
      } else {
        Throw(ErrorCode::kOutOfRange, op, ": the count of token ", key, " overflows int64");
      }
    }
  }
  // Adds every table of `others` into this one's, table by table in parallel, `others` in order.
  template <typename Key>
  void MergeTables(const std::vector<const Impl*>& others, const char* op) {
    std::array<int, kParts> overflow{};
    ParallelFor(0, kParts, 1, [&](int64_t pb, int64_t pe) {
      for (int64_t p = pb; p < pe; ++p) {
        CountTable<Key>& dst = Tables<Key>()[p];
        for (const Impl* o : others) {
          for (const auto& e : o->Tables<Key>()[p].entries()) {
            if (!dst.Add(e.key, e.hash, e.count)) overflow[p] = 1;
          }
        }
      }
    });
    TK_CHECK(std::none_of(overflow.begin(), overflow.end(), [](int v) { return v != 0; }),
             kOutOfRange, op, ": a token's count overflows int64");
  }
};

VocabularyCounter::VocabularyCounter() : impl_(std::make_unique<Impl>()) {}
VocabularyCounter::~VocabularyCounter() = default;
VocabularyCounter::VocabularyCounter(const VocabularyCounter& o)
    : impl_(std::make_unique<Impl>(*o.impl_)) {}
VocabularyCounter& VocabularyCounter::operator=(const VocabularyCounter& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}
VocabularyCounter::VocabularyCounter(VocabularyCounter&& o) noexcept
    : impl_(std::exchange(o.impl_, std::make_unique<Impl>())) {}
VocabularyCounter& VocabularyCounter::operator=(VocabularyCounter&& o) noexcept {
  std::swap(impl_, o.impl_);
  return *this;
}

namespace features_internal {

void CheckVocabularyValues(const Tensor& values, const char* op) {
  TK_CHECK(values.defined(), kInvalidArgument, op, ": the values are undefined");
  const DType dt = values.dtype();
  TK_CHECK(dt == DType::kString || dt == DType::kInt32 || dt == DType::kInt64, kDTypeMismatch, op,
           ": values of dtype ", DTypeName(dt),
           " are not tokens; pass strings, int32 or int64 (convert other numbers first)");
}

}  // namespace features_internal

namespace {

// Counts values[b, e) of a contiguous host tensor (strings for Key std::string, else int32 or
// int64) into dst.
template <typename Key>
void CountInto(VocabularyCounter::Impl* dst, const Tensor& v, int64_t b, int64_t e) {
  auto& tables = dst->Tables<Key>();
  const auto add = [&](const auto& token) {
    const uint64_t h = HashOf(token);
    tables[PartOf(h)].Add(token, h, 1);  // a count from data stays below 2^63
  };
  if constexpr (std::is_same_v<Key, std::string>) {
    const std::string* s = v.data<std::string>();
    for (int64_t i = b; i < e; ++i) add(std::string_view(s[i]));
  } else if (v.dtype() == DType::kInt64) {
    const int64_t* p = v.data<int64_t>();
    for (int64_t i = b; i < e; ++i) add(p[i]);
  } else {
    const int32_t* p = v.data<int32_t>();
    for (int64_t i = b; i < e; ++i) add(int64_t{p[i]});
  }
}

}  // namespace

void VocabularyCounter::Add(const Tensor& values) {
  const char* op = "VocabularyCounter::Add";
  fi::CheckVocabularyValues(values, op);
  fi::CheckOnCpu(values, "values", op);
  const bool strings = values.dtype() == DType::kString;
  impl_->SetKind(strings ? Kind::kString : Kind::kInt, op);
  fi::ReportingAllocationFailure(op, [&] {
    const Tensor v = values.HostContiguous();
    const int64_t n = v.NumElements();
    // One private counter per thread, each over a fixed share of the values, merged table by
    // table: the counts are exact sums, so neither the split nor the merge order shows.
    const int64_t parts =
        std::clamp<int64_t>(n >> 16, 1, std::max<int64_t>(1, int64_t{GetNumThreads()}));
    if (parts == 1) {
      if (strings) {
        CountInto<std::string>(impl_.get(), v, 0, n);
      } else {
        CountInto<int64_t>(impl_.get(), v, 0, n);
      }
    } else {
      std::vector<Impl> local(static_cast<size_t>(parts));
      const int64_t chunk = (n + parts - 1) / parts;
      ParallelChunks(n, chunk, [&](int64_t c, int64_t b, int64_t e) {
        if (strings) {
          CountInto<std::string>(&local[c], v, b, e);
        } else {
          CountInto<int64_t>(&local[c], v, b, e);
        }
      });
      std::vector<const Impl*> others;
      for (const Impl& l : local) others.push_back(&l);
      if (strings) {
        impl_->MergeTables<std::string>(others, op);
      } else {
        impl_->MergeTables<int64_t>(others, op);
      }
    }
    impl_->AddTotal(n, op);
  });
}

void VocabularyCounter::Add(const JaggedTensor& values) {
  TK_CHECK(values.defined(), kInvalidArgument,
           "VocabularyCounter::Add: the jagged tensor is "
           "default-constructed (undefined)");
  Add(values.values());
}

void VocabularyCounter::Add(const SparseTensor& values) { Add(values.values()); }

void VocabularyCounter::AddToken(std::string_view token, int64_t count) {
  const char* op = "VocabularyCounter::AddToken";
  TK_CHECK(count >= 1, kInvalidArgument, op, ": count ", count, " must be at least 1");
  impl_->SetKind(Kind::kString, op);
  impl_->AddOne<std::string>(token, count, op);
  impl_->AddTotal(count, op);
}

void VocabularyCounter::AddToken(int64_t token, int64_t count) {
  const char* op = "VocabularyCounter::AddToken";
  TK_CHECK(count >= 1, kInvalidArgument, op, ": count ", count, " must be at least 1");
  impl_->SetKind(Kind::kInt, op);
  impl_->AddOne<int64_t>(token, count, op);
  impl_->AddTotal(count, op);
}

void VocabularyCounter::Merge(const VocabularyCounter& other) {
  const char* op = "VocabularyCounter::Merge";
  if (other.impl_->kind == Kind::kNone) return;
  TK_CHECK(&other != this, kInvalidArgument, op, ": a counter cannot merge itself; merge a copy");
  impl_->SetKind(other.impl_->kind, op);
  fi::ReportingAllocationFailure(op, [&] {
    if (impl_->kind == Kind::kString) {
      impl_->MergeTables<std::string>({other.impl_.get()}, op);
    } else {
      impl_->MergeTables<int64_t>({other.impl_.get()}, op);
    }
    impl_->AddTotal(other.impl_->total, op);
  });
}

bool VocabularyCounter::empty() const { return num_tokens() == 0; }

DType VocabularyCounter::dtype() const {
  return impl_->kind == Kind::kInt ? DType::kInt64 : DType::kString;
}

int64_t VocabularyCounter::num_tokens() const {
  int64_t n = 0;
  for (int p = 0; p < kParts; ++p) {
    n += static_cast<int64_t>(impl_->strings[p].size() + impl_->ints[p].size());
  }
  return n;
}

int64_t VocabularyCounter::total_count() const { return impl_->total; }

int64_t VocabularyCounter::CountOf(std::string_view token) const {
  const uint64_t h = HashOf(token);
  return impl_->strings[PartOf(h)].CountOf(token, h);
}

int64_t VocabularyCounter::CountOf(int64_t token) const {
  const uint64_t h = HashOf(token);
  return impl_->ints[PartOf(h)].CountOf(token, h);
}

namespace {

// Entries of all tables by count descending, then by key in `ties` order: each table sorted in
// parallel, then a k-way merge (the order is total, so the result is unique).
template <typename Key>
std::vector<const typename CountTable<Key>::Entry*> SortedEntries(
    const std::array<CountTable<Key>, kParts>& tables, TieOrder ties) {
  using Entry = typename CountTable<Key>::Entry;
  const bool asc = ties == TieOrder::kValueAscending;
  const auto before = [asc](const Entry* a, const Entry* b) {
    if (a->count != b->count) return a->count > b->count;
    return asc ? a->key < b->key : b->key < a->key;
  };
  std::array<std::vector<const Entry*>, kParts> parts;
  ParallelFor(0, kParts, 1, [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      for (const Entry& e : tables[p].entries()) parts[p].push_back(&e);
      std::sort(parts[p].begin(), parts[p].end(), before);
    }
  });
  size_t n = 0;
  for (const auto& p : parts) n += p.size();
  std::vector<const Entry*> out;
  out.reserve(n);
  using Head = std::pair<const Entry*, int>;  // the next entry of part p
  const auto later = [&](const Head& a, const Head& b) { return before(b.first, a.first); };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heap(later);
  std::array<size_t, kParts> next{};
  for (int p = 0; p < kParts; ++p) {
    if (!parts[p].empty()) heap.push({parts[p][next[p]++], p});
  }
  while (!heap.empty()) {
    const auto [e, p] = heap.top();
    heap.pop();
    out.push_back(e);
    if (next[p] < parts[p].size()) heap.push({parts[p][next[p]++], p});
  }
  return out;
}

}  // namespace

VocabularyCounter::Sorted VocabularyCounter::SortedCounts(TieOrder ties) const {
  return fi::ReportingAllocationFailure("VocabularyCounter::SortedCounts", [&] {
    Sorted s;
    if (impl_->kind == Kind::kInt) {
      const auto entries = SortedEntries<int64_t>(impl_->ints, ties);
      const int64_t n = static_cast<int64_t>(entries.size());
      s.tokens = Tensor::Empty({n}, DType::kInt64);
      s.counts = Tensor::Empty({n}, DType::kInt64);
      int64_t* t = s.tokens.data<int64_t>();
      int64_t* c = s.counts.data<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        t[i] = entries[i]->key;
        c[i] = entries[i]->count;
      }
    } else {
      const auto entries = SortedEntries<std::string>(impl_->strings, ties);
      const int64_t n = static_cast<int64_t>(entries.size());
      s.tokens = Tensor::Empty({n}, DType::kString);
      s.counts = Tensor::Empty({n}, DType::kInt64);
      std::string* t = s.tokens.data<std::string>();
      int64_t* c = s.counts.data<int64_t>();
      ParallelChunks(n, 1 << 14, [&](int64_t, int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          t[i] = entries[i]->key;
          c[i] = entries[i]->count;
        }
      });
    }
    return s;
  });
}

// --- counts files ----------------------------------------------------------------------------
//
// Note [counts file]: text, so that shards can be inspected and diffed: the header line
// "#tensorkit-vocabulary-counts<TAB>1<TAB>string" (or int64), then one "COUNT<TAB>TOKEN" line per
// token, every line ending in '\n', by count descending then token ascending. A string token is
// escaped so that a line holds it whatever its bytes: '\\' '\t' '\n' '\r' as \\ \t \n \r, other
// control bytes, DEL and bytes that are not UTF-8 as \xHH; valid UTF-8 stays as it is. An integer
// token is its decimal form. The reader refuses anything else, naming the line and column: a
// missing or other header, a count that is not a whole number >= 1, a raw control byte, an
// unknown escape, a repeated token, and a last line without its '\n' (a truncated file).

namespace {

constexpr std::string_view kCountsMagic = "#tensorkit-vocabulary-counts";

void AppendEscaped(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const char* named = c == '\\'   ? "\\\\"
                        : c == '\t' ? "\\t"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                                    : nullptr;
    if (named) {
      out->append(named);
      ++i;
      continue;
    }
    if (c >= 0x20 && c < 0x7f) {
      out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    size_t j = i;
    if (c >= 0x80 && io::NextUtf8(s, &j) >= 0) {
      out->append(s.substr(i, j - i));
      i = j;
      continue;
    }
    out->append("\\x");
    out->push_back(kHex[c >> 4]);
    out->push_back(kHex[c & 15]);
    ++i;
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// An empty counter of integers: the kind, without tokens (an empty Add fixes the kind).
VocabularyCounter IntegerKindOnly() {
  VocabularyCounter c;
  c.Add(Tensor::Empty({0}, DType::kInt64));
  return c;
}

// Reads counts files line by line; every error names the file, line and column.
class CountsParser {
 public:
  CountsParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  VocabularyCounter Run() {
    const char* op = "VocabularyCounter::Load";
    std::string_view line;
    TK_CHECK(NextLine(&line), kCorrupt, op, ": '", name_,
             "' is empty; a counts file starts with the line '", kCountsMagic, "\\t1\\tstring'");
    const std::string_view header = line;
    const size_t t1 = header.find('\t');
    if (header.substr(0, t1) != kCountsMagic) {
      Fail(1, "is not a counts file: it does not start with '" + std::string(kCountsMagic) +
                  "' (it starts with '" + io::Excerpt(header) + "')");
    }
    const std::string_view rest = t1 == std::string_view::npos ? "" : header.substr(t1 + 1);
    bool ints = false;
    if (rest == "1\tint64") {
      ints = true;
    } else if (rest != "1\tstring") {
      Fail(t1 + 2,
           "the header should end with version and dtype '1\\tstring' or '1\\tint64', "
           "got '" +
               io::Excerpt(rest) + "'");
    }
    VocabularyCounter out = ints ? IntegerKindOnly() : VocabularyCounter();
    std::string token;
    while (NextLine(&line)) {
      const size_t tab = line.find('\t');
      if (tab == std::string_view::npos) Fail(line.size() + 1, "expected COUNT<TAB>TOKEN");
      int64_t count = 0;
      const auto r = std::from_chars(line.data(), line.data() + tab, count);
      if (tab == 0 || r.ec != std::errc() || r.ptr != line.data() + tab || count < 1) {
        Fail(1, "the count '" + io::Excerpt(line.substr(0, tab)) +
                    "' is not a whole number of at least 1");
      }
      const std::string_view field = line.substr(tab + 1);
      if (ints) {
        int64_t v = 0;
        const auto q = std::from_chars(field.data(), field.data() + field.size(), v);
        if (field.empty() || q.ec != std::errc() || q.ptr != field.data() + field.size()) {
          Fail(tab + 2, "the token '" + io::Excerpt(field) + "' is not an int64 in decimal");
        }
        if (out.CountOf(v) != 0) Fail(tab + 2, "token " + std::to_string(v) + " is repeated");
        Add(&out, v, count);
      } else {
        Unescape(field, tab + 2, &token);
        if (out.CountOf(token) != 0) {
          Fail(tab + 2, "token '" + io::Excerpt(token) + "' is repeated");
        }
        Add(&out, std::string_view(token), count);
      }
    }
    return out;
  }

 private:
  template <typename Token>
  void Add(VocabularyCounter* c, Token token, int64_t count) {
    try {
      c->AddToken(token, count);
    } catch (const Error& e) {
      Fail(1, e.what());
    }
  }

  // The next line without its '\n'; false at the end. A last line without '\n' is an Error.
  bool NextLine(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    ++line_no_;
    const size_t nl = text_.find('\n', pos_);
    if (nl == std::string_view::npos) {
      Fail(text_.size() - pos_ + 1, "the last line does not end in '\\n' (a truncated file?)");
    }
    *line = text_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return true;
  }

  void Unescape(std::string_view f, size_t col, std::string* out) {
    out->clear();
    for (size_t i = 0; i < f.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(f[i]);
      if (c < 0x20 || c == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "0x%02x", c);
        Fail(col + i, std::string("raw control byte ") + hex + " in a token (it must be escaped)");
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        continue;
      }
      const char e = i + 1 < f.size() ? f[i + 1] : '\0';
      if (e == '\\' || e == 't' || e == 'n' || e == 'r') {
        out->push_back(e == '\\' ? '\\' : e == 't' ? '\t' : e == 'n' ? '\n' : '\r');
        ++i;
      } else if (e == 'x' && i + 3 < f.size() && HexDigit(f[i + 2]) >= 0 &&
                 HexDigit(f[i + 3]) >= 0) {
        out->push_back(static_cast<char>(HexDigit(f[i + 2]) * 16 + HexDigit(f[i + 3])));
        i += 3;
      } else {
        Fail(col + i,
             "bad escape '" + io::Excerpt(f.substr(i, 4)) + "' (use \\\\, \\t, \\n, \\r or \\xHH)");
      }
    }
  }

  [[noreturn]] void Fail(size_t col, const std::string& what) const {
    Throw(ErrorCode::kCorrupt, "VocabularyCounter::Load: '", name_, "' line ", line_no_, " column ",
          col, ": ", what);
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
  int64_t line_no_ = 0;
};

}  // namespace

std::string VocabularyCounter::Serialize() const {
  return fi::ReportingAllocationFailure("VocabularyCounter::Save", [&] {
    const Sorted s = SortedCounts();
    const int64_t n = s.tokens.NumElements();
    const bool ints = impl_->kind == Kind::kInt;
    std::string out(kCountsMagic);
    out += ints ? "\t1\tint64\n" : "\t1\tstring\n";
    const int64_t* c = s.counts.data<int64_t>();
    char buf[24];
    for (int64_t i = 0; i < n; ++i) {
      out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), c[i]).ptr - buf));
      out.push_back('\t');
      if (ints) {
        const int64_t v = s.tokens.data<int64_t>()[i];
        out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), v).ptr - buf));
      } else {
        AppendEscaped(s.tokens.data<std::string>()[i], &out);
      }
      out.push_back('\n');
    }
    return out;
  });
}

void VocabularyCounter::Save(const std::string& path) const {
  const std::string text = Serialize();
  io::AtomicFile file(path);
  file.Write(text);
  file.Commit();
}

VocabularyCounter VocabularyCounter::Parse(std::string_view text, const std::string& name) {
  return fi::ReportingAllocationFailure("VocabularyCounter::Load",
                                        [&] { return CountsParser(text, name).Run(); });
}

VocabularyCounter VocabularyCounter::Load(const std::string& path) {
  io::MappedFile file(path);
  const io::Bytes b = file.bytes();
  return Parse(std::string_view(reinterpret_cast<const char*>(b.data), b.size), path);
}

}  // namespace tensorkit
