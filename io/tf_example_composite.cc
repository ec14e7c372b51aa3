// SparseFeature, RaggedFeature and FixedLenSequenceFeature: their input keys are parsed as
// VarLenFeatures (internal::ParseFixedAndVarLen), then each record's pieces are checked and
// assembled, as TensorFlow's parsing_config assembles the raw outputs of its parse op.
#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tf_example_internal.h"

namespace tensorkit::io {
namespace {

// TensorFlow's three kinds of parse keys; a key read by two kinds is refused, as TensorFlow
// refuses it ("Dense and sparse keys must not intersect" and the like).
enum class Role { kDense, kSparse, kRagged };

const char* RoleName(Role r) {
  switch (r) {
    case Role::kDense:
      return "a dense (FixedLenFeature) key";
    case Role::kSparse:
      return "a sparse (VarLenFeature or SparseFeature) key";
    default:
      return "a ragged (RaggedFeature) key";
  }
}

struct Input {
  DType dtype;
  Role role;
  std::string feature;           // the first feature reading the key, for errors
  int slot = -1;                 // in the base spec's var_len; -1 for a dense key
  DType splits = DType::kInt64;  // a ragged key's row_splits_dtype
};

std::string PartitionName(const RaggedPartition& p) {
  using K = RaggedPartition::Kind;
  switch (p.kind) {
    case K::kRowSplits:
      return "RowSplits('" + Excerpt(p.key) + "')";
    case K::kRowLengths:
      return "RowLengths('" + Excerpt(p.key) + "')";
    case K::kRowStarts:
      return "RowStarts('" + Excerpt(p.key) + "')";
    case K::kRowLimits:
      return "RowLimits('" + Excerpt(p.key) + "')";
    case K::kValueRowIds:
      return "ValueRowIds('" + Excerpt(p.key) + "')";
    default:
      return "UniformRowLength(" + std::to_string(p.length) + ")";
  }
}

// The keys a spec reads: each output named once, each input key read by one kind of feature
// (TensorFlow's dense, sparse and ragged keys) with one dtype, and the keys to parse as
// VarLenFeatures (every input but a FixedLenFeature's), in slot order.
class KeyPlan {
 public:
  explicit KeyPlan(const char* op) : op_(op) {}

  std::vector<VarLenFeature> parsed;
  int Slot(const std::string& key) const { return inputs_.find(key)->second.slot; }

  void AddFixed(const FixedLenFeature& f) {
    Name(f.key, "FixedLenFeature");
    Use(f.key, f.dtype, Role::kDense, f.key, "key", DType::kInt64, false);
  }
  void AddVarLen(const VarLenFeature& f) {
    Name(f.key, "VarLenFeature");
    Use(f.key, f.dtype, Role::kSparse, f.key, "key");
  }
  void AddSparse(const SparseFeature& f) {
    Name(f.key, "SparseFeature");
    TK_CHECK(!f.index_keys.empty() && f.index_keys.size() == f.size.size(), kInvalidArgument, op_,
             ": SparseFeature '", Excerpt(f.key), "' has ", f.index_keys.size(),
             " index keys and a size of ", f.size.size(), " dims; give one size per index key");
    for (size_t d = 0; d < f.size.size(); ++d) {
      TK_CHECK(f.size[d] >= 0, kInvalidArgument, op_, ": SparseFeature '", Excerpt(f.key),
               "' has size ", ShapeString(f.size), "; every dim must be >= 0");
      Use(f.index_keys[d], DType::kInt64, Role::kSparse, f.key, "index key");
    }
    Use(f.value_key, f.dtype, Role::kSparse, f.key, "value key");
  }
  void AddFixedSequence(const FixedLenSequenceFeature& f) {
    Name(f.key, "FixedLenSequenceFeature");
    Use(f.key, f.dtype, Role::kDense, f.key, "key");
    int64_t stride = 1;
    for (int64_t d : f.shape) {
      TK_CHECK(d >= 0, kInvalidArgument, op_, ": FixedLenSequenceFeature '", Excerpt(f.key),
               "' has shape ", ShapeString(f.shape), "; every dim must be >= 0");
      stride = CheckedMul(stride, d, f.key, "FixedLenSequenceFeature shape");
    }
    if (f.default_value.defined()) {
      TK_CHECK(f.default_value.dtype() == f.dtype && f.default_value.NumElements() == 1,
               kInvalidArgument, op_, ": FixedLenSequenceFeature '", Excerpt(f.key), "' is ",
               DTypeName(f.dtype), " but its default_value (the padding) is ",
               DTypeName(f.default_value.dtype()), " of dims ", ShapeString(f.default_value.Dims()),
               "; give one ", DTypeName(f.dtype), " element");
    }
  }
  void AddRagged(const RaggedFeature& f) {
    Name(f.key, "RaggedFeature");
    TK_CHECK(f.row_splits_dtype == DType::kInt32 || f.row_splits_dtype == DType::kInt64,
             kInvalidArgument, op_, ": RaggedFeature '", Excerpt(f.key), "' has row_splits_dtype ",
             DTypeName(f.row_splits_dtype), "; use int32 or int64");
    Use(f.value_key.empty() ? f.key : f.value_key, f.dtype, Role::kRagged, f.key, "value key",
        f.row_splits_dtype);
    for (const RaggedPartition& p : f.partitions) {
      if (p.kind == RaggedPartition::Kind::kUniform) {
        TK_CHECK(p.length >= 1, kInvalidArgument, op_, ": RaggedFeature '", Excerpt(f.key),
                 "' has the partition ", PartitionName(p), "; a uniform row length is >= 1");
        continue;
      }
      Use(p.key, DType::kInt64, Role::kRagged, f.key, "partition key", f.row_splits_dtype);
    }
  }

