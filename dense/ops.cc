#include "tensorkit/dense/ops.h"

#include <algorithm>
#include <array>
#include <new>
#include <string>

#include "tensorkit/common/storage.h"
#include "tensorkit/dense/engine.h"
#include "tensorkit/dense/executor.h"
#include "tensorkit/dense/ops_internal.h"
#include "tensorkit/dense/views.h"

namespace tensorkit {
namespace {

using engine::Mode;
using ops_internal::BinaryFn;
using ops_internal::CoeffsBuf;
using ops_internal::UnaryFn;

// The operands of one call, with the names the messages use.
struct Operands {
  const char* op = "";
  Tensor* out = nullptr;
  const char* out_name = "dest";
  std::array<const Tensor*, 2> in{};
  std::array<const char*, 2> in_names{};
  int num_in = 0;
};

// What a compute op runs, before the mode and coefficients are known.
struct Fn {
  engine::OpKind kind = engine::OpKind::kUnary;
  UnaryFn unary = UnaryFn::kIdentity;
  BinaryFn binary = BinaryFn::kAdd;
};

Fn UnaryOf(UnaryFn f) { return {engine::OpKind::kUnary, f, BinaryFn::kAdd}; }
Fn BinaryOf(BinaryFn f) { return {engine::OpKind::kBinary, UnaryFn::kIdentity, f}; }

Operands Unary(const char* op, const Tensor& src, Tensor* dest) {
  Operands o;
  o.op = op;
  o.out = dest;
  o.in = {&src, nullptr};
  o.in_names = {"src", nullptr};
  o.num_in = 1;
  return o;
}

Operands Binary(const char* op, const Tensor& a, const Tensor& b, Tensor* c) {
  Operands o;
  o.op = op;
  o.out = c;
  o.out_name = "c";
  o.in = {&a, &b};
  o.in_names = {"a", "b"};
  o.num_in = 2;
  return o;
}

// "a [2 3], b [4 3] and c [2 3]".
std::string DimsList(const Operands& o) {
  std::string s;
  for (int i = 0; i < o.num_in; ++i) {
    s += std::string(o.in_names[i]) + " " + ShapeString(o.in[i]->Dims()) + ", ";
  }
  return s + "output " + o.out_name + " " + ShapeString(o.out->Dims());
}

// Defined operands, equal devices (unless `any_device`), equal dtypes (unless `any_dtype`),
// broadcastable dims.
void CheckOperands(const Operands& o, bool any_dtype, bool any_device) {
  TK_CHECK(o.out != nullptr, kInvalidArgument, o.op, ": the output ", o.out_name,
           " is a null pointer");
  o.out->CheckDefined(o.op);
  for (int i = 0; i < o.num_in; ++i) {
    o.in[i]->CheckDefined(o.op);
    TK_CHECK(any_dtype || o.in[i]->dtype() == o.out->dtype(), kDTypeMismatch, o.op, ": ",
             o.in_names[i], " is ", DTypeName(o.in[i]->dtype()), " but ", o.out_name, " is ",
             DTypeName(o.out->dtype()), "; every operand needs the same dtype (Copy converts)");
    TK_CHECK(any_device || o.in[i]->device() == o.out->device(), kDeviceMismatch, o.op, ": ",
             o.in_names[i], " is on ", o.in[i]->device(), " but ", o.out_name, " is on ",
             o.out->device(), "; every operand of a compute op must be on one device: move ",
             o.in_names[i], " with Tensor::To(", o.out->device(), ") or Copy first");
  }
  bool ok = true;
  for (int i = 0; i < o.num_in; ++i) {
    ok = ok && Broadcastable(o.in[i]->pattern(), o.out->pattern());
    for (int j = i + 1; j < o.num_in; ++j) {
      ok = ok && Broadcastable(o.in[i]->pattern(), o.in[j]->pattern());
    }
  }
  TK_CHECK(ok, kShapeMismatch, o.op, ": dims of ", DimsList(o),
           " are not broadcastable (after padding with 1 on the left, each axis needs equal "
           "dims or a dim of 1)");
}

engine::LoopNest NestOf(const Operands& o) {
  const Pattern* pats[engine::kMaxOperands] = {&o.out->pattern(), nullptr, nullptr};
  for (int i = 0; i < o.num_in; ++i) pats[i + 1] = &o.in[i]->pattern();
  return engine::MakeLoopNest(pats, o.num_in + 1);
}

// Whether an input is the very view of the output; throws when it overlaps it otherwise.
bool CheckAliasing(const Operands& o) {
  bool same = false;
  for (int i = 0; i < o.num_in; ++i) {
    const Tensor& in = *o.in[i];
    if (!SharesStorage(in, *o.out) || !Overlap(in.pattern(), o.out->pattern())) continue;
    TK_CHECK(in.pattern() == o.out->pattern(), kInvalidArgument, o.op, ": input ", o.in_names[i],
             " (", in.pattern().ToString(), ") partially overlaps the output ", o.out_name, " (",
             o.out->pattern().ToString(),
             "); pass a copy of the input (Tensor::Clone) or a separate output");
    same = true;
  }
  return same;
}

// The storage data pointers of (out, inputs...).
std::array<char*, engine::kMaxOperands> BasesOf(const Tensor& out, const Tensor* const* ins,
                                                int num_in) {
  std::array<char*, engine::kMaxOperands> b{static_cast<char*>(out.storage()->data()), nullptr,
                                            nullptr};
  for (int i = 0; i < num_in; ++i) b[i + 1] = static_cast<char*>(ins[i]->storage()->data());
  return b;
}

// Runs one engine pass of `fn` in `mode` over the nest of (out, inputs) on out's device.
void RunPass(const engine::LoopNest& nest, const Tensor& out, const Tensor* const* ins, int num_in,
             const Fn& fn, Mode mode, const CoeffsBuf& k, const char* op) {
  engine::OpDesc d;
  d.kind = fn.kind;
  d.unary = fn.unary;
  d.binary = fn.binary;
  d.out = out.dtype();
  d.in = num_in > 0 ? ins[0]->dtype() : out.dtype();
  d.mode = mode;
  d.coeffs = k;
  d.op = op;
  const auto bases = BasesOf(out, ins, num_in);
  engine::Execute(d, nest, bases.data(), out.device());
}

// out = v (v converted to out's dtype; "" for strings when zero) on out's device.
void Fill(const Tensor& out, Scalar v, const char* op) {
  const Pattern* pats[1] = {&out.pattern()};
  const engine::LoopNest nest = engine::MakeLoopNest(pats, 1);
  CoeffsBuf value;
  Dispatch(out.dtype(), op, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string>)
      new (value.bytes) T(ops_internal::ScalarAs<T>(v));
  });
  RunPass(nest, out, nullptr, 0, {engine::OpKind::kFill}, Mode::kAssign, value, op);
}

