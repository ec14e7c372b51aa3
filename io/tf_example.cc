// tf.Example parse: FixedLenFeatures and VarLenFeatures of a batch of records, decoded by the wire
// decoder of tf_example_wire.h into the spec's outputs.
//
// Note [two passes]: pass 1 walks each record once, keeps where each spec feature's values are
// (the last map entry of a key wins), checks the list type, decodes FixedLenFeatures straight
// into [B, *shape] and counts VarLenFeature values. Prefix sums of the counts give the jagged
// offsets; pass 2 puts the VarLenFeature values in place. Values of a trivially copyable type
// (numbers, BytesRefs) are decoded in pass 1 too, while the record is in cache, into a buffer
// per chunk and feature that pass 2 copies whole (a chunk's values of a feature are one run of
// the output); std::strings are decoded by pass 2 from the kept positions. Both passes run over
// fixed chunks of records, so nothing depends on the thread count, and both read the layout
// writers use by fast paths (Note [fast paths]), anything else by the field loops.
#include "tensorkit/io/tf_example.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/tf_example_internal.h"
#include "tensorkit/io/tf_example_wire.h"

namespace tensorkit::io {
namespace internal {
namespace {

// The spec checked, with each FixedLenFeature's default expanded to prod(shape) elements.
struct Plan {
  std::vector<const std::string*> keys;  // fixed, then var_len
  std::vector<int64_t> fixed_count;      // prod(shape)
  std::vector<Tensor> defaults;          // contiguous [count], undefined when required
};

Plan CheckSpec(const ExampleSpec& spec) {
  Plan plan;
  std::unordered_map<std::string_view, int> seen;
  auto add = [&](const std::string& key, DType dtype, const char* what) {
    TK_CHECK(seen.emplace(key, 1).second, kInvalidArgument, "ParseExamples: key '", Excerpt(key),
             "' appears twice in the spec; each feature is parsed once");
    TK_CHECK(KindOf(dtype) != kNoList, kInvalidArgument, "ParseExamples: ", what, " '",
             Excerpt(key), "' has dtype ", DTypeName(dtype),
             "; tf.Example holds int64, float32 or string");
    plan.keys.push_back(&key);
  };
  for (const FixedLenFeature& f : spec.fixed) {
    add(f.key, f.dtype, "FixedLenFeature");
    int64_t n = 1;
    for (int64_t d : f.shape) {
      TK_CHECK(d >= 0, kInvalidArgument, "ParseExamples: FixedLenFeature '", Excerpt(f.key),
               "' has shape ", ShapeString(f.shape), "; every dim must be >= 0");
      n = CheckedMul(n, d, f.key, "FixedLenFeature shape");
    }
    plan.fixed_count.push_back(n);
    Tensor def;
    if (f.default_value.defined()) {
      const Tensor& d = f.default_value;
      TK_CHECK(d.dtype() == f.dtype, kDTypeMismatch, "ParseExamples: FixedLenFeature '",
               Excerpt(f.key), "' is ", DTypeName(f.dtype), " but its default_value is ",
               DTypeName(d.dtype()));
      TK_CHECK(d.NumElements() == n || d.NumElements() == 1, kShapeMismatch,
               "ParseExamples: FixedLenFeature '", Excerpt(f.key), "' of shape ",
               ShapeString(f.shape), " needs a default_value of ", n,
               " elements (or 1, repeated), got dims ", ShapeString(d.Dims()));
      Dispatch<internal::kExampleDTypes>(f.dtype, "ParseExamples", [&]<typename T>() {
        std::vector<T> v = d.To(Device::Cpu()).ToVector<T>();
        if (v.size() == 1 && n != 1) v.assign(static_cast<size_t>(n), v[0]);
        def = Tensor::FromVector<T>(std::move(v), {n});
      });
    }
    plan.defaults.push_back(def);
  }
  for (const VarLenFeature& f : spec.var_len) add(f.key, f.dtype, "VarLenFeature");
  return plan;
}

// What the passes need of one spec feature (fixed, then var_len), fetched once rather than per
// record.
struct Column {
  const std::string* key;
  DType dtype;
  bool fixed;
  const std::vector<int64_t>* shape = nullptr;  // fixed: of one record's values
  int64_t n = 0;                                // fixed: prod(shape)
  void* data = nullptr;       // the output: [B, n] (fixed), the values (var_len, for pass 2)
  const void* def = nullptr;  // fixed: n default values; nullptr: required
  // var_len: its offsets [B + 1]; pass 1 writes record r's count at [r + 1], summed before pass 2.
  int64_t* offsets = nullptr;
};

// Consecutive columns of one dtype, all fixed or all var_len: the passes visit the columns in
// spec order (the error reported is the first one's) and dispatch on the dtype once per group
// rather than once per column.
struct ColumnGroup {
  int begin, end;
  DType dtype;
  bool fixed;
};

std::vector<ColumnGroup> GroupColumns(const std::vector<Column>& columns) {
  std::vector<ColumnGroup> groups;
  for (int s = 0; s < static_cast<int>(columns.size()); ++s) {
    const Column& col = columns[s];
    if (groups.empty() || groups.back().dtype != col.dtype || groups.back().fixed != col.fixed) {
      groups.push_back({s, s, col.dtype, col.fixed});
    }
    groups.back().end = s + 1;
  }
  return groups;
}

// The general read of a present Feature: its list (of the column's kind, else an Error), where
// its run starts and its count.
FeatureInfo ScanColumn(const Ctx& c, const Column& col, int64_t r, const uint8_t* fb,
                       const uint8_t* fe) {
  const FeatureInfo info = ScanFeature(c, fb, fe);
  const Kind want = KindOf(col.dtype);
  if (info.kind != kNoList && info.kind != want) {
    Throw(ErrorCode::kInvalidArgument, "ParseExamples: record ", r, ", feature '",
          Excerpt(*col.key), "': holds a ", KindName(info.kind), " but the spec's ",
          col.fixed ? "FixedLenFeature" : "VarLenFeature", " is ", DTypeName(col.dtype), " (a ",
          KindName(want), ")");
  }
  return info;
}

// Calls body.template operator()<T>() with T the C++ type a column of `dtype` is written as:
// the dtype's, or BytesRef for strings with refs.
template <typename Body>
void DispatchValue(DType dtype, bool refs, const Body& body) {
  Dispatch<internal::kExampleDTypes>(dtype, "ParseExamples", [&]<typename T>() {
    if constexpr (std::is_same_v<T, std::string>) {
      if (refs) return body.template operator()<internal::BytesRef>();
    }
    body.template operator()<T>();
  });
}

// Pass 1 of a FixedLenFeature: record r's n values into dst, from its Feature at `sp` (the
// fast path first, Note [fast paths]) or, when it holds no list, from the default.
template <typename T>
void ParseFixed(Ctx& c, const Column& col, int64_t r, Span sp, T* dst) {
  if (sp.begin != kAbsent) {
    c.key = col.key;
    const uint8_t* fb = c.base + sp.begin;
    const uint8_t* fe = fb + sp.size;
    const uint8_t* list = nullptr;
    if (OneList(fb, fe, KindOf(col.dtype), &list) && DecodeFast(list, fe, col.n, dst)) return;
    const FeatureInfo info = ScanColumn(c, col, r, fb, fe);
    if (info.kind != kNoList) {
      TK_CHECK(info.count == col.n, kInvalidArgument, "ParseExamples: record ", r, ", feature '",
               Excerpt(*col.key), "': holds ", info.count, " values but FixedLenFeature shape ",
               ShapeString(*col.shape), " needs ", col.n);
      DecodeFeature(c, info.kind, fb + info.run_begin, fe, dst);
      return;
    }
  }
  TK_CHECK(col.def != nullptr, kInvalidArgument, "ParseExamples: record ", r,
           ": required feature '", Excerpt(*col.key), "' (FixedLenFeature ", DTypeName(col.dtype),
           " ", ShapeString(*col.shape), ") is missing and has no default_value");
  const T* def = static_cast<const T*>(col.def);
  std::copy(def, def + col.n, dst);
}

// Pass 1 of a VarLenFeature: record r's value count, and in *lists where the run of its lists
// starts in its Feature at `sp` (left absent when it holds none).
template <typename T>
void CountVarLen(Ctx& c, const Column& col, int64_t r, Span sp, Span* lists) {
  int64_t count = 0;
  if (sp.begin != kAbsent) {
    c.key = col.key;
    const uint8_t* fb = c.base + sp.begin;
    const uint8_t* fe = fb + sp.size;
    const uint8_t* list = nullptr;
    if (OneList(fb, fe, KindOf(col.dtype), &list) && (count = CountFast<T>(list, fe)) >= 0) {
      *lists = sp;
    } else {
      const FeatureInfo info = ScanColumn(c, col, r, fb, fe);
      count = info.count;
      if (info.kind != kNoList) *lists = Span{sp.begin + info.run_begin, sp.size - info.run_begin};
    }
  }
  col.offsets[r + 1] = count;
}

// Pass 1's VarLenFeature values of one chunk (Note [two passes]): written in place without
// being zeroed first, in a buffer that grows by doubling.
struct Staged {
  // Room for n more T after the committed ones.
  template <typename T>
  T* Reserve(int64_t n) {
    const size_t need = size + static_cast<size_t>(n) * sizeof(T);
    if (need > capacity) {
      capacity = std::max({need, 2 * capacity, internal::kRecordChunk * sizeof(T)});
      std::unique_ptr<unsigned char[]> grown(new unsigned char[capacity]);
      if (size > 0) std::memcpy(grown.get(), data.get(), size);
      data = std::move(grown);
    }
    return reinterpret_cast<T*>(data.get() + size);
  }
  template <typename T>
  void Commit(int64_t n) {
    size += static_cast<size_t>(n) * sizeof(T);
  }
  std::unique_ptr<unsigned char[]> data;
  size_t size = 0, capacity = 0;
};

// At least the values of the list [p, end) of T's kind: each takes two bytes or more (bytes:
// tag and length), exactly four (floats) or one or more (varints).
template <typename T>
int64_t MaxValues(const uint8_t* p, const uint8_t* end) {
  if constexpr (kIsBytes<T>) return (end - p) / 2;
  if constexpr (std::is_same_v<T, float>) return (end - p) / 4;
  return end - p;
}

// Pass 1 of a VarLenFeature of a trivially copyable T (Note [two passes]): record r's values
// from its Feature at `sp` appended to *staged; returns their count.
template <typename T>
int64_t StageVarLen(Ctx& c, const Column& col, int64_t r, Span sp, Staged* staged) {
  if (sp.begin == kAbsent) return 0;
  c.key = col.key;
  const uint8_t* fb = c.base + sp.begin;
  const uint8_t* fe = fb + sp.size;
  const uint8_t* list = nullptr;
  if (OneList(fb, fe, KindOf(col.dtype), &list)) {
    const int64_t cap = MaxValues<T>(list, fe);
    const int64_t n = DecodeFastUpTo(list, fe, cap, staged->Reserve<T>(cap));
    if (n >= 0) {
      staged->Commit<T>(n);
      return n;
    }
  }
  const FeatureInfo info = ScanColumn(c, col, r, fb, fe);
  if (info.kind == kNoList || info.count == 0) return 0;
  DecodeFeature(c, info.kind, fb + info.run_begin, fe, staged->Reserve<T>(info.count));
  staged->Commit<T>(info.count);
  return info.count;
}

// Pass 2 of a VarLenFeature: the n values of `lists` (CountVarLen's) into dst.
template <typename T>
void DecodeVarLen(const Ctx& c, Kind kind, Span lists, int64_t n, T* dst) {
  const uint8_t* b = c.base + lists.begin;
  const uint8_t* e = b + lists.size;
  const uint8_t* list = nullptr;
  if (OneList(b, e, kind, &list) && DecodeFast(list, e, n, dst)) return;
  DecodeFeature(c, kind, b, e, dst);
}

// Records [b, e) of the string FixedLenFeatures among `columns` (BytesRefs) into their string
// targets: those that take ranges in any order when `in_order` is false, the others when true.
void SetFixedStrings(const std::vector<internal::FixedTarget>& targets,
                     const std::vector<Column>& columns, int64_t b, int64_t e, bool in_order) {
  for (size_t f = 0; f < targets.size(); ++f) {
    StringOutput* out = targets[f].strings;
    if (out == nullptr || out->InOrder() != in_order) continue;
    const auto* refs = static_cast<const internal::BytesRef*>(columns[f].data);
    const int64_t n = columns[f].n;
    out->SetSpans(b * n, e * n, refs + b * n);
  }
}

// A column's output: as its dtype, or BytesRef pairs (int64 with a trailing dim of 2) for
// strings with refs.
Tensor EmptyOutput(std::vector<int64_t> dims, DType dtype, bool refs) {
  if (!refs || dtype != DType::kString) return Tensor::Empty(dims, dtype);
  dims.push_back(2);
  return Tensor::Empty(dims, DType::kInt64);
}

// The columns of the passes and what they fill, for B records.
struct Columns {
  int64_t B = 0;
  int F = 0, V = 0;
  bool refs = false;            // strings as BytesRefs (ParseFixedAndVarLen with targets)
  std::vector<Column> columns;  // fixed, then var_len
  std::vector<ColumnGroup> groups;
  // Per VarLenFeature: its offsets and values.
  std::vector<Tensor> offsets, values;
  // The values decoded by pass 1, per chunk and VarLenFeature ([chunks, V]).
  std::vector<Staged> staged;
  std::vector<Span> var_lists;  // std::strings only: where each record's lists start, [B, V]
};

// The FixedLenFeature columns and their outputs in *out: the targets' numbers when there are
// targets, else new tensors. With targets, string defaults point into the spec's own
// default_value, which outlives the refs (plan.defaults does not), through *ref_defaults.
void AddFixedColumns(const ExampleSpec& spec, const Plan& plan,
                     const std::vector<FixedTarget>* targets, Columns* s, ParsedExamples* out,
                     std::vector<std::vector<BytesRef>>* ref_defaults) {
  ref_defaults->resize(static_cast<size_t>(s->F));
  for (int f = 0; f < s->F; ++f) {
    const FixedLenFeature& x = spec.fixed[f];
    std::vector<int64_t> dims = {s->B};
    dims.insert(dims.end(), x.shape.begin(), x.shape.end());
    if (s->refs && x.dtype != DType::kString) {
      const Tensor& t = (*targets)[f].numbers;
      TK_INTERNAL_CHECK(t.defined() && t.dtype() == x.dtype && t.IsContiguous() &&
                        t.NumElements() == s->B * plan.fixed_count[f]);
      out->fixed.push_back(t.WithPattern(DefaultPattern(dims, "ParseExamples")));
    } else {
      out->fixed.push_back(EmptyOutput(dims, x.dtype, s->refs));
    }
    out->fixed_keys.push_back(x.key);
    const void* def = plan.defaults[f].defined() ? plan.defaults[f].raw_data() : nullptr;
    if (s->refs && def != nullptr && x.dtype == DType::kString) {
      const Tensor& d = x.default_value;
      TK_CHECK(d.device().is_cpu() && d.IsContiguous(), kInternal,
               "ParseFixedAndVarLen: with targets the default_value of '", Excerpt(x.key),
               "' must be a contiguous CPU tensor");
      const std::string* v = d.data<std::string>();
      for (int64_t i = 0; i < plan.fixed_count[f]; ++i) {
        const std::string& one = v[d.NumElements() == 1 ? 0 : i];
        (*ref_defaults)[f].push_back(BytesRef{one.data(), static_cast<int64_t>(one.size())});
      }
      def = (*ref_defaults)[f].data();
    }
    s->columns.push_back(Column{&x.key, x.dtype, true, &x.shape, plan.fixed_count[f],
                                out->fixed[f].raw_data(), def});
  }
}

// The VarLenFeature columns, their offsets, and where pass 1 stages their values.
void AddVarLenColumns(const ExampleSpec& spec, Columns* s) {
  const int V = s->V;
  s->offsets.resize(static_cast<size_t>(V));
  s->values.resize(static_cast<size_t>(V));
  const size_t chunks = static_cast<size_t>(NumChunks(s->B, internal::kRecordChunk));
  s->staged.resize(chunks * V);
  for (const VarLenFeature& f : spec.var_len) {
    if (f.dtype == DType::kString && !s->refs) s->var_lists.resize(static_cast<size_t>(s->B * V));
  }
  for (int v = 0; v < V; ++v) {
    s->offsets[v] = Tensor::Empty({s->B + 1}, DType::kInt64);
    Column col{&spec.var_len[v].key, spec.var_len[v].dtype, false};
    col.offsets = s->offsets[v].data<int64_t>();
    s->columns.push_back(col);
  }
}

// Pass 1 (Note [two passes]): every record's features found, FixedLenFeatures decoded into
// place, VarLenFeature values counted and staged (std::strings: their lists kept for pass 2);
// with targets, the string FixedLenFeatures set chunk by chunk.
void PassOne(const std::vector<std::string_view>& records, const KeyIndex& index,
             const std::vector<FixedTarget>* targets, Columns& s) {
  const int64_t B = s.B;
  const int F = s.F, V = s.V;
  const bool refs = s.refs;
  const std::vector<Column>& columns = s.columns;
  const size_t chunks = static_cast<size_t>(NumChunks(B, internal::kRecordChunk));
  std::vector<std::vector<Span>> chunk_slots(chunks);
  std::vector<KeyOrder> chunk_orders(chunks, KeyOrder(index.size()));
  internal::ForRecords(B, [&](int64_t chunk, int64_t r) {
    std::vector<Span>& slots = chunk_slots[chunk];
    slots.assign(columns.size(), Span{});
    Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
          static_cast<int64_t>(records[r].size()), r};
    FindFeatures(c, index, &chunk_orders[chunk], slots.data());
    for (const ColumnGroup& g : s.groups) {
      DispatchValue(g.dtype, refs, [&]<typename T>() {
        for (int i = g.begin; i < g.end; ++i) {
          const Column& col = columns[i];
          if (g.fixed) {
            ParseFixed(c, col, r, slots[i], static_cast<T*>(col.data) + r * col.n);
          } else if constexpr (std::is_trivially_copyable_v<T>) {
            col.offsets[r + 1] = StageVarLen<T>(c, col, r, slots[i],
                                                &s.staged[static_cast<size_t>(chunk * V + i - F)]);
          } else {
            CountVarLen<T>(c, col, r, slots[i], &s.var_lists[static_cast<size_t>(r * V + i - F)]);
          }
        }
      });
    }
    if (refs && (r + 1 == B || (r + 1) % internal::kRecordChunk == 0)) {
      SetFixedStrings(*targets, columns, chunk * internal::kRecordChunk, r + 1, false);
    }
  });
  if (refs) SetFixedStrings(*targets, columns, 0, B, true);
}

// Between the passes: each VarLenFeature's offsets summed and its values allocated, and the
// values pass 1 staged copied into place, one copy per chunk and feature.
void PlaceVarLen(const ExampleSpec& spec, Columns& s) {
  const int64_t B = s.B;
  const int F = s.F, V = s.V;
  ParallelFor(0, V, 1, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      int64_t* o = s.columns[F + v].offsets;
      o[0] = 0;
      for (int64_t r = 0; r < B; ++r) o[r + 1] += o[r];
      s.values[v] = EmptyOutput({o[B]}, spec.var_len[v].dtype, s.refs);
      s.columns[F + v].data = s.values[v].raw_data();
    }
  });
  ParallelFor(0, static_cast<int64_t>(s.staged.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const Staged& buf = s.staged[static_cast<size_t>(i)];
      if (buf.size == 0) continue;
      const Column& col = s.columns[F + i % V];
      const int64_t first = std::min(B, (i / V) * internal::kRecordChunk);
      const int64_t size =
          col.dtype == DType::kString ? int64_t{sizeof(BytesRef)} : DTypeSize(col.dtype);
      const int64_t last = std::min(B, first + internal::kRecordChunk);
      TK_INTERNAL_CHECK(static_cast<int64_t>(buf.size) ==
                        size * (col.offsets[last] - col.offsets[first]));
      std::memcpy(static_cast<unsigned char*>(col.data) + size * col.offsets[first], buf.data.get(),
                  buf.size);
    }
  });
}

