// Arrow through the PyCapsule interface (https://arrow.apache.org/docs/format/
// CDataInterface/PyCapsuleInterface.html): tk.from_arrow takes whatever has __arrow_c_array__ or
// __arrow_c_stream__ (pyarrow, polars, DuckDB, nanoarrow), and tk.Tensor, tk.JaggedTensor and
// tk.KeyedJaggedTensor export both. The structs are moved out of the capsules and handed to the
// library's io/arrow.h, which does the import and export (zero-copy, the null rule); this file
// only adds the capsules, the streams, and joins a stream's batches.
//
// Glossary
//   capsule move  the consumer copies the struct out of the producer's capsule and marks the
//                 capsule's copy released (release = NULL), so the capsule's destructor frees
//                 only the struct; the data now lives until the consumer releases its copy.
//   GIL release   the producer's release callbacks may touch Python objects (pyarrow arrays made
//                 over NumPy memory), and a tensor may be dropped in any thread: the imported
//                 structs are wrapped so that their release runs holding the GIL.
//   stream        an ArrowArrayStream: one schema, then batches until a released array. Batches
//                 are joined into one result (a copy when there is more than one).
#include "tensorkit/io/arrow.h"

#include <Python.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>
#include <vector>

#include "python.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/features/jagged.h"

// The Arrow C Stream Interface, as its specification declares it.
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
extern "C" {
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};
}  // extern "C"
#endif  // ARROW_C_STREAM_INTERFACE

namespace tensorkit::python {
namespace {

using namespace nb::literals;

// ---------------------------------------------------------------------------------------------
// Import
// ---------------------------------------------------------------------------------------------

// A struct moved out of a producer, whose release runs under the GIL (S: ArrowArray or
// ArrowSchema). The outer struct shares the inner one's buffers and children.
template <typename S>
struct UnderGil {
  S inner;
  static void Release(S* s) {
    auto* self = static_cast<UnderGil*>(s->private_data);
    if (self->inner.release != nullptr) {
      S* inner = &self->inner;
      WithGil([inner] { inner->release(inner); });
    }
    delete self;
    s->release = nullptr;
  }
};

// Moves *src (marking it released) into a struct whose release takes the GIL.
template <typename S>
S MoveUnderGil(S* src) {
  S out = *src;
  auto* holder = new UnderGil<S>{*src};
  src->release = nullptr;
  out.private_data = holder;
  out.release = &UnderGil<S>::Release;
  return out;
}

// A self-contained deep copy of a schema (format, name, flags, children, dictionary): a stream's
// schema serves every batch, and each import releases the schema it is given.
struct SchemaCopy {
  std::string format, name;
  std::vector<std::unique_ptr<ArrowSchema>> children;
  std::vector<ArrowSchema*> child_ptrs;
  std::unique_ptr<ArrowSchema> dictionary;

  static void Release(ArrowSchema* s) {
    auto* self = static_cast<SchemaCopy*>(s->private_data);
    for (auto& c : self->children) {
      if (c->release != nullptr) c->release(c.get());
    }
    if (self->dictionary && self->dictionary->release != nullptr) {
      self->dictionary->release(self->dictionary.get());
    }
    delete self;
    s->release = nullptr;
  }
};

void CopySchema(const ArrowSchema& src, ArrowSchema* dst, int depth = 0) {
  TK_CHECK(depth < 64 && src.format != nullptr, kInvalidArgument,
           "from_arrow: the stream's schema is malformed (no format, or nested too deep)");
  auto node = std::make_unique<SchemaCopy>();
  node->format = src.format;
  node->name = src.name != nullptr ? src.name : "";
  for (int64_t i = 0; i < src.n_children; ++i) {
    node->children.push_back(std::make_unique<ArrowSchema>());
    CopySchema(*src.children[i], node->children.back().get(), depth + 1);
    node->child_ptrs.push_back(node->children.back().get());
  }
  if (src.dictionary != nullptr) {
    node->dictionary = std::make_unique<ArrowSchema>();
    CopySchema(*src.dictionary, node->dictionary.get(), depth + 1);
  }
  dst->format = node->format.c_str();
  dst->name = node->name.c_str();
  dst->metadata = nullptr;
  dst->flags = src.flags;
  dst->n_children = static_cast<int64_t>(node->children.size());
  dst->children = node->child_ptrs.empty() ? nullptr : node->child_ptrs.data();
  dst->dictionary = node->dictionary.get();
  dst->release = &SchemaCopy::Release;
  dst->private_data = node.release();
}

// An array of length 0 of `schema`'s type (a stream without batches): no buffers, children of
// length 0, so the import gives an empty result of the right kind and dtype.
struct EmptyArray {
  std::vector<const void*> buffers;
  std::vector<std::unique_ptr<ArrowArray>> children;
  std::vector<ArrowArray*> child_ptrs;

