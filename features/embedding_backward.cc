// EmbeddingBagBackward: the table gradient of EmbeddingBag, as sparse rows or added into a dense
// gradient.
//
// Note [sorted gradient]
// ~~~~~~~~~~~~~~~~~~~~~~
// Each non-padding id at position p of bag b contributes grad[b, :] scaled by k_p = w_p / the
// bag divisor (kSum, kMean, kSqrtN), or, for kMax / kMin, grad[b, c] in the columns c where p is
// the bag's winner. A scatter-add into the table rows would make the sum's sequence depend on
// the threads. Instead the positions are sorted stably by id (sparse_rows::SortPermutation,
// a radix sort of packed keys), which keeps each id's positions in bag order; each run of equal
// ids is then summed by the one task that owns it, in that order, and written once. So the
// result is bit-identical at any thread count, and the sparse and the dense forms hold the same
// sums. On a CUDA device the same plan is made there (sparse/'s stable radix sort of the ids,
// each id's run by binary search, the ids that occur by a scan) and one warp sums each run,
// each lane a column in that order (embedding_device.h): the same bits, and still no atomics.
#include <algorithm>
#include <memory>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/embedding.h"
#include "tensorkit/features/embedding_device.h"
#include "tensorkit/features/embedding_internal.h"
#include "tensorkit/sparse/index_rows.h"