// Pass 2: the std::string values of VarLenFeatures decoded into place from the lists pass 1
// kept (the others were staged).
void PassTwo(const std::vector<std::string_view>& records, const Columns& s) {
  const int F = s.F, V = s.V;
  internal::ForRecords(s.B, [&](int64_t, int64_t r) {
    Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
          static_cast<int64_t>(records[r].size()), r};
    for (const ColumnGroup& g : s.groups) {
      if (g.fixed) continue;
      DispatchValue(g.dtype, s.refs, [&]<typename T>() {
        if constexpr (std::is_trivially_copyable_v<T>) return;  // staged
        for (int i = g.begin; i < g.end; ++i) {
          const Span lists = s.var_lists[static_cast<size_t>(r * V + i - F)];
          if (lists.begin == kAbsent) continue;
          const Column& col = s.columns[i];
          c.key = col.key;
          const int64_t at = col.offsets[r];
          DecodeVarLen(c, KindOf(g.dtype), lists, col.offsets[r + 1] - at,
                       static_cast<T*>(col.data) + at);
        }
      });
    }
  });
}

}  // namespace
}  // namespace internal

const Tensor& ParsedExamples::Fixed(std::string_view key) const {
  return internal::OutputOf(fixed_keys, fixed, key, "ParsedExamples::Fixed", "FixedLenFeature");
}