 private:
  void Name(const std::string& key, const char* what) {
    TK_CHECK(names_.insert(key).second, kInvalidArgument, op_, ": '", Excerpt(key),
             "' names two features of the spec (one a ", what, "); each output needs its own name");
  }
  // Registers `key` as an input; a parsed one gets a slot.
  void Use(const std::string& key, DType dtype, Role role, const std::string& feature,
           const char* what, DType splits = DType::kInt64, bool parse = true) {
    TK_CHECK(!key.empty(), kInvalidArgument, op_, ": the ", what, " of '", Excerpt(feature),
             "' is empty; name the tf.Example feature that holds it");
    TK_CHECK((internal::kExampleDTypes & Bit(dtype)) != 0, kInvalidArgument, op_, ": the ", what,
             " '", Excerpt(key), "' of '", Excerpt(feature), "' has dtype ", DTypeName(dtype),
             "; tf.Example holds int64, float32 or string");
    auto [it, fresh] = inputs_.try_emplace(key, Input{dtype, role, feature, -1, splits});
    Input& in = it->second;
    if (!fresh) {
      TK_CHECK(in.role == role, kInvalidArgument, op_, ": '", Excerpt(key), "' is ",
               RoleName(in.role), " of '", Excerpt(in.feature), "' and ", RoleName(role), " of '",
               Excerpt(feature),
               "'; as in TensorFlow, the dense, sparse and ragged keys of a spec "
               "must not intersect");
      TK_CHECK(in.dtype == dtype, kDTypeMismatch, op_, ": '", Excerpt(key), "' is read as ",
               DTypeName(in.dtype), " by '", Excerpt(in.feature), "' and as ", DTypeName(dtype),
               " by '", Excerpt(feature), "'; a key has one dtype");
      TK_CHECK(in.splits == splits, kInvalidArgument, op_, ": '", Excerpt(key),
               "' is read with row_splits_dtype ", DTypeName(in.splits), " by '",
               Excerpt(in.feature), "' and ", DTypeName(splits), " by '", Excerpt(feature),
               "'; as in TensorFlow, RaggedFeatures sharing a key share its row_splits_dtype");
      return;
    }
    if (!parse) return;
    in.slot = static_cast<int>(parsed.size());
    parsed.push_back({key, dtype});
  }