namespace tensorkit {

namespace {

namespace ei = embedding_internal;
namespace fi = features_internal;

// What the gradient needs, checked: the ids as int64, the positions sorted by id, the id runs.
struct Plan {
  ei::Ids ids;
  Tensor ids64;                    // int64 [N]
  std::vector<int64_t> perm;       // positions sorted stably by id
  std::vector<int64_t> sorted;     // ids in that sequence
  std::vector<int64_t> bag;        // the bag of each position in that sequence
  std::vector<int64_t> run_begin;  // the runs of one non-padding id: [run_begin[k], run_end[k])
  std::vector<int64_t> run_end;    //   of perm / sorted, ids ascending
  int64_t words = 0;               // kMax / kMin: the columns position p wins, as bits of
  std::vector<uint64_t> won;       //   won[p * words, (p + 1) * words) (FindWinners)
};

// How many ids ahead FindWinners prefetches table rows of `row_bytes` (about 16 KiB of rows in
// flight, as the forward's bag kernels: the rows are random reads from a large table).
constexpr int64_t WinnerAhead(int64_t row_bytes) {
  return std::clamp<int64_t>((16 << 10) / std::max<int64_t>(row_bytes, 1), 16, 64);
}

// Marks the first winner of each column of each bag (embedding_internal.h), found from the
// forward table in its own compute type as EmbeddingBag's kMax / kMin choose them: bit c % 64 of
// won[p * words + c / 64] is set when position p wins column c. Each bag's ids are walked in
// sequence with the rows a fixed distance ahead prefetched, and the columns are compared without
// branches, so the pass costs about what the forward pass does.
void FindWinners(const Tensor& table, const ei::Ids& ids, const int64_t* id, Combiner combiner,
                 int64_t padding_id, int64_t words, uint64_t* won, const char* op) {
  const int64_t d = table.Dim(1);
  const int64_t ld = table.Stride(0);
  const bool is_max = combiner == Combiner::kMax;
  Dispatch<ei::kTableDTypes>(table.dtype(), op, [&]<typename T>() {
    using C = ComputeType<T>;
    const T* base = table.data<T>();
    const int64_t* off = ids.offsets;
    const int64_t row_bytes = d * static_cast<int64_t>(sizeof(T));
    const int64_t ahead = WinnerAhead(row_bytes);
    const int64_t lines = std::min<int64_t>(row_bytes, 1024);
    ParallelFor(0, ids.batch_size, GrainFor(d * 64), [&](int64_t bb, int64_t be) {
      const size_t width = static_cast<size_t>(std::max<int64_t>(d, 1));
      std::unique_ptr<C[]> cur_buf(new C[width]);
      std::unique_ptr<int64_t[]> win_buf(new int64_t[width]);
      C* __restrict cur = cur_buf.get();
      int64_t* __restrict win = win_buf.get();
      const int64_t last = off[be] - 1;
      for (int64_t p = off[bb]; p < std::min(off[bb] + ahead, off[be]); ++p) {
        const char* r = reinterpret_cast<const char*>(base + id[p] * ld);
        for (int64_t a = 0; a < lines; a += 64) __builtin_prefetch(r + a);
      }
      for (int64_t b = bb; b < be; ++b) {
        std::fill(won + off[b] * words, won + off[b + 1] * words, uint64_t{0});
        bool any = false;
        for (int64_t p = off[b]; p < off[b + 1]; ++p) {
          const char* next =
              reinterpret_cast<const char*>(base + id[std::min(p + ahead, last)] * ld);
          for (int64_t a = 0; a < lines; a += 64) __builtin_prefetch(next + a);
          if (id[p] == padding_id) continue;
          const T* __restrict row = base + id[p] * ld;
          if (!any) {
            for (int64_t c = 0; c < d; ++c) {
              cur[c] = static_cast<C>(row[c]);
              win[c] = p;
            }
            any = true;
            continue;
          }
          for (int64_t c = 0; c < d; ++c) {
            const C v = static_cast<C>(row[c]);
            const bool r = is_max ? v > cur[c] : v < cur[c];
            cur[c] = r ? v : cur[c];
            win[c] = r ? p : win[c];
          }
        }
        if (!any) continue;
        for (int64_t c = 0; c < d; ++c) {
          won[win[c] * words + c / 64] |= uint64_t{1} << (c % 64);
        }
      }
    });
  });
}

// The checks of both forms that read no id (the ids on any device, grad and the table on the
// ids' device), and the ids prepared.
ei::Ids CheckOperands(const Tensor& grad, const JaggedTensor& ids_in, Combiner combiner,
                      int64_t num_rows, int64_t padding_id, const Tensor& table, const char* op) {
  TK_CHECK(grad.defined(), kInvalidArgument, op, ": grad is an undefined tensor");
  ei::Ids ids = ei::PrepareIds(ids_in, op);
  CheckSameDevice(grad.device(), ids.values.device(), op, "grad", "ids");
  TK_CHECK(grad.NumAxes() == 2 && grad.Dim(0) == ids.batch_size, kShapeMismatch, op,
           ": grad must be [B, D] with B = ", ids.batch_size, " (the bags of ids), got dims ",
           ShapeString(grad.Dims()));
  TK_CHECK(IsFloat(grad.dtype()), kDTypeMismatch, op,
           ": grad must be float16, bfloat16, float32 or float64, got ", DTypeName(grad.dtype()));
  TK_CHECK(num_rows >= 0, kInvalidArgument, op, ": num_rows is ", num_rows,
           "; it is the table's number of rows, >= 0");
  ei::CheckPaddingId(padding_id, num_rows, op);
  ei::CheckCombinerWeights(combiner, ids_in.has_weights(), "", op);
  if (combiner == Combiner::kMax || combiner == Combiner::kMin) {
    TK_CHECK(table.defined(), kInvalidArgument, op, ": the combiner \"", CombinerName(combiner),
             "\" needs the forward table to find the winning rows; pass it as `table`");
    ei::CheckTable(table, "table", op);
    CheckSameDevice(table.device(), ids.values.device(), op, "table", "ids");
    TK_CHECK(table.Dim(0) == num_rows && table.Dim(1) == grad.Dim(1), kShapeMismatch, op,
             ": table must be [", num_rows, ", ", grad.Dim(1),
             "] (num_rows by grad's width), got dims ", ShapeString(table.Dims()));
  }
  return ids;
}

// The CPU plan of checked operands: the ids checked against num_rows, sorted, and their runs.
Plan MakePlan(const ei::Ids& checked, Combiner combiner, int64_t num_rows, int64_t padding_id,
              const Tensor& grad, const Tensor& table, const char* op) {
  Plan plan;
  plan.ids = checked;
  const ei::Ids& ids = plan.ids;
  const bool extreme = combiner == Combiner::kMax || combiner == Combiner::kMin;
  ei::CheckIdsInRange(ids.values, 0, ids.num_values, ids.offsets, 0, ids.batch_size, num_rows, "",
                      op);

  const int64_t n = ids.num_values;
  plan.ids64 = Converted(ids.values, DType::kInt64).Contiguous();
  const int64_t* id = plan.ids64.data<int64_t>();
  const int64_t* off = ids.offsets;
  plan.sorted.resize(static_cast<size_t>(n));
  plan.perm = sparse_rows::SortPermutation(id, n, {num_rows}, {0}, plan.sorted.data());
  {
    // The bags in sorted sequence, so that the sums read them in sequence.
    std::vector<int64_t> bag_of(static_cast<size_t>(n));
    ParallelFor(0, ids.batch_size, GrainFor(64), [&](int64_t bb, int64_t be) {
      for (int64_t b = bb; b < be; ++b)
        std::fill(bag_of.data() + off[b], bag_of.data() + off[b + 1], b);
    });
    plan.bag.resize(static_cast<size_t>(n));
    ParallelFor(0, n, GrainFor(16), [&](int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q) plan.bag[q] = bag_of[plan.perm[q]];
    });
  }
  const int64_t* s = plan.sorted.data();
  const std::vector<int64_t> heads =
      sparse_rows::SelectPositions(n, [&](int64_t i) { return i == 0 || s[i] != s[i - 1]; });
  for (size_t k = 0; k < heads.size(); ++k) {
    if (s[heads[k]] == padding_id) continue;
    plan.run_begin.push_back(heads[k]);
    plan.run_end.push_back(k + 1 < heads.size() ? heads[k + 1] : n);
  }
  if (extreme) {
    plan.words = (grad.Dim(1) + 63) / 64;
    plan.won.resize(static_cast<size_t>(n * plan.words));
    FindWinners(ei::RowMajor(table), ids, id, combiner, padding_id, plan.words, plan.won.data(),
                op);
  }
  return plan;
}

// Each bag's divisor (embedding_device.h, shared with the device body), from grad's compute
// type.
template <typename C>
std::vector<C> Divisors(const Plan& plan, const C* weights, Combiner combiner, int64_t padding_id) {
  const ei::Ids& ids = plan.ids;
  const int64_t* id = plan.ids64.data<int64_t>();
  const int64_t* off = ids.offsets;
  std::vector<C> divisors(static_cast<size_t>(ids.batch_size));
  ParallelFor(0, ids.batch_size, GrainFor(64), [&](int64_t bb, int64_t be) {
    for (int64_t b = bb; b < be; ++b) {
      divisors[b] = ei::GradDivisor<C>(id, off, weights, padding_id, combiner, b);
    }
  });
  return divisors;
}

// How far ahead (in positions, in runs) the grad rows and the target rows are prefetched.
constexpr int64_t kGradAhead = 8;
constexpr int64_t kRunAhead = 4;

// Sums run r's contributions into acc[0, d) (Note [sorted gradient]) and calls
// sink(r, id, acc) for every run, in parallel over runs; prefetch(id) is called a few runs
// ahead of sink(_, id, _).
template <typename T, typename Sink, typename Prefetch>
void SumRuns(const Plan& plan, const Tensor& grad_in, Combiner combiner, const Tensor& weights,
             int64_t padding_id, const Sink& sink, const Prefetch& prefetch) {
  using C = ComputeType<T>;
  const Tensor grad = grad_in.Contiguous();
  const int64_t d = grad.Dim(1);
  const T* g = grad.data<T>();
  const bool extreme = combiner == Combiner::kMax || combiner == Combiner::kMin;
  const C* w = weights.defined() ? weights.data<C>() : nullptr;
  const std::vector<C> divisors =
      extreme ? std::vector<C>() : Divisors<C>(plan, w, combiner, padding_id);
  const int64_t runs = static_cast<int64_t>(plan.run_begin.size());
  const int64_t n = plan.ids.num_values;
  const int64_t per_run = (n / std::max<int64_t>(runs, 1) + 1) * std::max<int64_t>(d, 1) *
                          static_cast<int64_t>(sizeof(C));
  ParallelFor(0, runs, GrainFor(per_run), [&](int64_t rb, int64_t re) {
    std::unique_ptr<C[]> acc_buf(new C[static_cast<size_t>(std::max<int64_t>(d, 1))]);
    C* __restrict acc = acc_buf.get();
    for (int64_t r = rb; r < re; ++r) {
      if (r + kRunAhead < re) prefetch(plan.sorted[plan.run_begin[r + kRunAhead]]);
      std::fill(acc, acc + d, C(0));
      for (int64_t q = plan.run_begin[r]; q < plan.run_end[r]; ++q) {
        __builtin_prefetch(g + plan.bag[std::min(q + kGradAhead, n - 1)] * d);
        const int64_t p = plan.perm[q];
        const int64_t b = plan.bag[q];
        const T* gb = g + b * d;
        if (extreme) {
          // Only the columns p won: about D / (bag length) of them.
          const uint64_t* won = plan.won.data() + p * plan.words;
          for (int64_t k = 0; k < plan.words; ++k) {
            for (uint64_t bits = won[k]; bits != 0; bits &= bits - 1) {
              const int64_t c = k * 64 + __builtin_ctzll(bits);
              acc[c] += static_cast<C>(gb[c]);
            }
          }
        } else {
          // k_p = w_p / the bag's divisor, 0 where that is 0 (div_no_nan).
          const C kp = divisors[b] == C(0) ? C(0) : (w ? w[p] : C(1)) / divisors[b];
          for (int64_t c = 0; c < d; ++c) acc[c] += kp * static_cast<C>(gb[c]);
        }
      }
      sink(r, plan.sorted[plan.run_begin[r]], acc);
    }
  });
}

// The CUDA body of both forms (device_ops.h), for checked operands on one device: the ids
// checked there (one wait for the verdict; a bad id is the CPU's Error), then sorted and summed
// there. With table_grad the sums are added into it; otherwise the COO rows are returned.
features_cuda::GradRows BackwardOnDevice(const Tensor& grad, const JaggedTensor& ids_in,
                                         const ei::Ids& ids, Combiner combiner, int64_t num_rows,
                                         int64_t padding_id, const Tensor& table,
                                         Tensor* table_grad, const char* op) {
  ei::CheckIdsOnDevice(ids.values, {0, ids.num_values}, {num_rows}, ids.offsets, ids.batch_size,
                       {""}, op);
  Tensor weights;
  Dispatch<ei::kTableDTypes>(grad.dtype(), op, [&]<typename T>() {
    weights = ei::ComputeWeights(ids_in.weights(), DTypeOf<ComputeType<T>>);
  });
  const bool extreme = combiner == Combiner::kMax || combiner == Combiner::kMin;
  return features_cuda::EmbeddingGradOnDevice(grad.Contiguous(), ids.values, ids_in.offsets(),
                                              weights, extreme ? ei::RowMajor(table) : Tensor(),
                                              combiner, num_rows, padding_id, table_grad, op);
}

}  // namespace