// out = beta * out: a fill for beta == 0 (out is not read), nothing for beta == 1.
void ApplyBeta(const Tensor& out, const CoeffsBuf& k, Scalar beta, const char* op) {
  if (k.beta_is_one) return;
  if (k.beta_is_zero) {
    Fill(out, 0, op);
    return;
  }
  const Pattern* pats[2] = {&out.pattern(), &out.pattern()};
  const engine::LoopNest nest = engine::MakeLoopNest(pats, 2);
  const CoeffsBuf scale = ops_internal::MakeCoeffs(out.dtype(), beta, 0, op);
  const Tensor* ins[1] = {&out};
  RunPass(nest, out, ins, 1, UnaryOf(UnaryFn::kIdentity), Mode::kScale, scale, op);
}

// The pieces of a (batched) row-major GEMM read off a nest (see TryGemm).
struct GemmAxes {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  int64_t cm = 0, cn = 0, am = 0, ak = 0, bk = 0, bn = 0, ca = 0, aa = 0, ba = 0;  // strides
};

// Classifies the axes of the nest (c, a, b): M (c, a), N (c, b), K (a, b, summed), batch (all
// three). False unless there is exactly one K axis, at most one of each other kind and no
// negative stride.
bool ReadGemmAxes(const engine::LoopNest& nest, GemmAxes* g) {
  int nm = 0, nn = 0, nk = 0, nb = 0;
  for (int x = 0; x < nest.num_axes; ++x) {
    const int64_t sc = nest.strides[0][x], sa = nest.strides[1][x], sb = nest.strides[2][x];
    if (sc < 0 || sa < 0 || sb < 0) return false;
    const int64_t d = nest.dims[x];
    if (sc && sa && !sb) {
      ++nm, g->m = d, g->cm = sc, g->am = sa;
    } else if (sc && !sa && sb) {
      ++nn, g->n = d, g->cn = sc, g->bn = sb;
    } else if (!sc && sa && sb) {
      ++nk, g->k = d, g->ak = sa, g->bk = sb;
    } else if (sc && sa && sb) {
      ++nb, g->batch = d, g->ca = sc, g->aa = sa, g->ba = sb;
    } else {
      return false;
    }
  }
  return nk == 1 && nm <= 1 && nn <= 1 && nb <= 1;
}

