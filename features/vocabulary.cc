// Vocabulary: fitting, Keras's StringLookup / IntegerLookup ids, and TensorFlow's vocabulary
// files.
#include "tensorkit/features/vocabulary.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/hash_table.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/features/hash.h"
#include "tensorkit/features/hash_device.h"
#include "tensorkit/features/hash_internal.h"
#include "tensorkit/features/lookup_device.h"
#include "tensorkit/features/vocabulary_internal.h"

namespace tensorkit {

namespace fi = features_internal;

// Note [vocabulary table]: a static open-addressing table (common/hash_table.h) of 16-byte slots
// {key, id}, at most half full. For strings the key is the token's Fingerprint64 and a hit is
// confirmed by comparing the bytes (tokens live back to back in one buffer); for integers the
// key is the token itself and the slot is chosen by MixInt64. Lookups run over fixed chunks of
// the values; each chunk hashes a block of values first and prefetches their slots, so that the
// cache misses of a block overlap. Every value's id depends only on the value, so any thread
// count gives the same ids.
struct Vocabulary::Table {
  // The tag: a string's fingerprint, or the integer token itself.
  using Slots = ProbeTable<int64_t, uint64_t>;
  using Slot = Slots::Slot;
  DType dtype = DType::kString;
  int64_t size = 0;
  std::string bytes;             // string tokens back to back
  std::vector<int64_t> offsets;  // [size + 1] into bytes
  std::vector<int64_t> ints;     // integer tokens
  Slots slots;
  // Integer tokens sorted, with their token indices, on each CUDA device that looked values up
  // (made on first use; the table itself never changes).
  mutable std::mutex device_mutex;
  mutable std::map<int, std::pair<Tensor, Tensor>> device_sorted;

  std::string_view Token(int64_t i) const {
    return std::string_view(bytes.data() + offsets[i],
                            static_cast<size_t>(offsets[i + 1] - offsets[i]));
  }
  const Slot* SlotOf(uint64_t h) const { return slots.BucketOf(h); }
  // The index of a string with fingerprint h (or of an integer), or -1.
  int64_t Find(std::string_view s, uint64_t h) const {
    return slots.Find(h, [&](const Slot& sl) { return sl.tag == h && Token(sl.index) == s; });
  }
  int64_t Find(int64_t v) const {
    const uint64_t key = static_cast<uint64_t>(v);
    return slots.Find(fi::MixInt64(v), [&](const Slot& sl) { return sl.tag == key; });
  }
  int64_t Find(std::string_view s) const { return Find(s, Fingerprint64(s)); }

  void Reserve(int64_t n) { slots.Reset(static_cast<size_t>(n), 16); }
  // Inserts token `id`; returns the index of an equal token already there, else -1.
  int64_t InsertString(int64_t id) {
    const std::string_view s = Token(id);
    const uint64_t h = Fingerprint64(s);
    Slot* sl = slots.Probe(h, [&](const Slot& o) { return o.tag == h && Token(o.index) == s; });
    if (sl->index >= 0) return sl->index;
    *sl = Slot{h, id};
    return -1;
  }
  int64_t InsertInt(int64_t id) {
    const int64_t v = ints[id];
    Slot* sl = slots.Probe(fi::MixInt64(v),
                           [&](const Slot& o) { return o.tag == static_cast<uint64_t>(v); });
    if (sl->index >= 0) return sl->index;
    *sl = Slot{static_cast<uint64_t>(v), id};
    return -1;
  }
};

namespace {

using Table = Vocabulary::Table;

// Where a vocabulary's tokens came from, for messages: "token 3" or "line 4 of 'v.txt'".
struct Origin {
  const char* unit = "token";  // "token" (0-based) or "line" (1-based)
  std::string file;            // the file of lines
  // A repeat in a file is a corrupt file; in a caller's list, a bad argument.
  ErrorCode code() const {
    return file.empty() ? ErrorCode::kInvalidArgument : ErrorCode::kCorrupt;
  }
  std::string Name(int64_t i) const {
    if (file.empty()) return std::string(unit) + " " + std::to_string(i);
    return "line " + std::to_string(i + 1) + " of '" + file + "'";
  }
};

std::shared_ptr<Table> StringTable(const std::string* tokens, int64_t n, const Origin& origin,
                                   const char* op) {
  auto t = std::make_shared<Table>();
  t->dtype = DType::kString;
  t->size = n;
  t->offsets.resize(static_cast<size_t>(n + 1));
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    t->offsets[i] = total;
    total += static_cast<int64_t>(tokens[i].size());
  }
  t->offsets[n] = total;
  t->bytes.reserve(static_cast<size_t>(total));
  for (int64_t i = 0; i < n; ++i) t->bytes += tokens[i];
  t->Reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t prev = t->InsertString(i);
    if (prev >= 0) {
      Throw(origin.code(), op, ": token '", io::Excerpt(tokens[i]), "' at ", origin.Name(i),
            " repeats ", origin.Name(prev), "; a vocabulary holds each token once");
    }
  }
  return t;
}

