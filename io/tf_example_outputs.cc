// ParseExamples and ParseSequenceExamples into an OutputAllocator's outputs (tf_example.h), and the
// element writers that every layout of a parse output goes through (tf_example_internal.h).
//
// Note [one walk]: for a spec whose composites each read a key of their own (FlatSpec),
// FixedLenFeatures are decoded straight into their outputs by pass 1 (strings set from the
// record while it is in cache), and VarLenFeatures are parsed as jagged values (strings as
// BytesRefs into the records), which one parallel pass (Fills) then lays out as the sparse,
// padded and ragged outputs: each string is copied once, from its record to its output. Other
// specs are parsed by ParseExamples and their tensors written out.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/outputs.h"
#include "tensorkit/features/jagged_internal.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tf_example_internal.h"

namespace tensorkit::io {

// --- Element writers ----------------------------------------------------------------------------

internal::Dest internal::DestOf(const Tensor& t, std::vector<std::unique_ptr<StringOutput>>* keep) {
  TK_INTERNAL_CHECK(t.IsContiguous() && t.device().is_cpu());
  if (t.dtype() != DType::kString) {
    return Dest{const_cast<void*>(t.raw_data()), DTypeSize(t.dtype()), nullptr};
  }
  keep->push_back(std::make_unique<TensorStrings>(t));
  return Dest{nullptr, 0, keep->back().get()};
}

void internal::Fills::Add(int64_t items, std::function<void(int64_t, int64_t)> fill,
                          const Dest* to) {
  if (items <= 0) return;
  if (to != nullptr && to->strings != nullptr && to->strings->InOrder()) in_order_ = true;
  start_.push_back(start_.back() + items);
  fills_.push_back(std::move(fill));
}

void internal::Fills::Run() const {
  auto run = [&](int64_t b, int64_t e) {
    size_t j =
        static_cast<size_t>(std::upper_bound(start_.begin(), start_.end(), b) - start_.begin() - 1);
    for (int64_t at = b; at < e; ++j) {
      const int64_t stop = std::min(e, start_[j + 1]);
      if (stop > at) fills_[j](at - start_[j], stop - start_[j]);
      at = stop;
    }
  };
  if (in_order_) {
    run(0, start_.back());
  } else {
    ParallelFor(0, start_.back(), 4096, run);
  }
}

void internal::CopyValues(const Tensor& values, int64_t from, const Dest& to, int64_t at,
                          int64_t n) {
  if (n <= 0) return;
  if (to.strings == nullptr) {
    std::memcpy(static_cast<char*>(to.data) + at * to.elem,
                static_cast<const char*>(values.raw_data()) + from * to.elem,
                static_cast<size_t>(n * to.elem));
  } else if (values.dtype() == DType::kString) {
    const std::string* v = values.data<std::string>() + from - at;
    to.strings->Set(at, at + n, [&](int64_t i) { return std::string_view(v[i]); });
  } else {
    to.strings->SetSpans(at, at + n,
                         reinterpret_cast<const BytesRef*>(values.data<int64_t>()) + from);
  }
}

void internal::AddPadded(Fills* fills, const FixedLenSequenceFeature& f, const Tensor& values,
                         std::vector<int64_t> first, int64_t row, const Dest& to) {
  const int64_t B = static_cast<int64_t>(first.size()) - 1;
  Dispatch<kExampleDTypes>(f.dtype, "ParseExamples", [&]<typename T>() {
    const T pad =
        f.default_value.defined() ? f.default_value.To(Device::Cpu()).ToVector<T>()[0] : T{};
    fills->Add(
        B,
        [=, first = std::move(first)](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const int64_t k = first[r + 1] - first[r];
            CopyValues(values, first[r], to, r * row, k);
            if constexpr (std::is_same_v<T, std::string>) {
              to.strings->Set(r * row + k, (r + 1) * row,
                              [&](int64_t) { return std::string_view(pad); });
            } else {
              T* dst = static_cast<T*>(to.data);
              std::fill(dst + r * row + k, dst + (r + 1) * row, pad);
            }
          }
        },
        &to);
  });
}

namespace {

constexpr const char* kOp = "ParseExamples";

// The outputs of one call, allocated through `out` and filled in one pass (Fills).
class Writer {
 public:
  Writer(OutputAllocator& out, bool batch, int64_t B) : out_(out), batch_(batch), B_(B) {
    TK_CHECK(batch || B == 1, kInvalidArgument, kOp,
             ": without a batch dim there must be exactly one record, got ", B);
  }