  static void Release(ArrowArray* a) {
    auto* self = static_cast<EmptyArray*>(a->private_data);
    for (auto& c : self->children) {
      if (c->release != nullptr) c->release(c.get());
    }
    delete self;
    a->release = nullptr;
  }
};

void MakeEmpty(const ArrowSchema& schema, ArrowArray* out) {
  const std::string f = schema.format;
  auto node = std::make_unique<EmptyArray>();
  int n_buffers = 2;  // validity and data (primitives), validity and offsets (lists)
  if (f == "+s" || f.rfind("+w:", 0) == 0) n_buffers = 1;
  // Strings: validity, offsets and characters; views: validity, views and the (empty) sizes of
  // no data buffers.
  if (f == "z" || f == "u" || f == "Z" || f == "U" || f == "vz" || f == "vu") n_buffers = 3;
  node->buffers.assign(static_cast<size_t>(n_buffers), nullptr);
  // A list of 0 rows still has its one offset, 0.
  static const int64_t kZeroOffset = 0;
  if (f == "+l" || f == "+L") node->buffers[1] = &kZeroOffset;
  for (int64_t i = 0; i < schema.n_children; ++i) {
    node->children.push_back(std::make_unique<ArrowArray>());
    MakeEmpty(*schema.children[i], node->children.back().get());
    node->child_ptrs.push_back(node->children.back().get());
  }
  *out = ArrowArray{};
  out->n_buffers = n_buffers;
  out->buffers = node->buffers.data();
  out->n_children = static_cast<int64_t>(node->children.size());
  out->children = node->child_ptrs.empty() ? nullptr : node->child_ptrs.data();
  out->release = &EmptyArray::Release;
  out->private_data = node.release();
}

enum class Kind { kTensor, kJagged, kKeyed };

Kind KindOf(const ArrowSchema& s) {
  const std::string f = s.format != nullptr ? s.format : "";
  if (f == "+l" || f == "+L") return Kind::kJagged;
  if (f == "+s") return Kind::kKeyed;
  return Kind::kTensor;
}

// The batches of one import, of one kind.
struct Batches {
  Kind kind = Kind::kTensor;
  std::vector<Tensor> tensors;
  std::vector<JaggedTensor> jagged;
  std::vector<KeyedJaggedTensor> keyed;
};

// Imports one array (both structs taken over, as io/arrow.h's import does) into `out`.
void ImportOne(ArrowArray* array, ArrowSchema* schema, const io::ArrowImportOptions& options,
               Batches* out) {
  ArrowArray a = MoveUnderGil(array);
  ArrowSchema s = MoveUnderGil(schema);
  nb::gil_scoped_release release;
  switch (out->kind) {
    case Kind::kTensor:
      out->tensors.push_back(io::ImportArrowTensor(&a, &s, options));
      break;
    case Kind::kJagged:
      out->jagged.push_back(io::ImportArrowJagged(&a, &s, options));
      break;
    case Kind::kKeyed:
      out->keyed.push_back(io::ImportArrowKeyedJagged(&a, &s, options));
      break;
  }
}

// Float ones [n], the weight of a value without a null.
Tensor Ones(int64_t n) {
  Tensor w = Tensor::Empty({n}, DType::kFloat32);
  Set(1.0, &w);
  return w;
}

// Rows of several jagged batches one after another (values and weights copied once).
JaggedTensor JoinJagged(const std::vector<JaggedTensor>& parts) {
  if (parts.size() == 1) return parts[0];
  bool weighted = false;
  for (const JaggedTensor& p : parts) weighted = weighted || p.has_weights();
  std::vector<Tensor> values, weights;
  std::vector<int64_t> offsets = {0};
  for (const JaggedTensor& p : parts) {
    values.push_back(p.values());
    if (weighted) weights.push_back(p.has_weights() ? p.weights() : Ones(p.num_values()));
    const int64_t* o = p.offsets_data();
    const int64_t base = offsets.back();
    for (int64_t i = 1; i <= p.batch_size(); ++i) offsets.push_back(base + o[i]);
  }
  return JaggedTensor::FromOffsets(ConcatenateRows(values), Tensor::FromVector(std::move(offsets)),
                                   weighted ? ConcatenateRows(weights) : Tensor());
}

KeyedJaggedTensor JoinKeyed(std::vector<KeyedJaggedTensor> parts) {
  if (parts.size() == 1) return parts[0];
  // Concat wants weights in every part or in none; a batch without nulls has none.
  bool weighted = false;
  for (const KeyedJaggedTensor& p : parts) weighted = weighted || p.has_weights();
  if (weighted) {
    for (KeyedJaggedTensor& p : parts) {
      if (!p.has_weights()) {
        p = KeyedJaggedTensor(p.keys(), p.values(), p.lengths(), Ones(p.values().Dim(0)));
      }
    }
  }
  return KeyedJaggedTensor::Concat(parts);
}

nb::object Join(Batches& b) {
  switch (b.kind) {
    case Kind::kTensor: {
      Tensor t;
      {
        nb::gil_scoped_release release;
        t = b.tensors.size() == 1 ? b.tensors[0] : ConcatenateRows(b.tensors);
      }
      return nb::cast(std::move(t));
    }
    case Kind::kJagged: {
      JaggedTensor j;
      {
        nb::gil_scoped_release release;
        j = JoinJagged(b.jagged);
      }
      return nb::cast(std::move(j));
    }
    case Kind::kKeyed: {
      KeyedJaggedTensor k;
      {
        nb::gil_scoped_release release;
        k = JoinKeyed(std::move(b.keyed));
      }
      return nb::cast(std::move(k));
    }
  }
  return nb::none();
}

template <typename S>
S* CapsulePointer(nb::handle capsule, const char* name) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), name);
  if (p == nullptr) {
    PyErr_Clear();
    throw nb::type_error(
        ("from_arrow: expected a PyCapsule named '" + std::string(name) + "'").c_str());
  }
  return static_cast<S*>(p);
}