std::shared_ptr<Table> IntTable(std::vector<int64_t> tokens, const Origin& origin, const char* op) {
  auto t = std::make_shared<Table>();
  t->dtype = DType::kInt64;
  t->size = static_cast<int64_t>(tokens.size());
  t->ints = std::move(tokens);
  t->Reserve(t->size);
  for (int64_t i = 0; i < t->size; ++i) {
    const int64_t prev = t->InsertInt(i);
    if (prev >= 0) {
      Throw(origin.code(), op, ": token ", t->ints[i], " at ", origin.Name(i), " repeats ",
            origin.Name(prev), "; a vocabulary holds each token once");
    }
  }
  return t;
}

const std::shared_ptr<const Table>& EmptyTable() {
  static const std::shared_ptr<const Table> t = StringTable(nullptr, 0, Origin{}, "Vocabulary");
  return t;
}

// Throws unless `lookup` suits the table: num_oov_indices >= 0, a mask of the table's kind and
// not among its tokens (Keras refuses a vocabulary that holds the mask).
void CheckOptions(const Table& t, const LookupOptions& lookup, const char* op) {
  // Every id, the last token's included, must fit in int64.
  TK_CHECK(lookup.num_oov_indices >= 0 && lookup.num_oov_indices <= INT64_MAX - 1 - t.size,
           kInvalidArgument, op, ": num_oov_indices ", lookup.num_oov_indices,
           " must be at least 0 and leave the ids of the mask and the ", t.size,
           " tokens in int64");
  const bool strings = t.dtype == DType::kString;
  const bool other_mask = strings ? lookup.mask_value.has_value() : lookup.mask_token.has_value();
  TK_CHECK(!other_mask, kInvalidArgument, op, ": a ", strings ? "string" : "integer",
           " vocabulary takes a ", strings ? "mask_token" : "mask_value", ", not a ",
           strings ? "mask_value" : "mask_token");
  if (strings && lookup.mask_token) {
    const int64_t at = t.Find(*lookup.mask_token);
    TK_CHECK(at < 0, kInvalidArgument, op, ": the mask token '", io::Excerpt(*lookup.mask_token),
             "' is token ", at, " of the vocabulary; the mask is id 0 and must not be a token");
  }
  if (!strings && lookup.mask_value) {
    const int64_t at = t.Find(*lookup.mask_value);
    TK_CHECK(at < 0, kInvalidArgument, op, ": the mask value ", *lookup.mask_value, " is token ",
             at, " of the vocabulary; the mask is id 0 and must not be a token");
  }
}

// What every chunk needs to turn a table index into an id.
struct IdMap {
  int64_t oov_start;    // the first OOV id
  int64_t num_oov;      // OOV ids
  int64_t token_start;  // the id of token 0
};

constexpr int64_t kBlock = 16;  // values hashed (and their slots prefetched) ahead of the probes