  // Output k: numbers, or strings for kString.
  internal::Dest Of(int k, const std::vector<int64_t>& dims, DType dtype) {
    if (dtype == DType::kString) return internal::Dest{nullptr, 0, out_.AllocateStrings(k, dims)};
    Tensor t = AllocateChecked(out_, k, dims, dtype, Device::Cpu(), kOp);
    return internal::Dest{t.raw_data(), DTypeSize(dtype), nullptr};
  }
  // dims of a per-record output: `rest` under the batch dim, when there is one.
  std::vector<int64_t> Batched(std::vector<int64_t> rest) const {
    if (batch_) rest.insert(rest.begin(), B_);
    return rest;
  }

  // A contiguous parsed tensor [B, ...] (values as `dtype`: strings may be BytesRef pairs) with
  // its batch dim, or without (`per_record`, when the call has none).
  void Whole(int k, const Tensor& t, DType dtype, bool per_record) {
    std::vector<int64_t> dims = t.Dims();
    if (dtype == DType::kString && t.dtype() != DType::kString) dims.pop_back();  // BytesRefs
    if (per_record && !batch_) dims.erase(dims.begin());
    const internal::Dest to = Of(k, dims, dtype);
    const int64_t n = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
    Copy(t, to, n);
  }
  // Values [0, n) of t into `to`.
  void Copy(const Tensor& t, const internal::Dest& to, int64_t n) {
    fills_.Add(
        n, [t, to](int64_t b, int64_t e) { internal::CopyValues(t, b, to, b, e - b); }, &to);
  }

  // A jagged tensor of B rows (its values as `dtype`) as a SparseTensor: indices (row,
  // position), values, dense_shape [B, max_len] (without the batch: position, [max_len]).
  void Jagged(int k, const JaggedTensor& j, DType dtype) {
    const int64_t* o = j.offsets().data<int64_t>();
    const int64_t nnz = o[B_], rank = batch_ ? 2 : 1, B = B_;
    const internal::Dest ix = Of(k, {nnz, rank}, DType::kInt64);
    int64_t* to = static_cast<int64_t*>(ix.data);
    fills_.Add(nnz, [=](int64_t b, int64_t e) {
      jagged_internal::WriteIndices(o, B, b, e, static_cast<int>(rank), to);
    });
    Copy(j.values(), Of(k + 1, {nnz}, dtype), nnz);
    int64_t* shape = static_cast<int64_t*>(Of(k + 2, {rank}, DType::kInt64).data);
    if (batch_) *shape++ = B_;
    *shape = jagged_internal::MaxLength(o, B_);
  }

  // A SparseTensor [B, ...] (without the batch: its record column and dim dropped).
  void Sparse(int k, const SparseTensor& st) {
    const int drop = batch_ ? 0 : 1, rank = st.rank() - drop, full = st.rank();
    const int64_t nnz = st.nnz();
    const Tensor all = st.indices().HostContiguous();
    int64_t* to = static_cast<int64_t*>(Of(k, {nnz, rank}, DType::kInt64).data);
    fills_.Add(nnz, [=](int64_t b, int64_t e) {
      const int64_t* from = all.data<int64_t>();
      for (int64_t i = b; i < e; ++i)
        std::copy(from + i * full + drop, from + (i + 1) * full, to + i * rank);
    });
    Copy(st.values().HostContiguous(), Of(k + 1, {nnz}, st.dtype()), nnz);
    int64_t* shape = static_cast<int64_t*>(Of(k + 2, {rank}, DType::kInt64).data);
    std::copy(st.shape().begin() + drop, st.shape().end(), shape);
  }

  // Row splits of the batch: as they are, or empty without the batch dim.
  void BatchSplits(int k, const Tensor& splits) {
    if (batch_) {
      Whole(k, splits, splits.dtype(), false);
    } else {
      Of(k, {0}, splits.dtype());
    }
  }

  // A ragged output at k: its flat values, the batch splits, then its inner splits.
  void Ragged(int k, const RaggedOutput& r, DType dtype) {
    Whole(k, r.flat_values.HostContiguous(), dtype, false);
    BatchSplits(k + 1, r.nested_row_splits[0]);
    for (size_t l = 1; l < r.nested_row_splits.size(); ++l) {
      Whole(k + 1 + static_cast<int>(l), r.nested_row_splits[l], r.nested_row_splits[l].dtype(),
            false);
    }
  }

  internal::Fills& fills() { return fills_; }
  bool batch() const { return batch_; }
  void Run() { fills_.Run(); }