  const char* op_;
  std::set<std::string_view> names_;
  std::map<std::string, Input, std::less<>> inputs_;
};

// The spec the composites are parsed from: the user's fixed and var_len features (slots
// 0..V-1), then every other key the composites read, as a VarLenFeature.
struct CompositePlan {
  ExampleSpec base;
  KeyPlan keys{"ParseExamples"};
};

CompositePlan PlanComposites(const ExampleSpec& spec) {
  CompositePlan plan;
  for (const FixedLenFeature& f : spec.fixed) plan.keys.AddFixed(f);
  for (const VarLenFeature& f : spec.var_len) plan.keys.AddVarLen(f);
  for (const SparseFeature& f : spec.sparse) plan.keys.AddSparse(f);
  for (const FixedLenSequenceFeature& f : spec.fixed_sequence) plan.keys.AddFixedSequence(f);
  for (const RaggedFeature& f : spec.ragged) plan.keys.AddRagged(f);
  plan.base.fixed = spec.fixed;
  plan.base.var_len = plan.keys.parsed;
  return plan;
}

// --- SparseFeature ------------------------------------------------------------------------------

SparseTensor BuildSparse(const SparseFeature& f, const std::vector<const JaggedTensor*>& index,
                         const JaggedTensor& value, int64_t B) {
  const int R = static_cast<int>(index.size());
  const int64_t* vo = value.offsets().data<int64_t>();
  std::vector<const int64_t*> io(R), iv(R);
  for (int d = 0; d < R; ++d) {
    io[d] = index[d]->offsets().data<int64_t>();
    iv[d] = index[d]->values().data<int64_t>();
  }
  Tensor indices = Tensor::Empty({vo[B], R + 1}, DType::kInt64);
  int64_t* out = indices.data<int64_t>();
  internal::ForRecords(B, [&](int64_t, int64_t r) {
    const int64_t n = vo[r + 1] - vo[r];
    for (int d = 0; d < R; ++d) {
      const int64_t m = io[d][r + 1] - io[d][r];
      TK_CHECK(m == n, kInvalidArgument, "ParseExamples: record ", r, ", SparseFeature '",
               Excerpt(f.key), "': index key '", Excerpt(f.index_keys[d]), "' holds ", m,
               " values but value key '", Excerpt(f.value_key), "' holds ", n,
               "; each value needs one index per index key");
    }
    for (int64_t j = 0; j < n; ++j) {
      int64_t* e = out + (vo[r] + j) * (R + 1);
      e[0] = r;
      for (int d = 0; d < R; ++d) {
        const int64_t x = iv[d][io[d][r] + j];
        TK_CHECK(x >= 0 && x < f.size[d], kOutOfRange, "ParseExamples: record ", r,
                 ", SparseFeature '", Excerpt(f.key), "': index key '", Excerpt(f.index_keys[d]),
                 "' holds ", x, " at position ", j, ", outside [0, ", f.size[d],
                 "); indices must lie inside the feature's size");
        e[1 + d] = x;
      }
    }
  });
  std::vector<int64_t> shape = {B};
  shape.insert(shape.end(), f.size.begin(), f.size.end());
  SparseTensor st = SparseTensor::Create(indices, value.values(), shape);
  if (!f.already_sorted) {
    std::vector<int> order(static_cast<size_t>(R + 1));
    std::iota(order.begin(), order.end(), 0);
    st.Reorder(order);
  }
  return st;
}

// [B, rows, *f.shape]: record r's values are values[first[r]..first[r + 1]), then
// f.default_value (0 or "" when undefined) to the end of its rows * prod(f.shape) elements.
Tensor PaddedRows(const FixedLenSequenceFeature& f, const Tensor& values, int64_t B, int64_t rows,
                  std::vector<int64_t> first) {
  int64_t stride = 1;
  for (int64_t d : f.shape) stride *= d;  // checked by KeyPlan
  std::vector<int64_t> dims = {B, rows};
  dims.insert(dims.end(), f.shape.begin(), f.shape.end());
  int64_t volume = 1;
  for (int64_t d : dims) volume = CheckedMul(volume, d, f.key, "FixedLenSequenceFeature output");
  Tensor out = Tensor::Empty(dims, f.dtype);
  std::vector<std::unique_ptr<StringOutput>> keep;
  internal::Fills fills;
  const internal::Dest to = internal::DestOf(out, &keep);
  internal::AddPadded(&fills, f, values, std::move(first), rows * stride, to);
  fills.Run();
  return out;
}

// --- FixedLenSequenceFeature ---------------------------------------------------------------

Tensor BuildFixedSequence(const FixedLenSequenceFeature& f, const JaggedTensor& j, int64_t B) {
  const int64_t* o = j.offsets().data<int64_t>();
  return PaddedRows(f, j.values(), B, internal::SequenceRows(f, j, B),
                    std::vector<int64_t>(o, o + B + 1));
}

// --- RaggedFeature ------------------------------------------------------------------------------

template <typename... Parts>
[[noreturn]] void PartitionFail(const RaggedFeature& f, const RaggedPartition& p, const char* item,
                                int64_t index, const Parts&... what) {
  Throw(ErrorCode::kInvalidArgument, "ParseExamples: ", item, " ", index, ", RaggedFeature '",
        Excerpt(f.key), "': partition ", PartitionName(p), " ", what...);
}

// Most rows a ValueRowIds partition may leave empty in one batch beyond its values' count.
constexpr int64_t kMaxEmptyRows = int64_t{1} << 20;

// One record being split by a partition: what its errors name (the feature, the partition and
// record r, an `item` of c `unit`s), and the row limits appended (absolute: `base` + within the
// record).
struct RecordSplit {
  const RaggedFeature& f;
  const RaggedPartition& p;
  const char* item;
  int64_t r;
  int64_t c;
  const char* unit;
  int64_t base;
  std::vector<int64_t>* splits;