// ids of n strings; the first OOV position of each chunk in *first_oov (num_oov == 0).
void LookupStrings(const Table& t, const LookupOptions& o, const std::string* s, int64_t n,
                   int64_t* out, std::vector<int64_t>* first_oov) {
  const IdMap m{o.mask_token ? 1 : 0, o.num_oov_indices,
                (o.mask_token ? 1 : 0) + o.num_oov_indices};
  const std::string* mask = o.mask_token ? &*o.mask_token : nullptr;
  const int64_t chunk = int64_t{1} << 14;
  first_oov->assign(static_cast<size_t>(NumChunks(n, chunk)), -1);
  const uint64_t buckets = static_cast<uint64_t>(std::max<int64_t>(1, m.num_oov));
  ParallelChunks(n, chunk, [&](int64_t c, int64_t b, int64_t e) {
    uint64_t h[kBlock];
    for (int64_t i0 = b; i0 < e; i0 += kBlock) {
      const int64_t len = std::min(kBlock, e - i0);
      for (int64_t k = 0; k < len; ++k) {
        h[k] = Fingerprint64(s[i0 + k]);
        __builtin_prefetch(t.SlotOf(h[k]));
      }
      for (int64_t k = 0; k < len; ++k) {
        const int64_t i = i0 + k;
        if (mask && s[i] == *mask) {
          out[i] = 0;
          continue;
        }
        const int64_t id = t.Find(s[i], h[k]);
        if (id >= 0) {
          out[i] = m.token_start + id;
        } else if (m.num_oov > 0) {
          out[i] = m.oov_start + (m.num_oov == 1 ? 0 : static_cast<int64_t>(h[k] % buckets));
        } else {
          out[i] = -1;
          if ((*first_oov)[c] < 0) (*first_oov)[c] = i;
        }
      }
    }
  });
}

// The IntegerLookup rule of these options.
fi::IntegerIdRule IdRuleOf(const LookupOptions& o) {
  fi::IntegerIdRule r;
  r.has_mask = o.mask_value.has_value();
  r.mask = o.mask_value.value_or(0);
  r.num_oov = o.num_oov_indices;
  r.oov_start = r.has_mask ? 1 : 0;
  r.token_start = r.oov_start + r.num_oov;
  r.farmhash = o.oov_method == OovMethod::kFarmHash;
  return r;
}

template <typename T>
void LookupInts(const Table& t, const LookupOptions& o, const T* v, int64_t n, int64_t* out,
                std::vector<int64_t>* first_oov) {
  const fi::IntegerIdRule rule = IdRuleOf(o);
  const int64_t chunk = int64_t{1} << 14;
  first_oov->assign(static_cast<size_t>(NumChunks(n, chunk)), -1);
  ParallelChunks(n, chunk, [&](int64_t c, int64_t b, int64_t e) {
    for (int64_t i0 = b; i0 < e; i0 += kBlock) {
      const int64_t len = std::min(kBlock, e - i0);
      for (int64_t k = 0; k < len; ++k) {
        __builtin_prefetch(t.SlotOf(fi::MixInt64(static_cast<int64_t>(v[i0 + k]))));
      }
      for (int64_t k = 0; k < len; ++k) {
        const int64_t i = i0 + k;
        const int64_t x = static_cast<int64_t>(v[i]);
        out[i] = fi::IntegerId(rule, x, t.Find(x));
        if (out[i] < 0 && (*first_oov)[c] < 0) (*first_oov)[c] = i;
      }
    }
  });
}

// A counter over every value (the Fit of tensors).
VocabularyCounter CountAll(const std::vector<Tensor>& values) {
  VocabularyCounter c;
  for (const Tensor& v : values) c.Add(v);
  return c;
}

}  // namespace

Vocabulary::Vocabulary() : table_(EmptyTable()) {}

Vocabulary::Vocabulary(std::shared_ptr<const Table> table, const LookupOptions& lookup)
    : table_(std::move(table)), options_(lookup) {}