nb::object FromArrayCapsules(nb::handle pair, const io::ArrowImportOptions& options) {
  if (!nb::isinstance<nb::tuple>(pair) || nb::len(pair) != 2) {
    throw nb::type_error("from_arrow: __arrow_c_array__ did not return (schema, array) capsules");
  }
  auto* schema = CapsulePointer<ArrowSchema>(pair[0], "arrow_schema");
  auto* array = CapsulePointer<ArrowArray>(pair[1], "arrow_array");
  if (schema->release == nullptr || array->release == nullptr) {
    throw nb::value_error("from_arrow: the Arrow capsules were already consumed");
  }
  Batches b;
  b.kind = KindOf(*schema);
  ImportOne(array, schema, options, &b);
  return Join(b);
}

// The stream moved out of its capsule, released (under the GIL) when this goes.
struct StreamGuard {
  ArrowArrayStream s{};
  ~StreamGuard() {
    if (s.release != nullptr) s.release(&s);
  }
  [[noreturn]] void Fail(const char* call, int code) {
    const char* e = s.get_last_error != nullptr ? s.get_last_error(&s) : nullptr;
    Throw(ErrorCode::kIo, "from_arrow: the stream's ", call, " failed (errno ", code, ")",
          e != nullptr ? std::string(": ") + e : std::string());
  }
};

// The schema guard of a stream: released when this goes.
struct SchemaGuard {
  ArrowSchema s{};
  ~SchemaGuard() {
    if (s.release != nullptr) s.release(&s);
  }
};