SparseTensor EmbeddingBagBackward(const Tensor& grad, const JaggedTensor& ids, Combiner combiner,
                                  int64_t num_rows, int64_t padding_id, const Tensor& table) {
  const char* op = "EmbeddingBagBackward";
  const ei::Ids checked = CheckOperands(grad, ids, combiner, num_rows, padding_id, table, op);
  const int64_t d = grad.Dim(1);
  if (OnCuda(checked.values)) {
    features_cuda::GradRows rows =
        BackwardOnDevice(grad, ids, checked, combiner, num_rows, padding_id, table, nullptr, op);
    return SparseTensor::Create(std::move(rows.indices), std::move(rows.values), {num_rows, d},
                                {0, 1});
  }
  const Plan plan = MakePlan(checked, combiner, num_rows, padding_id, grad, table, op);
  const int64_t runs = static_cast<int64_t>(plan.run_begin.size());
  int64_t nnz = 0;
  TK_CHECK(!__builtin_mul_overflow(runs, d, &nnz), kResourceExhausted, op, ": ", runs, " rows of ",
           d, " columns are more entries than int64 counts");
  Tensor indices = Tensor::Empty({nnz, 2}, DType::kInt64);
  Tensor values = Tensor::Empty({nnz}, grad.dtype());
  int64_t* idx = indices.data<int64_t>();
  Dispatch<ei::kTableDTypes>(grad.dtype(), op, [&]<typename T>() {
    using C = ComputeType<T>;
    T* val = values.data<T>();
    SumRuns<T>(
        plan, grad, combiner, ei::ComputeWeights(ids.weights(), DTypeOf<C>), padding_id,
        [&](int64_t r, int64_t id, const C* acc) {
          int64_t* row = idx + r * d * 2;
          T* v = val + r * d;
          for (int64_t c = 0; c < d; ++c) {
            row[2 * c] = id;
            row[2 * c + 1] = c;
            v[c] = static_cast<T>(acc[c]);
          }
        },
        [](int64_t) {});
  });
  return SparseTensor::Create(indices, values, {num_rows, d}, {0, 1});
}