Vocabulary Vocabulary::Fit(const VocabularyCounter& counts, const VocabularyFitOptions& fit,
                           const LookupOptions& lookup) {
  const char* op = "Vocabulary::Fit";
  TK_CHECK(fit.min_frequency >= 1, kInvalidArgument, op, ": min_frequency ", fit.min_frequency,
           " must be at least 1");
  TK_CHECK(fit.max_tokens >= -1, kInvalidArgument, op, ": max_tokens ", fit.max_tokens,
           " must be at least 0, or -1 for no limit");
  return fi::ReportingAllocationFailure(op, [&] {
    const VocabularyCounter::Sorted s = counts.SortedCounts(fit.ties);
    const int64_t n = s.tokens.NumElements();
    const int64_t* c = s.counts.data<int64_t>();
    // Sorted by count descending: the tokens above the threshold are a prefix.
    const int64_t frequent =
        std::partition_point(c, c + n, [&](int64_t v) { return v >= fit.min_frequency; }) - c;
    const int64_t limit = fit.max_tokens < 0 ? frequent : std::min(frequent, fit.max_tokens);
    if (counts.dtype() == DType::kInt64) {
      const int64_t* t = s.tokens.data<int64_t>();
      std::vector<int64_t> kept;
      for (int64_t i = 0; i < frequent && static_cast<int64_t>(kept.size()) < limit; ++i) {
        if (!(lookup.mask_value && t[i] == *lookup.mask_value)) kept.push_back(t[i]);
      }
      return FromIntegers(kept, lookup);
    }
    const std::string* t = s.tokens.data<std::string>();
    std::vector<std::string> kept;
    for (int64_t i = 0; i < frequent && static_cast<int64_t>(kept.size()) < limit; ++i) {
      if (!(lookup.mask_token && t[i] == *lookup.mask_token)) kept.push_back(t[i]);
    }
    return FromTokens(kept, lookup);
  });
}

Vocabulary Vocabulary::Fit(const std::vector<Tensor>& values, const VocabularyFitOptions& fit,
                           const LookupOptions& lookup) {
  return Fit(CountAll(values), fit, lookup);
}

Vocabulary Vocabulary::FromTokens(const std::vector<std::string>& tokens,
                                  const LookupOptions& lookup) {
  const char* op = "Vocabulary::FromTokens";
  auto t = fi::ReportingAllocationFailure(op, [&] {
    return StringTable(tokens.data(), static_cast<int64_t>(tokens.size()), Origin{}, op);
  });
  CheckOptions(*t, lookup, op);
  return Vocabulary(std::move(t), lookup);
}

Vocabulary Vocabulary::FromIntegers(const std::vector<int64_t>& tokens,
                                    const LookupOptions& lookup) {
  const char* op = "Vocabulary::FromIntegers";
  auto t = fi::ReportingAllocationFailure(op, [&] { return IntTable(tokens, Origin{}, op); });
  CheckOptions(*t, lookup, op);
  return Vocabulary(std::move(t), lookup);
}

Vocabulary Vocabulary::FromTensor(const Tensor& tokens, const LookupOptions& lookup) {
  const char* op = "Vocabulary::FromTensor";
  fi::CheckVocabularyValues(tokens, op);
  fi::CheckOnCpu(tokens, "tokens", op);
  TK_CHECK(tokens.NumAxes() == 1, kShapeMismatch, op, ": tokens must be 1-D, got dims ",
           ShapeString(tokens.Dims()));
  if (tokens.dtype() == DType::kString) return FromTokens(tokens.ToVector<std::string>(), lookup);
  if (tokens.dtype() == DType::kInt32) {
    const std::vector<int32_t> v = tokens.ToVector<int32_t>();
    return FromIntegers(std::vector<int64_t>(v.begin(), v.end()), lookup);
  }
  return FromIntegers(tokens.ToVector<int64_t>(), lookup);
}

Vocabulary Vocabulary::WithOptions(const LookupOptions& lookup) const {
  CheckOptions(*table_, lookup, "Vocabulary::WithOptions");
  return Vocabulary(table_, lookup);
}

DType Vocabulary::dtype() const { return table_->dtype; }
int64_t Vocabulary::size() const { return table_->size; }
int64_t Vocabulary::token_start() const {
  const bool mask = table_->dtype == DType::kString ? options_.mask_token.has_value()
                                                    : options_.mask_value.has_value();
  return (mask ? 1 : 0) + options_.num_oov_indices;
}
int64_t Vocabulary::num_ids() const { return token_start() + size(); }

Tensor Vocabulary::tokens() const {
  const int64_t n = size();
  if (dtype() == DType::kInt64) return Tensor::FromVector<int64_t>(table_->ints, {n});
  Tensor t = Tensor::Empty({n}, DType::kString);
  std::string* p = t.data<std::string>();
  for (int64_t i = 0; i < n; ++i) p[i] = std::string(table_->Token(i));
  return t;
}

