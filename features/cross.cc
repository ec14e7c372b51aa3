// Feature crosses (TensorFlow's SparseCross, SparseCrossV2 and SparseCrossHashed).
#include "tensorkit/features/cross.h"

#include <limits>

#include "tensorkit/common/error.h"
#include "tensorkit/features/cross_internal.h"
#include "tensorkit/features/features_internal.h"

namespace tensorkit {
namespace features_internal {

void SparseCrossRows(const int64_t* indices, int64_t nnz, int64_t batch, int64_t width, int feature,
                     const char* op, CrossColumn* column, std::vector<int64_t>* order) {
  std::vector<int64_t>& off = column->offsets;
  off.assign(static_cast<size_t>(batch + 1), 0);
  bool sorted = true;
  int64_t prev = 0;
  for (int64_t k = 0; k < nnz; ++k) {
    const int64_t r = indices[2 * k], c = indices[2 * k + 1];
    if (r < 0 || r >= batch || c < 0 || c >= width) {
      Throw(ErrorCode::kOutOfRange, op, ": entry ", k, " of feature ", feature, " has index (", r,
            ", ", c, "), outside its shape [", batch, " ", width, "]");
    }
    sorted = sorted && r >= prev;
    prev = r;
    ++off[r + 1];
  }
  for (int64_t b = 0; b < batch; ++b) off[b + 1] += off[b];
  order->clear();
  if (sorted) return;
  // Rows out of order: a stable counting sort keeps each row's entries in entry order.
  order->resize(static_cast<size_t>(nnz));
  std::vector<int64_t> cursor(off.begin(), off.end() - 1);
  for (int64_t k = 0; k < nnz; ++k) (*order)[cursor[indices[2 * k]]++] = k;
}

uint64_t CrossItemHash(const CrossOptions& o, std::string_view bytes) {
  if (o.output == CrossOutput::kHashedKeyed && o.strong_hash) {
    return StrongKeyedHash(o.salt[0], o.salt[1], bytes);
  }
  return Fingerprint64(bytes);
}

uint64_t CrossItemHash(const CrossOptions& o, bool dense, int64_t value) {
  if (o.output != CrossOutput::kHashedKeyed || (dense && !o.strong_hash)) {
    return static_cast<uint64_t>(value);
  }
  // TensorFlow hashes sizeof(DataType) == 4 bytes of the int64: its low half on x86-64.
  char low[4];
  std::memcpy(low, &value, sizeof(low));
  const std::string_view bytes(low, sizeof(low));
  return o.strong_hash ? StrongKeyedHash(o.salt[0], o.salt[1], bytes) : Fingerprint64(bytes);
}

CrossPlan PlanCross(const std::vector<CrossColumn>& columns, int64_t batch, const char* op) {
  CrossPlan plan;
  plan.batch = batch;
  plan.start.assign(static_cast<size_t>(batch + 1), 0);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t count = columns.empty() ? 0 : 1;
    for (const CrossColumn& c : columns) {
      if (__builtin_mul_overflow(count, c.Count(b), &count)) {
        Throw(ErrorCode::kResourceExhausted, op, ": row ", b,
              " has more crosses than int64 can count; cross fewer or shorter features");
      }
    }
    plan.max_count = std::max(plan.max_count, count);
    if (__builtin_add_overflow(plan.start[b], count, &plan.start[b + 1])) {
      Throw(ErrorCode::kResourceExhausted, op, ": the batch has more than 2^63 crosses (at row ", b,
            "); cross fewer or shorter features");
    }
  }
  return plan;
}

void CrossIndices(const CrossPlan& plan, int64_t* indices) {
  ParallelFor(0, plan.batch, 256, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      for (int64_t p = plan.start[b], j = 0; p < plan.start[b + 1]; ++p, ++j) {
        indices[2 * p] = b;
        indices[2 * p + 1] = j;
      }
    }
  });
}