void EmbeddingBagBackward(const Tensor& grad, const JaggedTensor& ids, Combiner combiner,
                          Tensor* table_grad, int64_t padding_id, const Tensor& table) {
  const char* op = "EmbeddingBagBackward";
  TK_CHECK(table_grad != nullptr && table_grad->defined(), kInvalidArgument, op,
           ": table_grad must point at a defined tensor [num_rows, D]");
  TK_CHECK(grad.defined() && table_grad->NumAxes() == 2 && grad.NumAxes() == 2 &&
               table_grad->Dim(1) == grad.Dim(1),
           kShapeMismatch, op, ": table_grad must be [num_rows, D] with D = grad's width, got ",
           ShapeString(table_grad->Dims()), " for grad ",
           grad.defined() ? ShapeString(grad.Dims()) : std::string("(undefined)"));
  TK_CHECK(table_grad->dtype() == grad.dtype(), kDTypeMismatch, op, ": table_grad is ",
           DTypeName(table_grad->dtype()), " but grad is ", DTypeName(grad.dtype()),
           "; they must have one dtype");
  const int64_t s0 = table_grad->Stride(0), s1 = table_grad->Stride(1);
  const int64_t v = table_grad->Dim(0), d = table_grad->Dim(1);
  const ei::Ids checked = CheckOperands(grad, ids, combiner, v, padding_id, table, op);
  CheckSameDevice(table_grad->device(), checked.values.device(), op, "table_grad", "ids");
  if (OnCuda(checked.values)) {
    BackwardOnDevice(grad, ids, checked, combiner, v, padding_id, table, table_grad, op);
    return;
  }
  const Plan plan = MakePlan(checked, combiner, v, padding_id, grad, table, op);
  Dispatch<ei::kTableDTypes>(grad.dtype(), op, [&]<typename T>() {
    using C = ComputeType<T>;
    T* base = table_grad->data<T>();
    SumRuns<T>(
        plan, grad, combiner, ei::ComputeWeights(ids.weights(), DTypeOf<C>), padding_id,
        [&](int64_t, int64_t id, const C* acc) {
          T* row = base + id * s0;
          for (int64_t c = 0; c < d; ++c) {
            row[c * s1] = static_cast<T>(static_cast<C>(row[c * s1]) + acc[c]);
          }
        },
        [&](int64_t id) { __builtin_prefetch(base + id * s0, 1); });
  });
}

}  // namespace tensorkit