// Runs the nest of AddProduct through the device's GEMM library when it is a (batched)
// GEMM/GEMV with unit strides where BLAS needs them and the library takes the dtype; false
// (nothing done) otherwise.
bool TryGemm(const engine::LoopNest& nest, const Tensor& a, const Tensor& b, const Tensor& c,
             Scalar alpha, Scalar beta) {
  GemmAxes g;
  if (!ReadGemmAxes(nest, &g)) return false;
  const void* pa =
      static_cast<const char*>(a.storage()->data()) + nest.offsets[1] * DTypeSize(a.dtype());
  const void* pb =
      static_cast<const char*>(b.storage()->data()) + nest.offsets[2] * DTypeSize(b.dtype());
  void* pc = static_cast<char*>(c.storage()->data()) + nest.offsets[0] * DTypeSize(c.dtype());
  // C must be row-major (unit stride along n); a column-major C is C^T = B^T A^T.
  if (!(g.n == 1 || g.cn == 1)) {
    if (!(g.m == 1 || g.cm == 1)) return false;
    std::swap(g.m, g.n);
    std::swap(g.cm, g.cn);
    std::swap(g.am, g.bn);
    std::swap(g.ak, g.bk);
    std::swap(g.aa, g.ba);
    std::swap(pa, pb);
  }
  const int64_t ldc = g.m == 1 ? std::max<int64_t>(g.n, 1) : g.cm;
  bool ta, tb;
  int64_t lda, ldb;
  if (g.ak == 1 && (g.m == 1 || g.am >= g.k)) {
    ta = false, lda = g.m == 1 ? g.k : g.am;
  } else if ((g.m == 1 || g.am == 1) && g.ak >= g.m) {
    ta = true, lda = g.ak;
  } else {
    return false;
  }
  if ((g.n == 1 || g.bn == 1) && g.bk >= g.n) {
    tb = false, ldb = g.bk;
  } else if (g.bk == 1 && (g.n == 1 || g.bn >= g.k)) {
    tb = true, ldb = g.n == 1 ? g.k : g.bn;
  } else {
    return false;
  }
  if (ldc < g.n) return false;
  engine::GemmCall call;
  call.dtype = c.dtype();
  call.trans_a = ta, call.trans_b = tb;
  call.m = g.m, call.n = g.n, call.k = g.k, call.batch = g.batch;
  call.alpha = alpha.ToDouble(), call.beta = beta.ToDouble();
  call.a = pa, call.b = pb, call.c = pc;
  call.lda = lda, call.ldb = ldb, call.ldc = ldc;
  call.stride_a = g.aa, call.stride_b = g.ba, call.stride_c = g.ca;
  return engine::RunGemm(call, c.device());
}

// How the engine runs one call, given checked operands (all on one device) without partial
// overlap: the beta pass, GEMM, summation or one plain pass.
void RunEngineOp(const Operands& o, const Fn& fn, Scalar alpha, Scalar beta, bool gemm) {
  const Tensor& out = *o.out;
  const engine::LoopNest nest = NestOf(o);
  const CoeffsBuf k = ops_internal::MakeCoeffs(out.dtype(), alpha, beta, o.op);
  if (nest.empty) {  // nothing to add; a summed output still gets beta * out
    if (out.NumElements() > 0) ApplyBeta(out, k, beta, o.op);
    return;
  }
  if (gemm && TryGemm(nest, *o.in[0], *o.in[1], out, alpha, beta)) return;
  if (nest.Sums()) {
    ApplyBeta(out, k, beta, o.op);
    const CoeffsBuf acc = ops_internal::MakeCoeffs(out.dtype(), alpha, 1, o.op);
    RunPass(nest, out, o.in.data(), o.num_in, fn, Mode::kAxpby, acc, o.op);
    return;
  }
  const Mode mode = !k.beta_is_zero ? Mode::kAxpby : k.alpha_is_one ? Mode::kAssign : Mode::kScale;
  RunPass(nest, out, o.in.data(), o.num_in, fn, mode, k, o.op);
}