nb::object FromStreamCapsule(nb::handle capsule, const io::ArrowImportOptions& options) {
  auto* src = CapsulePointer<ArrowArrayStream>(capsule, "arrow_array_stream");
  if (src->release == nullptr) {
    throw nb::value_error("from_arrow: the Arrow stream capsule was already consumed");
  }
  StreamGuard stream;
  stream.s = *src;
  src->release = nullptr;
  // The producer's callbacks run holding the GIL: a stream over Python objects needs it.
  SchemaGuard schema;
  if (int rc = stream.s.get_schema(&stream.s, &schema.s); rc != 0) stream.Fail("get_schema", rc);
  Batches b;
  b.kind = KindOf(schema.s);
  for (;;) {
    ArrowArray a{};
    if (int rc = stream.s.get_next(&stream.s, &a); rc != 0) stream.Fail("get_next", rc);
    if (a.release == nullptr) break;  // the end
    ArrowSchema s{};
    try {
      CopySchema(schema.s, &s);
    } catch (...) {
      a.release(&a);
      throw;
    }
    ImportOne(&a, &s, options, &b);
  }
  if (b.tensors.empty() && b.jagged.empty() && b.keyed.empty()) {
    ArrowArray a{};
    ArrowSchema s{};
    CopySchema(schema.s, &s);
    MakeEmpty(s, &a);
    ImportOne(&a, &s, options, &b);
  }
  return Join(b);
}

nb::object FromArrow(nb::handle obj, bool null_lists_as_empty, bool null_values_as_zero_weight) {
  io::ArrowImportOptions options;
  options.null_lists_as_empty = null_lists_as_empty;
  options.null_values_as_zero_weight = null_values_as_zero_weight;
  // One array where the producer has it (pyarrow's Array and RecordBatch), else its stream
  // (chunked arrays, tables, polars, DuckDB).
  if (nb::hasattr(obj, "__arrow_c_array__")) {
    return FromArrayCapsules(obj.attr("__arrow_c_array__")(), options);
  }
  if (nb::hasattr(obj, "__arrow_c_stream__")) {
    return FromStreamCapsule(obj.attr("__arrow_c_stream__")(), options);
  }
  throw nb::type_error(
      "from_arrow: the object speaks neither __arrow_c_array__ nor __arrow_c_stream__ (the "
      "Arrow PyCapsule interface); pass a pyarrow, polars or DuckDB object");
}

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

void SchemaCapsuleDestructor(PyObject* capsule) {
  auto* s = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule, "arrow_schema"));
  if (s == nullptr) {
    PyErr_Clear();
    return;
  }
  if (s->release != nullptr) s->release(s);
  delete s;
}

void ArrayCapsuleDestructor(PyObject* capsule) {
  auto* a = static_cast<ArrowArray*>(PyCapsule_GetPointer(capsule, "arrow_array"));
  if (a == nullptr) {
    PyErr_Clear();
    return;
  }
  if (a->release != nullptr) a->release(a);
  delete a;
}

void StreamCapsuleDestructor(PyObject* capsule) {
  auto* s = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule, "arrow_array_stream"));
  if (s == nullptr) {
    PyErr_Clear();
    return;
  }
  if (s->release != nullptr) s->release(s);
  delete s;
}

// A stream of the one exported array.
struct OneBatchStream {
  ArrowSchema schema{};
  ArrowArray array{};
  std::string error;

  static OneBatchStream* Of(ArrowArrayStream* s) {
    return static_cast<OneBatchStream*>(s->private_data);
  }
  static int GetSchema(ArrowArrayStream* s, ArrowSchema* out) {
    try {
      CopySchema(Of(s)->schema, out);
      return 0;
    } catch (const std::exception& e) {
      Of(s)->error = e.what();
      return 12;  // ENOMEM, the only failure of a copy
    }
  }
  static int GetNext(ArrowArrayStream* s, ArrowArray* out) {
    OneBatchStream* self = Of(s);
    *out = self->array;  // moved; a released array once it was handed out: the end
    self->array.release = nullptr;
    return 0;
  }
  static const char* LastError(ArrowArrayStream* s) {
    return Of(s)->error.empty() ? nullptr : Of(s)->error.c_str();
  }
  static void Release(ArrowArrayStream* s) {
    OneBatchStream* self = Of(s);
    if (self->array.release != nullptr) self->array.release(&self->array);
    if (self->schema.release != nullptr) self->schema.release(&self->schema);
    delete self;
    s->release = nullptr;
  }
};

// x's schema and array, made with the GIL released.
template <typename T>
void Export(const T& x, ArrowArray* array, ArrowSchema* schema) {
  nb::gil_scoped_release release;
  io::ExportArrow(x, array, schema);
}