 private:
  OutputAllocator& out_;
  bool batch_;
  int64_t B_;
  internal::Fills fills_;
};

// Row-split levels of a RaggedFeature's output besides its batch splits: its partitions but the
// trailing UniformRowLengths (they are dims of flat_values).
int InnerLevels(const RaggedFeature& f) {
  size_t n = f.partitions.size();
  while (n > 0 && f.partitions[n - 1].kind == RaggedPartition::Kind::kUniform) --n;
  return static_cast<int>(n);
}

// Every output of parsed examples `p` of `spec`.
void WriteParsed(Writer& w, const ExampleOutputIndex& index, const ExampleSpec& spec,
                 const ParsedExamples& p) {
  for (size_t i = 0; i < spec.fixed.size(); ++i) {
    w.Whole(index.Fixed(static_cast<int>(i)), p.fixed[i], spec.fixed[i].dtype, true);
  }
  for (size_t i = 0; i < spec.var_len.size(); ++i) {
    w.Jagged(index.VarLen(static_cast<int>(i)), p.var_len[i], spec.var_len[i].dtype);
  }
  for (size_t i = 0; i < spec.sparse.size(); ++i) {
    w.Sparse(index.Sparse(static_cast<int>(i)), p.sparse[i]);
  }
  for (size_t i = 0; i < spec.fixed_sequence.size(); ++i) {
    w.Whole(index.FixedSequence(static_cast<int>(i)), p.fixed_sequence[i],
            spec.fixed_sequence[i].dtype, true);
  }
  for (size_t i = 0; i < spec.ragged.size(); ++i) {
    w.Ragged(index.Ragged(static_cast<int>(i)), p.ragged[i], spec.ragged[i].dtype);
  }
}

// Note [one walk]: the outputs of a FlatSpec `flat` of `spec` (its defaults contiguous on the
// CPU).
void WriteFlat(Writer& w, const ExampleOutputIndex& index,
               const std::vector<std::string_view>& records, const ExampleSpec& spec,
               const ExampleSpec& flat, OutputAllocator& out) {
  const int64_t B = static_cast<int64_t>(records.size());
  std::vector<internal::FixedTarget> targets(spec.fixed.size());
  for (size_t i = 0; i < spec.fixed.size(); ++i) {
    const FixedLenFeature& f = spec.fixed[i];
    const int k = index.Fixed(static_cast<int>(i));
    int64_t n = B;
    for (int64_t d : f.shape) {
      TK_CHECK(d >= 0, kInvalidArgument, "ParseExamples: FixedLenFeature '", Excerpt(f.key),
               "' has shape ", ShapeString(f.shape), "; every dim must be >= 0");
      n = CheckedMul(n, d, f.key, "FixedLenFeature output");
    }
    if (f.dtype == DType::kString) {
      targets[i].strings = out.AllocateStrings(k, w.Batched(f.shape));
    } else {
      targets[i].numbers = AllocateChecked(out, k, w.Batched(f.shape), f.dtype, Device::Cpu(), kOp);
    }
  }
  const ParsedExamples p = internal::ParseFixedAndVarLen(records, flat, &targets);
  const int V = static_cast<int>(spec.var_len.size());
  const int Q = static_cast<int>(spec.fixed_sequence.size());
  for (int i = 0; i < V; ++i) w.Jagged(index.VarLen(i), p.var_len[i], spec.var_len[i].dtype);
  for (int s = 0; s < Q; ++s) {
    const FixedLenSequenceFeature& f = spec.fixed_sequence[s];
    const JaggedTensor& j = p.var_len[V + s];
    const int64_t rows = internal::SequenceRows(f, j, B);
    std::vector<int64_t> dims = {rows};
    dims.insert(dims.end(), f.shape.begin(), f.shape.end());
    int64_t row = 1;
    for (int64_t d : dims) row = CheckedMul(row, d, f.key, "FixedLenSequenceFeature output");
    CheckedMul(row, B, f.key, "FixedLenSequenceFeature output");
    const int64_t* o = j.offsets().data<int64_t>();
    const internal::Dest to = w.Of(index.FixedSequence(s), w.Batched(dims), f.dtype);
    internal::AddPadded(&w.fills(), f, j.values(), std::vector<int64_t>(o, o + B + 1), row, to);
  }
  for (size_t i = 0; i < spec.ragged.size(); ++i) {
    const RaggedFeature& f = spec.ragged[i];
    const JaggedTensor& j = p.var_len[V + Q + static_cast<int>(i)];
    const int k = index.Ragged(static_cast<int>(i));
    const int64_t* o = j.offsets().data<int64_t>();
    internal::CheckSplitsFit(f, o[B]);
    w.Copy(j.values(), w.Of(k, {o[B]}, f.dtype), o[B]);
    if (!w.batch()) {
      w.Of(k + 1, {0}, f.row_splits_dtype);
    } else if (f.row_splits_dtype == DType::kInt64) {
      w.Whole(k + 1, j.offsets(), DType::kInt64, false);
    } else {
      int32_t* to = static_cast<int32_t*>(w.Of(k + 1, {B + 1}, DType::kInt32).data);
      w.fills().Add(B + 1, [=](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) to[r] = static_cast<int32_t>(o[r]);
      });
    }
  }
  w.Run();  // while `p` holds the parsed values
}