// The common path of every compute op: checks, aliasing, then the engine.
void RunOp(const Operands& o, const Fn& fn, Scalar alpha, Scalar beta, bool gemm = false) {
  CheckOperands(o, /*any_dtype=*/false, /*any_device=*/false);
  const bool same = CheckAliasing(o);
  if (same && (NestOf(o).Sums() || gemm)) {  // in place with summation: work on a copy
    Tensor tmp = o.out->Clone();
    Operands t = o;
    t.out = &tmp;
    RunEngineOp(t, fn, alpha, beta, gemm);
    Copy(tmp, o.out);
    return;
  }
  RunEngineOp(o, fn, alpha, beta, gemm);
}

void RunUnary(const char* op, UnaryFn fn, const Tensor& src, Tensor* dest) {
  TK_CHECK(dest != nullptr, kInvalidArgument, op, ": dest is a null pointer");
  dest->CheckDefined(op);
  RunOp(Unary(op, src, dest), UnaryOf(fn), 1, 0);
}

void RunBinary(const char* op, BinaryFn fn, const Tensor& a, const Tensor& b, Tensor* c) {
  TK_CHECK(c != nullptr, kInvalidArgument, op, ": c is a null pointer");
  c->CheckDefined(op);
  RunOp(Binary(op, a, b, c), BinaryOf(fn), 1, 0);
}

// The value-returning forms: a fresh output for the by-pointer form `fn`.
Tensor NewUnary(const char* op, void (*fn)(const Tensor&, Tensor*), const Tensor& src) {
  src.CheckDefined(op);
  Tensor out = Tensor::Empty(src.Dims(), src.dtype(), src.device());
  fn(src, &out);
  return out;
}

Tensor NewBinary(const char* op, void (*fn)(const Tensor&, const Tensor&, Tensor*), const Tensor& a,
                 const Tensor& b) {
  a.CheckDefined(op);
  b.CheckDefined(op);
  TK_CHECK(Broadcastable(a.pattern(), b.pattern()), kShapeMismatch, op, ": dims of a ",
           ShapeString(a.Dims()), " and b ", ShapeString(b.Dims()),
           " are not broadcastable (after padding with 1 on the left, each axis needs equal dims "
           "or a dim of 1)");
  Tensor out = Tensor::Empty(BroadcastDims({a.Dims(), b.Dims()}), a.dtype(), a.device());
  fn(a, b, &out);
  return out;
}

// Copy between any dtypes on one device (no partial overlap).
void CopyOnDevice(const Operands& o) {
  const Tensor& src = *o.in[0];
  Tensor* dest = o.out;
  const engine::LoopNest nest = NestOf(o);
  if (nest.empty) {
    if (dest->NumElements() > 0) Fill(*dest, 0, o.op);
    return;
  }
  if (!nest.Sums()) {
    RunPass(nest, *dest, o.in.data(), 1, {engine::OpKind::kConvert}, Mode::kAssign, CoeffsBuf(),
            o.op);
    return;
  }
  TK_CHECK(src.dtype() != DType::kString, kUnsupported, o.op, ": string tensors cannot be summed (",
           DimsList(o), ")");
  if (src.dtype() != dest->dtype()) {  // convert first, then sum in the output's dtype
    Tensor converted = Tensor::Empty(src.Dims(), dest->dtype(), src.device());
    Copy(src, &converted);
    Operands c = o;
    c.in[0] = &converted;
    RunEngineOp(c, UnaryOf(UnaryFn::kIdentity), 1, 0, false);
    return;
  }
  RunEngineOp(o, UnaryOf(UnaryFn::kIdentity), 1, 0, false);
}