namespace {

// Walks row b's crosses in TensorFlow's order (a mixed-radix counter, last feature fastest),
// calling visit(changed) before each: features changed .. F - 1 moved since the last cross
// (0 for the first). pos[i] is feature i's current item.
template <typename Visit>
void ForEachCross(const std::vector<CrossColumn>& columns, int64_t b, std::vector<int64_t>* pos,
                  const Visit& visit) {
  const int f = static_cast<int>(columns.size());
  for (int i = 0; i < f; ++i) {
    if (columns[i].Count(b) == 0) return;
    (*pos)[i] = columns[i].Begin(b);
  }
  int changed = 0;
  while (true) {
    visit(changed);
    int i = f - 1;
    for (; i >= 0; --i) {
      const CrossColumn& c = columns[i];
      if (++(*pos)[i] < c.Begin(b) + c.Count(b)) break;
      (*pos)[i] = c.Begin(b);
    }
    if (i < 0) return;
    changed = i;
  }
}

}  // namespace

void HashedCrosses(const std::vector<CrossColumn>& columns, const CrossPlan& plan,
                   const CrossOptions& o, int64_t* out) {
  const int f = static_cast<int>(columns.size());
  const bool keyed = o.output == CrossOutput::kHashedKeyed;
  const uint64_t mod =
      o.num_buckets > 0 ? static_cast<uint64_t>(o.num_buckets) : static_cast<uint64_t>(INT64_MAX);
  ParallelFor(0, plan.batch, 64, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> pos(f);
    // chain[i + 1]: the hash of features 0..i's current items; only the moved part is redone.
    std::vector<uint64_t> chain(f + 1);
    chain[0] = o.hash_key;
    for (int64_t b = lo; b < hi; ++b) {
      int64_t p = plan.start[b];
      ForEachCross(columns, b, &pos, [&](int changed) {
        for (int i = changed; i < f; ++i) {
          const uint64_t h = columns[i].hashes[pos[i]];
          chain[i + 1] = keyed && i == 0 ? h : FingerprintCat64(chain[i], h);
        }
        out[p++] = static_cast<int64_t>(chain[f] % mod);
      });
    }
  });
}

void StringCrosses(const std::vector<CrossColumn>& columns, const CrossPlan& plan,
                   std::string_view separator,
                   const std::function<void(int64_t, std::string_view)>& store) {
  const int f = static_cast<int>(columns.size());
  ParallelFor(0, plan.batch, 64, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> pos(f);
    std::vector<size_t> len(f);  // len[i]: the joined length before feature i's item
    std::string joined;
    for (int64_t b = lo; b < hi; ++b) {
      int64_t p = plan.start[b];
      ForEachCross(columns, b, &pos, [&](int changed) {
        joined.resize(len[changed]);
        for (int i = changed; i < f; ++i) {
          len[i] = joined.size();
          if (i > 0) joined.append(separator);
          joined.append(columns[i].bytes[pos[i]]);
        }
        store(p++, joined);
      });
    }
  });
}

}  // namespace features_internal