// __arrow_c_array__: (schema capsule, array capsule). A requested_schema is not honoured (the
// specification allows that): the consumer sees tensorkit's own types.
template <typename T>
nb::tuple ArrowCArray(const T& x, nb::handle /*requested_schema*/) {
  auto schema = std::make_unique<ArrowSchema>();
  auto array = std::make_unique<ArrowArray>();
  *schema = ArrowSchema{};
  *array = ArrowArray{};
  Export(x, array.get(), schema.get());
  PyObject* sc = PyCapsule_New(schema.get(), "arrow_schema", &SchemaCapsuleDestructor);
  if (sc == nullptr) {
    schema->release(schema.get());
    array->release(array.get());
    throw nb::python_error();
  }
  nb::object schema_capsule = nb::steal(sc);
  schema.release();  // the capsule owns it
  PyObject* ac = PyCapsule_New(array.get(), "arrow_array", &ArrayCapsuleDestructor);
  if (ac == nullptr) {
    array->release(array.get());
    throw nb::python_error();
  }
  nb::object array_capsule = nb::steal(ac);
  array.release();
  return nb::make_tuple(schema_capsule, array_capsule);
}

template <typename T>
nb::object ArrowCStream(const T& x, nb::handle /*requested_schema*/) {
  auto node = std::make_unique<OneBatchStream>();
  Export(x, &node->array, &node->schema);
  auto stream = std::make_unique<ArrowArrayStream>();
  stream->get_schema = &OneBatchStream::GetSchema;
  stream->get_next = &OneBatchStream::GetNext;
  stream->get_last_error = &OneBatchStream::LastError;
  stream->release = &OneBatchStream::Release;
  stream->private_data = node.release();
  PyObject* c = PyCapsule_New(stream.get(), "arrow_array_stream", &StreamCapsuleDestructor);
  if (c == nullptr) {
    stream->release(stream.get());
    throw nb::python_error();
  }
  stream.release();
  return nb::steal(c);
}

// Adds __arrow_c_array__ and __arrow_c_stream__ to the bound class of T.
template <typename T>
void AddExport() {
  nb::handle cls = nb::type<T>();
  cls.attr("__arrow_c_array__") = nb::cpp_function(
      [](const T& x, nb::handle requested_schema) { return ArrowCArray(x, requested_schema); },
      nb::is_method(), nb::scope(cls), nb::name("__arrow_c_array__"),
      nb::sig("def __arrow_c_array__(self, requested_schema: object | None = None) -> "
              "tuple[object, object]"),
      "requested_schema"_a = nb::none(),
      "Arrow C Data Interface capsules (schema, array) over this object's memory (no copy): "
      "pa.array(x), pa.record_batch(x). A Tensor is a primitive array (2-D: fixed_size_list), a "
      "JaggedTensor a large_list (without its weights), a KeyedJaggedTensor a struct of one "
      "large_list per key. requested_schema is not honoured.");
  cls.attr("__arrow_c_stream__") = nb::cpp_function(
      [](const T& x, nb::handle requested_schema) { return ArrowCStream(x, requested_schema); },
      nb::is_method(), nb::scope(cls), nb::name("__arrow_c_stream__"),
      "requested_schema"_a = nb::none(),
      "A stream of one batch, the array of __arrow_c_array__: pa.table(x), polars.DataFrame(x).");
}

}  // namespace

void BindArrow(nb::module_& m) {
  m.def("from_arrow", &FromArrow,
        nb::sig("def from_arrow(obj: object, *, null_lists_as_empty: bool = False, "
                "null_values_as_zero_weight: bool = False) -> Tensor | JaggedTensor | "
                "KeyedJaggedTensor"),
        "obj"_a, nb::kw_only(), "null_lists_as_empty"_a = false,
        "null_values_as_zero_weight"_a = false,
        "An Arrow array, chunked array, record batch, table or stream (pyarrow, polars, DuckDB: "
        "anything with __arrow_c_array__ or __arrow_c_stream__) without a copy: a primitive or "
        "fixed_size_list array -> Tensor; list / large_list -> JaggedTensor; a struct, record "
        "batch or table of list columns -> KeyedJaggedTensor (keys = the column names). Several "
        "batches are joined (a copy). Nulls are refused, unless null_lists_as_empty (a null "
        "list is an empty row) or null_values_as_zero_weight (null values inside lists get "
        "weight 0, the others 1).");
  AddExport<Tensor>();
  AddExport<JaggedTensor>();
  AddExport<KeyedJaggedTensor>();
}

}  // namespace tensorkit::python