std::string_view Vocabulary::StringToken(int64_t i) const {
  TK_CHECK(dtype() == DType::kString, kDTypeMismatch,
           "Vocabulary::StringToken: this vocabulary holds integers; use IntegerToken");
  TK_CHECK(i >= 0 && i < size(), kOutOfRange, "Vocabulary::StringToken: token ", i,
           " is out of range [0, ", size(), ")");
  return table_->Token(i);
}

int64_t Vocabulary::IntegerToken(int64_t i) const {
  TK_CHECK(dtype() == DType::kInt64, kDTypeMismatch,
           "Vocabulary::IntegerToken: this vocabulary holds strings; use StringToken");
  TK_CHECK(i >= 0 && i < size(), kOutOfRange, "Vocabulary::IntegerToken: token ", i,
           " is out of range [0, ", size(), ")");
  return table_->ints[static_cast<size_t>(i)];
}

// --- lookup ----------------------------------------------------------------------------------

namespace {

// The sorted tokens of an integer table and their indices, on `device` (made once per device).
const std::pair<Tensor, Tensor>& DeviceSorted(const Table& t, Device device) {
  std::lock_guard<std::mutex> lock(t.device_mutex);
  auto it = t.device_sorted.find(device.index);
  if (it != t.device_sorted.end()) return it->second;
  std::vector<int64_t> order(t.ints.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return t.ints[a] < t.ints[b]; });
  std::vector<int64_t> keys(order.size());
  for (size_t k = 0; k < order.size(); ++k) keys[k] = t.ints[order[k]];
  std::pair<Tensor, Tensor> on{Tensor::FromVector(std::move(keys)).To(device),
                               Tensor::FromVector(std::move(order)).To(device)};
  return t.device_sorted.emplace(device.index, std::move(on)).first->second;
}

}  // namespace

Tensor Vocabulary::Lookup(const Tensor& values) const {
  const char* op = "Vocabulary::Lookup";
  fi::CheckVocabularyValues(values, op);
  const bool strings = values.dtype() == DType::kString;
  TK_CHECK(strings == (dtype() == DType::kString), kDTypeMismatch, op, ": values of dtype ",
           DTypeName(values.dtype()), " cannot be looked up in a vocabulary of ",
           strings ? "integers" : "strings", "; pass ", strings ? "int32 or int64" : "strings");
  if (OnCuda(values)) {  // integers only: strings never live on a device
    const auto& [keys, index] = DeviceSorted(*table_, values.device());
    int64_t first_oov = -1;
    Tensor out =
        features_cuda::IntegerLookup(values, keys, index, IdRuleOf(options_), &first_oov, op);
    if (first_oov >= 0) {
      const Tensor flat = values.HostContiguous();
      const int64_t x = flat.dtype() == DType::kInt64 ? flat.data<int64_t>()[first_oov]
                                                      : int64_t{flat.data<int32_t>()[first_oov]};
      Throw(ErrorCode::kInvalidArgument, op, ": value ", first_oov, " (", x,
            ") is not in the vocabulary of ", size(),
            " tokens and num_oov_indices is 0; set num_oov_indices >= 1 to map such values to "
            "OOV ids");
    }
    return out;
  }
  return fi::ReportingAllocationFailure(op, [&] {
    const Tensor v = values.HostContiguous();
    const int64_t n = v.NumElements();
    Tensor out = Tensor::Empty(values.Dims(), DType::kInt64);
    int64_t* o = out.data<int64_t>();
    std::vector<int64_t> first_oov;
    if (strings) {
      LookupStrings(*table_, options_, v.data<std::string>(), n, o, &first_oov);
    } else if (v.dtype() == DType::kInt64) {
      LookupInts(*table_, options_, v.data<int64_t>(), n, o, &first_oov);
    } else {
      LookupInts(*table_, options_, v.data<int32_t>(), n, o, &first_oov);
    }
    for (int64_t i : first_oov) {
      if (i < 0) continue;
      fi::DecimalBuffer buf;
      const std::string shown = strings
                                    ? "'" + io::Excerpt(v.data<std::string>()[i]) + "'"
                                    : std::string(fi::DecimalOf(v.dtype() == DType::kInt64
                                                                    ? v.data<int64_t>()[i]
                                                                    : int64_t{v.data<int32_t>()[i]},
                                                                &buf));
      Throw(ErrorCode::kInvalidArgument, op, ": value ", i, " (", shown,
            ") is not in the vocabulary of ", size(),
            " tokens and num_oov_indices is 0; set num_oov_indices >= 1 to map such values to "
            "OOV ids");
    }
    return out;
  });
}