  template <typename... Parts>
  [[noreturn]] void Fail(const Parts&... what) const {
    PartitionFail(f, p, item, r, what...);
  }
  void EndsAt(int64_t last) const {
    if (last != c) Fail("ends at ", last, " but the ", item, " has ", c, unit);
  }
};

// Row lengths: each >= 0, summing to c.
int64_t SplitByLengths(const RecordSplit& s, const int64_t* d, int64_t m) {
  int64_t used = 0;
  for (int64_t j = 0; j < m; ++j) {
    if (d[j] < 0 || d[j] > s.c - used) {
      s.Fail("holds the row length ", d[j], " at position ", j,
             "; lengths are >= 0 and sum to the ", s.item, "'s ", s.c, s.unit);
    }
    used += d[j];
    s.splits->push_back(s.base + used);
  }
  if (used != s.c) s.Fail("sums to ", used, " but the ", s.item, " has ", s.c, s.unit);
  return m;
}

// Row splits (from 0 to c) or row starts (from 0; the last row ends at c): non-decreasing.
int64_t SplitBySplitsOrStarts(const RecordSplit& s, const int64_t* d, int64_t m) {
  if (m == 0) {
    s.EndsAt(0);
    return 0;
  }
  if (d[0] != 0) s.Fail("starts at ", d[0], "; the first row starts at 0");
  for (int64_t j = 1; j < m; ++j) {
    if (d[j] < d[j - 1] || d[j] > s.c) {
      s.Fail("holds ", d[j], " at position ", j, " after ", d[j - 1],
             "; it must be non-decreasing and at most the ", s.item, "'s ", s.c, s.unit);
    }
    s.splits->push_back(s.base + d[j]);
  }
  if (s.p.kind == RaggedPartition::Kind::kRowSplits) {
    s.EndsAt(d[m - 1]);
    return m - 1;
  }
  s.splits->push_back(s.base + s.c);  // the last row ends where the record does
  return m;
}

// Row limits: non-decreasing, >= 0, the last at c.
int64_t SplitByLimits(const RecordSplit& s, const int64_t* d, int64_t m) {
  int64_t prev = 0;
  for (int64_t j = 0; j < m; ++j) {
    if (d[j] < prev || d[j] > s.c) {
      s.Fail("holds ", d[j], " at position ", j, " after ", prev,
             "; limits are non-decreasing, >= 0 and at most the ", s.item, "'s ", s.c, s.unit);
    }
    prev = d[j];
    s.splits->push_back(s.base + d[j]);
  }
  s.EndsAt(prev);
  return m;
}

// Value row ids: one per unit, non-decreasing and >= 0; the rows they skip are empty, and take
// from *empty_budget.
int64_t SplitByRowIds(const RecordSplit& s, const int64_t* d, int64_t m, int64_t* empty_budget) {
  if (m != s.c) s.Fail("holds ", m, " row ids for the ", s.item, "'s ", s.c, s.unit);
  int64_t prev = 0;
  for (int64_t j = 0; j < m; ++j) {
    if (d[j] < prev) {
      s.Fail("holds the row id ", d[j], " at position ", j, " after ", prev,
             "; row ids are non-decreasing and >= 0");
    }
    prev = d[j];
  }
  if (m == 0) return 0;
  const int64_t empty = d[m - 1] + 1 - m;  // d[m - 1] >= 0 and m >= 1: no overflow
  if (empty > *empty_budget) {
    s.Fail("holds the row id ", d[m - 1], ", which leaves more empty rows in ",
           "the batch than the ", kMaxEmptyRows, " (or as many as values) allowed");
  }
  *empty_budget -= empty;
  const int64_t rows = d[m - 1] + 1;
  int64_t j = 0;
  for (int64_t row = 0; row < rows; ++row) {
    while (j < m && d[j] == row) ++j;
    s.splits->push_back(s.base + j);
  }
  return rows;
}

// Appends record r's row limits (absolute: `base` + within the record) for `c` units split by
// the partition's m values d; returns the record's row count.
int64_t SplitRecord(const RaggedFeature& f, const RaggedPartition& p, const char* item, int64_t r,
                    const int64_t* d, int64_t m, int64_t c, const char* unit, int64_t* empty_budget,
                    std::vector<int64_t>* splits) {
  using K = RaggedPartition::Kind;
  const RecordSplit s{f, p, item, r, c, unit, splits->back(), splits};
  switch (p.kind) {
    case K::kRowLengths:
      return SplitByLengths(s, d, m);
    case K::kRowSplits:
    case K::kRowStarts:
      return SplitBySplitsOrStarts(s, d, m);
    case K::kRowLimits:
      return SplitByLimits(s, d, m);
    case K::kValueRowIds:
      return SplitByRowIds(s, d, m, empty_budget);
    default:
      Throw(ErrorCode::kInternal, "ParseExamples: unknown RaggedPartition kind");
  }
}

Tensor SplitsTensor(const std::vector<int64_t>& s, const RaggedFeature& f) {
  if (f.row_splits_dtype == DType::kInt64) return Tensor::FromVector<int64_t>(s);
  internal::CheckSplitsFit(f, s.back());
  return Tensor::FromVector(std::vector<int32_t>(s.begin(), s.end()));
}

// `item` names what the B rows of `values` are in errors: "record", or "step" for a
// SequenceExample's feature list (its steps counted over the batch).
RaggedOutput BuildRagged(const RaggedFeature& f, const JaggedTensor& values,
                         const std::vector<const JaggedTensor*>& parts, int64_t B,
                         const char* item) {
  const int64_t* vo = values.offsets().data<int64_t>();
  std::vector<int64_t> count(static_cast<size_t>(B));
  for (int64_t r = 0; r < B; ++r) count[r] = vo[r + 1] - vo[r];
  std::vector<int64_t> dense;                // trailing uniform lengths, outermost first
  std::vector<std::vector<int64_t>> levels;  // row splits, innermost first
  for (size_t k = f.partitions.size(); k-- > 0;) {
    const RaggedPartition& p = f.partitions[k];
    const char* unit = levels.empty() && dense.empty() ? " values" : " rows";
    if (p.kind == RaggedPartition::Kind::kUniform) {
      int64_t total = 0;
      for (int64_t r = 0; r < B; ++r) {
        if (count[r] % p.length != 0) {
          PartitionFail(f, p, item, r, "does not divide the ", item, "'s ", count[r], unit);
        }
        total += count[r];
        count[r] /= p.length;
      }
      if (levels.empty()) {
        dense.insert(dense.begin(), p.length);
        continue;
      }
      std::vector<int64_t> s(static_cast<size_t>(total / p.length + 1));
      for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<int64_t>(i) * p.length;
      levels.push_back(std::move(s));
      continue;
    }
    const int64_t* po = parts[k]->offsets().data<int64_t>();
    const int64_t* pv = parts[k]->values().data<int64_t>();
    const int64_t units = std::accumulate(count.begin(), count.end(), int64_t{0});
    int64_t empty_budget = std::max(kMaxEmptyRows, units);
    std::vector<int64_t> splits = {0};
    splits.reserve(static_cast<size_t>(po[B] + 1));
    for (int64_t r = 0; r < B; ++r) {
      count[r] = SplitRecord(f, p, item, r, pv + po[r], po[r + 1] - po[r], count[r], unit,
                             &empty_budget, &splits);
    }
    levels.push_back(std::move(splits));
  }
  RaggedOutput out;
  std::vector<int64_t> batch(static_cast<size_t>(B + 1), 0);
  for (int64_t r = 0; r < B; ++r) batch[r + 1] = batch[r] + count[r];
  out.nested_row_splits.push_back(SplitsTensor(batch, f));
  for (size_t k = levels.size(); k-- > 0;)
    out.nested_row_splits.push_back(SplitsTensor(levels[k], f));
  out.flat_values = values.values();
  if (!dense.empty()) {
    int64_t inner = 1;
    for (int64_t n : dense)
      inner = CheckedMul(inner, n, f.key, "RaggedFeature uniform row lengths");
    std::vector<int64_t> dims = {out.flat_values.NumElements() / inner};
    dims.insert(dims.end(), dense.begin(), dense.end());
    out.flat_values = out.flat_values.WithPattern(DefaultPattern(dims, "ParseExamples"));
  }
  return out;
}

// --- tf.SequenceExample feature lists ------------------------------------------------------

// A feature list's steps as rows of values.
JaggedTensor StepRows(const internal::FeatureListValues& v) {
  return JaggedTensor::FromOffsets(v.values, v.step_offsets);
}

Tensor BuildListDense(const FixedLenSequenceFeature& f, const internal::FeatureListValues& v,
                      int64_t B, Tensor* lengths) {
  int64_t stride = 1;
  for (int64_t d : f.shape) stride *= d;  // checked by KeyPlan
  const int64_t* rs = v.record_steps.data<int64_t>();
  const int64_t* so = v.step_offsets.data<int64_t>();
  *lengths = Tensor::Empty({B}, DType::kInt64);
  int64_t max_steps = 0;
  for (int64_t r = 0; r < B; ++r) {
    if (!v.present[r] && !f.allow_missing) {
      Throw(ErrorCode::kInvalidArgument, "ParseSequenceExamples: record ", r, ": feature list '",
            Excerpt(f.key), "' (FixedLenSequenceFeature ", DTypeName(f.dtype), " ",
            ShapeString(f.shape),
            ") is required but missing; set allow_missing to read it as no steps");
    }
    for (int64_t j = rs[r]; j < rs[r + 1]; ++j) {
      if (so[j + 1] - so[j] != stride) {
        Throw(ErrorCode::kInvalidArgument, "ParseSequenceExamples: record ", r, ", feature list '",
              Excerpt(f.key), "', step ", j - rs[r], ": holds ", so[j + 1] - so[j],
              " values but FixedLenSequenceFeature shape ", ShapeString(f.shape), " needs ",
              stride);
      }
    }
    lengths->data<int64_t>()[r] = rs[r + 1] - rs[r];
    max_steps = std::max(max_steps, rs[r + 1] - rs[r]);
  }
  std::vector<int64_t> first(static_cast<size_t>(B + 1));
  for (int64_t r = 0; r <= B; ++r) first[r] = so[rs[r]];
  return PaddedRows(f, v.values, B, max_steps, std::move(first));
}

SparseTensor BuildListSparse(const internal::FeatureListValues& v, int64_t B) {
  const int64_t* rs = v.record_steps.data<int64_t>();
  const int64_t* so = v.step_offsets.data<int64_t>();
  const int64_t nnz = v.values.NumElements();
  Tensor indices = Tensor::Empty({nnz, 3}, DType::kInt64);
  int64_t* ix = indices.data<int64_t>();
  int64_t max_steps = 0, max_values = 0;
  for (int64_t r = 0; r < B; ++r) {
    max_steps = std::max(max_steps, rs[r + 1] - rs[r]);
    for (int64_t j = rs[r]; j < rs[r + 1]; ++j)
      max_values = std::max(max_values, so[j + 1] - so[j]);
  }
  internal::ForRecords(B, [&](int64_t, int64_t r) {
    for (int64_t j = rs[r]; j < rs[r + 1]; ++j) {
      for (int64_t k = so[j]; k < so[j + 1]; ++k) {
        ix[3 * k] = r;
        ix[3 * k + 1] = j - rs[r];
        ix[3 * k + 2] = k - so[j];
      }
    }
  });
  return SparseTensor::Create(indices, v.values, {B, max_steps, max_values}, {0, 1, 2});
}

RaggedOutput BuildListRagged(const RaggedFeature& f, const internal::FeatureListValues& values,
                             const std::vector<const internal::FeatureListValues*>& parts,
                             int64_t B) {
  const int64_t* vs = values.record_steps.data<int64_t>();
  std::vector<JaggedTensor> part_rows(parts.size());
  std::vector<const JaggedTensor*> part_ptrs(parts.size(), nullptr);
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k] == nullptr) continue;
    const int64_t* ps = parts[k]->record_steps.data<int64_t>();
    for (int64_t r = 0; r < B; ++r) {
      if (ps[r + 1] - ps[r] != vs[r + 1] - vs[r]) {
        Throw(ErrorCode::kInvalidArgument, "ParseSequenceExamples: record ", r, ", RaggedFeature '",
              Excerpt(f.key), "': partition ", PartitionName(f.partitions[k]), " has ",
              ps[r + 1] - ps[r], " steps but value key '",
              Excerpt(f.value_key.empty() ? f.key : f.value_key), "' has ", vs[r + 1] - vs[r],
              "; the partitions of a feature list must align with its steps");
      }
    }
    part_rows[k] = StepRows(*parts[k]);
    part_ptrs[k] = &part_rows[k];
  }
  RaggedOutput inner =
      BuildRagged(f, StepRows(values), part_ptrs, vs[B], "step (counted over the batch)");
  RaggedOutput out;
  out.flat_values = inner.flat_values;
  out.nested_row_splits.push_back(SplitsTensor(values.record_steps.ToVector<int64_t>(), f));
  for (Tensor& t : inner.nested_row_splits) out.nested_row_splits.push_back(std::move(t));
  return out;
}

}  // namespace