const JaggedTensor& ParsedExamples::VarLen(std::string_view key) const {
  return internal::OutputOf(var_len_keys, var_len, key, "ParsedExamples::VarLen", "VarLenFeature");
}

ParsedExamples internal::ParseFixedAndVarLen(const std::vector<std::string_view>& records,
                                             const ExampleSpec& spec,
                                             const std::vector<FixedTarget>* targets) {
  const Plan plan = CheckSpec(spec);
  Columns s;
  s.B = static_cast<int64_t>(records.size());
  s.F = static_cast<int>(spec.fixed.size());
  s.V = static_cast<int>(spec.var_len.size());
  for (int64_t r = 0; r < s.B; ++r) {
    TK_CHECK(records[r].size() < kAbsent, kUnsupported, "ParseExamples: record ", r, " has ",
             records[r].size(), " bytes; records of 4 GiB or more are not supported");
  }
  const KeyIndex index(plan.keys);
  s.refs = targets != nullptr;
  TK_INTERNAL_CHECK(!s.refs || static_cast<int>(targets->size()) == s.F);

  ParsedExamples out;
  std::vector<std::vector<BytesRef>> ref_defaults;
  AddFixedColumns(spec, plan, targets, &s, &out, &ref_defaults);
  AddVarLenColumns(spec, &s);
  s.groups = GroupColumns(s.columns);
  PassOne(records, index, targets, s);
  PlaceVarLen(spec, s);
  if (!s.var_lists.empty()) PassTwo(records, s);
  out.var_len.resize(static_cast<size_t>(s.V));
  ParallelFor(0, s.V, 1, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v)
      out.var_len[v] = JaggedTensor::FromOffsets(s.values[v], s.offsets[v]);
  });
  for (int v = 0; v < s.V; ++v) out.var_len_keys.push_back(spec.var_len[v].key);
  return out;
}

ParsedExamples ParseExampleBatch(const TFRecordBatch& batch, const ExampleSpec& spec) {
  std::vector<std::string_view> records(static_cast<size_t>(batch.size()));
  for (int64_t i = 0; i < batch.size(); ++i) records[i] = batch[i];
  return ParseExamples(records, spec);
}

}  // namespace tensorkit::io