// ParseExamples into `out` from output index.Fixed(0) on, without the Commit.
void WriteExamples(const std::vector<std::string_view>& records, const ExampleSpec& spec,
                   const ExampleOutputIndex& index, OutputAllocator& out, bool batch) {
  Writer w(out, batch, static_cast<int64_t>(records.size()));
  alloc_fault::ReportingAllocationFailure(kOp, [&] {
    if (std::optional<ExampleSpec> flat = internal::FlatSpec(spec)) {
      // String defaults are referred to where they lie: contiguous on the CPU.
      for (FixedLenFeature& f : flat->fixed) {
        if (f.default_value.defined()) f.default_value = f.default_value.HostContiguous();
      }
      WriteFlat(w, index, records, spec, *flat, out);
    } else {
      const ParsedExamples p = ParseExamples(records, spec);
      WriteParsed(w, index, spec, p);
      w.Run();
    }
  });
}

}  // namespace

ExampleOutputIndex::ExampleOutputIndex(const ExampleSpec& spec, int first) : first_(first) {
  var_len_ = first_ + static_cast<int>(spec.fixed.size());
  sparse_ = var_len_ + 3 * static_cast<int>(spec.var_len.size());
  sequence_ = sparse_ + 3 * static_cast<int>(spec.sparse.size());
  end_ = sequence_ + static_cast<int>(spec.fixed_sequence.size());
  for (const RaggedFeature& f : spec.ragged) {
    ragged_.push_back(end_);
    end_ += 2 + InnerLevels(f);
  }
}

SequenceOutputIndex::SequenceOutputIndex(const SequenceExampleSpec& spec) : context_(spec.context) {
  dense_ = context_.end();
  sparse_ = dense_ + 2 * static_cast<int>(spec.feature_list_dense.size());
  end_ = sparse_ + 3 * static_cast<int>(spec.feature_list_sparse.size());
  for (const RaggedFeature& f : spec.feature_list_ragged) {
    ragged_.push_back(end_);
    end_ += 3 + InnerLevels(f);
  }
}

void ParseExamples(const std::vector<std::string_view>& records, const ExampleSpec& spec,
                   OutputAllocator& out, bool batch) {
  WriteExamples(records, spec, ExampleOutputIndex(spec), out, batch);
  out.Commit();
}

void ParseSequenceExamples(const std::vector<std::string_view>& records,
                           const SequenceExampleSpec& spec, OutputAllocator& out, bool batch) {
  const SequenceOutputIndex index(spec);
  const ParsedSequenceExamples p = internal::ParseFeatureListsOf(
      records, spec, [&] { WriteExamples(records, spec.context, index.context(), out, batch); });
  Writer w(out, batch, static_cast<int64_t>(records.size()));
  alloc_fault::ReportingAllocationFailure("ParseSequenceExamples", [&] {
    for (size_t i = 0; i < spec.feature_list_dense.size(); ++i) {
      const int k = index.FeatureListDense(static_cast<int>(i));
      w.Whole(k, p.feature_list_dense[i], spec.feature_list_dense[i].dtype, true);
      w.Whole(k + 1, p.feature_list_lengths[i], DType::kInt64, true);
    }
    for (size_t i = 0; i < spec.feature_list_sparse.size(); ++i) {
      w.Sparse(index.FeatureListSparse(static_cast<int>(i)), p.feature_list_sparse[i]);
    }
    for (size_t i = 0; i < spec.feature_list_ragged.size(); ++i) {
      w.Ragged(index.FeatureListRagged(static_cast<int>(i)), p.feature_list_ragged[i],
               spec.feature_list_ragged[i].dtype);
    }
    w.Run();
  });
  out.Commit();
}

}  // namespace tensorkit::io