std::optional<ExampleSpec> internal::FlatSpec(const ExampleSpec& spec) {
  if (spec.sparse.empty() && spec.ragged.empty() && spec.fixed_sequence.empty()) return spec;
  const CompositePlan plan = PlanComposites(spec);
  if (!spec.sparse.empty()) return std::nullopt;
  for (const RaggedFeature& f : spec.ragged) {
    if (!f.partitions.empty()) return std::nullopt;
  }
  // A key read twice (two RaggedFeatures of one value key) is parsed once: not flat.
  if (plan.keys.parsed.size() !=
      spec.var_len.size() + spec.fixed_sequence.size() + spec.ragged.size()) {
    return std::nullopt;
  }
  return plan.base;
}

void internal::CheckSplitsFit(const RaggedFeature& f, int64_t last) {
  TK_CHECK(f.row_splits_dtype == DType::kInt64 || last <= std::numeric_limits<int32_t>::max(),
           kOutOfRange, "ParseExamples: RaggedFeature '", Excerpt(f.key), "' has row splits up to ",
           last, ", past its int32 row_splits_dtype; use row_splits_dtype int64");
}

int64_t internal::SequenceRows(const FixedLenSequenceFeature& f, const JaggedTensor& j, int64_t B) {
  int64_t stride = 1;
  for (int64_t d : f.shape) stride *= d;  // checked by PlanComposites
  const int64_t* o = j.offsets().data<int64_t>();
  int64_t max_rows = 0;
  for (int64_t r = 0; r < B; ++r) {
    const int64_t n = o[r + 1] - o[r];
    if (stride == 0 ? n != 0 : n % stride != 0) {
      Throw(ErrorCode::kInvalidArgument, "ParseExamples: record ", r, ", FixedLenSequenceFeature '",
            Excerpt(f.key), "': holds ", n, " values, not a multiple of the ", stride,
            " in a row of shape ", ShapeString(f.shape));
    }
    if (stride != 0) max_rows = std::max(max_rows, n / stride);
  }
  return max_rows;
}