namespace {

namespace fi = features_internal;
constexpr const char* kOp = "Cross";

// Batch size and columns of one feature; host copies it reads stay alive in *keep.
int64_t AddColumn(const CrossFeature& feature, int index, const CrossOptions& o,
                  std::vector<fi::CrossColumn>* columns, std::vector<Tensor>* keep) {
  fi::CrossColumn c;
  Tensor items;
  std::vector<int64_t> order;
  int64_t batch = 0;
  switch (feature.kind()) {
    case CrossFeature::Kind::kDense: {
      const Tensor& d = feature.dense();
      if (!d.defined() || d.NumAxes() < 1 || d.NumAxes() > 2) {
        Throw(ErrorCode::kShapeMismatch, kOp, ": dense feature ", index, " has dims ",
              ShapeString(d.defined() ? d.Dims() : std::vector<int64_t>{}),
              "; a dense feature is [B, K] (or [B], one item a row)");
      }
      items = d;
      batch = d.Dim(0);
      c.dense = true;
      c.width = d.NumAxes() == 2 ? d.Dim(1) : 1;
      break;
    }
    case CrossFeature::Kind::kJagged: {
      const JaggedTensor& j = feature.jagged();
      if (!j.defined() || j.values().NumAxes() != 1) {
        Throw(ErrorCode::kShapeMismatch, kOp, ": jagged feature ", index,
              " must have 1-D values (one item per position)");
      }
      fi::CheckOnCpu(j.values(), "values", kOp);
      items = j.values();
      batch = j.batch_size();
      c.offsets.assign(j.offsets_data(), j.offsets_data() + batch + 1);
      break;
    }
    case CrossFeature::Kind::kSparse: {
      const SparseTensor& s = feature.sparse();
      if (s.rank() != 2) {
        Throw(ErrorCode::kShapeMismatch, kOp, ": sparse feature ", index, " has rank ", s.rank(),
              "; crosses take 2-D [B, L] sparse features");
      }
      fi::CheckOnCpu(s.values(), "values", kOp);
      const Tensor idx = s.indices().HostContiguous();
      keep->push_back(idx);
      batch = s.shape()[0];
      fi::SparseCrossRows(idx.data<int64_t>(), s.nnz(), batch, s.shape()[1], index, kOp, &c,
                          &order);
      items = s.values();
      break;
    }
  }
  fi::CheckHashable(items, kOp);
  fi::CheckOnCpu(items, "values", kOp);  // strings live on the CPU; crosses run there
  const Tensor host = items.HostContiguous();
  keep->push_back(host);
  const int64_t n = host.NumElements();
  const int64_t* ord = order.empty() ? nullptr : order.data();
  switch (host.dtype()) {
    case DType::kString: {
      const std::string* s = host.data<std::string>();
      fi::SetStringItems(&c, n, ord, o, [s](int64_t i) { return std::string_view(s[i]); });
      break;
    }
    case DType::kInt64: {
      const int64_t* v = host.data<int64_t>();
      fi::SetIntItems(&c, n, ord, o, [v](int64_t i) { return v[i]; });
      break;
    }
    default: {
      const int32_t* v = host.data<int32_t>();
      fi::SetIntItems(&c, n, ord, o, [v](int64_t i) { return int64_t{v[i]}; });
      break;
    }
  }
  columns->push_back(std::move(c));
  return batch;
}

}  // namespace

SparseTensor Cross(const std::vector<CrossFeature>& features, const CrossOptions& options) {
  if (features.empty()) Throw(ErrorCode::kInvalidArgument, kOp, ": no features; pass at least 1");
  if (options.num_buckets < 0) {
    Throw(ErrorCode::kInvalidArgument, kOp, ": num_buckets ", options.num_buckets,
          " is negative; pass a count >= 1, or 0 to keep the full hash");
  }
  return fi::ReportingAllocationFailure(kOp, [&] {
    std::vector<fi::CrossColumn> columns;
    std::vector<Tensor> keep;
    int64_t batch = -1;
    for (size_t i = 0; i < features.size(); ++i) {
      const int64_t b = AddColumn(features[i], static_cast<int>(i), options, &columns, &keep);
      if (batch >= 0 && b != batch) {
        Throw(ErrorCode::kShapeMismatch, kOp, ": feature ", i, " has batch size ", b,
              " but feature 0 has ", batch, "; cross batch-aligned features");
      }
      batch = b;
    }
    const fi::CrossPlan plan = fi::PlanCross(columns, batch, kOp);
    Tensor indices = Tensor::Empty({plan.total(), 2}, DType::kInt64);
    fi::CrossIndices(plan, indices.data<int64_t>());
    Tensor values;
    if (options.output == CrossOutput::kStrings) {
      values = Tensor::Empty({plan.total()}, DType::kString);
      std::string* out = values.data<std::string>();
      fi::StringCrosses(columns, plan, options.separator,
                        [out](int64_t p, std::string_view s) { out[p].assign(s); });
    } else {
      values = Tensor::Empty({plan.total()}, DType::kInt64);
      fi::HashedCrosses(columns, plan, options, values.data<int64_t>());
    }
    return SparseTensor::Create(std::move(indices), std::move(values), {batch, plan.max_count},
                                {0, 1});
  });
}

}  // namespace tensorkit