// Copy between devices: the source packed on its own device, one transfer of just its
// elements, then a copy on the destination's device (which converts, scatters into strides
// and sums as needed).
void CopyAcrossDevices(const Tensor& src, Tensor* dest) {
  TK_CHECK(src.dtype() != DType::kString, kUnsupported,
           "Copy: string tensors live on the CPU only; cannot copy from ", src.device(), " to ",
           dest->device());
  const Tensor packed = src.IsContiguous() ? src : src.Clone();
  const int64_t bytes = packed.NumElements() * DTypeSize(packed.dtype());
  if (dest->IsContiguous() && dest->dtype() == src.dtype() && dest->Dims() == src.Dims()) {
    CopyBytes(dest->raw_data(), dest->device(), packed.raw_data(), packed.device(), bytes);
    return;
  }
  Tensor moved = Tensor::Empty(src.Dims(), src.dtype(), dest->device());
  CopyBytes(moved.raw_data(), moved.device(), packed.raw_data(), packed.device(), bytes);
  Copy(moved, dest);
}

// Checks axis-range arguments of the copies.
void CheckRange(const char* op, const Tensor& t, int axis, int64_t start, int64_t end) {
  const int64_t dim = t.Dim(axis);
  TK_CHECK(0 <= start && start <= end && end <= dim, kOutOfRange, op, ": range [", start, ", ", end,
           ") is not within [0, ", dim, "] of axis ", axis, " of dims ", ShapeString(t.Dims()),
           " (need 0 <= start <= end <= dim)");
}