const SparseTensor& ParsedExamples::Sparse(std::string_view key) const {
  return internal::OutputOf(sparse_keys, sparse, key, "ParsedExamples::Sparse", "SparseFeature");
}

const Tensor& ParsedExamples::FixedSequence(std::string_view key) const {
  return internal::OutputOf(fixed_sequence_keys, fixed_sequence, key,
                            "ParsedExamples::FixedSequence", "FixedLenSequenceFeature");
}

const RaggedOutput& ParsedExamples::Ragged(std::string_view key) const {
  return internal::OutputOf(ragged_keys, ragged, key, "ParsedExamples::Ragged", "RaggedFeature");
}

static ParsedExamples ParseExamplesUnguarded(const std::vector<std::string_view>& records,
                                             const ExampleSpec& spec);

ParsedExamples ParseExamples(const std::vector<std::string_view>& records,
                             const ExampleSpec& spec) {
  return alloc_fault::ReportingAllocationFailure(
      "ParseExamples", [&] { return ParseExamplesUnguarded(records, spec); });
}

static ParsedExamples ParseExamplesUnguarded(const std::vector<std::string_view>& records,
                                             const ExampleSpec& spec) {
  if (spec.sparse.empty() && spec.ragged.empty() && spec.fixed_sequence.empty()) {
    return internal::ParseFixedAndVarLen(records, spec);
  }
  const CompositePlan plan = PlanComposites(spec);
  ParsedExamples base = internal::ParseFixedAndVarLen(records, plan.base);
  const int64_t B = static_cast<int64_t>(records.size());
  auto jagged = [&](const std::string& key) { return &base.var_len[plan.keys.Slot(key)]; };
  ParsedExamples out;
  out.fixed = std::move(base.fixed);
  out.fixed_keys = std::move(base.fixed_keys);
  for (size_t i = 0; i < spec.var_len.size(); ++i) {
    out.var_len.push_back(base.var_len[i]);
    out.var_len_keys.push_back(spec.var_len[i].key);
  }
  for (const SparseFeature& f : spec.sparse) {
    std::vector<const JaggedTensor*> index;
    for (const std::string& k : f.index_keys) index.push_back(jagged(k));
    out.sparse.push_back(BuildSparse(f, index, *jagged(f.value_key), B));
    out.sparse_keys.push_back(f.key);
  }
  for (const RaggedFeature& f : spec.ragged) {
    std::vector<const JaggedTensor*> parts;
    for (const RaggedPartition& p : f.partitions) {
      parts.push_back(p.kind == RaggedPartition::Kind::kUniform ? nullptr : jagged(p.key));
    }
    out.ragged.push_back(
        BuildRagged(f, *jagged(f.value_key.empty() ? f.key : f.value_key), parts, B, "record"));
    out.ragged_keys.push_back(f.key);
  }
  for (const FixedLenSequenceFeature& f : spec.fixed_sequence) {
    out.fixed_sequence.push_back(BuildFixedSequence(f, *jagged(f.key), B));
    out.fixed_sequence_keys.push_back(f.key);
  }
  return out;
}