JaggedTensor Vocabulary::Lookup(const JaggedTensor& values) const {
  TK_CHECK(values.defined(), kInvalidArgument,
           "Vocabulary::Lookup: the jagged tensor is default-constructed (undefined)");
  return JaggedTensor::FromOffsets(Lookup(values.values()), values.offsets(), values.weights());
}

SparseTensor Vocabulary::Lookup(const SparseTensor& values) const {
  return SparseTensor::Create(values.indices(), Lookup(values.values()), values.shape(),
                              values.order());
}

// --- vocabulary files ------------------------------------------------------------------------

void Vocabulary::Save(const std::string& path) const {
  const char* op = "Vocabulary::Save";
  std::string text = fi::ReportingAllocationFailure(op, [&] {
    std::string out;
    char buf[24];
    for (int64_t i = 0; i < size(); ++i) {
      if (dtype() == DType::kInt64) {
        const auto r = std::to_chars(buf, buf + sizeof(buf), table_->ints[i]);
        out.append(buf, static_cast<size_t>(r.ptr - buf));
      } else {
        const std::string_view s = table_->Token(i);
        // TensorFlow's reader splits at '\n', drops a final '\r' and refuses empty lines.
        const char* bad = s.empty()                                ? "is empty"
                          : s.find('\n') != std::string_view::npos ? "holds a '\\n'"
                          : s.back() == '\r'                       ? "ends in '\\r'"
                                                                   : nullptr;
        TK_CHECK(!bad, kInvalidArgument, op, ": token ", i, " ('", io::Excerpt(s), "') ", bad,
                 ", which a vocabulary file of one token a line cannot hold; drop or replace it "
                 "before saving '",
                 path, "'");
        out.append(s);
      }
      out.push_back('\n');
    }
    return out;
  });
  io::AtomicFile file(path);
  file.Write(text);
  file.Commit();
}

Vocabulary Vocabulary::Load(const std::string& path, DType dtype, const LookupOptions& lookup) {
  const char* op = "Vocabulary::Load";
  TK_CHECK(dtype == DType::kString || dtype == DType::kInt64, kDTypeMismatch, op,
           ": a vocabulary file holds strings or int64, not ", DTypeName(dtype));
  io::MappedFile file(path);
  const io::Bytes b = file.bytes();
  const std::string_view text(reinterpret_cast<const char*>(b.data), b.size);
  return fi::ReportingAllocationFailure(op, [&] {
    std::vector<std::string_view> lines;
    for (size_t pos = 0; pos < text.size();) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(pos, nl - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      TK_CHECK(!line.empty(), kCorrupt, op, ": '", path, "' line ", lines.size() + 1,
               " is empty; a vocabulary file holds one non-empty token a line");
      lines.push_back(line);
      pos = nl + 1;
    }
    const Origin origin{"line", path};
    std::shared_ptr<Table> t;
    if (dtype == DType::kInt64) {
      std::vector<int64_t> v(lines.size());
      for (size_t i = 0; i < lines.size(); ++i) {
        const std::string_view l = lines[i];
        const auto r = std::from_chars(l.data(), l.data() + l.size(), v[i]);
        TK_CHECK(r.ec == std::errc() && r.ptr == l.data() + l.size(), kCorrupt, op, ": '", path,
                 "' line ", i + 1, " ('", io::Excerpt(l), "') is not an int64 in decimal");
      }
      t = IntTable(std::move(v), origin, op);
    } else {
      std::vector<std::string> v(lines.begin(), lines.end());
      t = StringTable(v.data(), static_cast<int64_t>(v.size()), origin, op);
    }
    CheckOptions(*t, lookup, op);
    return Vocabulary(std::move(t), lookup);
  });
}

}  // namespace tensorkit