// A C-order copy of t on its device.
Tensor CopyOf(const Tensor& t) {
  Tensor out = Tensor::Empty(t.Dims(), t.dtype(), t.device());
  Copy(t, &out);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Filling and scaling
// ---------------------------------------------------------------------------------------------

void SetZero(Tensor* t) {
  TK_CHECK(t != nullptr, kInvalidArgument, "SetZero: null tensor pointer");
  t->CheckDefined("SetZero");
  if (!t->device().is_cpu() && t->IsContiguous()) {  // all-zero bits: a memset on the stream
    ZeroBytes(t->raw_data(), t->device(), t->NumElements() * DTypeSize(t->dtype()));
    return;
  }
  Fill(*t, 0, "SetZero");
}

void Set(Scalar v, Tensor* t) {
  TK_CHECK(t != nullptr, kInvalidArgument, "Set: null tensor pointer");
  t->CheckDefined("Set");
  TK_CHECK(t->dtype() != DType::kString, kUnsupported,
           "Set: a number cannot fill a string tensor; use SetZero for empty strings");
  Fill(*t, v, "Set");
}

void Scale(Scalar alpha, Tensor* t) {
  TK_CHECK(t != nullptr, kInvalidArgument, "Scale: null tensor pointer");
  t->CheckDefined("Scale");
  Operands o = Unary("Scale", *t, t);
  o.in_names[0] = "t";
  o.out_name = "t";
  RunOp(o, UnaryOf(UnaryFn::kIdentity), alpha, 0);
}

// ---------------------------------------------------------------------------------------------
// Copies and accumulation
// ---------------------------------------------------------------------------------------------

void Copy(const Tensor& src, Tensor* dest) {
  TK_CHECK(dest != nullptr, kInvalidArgument, "Copy: dest is a null pointer");
  Operands o = Unary("Copy", src, dest);
  CheckOperands(o, /*any_dtype=*/true, /*any_device=*/true);
  TK_CHECK((src.dtype() == DType::kString) == (dest->dtype() == DType::kString), kDTypeMismatch,
           "Copy: cannot convert between ", DTypeName(src.dtype()), " and ",
           DTypeName(dest->dtype()), "; string tensors copy only to string tensors");
  const bool same = CheckAliasing(o);
  if (same && src.dtype() == dest->dtype()) return;  // copying a view onto itself
  if (src.device() != dest->device()) {
    CopyAcrossDevices(src, dest);
    return;
  }
  if (same) {  // converting in place: through a temporary
    Tensor tmp = CopyOf(src);
    Operands t = o;
    t.in[0] = &tmp;
    CopyOnDevice(t);
    return;
  }
  CopyOnDevice(o);
}

Tensor Converted(const Tensor& t, DType dtype) {
  t.CheckDefined("Converted");
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::Empty(t.Dims(), dtype, t.device());
  Copy(t, &out);
  return out;
}

void CopyScaled(Scalar alpha, const Tensor& src, Tensor* dest) {
  TK_CHECK(dest != nullptr, kInvalidArgument, "CopyScaled: dest is a null pointer");
  dest->CheckDefined("CopyScaled");
  RunOp(Unary("CopyScaled", src, dest), UnaryOf(UnaryFn::kIdentity), alpha, 0);
}

void AddTo(const Tensor& src, Tensor* dest) { AddTo(1, 1, src, dest); }

void AddTo(Scalar alpha, Scalar beta, const Tensor& src, Tensor* dest) {
  TK_CHECK(dest != nullptr, kInvalidArgument, "AddTo: dest is a null pointer");
  dest->CheckDefined("AddTo");
  RunOp(Unary("AddTo", src, dest), UnaryOf(UnaryFn::kIdentity), alpha, beta);
}

// ---------------------------------------------------------------------------------------------
// Elementwise functions
// ---------------------------------------------------------------------------------------------

// Both forms of every function of dense/elementwise_fns.h.
#define TK_DEFINE_UNARY(Name)                                                                  \
  void Name(const Tensor& src, Tensor* dest) { RunUnary(#Name, UnaryFn::k##Name, src, dest); } \
  Tensor Name(const Tensor& src) { return NewUnary(#Name, &Name, src); }
#define TK_DEFINE_BINARY(Name)                             \
  void Name(const Tensor& a, const Tensor& b, Tensor* c) { \
    RunBinary(#Name, BinaryFn::k##Name, a, b, c);          \
  }                                                        \
  Tensor Name(const Tensor& a, const Tensor& b) { return NewBinary(#Name, &Name, a, b); }
TENSORKIT_UNARY_FNS(TK_DEFINE_UNARY)
TENSORKIT_BINARY_FNS(TK_DEFINE_BINARY)
#undef TK_DEFINE_UNARY
#undef TK_DEFINE_BINARY

void AddProduct(Scalar alpha, Scalar beta, const Tensor& a, const Tensor& b, Tensor* c) {
  TK_CHECK(c != nullptr, kInvalidArgument, "AddProduct: c is a null pointer");
  c->CheckDefined("AddProduct");
  RunOp(Binary("AddProduct", a, b, c), BinaryOf(BinaryFn::kMul), alpha, beta, /*gemm=*/true);
}

// ---------------------------------------------------------------------------------------------
// Value-returning forms
// ---------------------------------------------------------------------------------------------

Tensor Sum(const Tensor& t, std::vector<int> axes, bool keepdims) {
  t.CheckDefined("Sum");
  std::vector<int64_t> kept = t.Dims(), dropped;
  std::vector<bool> summed(kept.size(), false);
  for (int axis : axes) {
    const int a = NormalizeAxis(axis, t.NumAxes(), "Sum");
    TK_CHECK(!summed[a], kInvalidArgument, "Sum: axis ", axis, " is listed twice in axes ",
             ShapeString(axes));
    summed[a] = true;
    kept[a] = 1;
  }
  for (size_t a = 0; a < kept.size(); ++a) {
    if (!summed[a]) dropped.push_back(kept[a]);
  }
  Tensor out = Tensor::Empty(kept, t.dtype(), t.device());
  Operands o = Unary("Sum", t, &out);
  o.in_names[0] = "t";
  o.out_name = "sum";
  CheckOperands(o, false, false);
  CopyOnDevice(o);
  if (keepdims) return out;
  return out.WithPattern(DefaultPattern(dropped, "Sum"));
}

Tensor Reshape(const Tensor& t, const std::vector<int64_t>& dims) {
  t.CheckDefined("Reshape");
  if (std::optional<Tensor> v = View(t, dims)) return *v;
  std::optional<Tensor> v = View(CopyOf(t), dims);
  TK_INTERNAL_CHECK(v.has_value());
  return *v;
}

// ---------------------------------------------------------------------------------------------
// Dense copies
// ---------------------------------------------------------------------------------------------

Tensor CopyRows(const Tensor& t, int64_t start, int64_t end) {
  t.CheckDefined("CopyRows");
  TK_CHECK(t.NumAxes() >= 1, kInvalidArgument,
           "CopyRows: needs a tensor with at least 1 axis, "
           "got rank 0");
  CheckRange("CopyRows", t, 0, start, end);
  return CopyOf(Slice(t, 0, start, end));
}

Tensor CopyColumns(const Tensor& t, int64_t start, int64_t end) {
  t.CheckDefined("CopyColumns");
  TK_CHECK(t.NumAxes() >= 1, kInvalidArgument,
           "CopyColumns: needs a tensor with at least 1 axis, got rank 0");
  const int axis = t.NumAxes() == 1 ? 0 : 1;  // the elements of a 1-D tensor are its columns
  CheckRange("CopyColumns", t, axis, start, end);
  return CopyOf(Slice(t, axis, start, end));
}

Tensor Concatenate(const std::vector<Tensor>& tensors, int axis) {
  TK_CHECK(!tensors.empty(), kInvalidArgument, "Concatenate: no tensors given; pass at least one");
  const Tensor& first = tensors[0];
  first.CheckDefined("Concatenate");
  TK_CHECK(first.NumAxes() >= 1, kInvalidArgument,
           "Concatenate: rank-0 tensors have no axis to concatenate along");
  const int ax = NormalizeAxis(axis, first.NumAxes(), "Concatenate");
  std::vector<int64_t> dims = first.Dims();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    t.CheckDefined("Concatenate");
    TK_CHECK(t.dtype() == first.dtype(), kDTypeMismatch, "Concatenate: tensor ", i, " is ",
             DTypeName(t.dtype()), " but tensor 0 is ", DTypeName(first.dtype()),
             "; convert with Copy first");
    TK_CHECK(t.device() == first.device(), kDeviceMismatch, "Concatenate: tensor ", i, " is on ",
             t.device(), " but tensor 0 is on ", first.device());
    std::vector<int64_t> d = t.Dims();
    bool ok = d.size() == dims.size();
    for (size_t a = 0; ok && a < d.size(); ++a) ok = static_cast<int>(a) == ax || d[a] == dims[a];
    TK_CHECK(ok, kShapeMismatch, "Concatenate: tensor ", i, " has dims ", ShapeString(d),
             " but tensor 0 has ", ShapeString(dims), "; all dims except axis ", ax, " must match");
    TK_CHECK(!__builtin_add_overflow(total, d[ax], &total), kOutOfRange, "Concatenate: dim ", ax,
             " of the joined tensor (", ShapeString(dims), " and more, axis ", ax,
             " summed up to tensor ", i, ") overflows int64; concatenate fewer tensors");
  }
  dims[ax] = total;
  Tensor out = Tensor::Empty(dims, first.dtype(), first.device());
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    const int64_t len = t.Dim(ax);
    if (len > 0 && t.NumElements() > 0) {
      Tensor piece = Slice(out, ax, offset, offset + len);
      Copy(t, &piece);
    }
    offset += len;
  }
  return out;
}

Tensor ConcatenateRows(const std::vector<Tensor>& tensors) { return Concatenate(tensors, 0); }

Tensor ConcatenateColumns(const std::vector<Tensor>& tensors) {
  // The columns of a 1-D tensor are its elements: side by side, 1-D tensors make a longer one.
  int ones = 0, defined = 0;
  for (const Tensor& t : tensors) {
    defined += t.defined();
    ones += t.defined() && t.NumAxes() == 1;
  }
  TK_CHECK(ones == 0 || ones == defined, kShapeMismatch, "ConcatenateColumns: ", ones, " of ",
           tensors.size(),
           " tensors are 1-D; 1-D tensors join only other 1-D tensors (Unsqueeze(t, 1) turns one "
           "into a single column)");
  return Concatenate(tensors, ones > 0 ? 0 : 1);
}

std::vector<Tensor> Split(const Tensor& t, int axis, const std::vector<int64_t>& sizes) {
  t.CheckDefined("Split");
  const int ax = NormalizeAxis(axis, t.NumAxes(), "Split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    TK_CHECK(s >= 0, kInvalidArgument, "Split: negative size ", s, " in sizes ",
             ShapeString(sizes));
    TK_CHECK(!__builtin_add_overflow(total, s, &total), kInvalidArgument, "Split: sizes ",
             ShapeString(sizes), " overflow int64");
  }
  TK_CHECK(total == t.Dim(ax), kShapeMismatch, "Split: sizes ", ShapeString(sizes), " add up to ",
           total, " but axis ", ax, " of dims ", ShapeString(t.Dims()), " has ", t.Dim(ax));
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    out.push_back(CopyOf(Slice(t, ax, offset, offset + s)));
    offset += s;
  }
  return out;
}

}  // namespace tensorkit