const Tensor& ParsedSequenceExamples::FeatureListDense(std::string_view key) const {
  return internal::OutputOf(feature_list_dense_keys, feature_list_dense, key,
                            "ParsedSequenceExamples::FeatureListDense", "feature_list_dense");
}
const Tensor& ParsedSequenceExamples::FeatureListLength(std::string_view key) const {
  return internal::OutputOf(feature_list_dense_keys, feature_list_lengths, key,
                            "ParsedSequenceExamples::FeatureListLength", "feature_list_dense");
}
const SparseTensor& ParsedSequenceExamples::FeatureListSparse(std::string_view key) const {
  return internal::OutputOf(feature_list_sparse_keys, feature_list_sparse, key,
                            "ParsedSequenceExamples::FeatureListSparse", "feature_list_sparse");
}
const RaggedOutput& ParsedSequenceExamples::FeatureListRagged(std::string_view key) const {
  return internal::OutputOf(feature_list_ragged_keys, feature_list_ragged, key,
                            "ParsedSequenceExamples::FeatureListRagged", "feature_list_ragged");
}

ParsedSequenceExamples internal::ParseFeatureListsOf(const std::vector<std::string_view>& records,
                                                     const SequenceExampleSpec& spec,
                                                     const std::function<void()>& context) {
  KeyPlan keys("ParseSequenceExamples");
  for (const FixedLenSequenceFeature& f : spec.feature_list_dense) keys.AddFixedSequence(f);
  for (const VarLenFeature& f : spec.feature_list_sparse) keys.AddVarLen(f);
  for (const RaggedFeature& f : spec.feature_list_ragged) keys.AddRagged(f);
  context();
  ParsedSequenceExamples out;
  const std::vector<internal::FeatureListValues> lists =
      internal::ParseFeatureLists(records, keys.parsed);
  const int64_t B = static_cast<int64_t>(records.size());
  auto list = [&](const std::string& key) { return &lists[keys.Slot(key)]; };
  for (const FixedLenSequenceFeature& f : spec.feature_list_dense) {
    Tensor lengths;
    out.feature_list_dense.push_back(BuildListDense(f, *list(f.key), B, &lengths));
    out.feature_list_lengths.push_back(lengths);
    out.feature_list_dense_keys.push_back(f.key);
  }
  for (const VarLenFeature& f : spec.feature_list_sparse) {
    out.feature_list_sparse.push_back(BuildListSparse(*list(f.key), B));
    out.feature_list_sparse_keys.push_back(f.key);
  }
  for (const RaggedFeature& f : spec.feature_list_ragged) {
    std::vector<const internal::FeatureListValues*> parts;
    for (const RaggedPartition& p : f.partitions) {
      parts.push_back(p.kind == RaggedPartition::Kind::kUniform ? nullptr : list(p.key));
    }
    out.feature_list_ragged.push_back(
        BuildListRagged(f, *list(f.value_key.empty() ? f.key : f.value_key), parts, B));
    out.feature_list_ragged_keys.push_back(f.key);
  }
  return out;
}

ParsedSequenceExamples ParseSequenceExamples(const std::vector<std::string_view>& records,
                                             const SequenceExampleSpec& spec) {
  ParsedExamples context;
  // The context is field 1, a Features message, as in a tf.Example.
  ParsedSequenceExamples out = internal::ParseFeatureListsOf(
      records, spec, [&] { context = ParseExamples(records, spec.context); });
  out.context = std::move(context);
  return out;
}

}  // namespace tensorkit::io
