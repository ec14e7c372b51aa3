// The Arrow C Data Interface both ways (arrow.h). Exported arrays and schemas own a node of
// private data each (buffers made for the export, references to tensorkit storages, children);
// imported arrays are moved into a shared holder that the wrapped storages keep alive.
#include "tensorkit/io/arrow.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/storage.h"
#include "tensorkit/dense/ops.h"

namespace tensorkit::io {
namespace {

// --- export -------------------------------------------------------------------------------------

struct ArrayNode {
  std::vector<std::shared_ptr<Storage>> keep;  // storages the buffers point into
  std::vector<std::vector<uint8_t>> owned;     // buffers made for the export
  std::vector<const void*> buffers;
  std::vector<std::unique_ptr<ArrowArray>> children;
  std::vector<ArrowArray*> child_ptrs;
};

struct SchemaNode {
  std::string format, name;
  std::vector<std::unique_ptr<ArrowSchema>> children;
  std::vector<ArrowSchema*> child_ptrs;
};

// The release callback of an exported array (Node = ArrayNode) or schema (SchemaNode): releases
// the children, then frees the node that owns them, and marks the struct released.
template <typename S, typename Node>
void Release(S* s) {
  if (s == nullptr || s->release == nullptr) return;
  for (int64_t i = 0; i < s->n_children; ++i) {
    if (s->children[i]->release != nullptr) s->children[i]->release(s->children[i]);
  }
  delete static_cast<Node*>(s->private_data);
  s->release = nullptr;
}

// Fills `a` from `node` (taken over): `length` rows, no nulls.
void FinishArray(ArrowArray* a, std::unique_ptr<ArrayNode> node, int64_t length) {
  a->length = length;
  a->null_count = 0;
  a->offset = 0;
  a->n_buffers = static_cast<int64_t>(node->buffers.size());
  a->n_children = static_cast<int64_t>(node->children.size());
  a->buffers = node->buffers.data();
  for (auto& c : node->children) node->child_ptrs.push_back(c.get());
  a->children = node->child_ptrs.empty() ? nullptr : node->child_ptrs.data();
  a->dictionary = nullptr;
  a->release = Release<ArrowArray, ArrayNode>;
  a->private_data = node.release();
}

void FinishSchema(ArrowSchema* s, std::unique_ptr<SchemaNode> node) {
  s->format = node->format.c_str();
  s->name = node->name.c_str();
  s->metadata = nullptr;
  // Nullable, as Arrow's fields are by default (the arrays hold no nulls): the types then
  // compare equal to those of arrays made in pyarrow.
  s->flags = ARROW_FLAG_NULLABLE;
  s->n_children = static_cast<int64_t>(node->children.size());
  for (auto& c : node->children) node->child_ptrs.push_back(c.get());
  s->children = node->child_ptrs.empty() ? nullptr : node->child_ptrs.data();
  s->dictionary = nullptr;
  s->release = Release<ArrowSchema, SchemaNode>;
  s->private_data = node.release();
}

const char* PrimitiveFormat(DType d, const char* op) {
  switch (d) {
    case DType::kBool:
      return "b";
    case DType::kInt8:
      return "c";
    case DType::kUInt8:
      return "C";
    case DType::kInt16:
      return "s";
    case DType::kInt32:
      return "i";
    case DType::kInt64:
      return "l";
    case DType::kFloat16:
      return "e";
    case DType::kFloat32:
      return "f";
    case DType::kFloat64:
      return "g";
    case DType::kString:
      return "z";
    default:
      Throw(ErrorCode::kUnsupported, op, ": ", DTypeName(d),
            " has no Arrow type; convert it first (e.g. Copy into a float32 tensor)");
  }
}

void CheckHost(const Tensor& t, const char* op) {
  t.CheckDefined(op);
  TK_CHECK(t.device().is_cpu(), kDeviceMismatch, op, ": the tensor is on ", t.device().ToString(),
           "; the Arrow C Data Interface carries host memory: export t.To(Device::Cpu())");
}

// A 1-D contiguous host tensor `t` as a primitive (or binary) array.
void ExportFlat(const Tensor& t, ArrowArray* a, ArrowSchema* s, const std::string& name,
                const char* op) {
  auto node = std::make_unique<ArrayNode>();
  auto snode = std::make_unique<SchemaNode>();
  snode->format = PrimitiveFormat(t.dtype(), op);
  snode->name = name;
  const int64_t n = t.NumElements();
  node->buffers.push_back(nullptr);  // no validity bitmap: no nulls
  if (t.dtype() == DType::kBool) {
    std::vector<uint8_t> bits(static_cast<size_t>((n + 7) / 8), 0);
    const bool* v = t.data<bool>();
    for (int64_t i = 0; i < n; ++i) bits[i / 8] |= static_cast<uint8_t>(v[i]) << (i % 8);
    node->owned.push_back(std::move(bits));
    node->buffers.push_back(node->owned.back().data());
  } else if (t.dtype() == DType::kString) {
    const std::string* v = t.data<std::string>();
    int64_t bytes = 0;
    for (int64_t i = 0; i < n; ++i) bytes += static_cast<int64_t>(v[i].size());
    const bool large = bytes > std::numeric_limits<int32_t>::max();
    if (large) snode->format = "Z";
    const size_t width = large ? 8 : 4;
    std::vector<uint8_t> offsets(static_cast<size_t>(n + 1) * width),
        data(static_cast<size_t>(bytes));
    int64_t at = 0;
    for (int64_t i = 0; i <= n; ++i) {
      if (large) {
        std::memcpy(offsets.data() + i * 8, &at, 8);
      } else {
        const int32_t a32 = static_cast<int32_t>(at);
        std::memcpy(offsets.data() + i * 4, &a32, 4);
      }
      if (i < n) {
        if (!v[i].empty()) std::memcpy(data.data() + at, v[i].data(), v[i].size());
        at += static_cast<int64_t>(v[i].size());
      }
    }
    node->owned.push_back(std::move(offsets));
    node->owned.push_back(std::move(data));
    node->buffers.push_back(node->owned[0].data());
    node->buffers.push_back(node->owned[1].data());
  } else {
    node->keep.push_back(t.storage());
    node->buffers.push_back(t.raw_data());
  }
  FinishArray(a, std::move(node), n);
  FinishSchema(s, std::move(snode));
}

// `t` (1-D, or 2-D as fixed_size_list), contiguous on the host.
void ExportValues(const Tensor& t, ArrowArray* a, ArrowSchema* s, const std::string& name,
                  const char* op) {
  if (t.NumAxes() == 1) {
    ExportFlat(t, a, s, name, op);
    return;
  }
  TK_CHECK(t.NumAxes() == 2, kUnsupported, op, ": a tensor of dims ", ShapeString(t.Dims()),
           " has no Arrow layout here; export 1-D (primitive) or 2-D (fixed_size_list) tensors");
  const int64_t rows = t.Dim(0), width = t.Dim(1);
  auto node = std::make_unique<ArrayNode>();
  auto snode = std::make_unique<SchemaNode>();
  snode->format = "+w:" + std::to_string(width);
  snode->name = name;
  node->buffers.push_back(nullptr);
  node->children.push_back(std::make_unique<ArrowArray>());
  snode->children.push_back(std::make_unique<ArrowSchema>());
  const Tensor flat = t.WithPattern(DefaultPattern({rows * width}, op));
  ExportFlat(flat, node->children[0].get(), snode->children[0].get(), "item", op);
  FinishArray(a, std::move(node), rows);
  FinishSchema(s, std::move(snode));
}

// A large_list of `rows` rows: rows + 1 int64 offsets at `offsets` (in `keep`) into `values`.
void ExportList(const int64_t* offsets, std::shared_ptr<Storage> keep, const Tensor& values,
                int64_t rows, ArrowArray* a, ArrowSchema* s, const std::string& name,
                const char* op) {
  auto node = std::make_unique<ArrayNode>();
  auto snode = std::make_unique<SchemaNode>();
  snode->format = "+L";
  snode->name = name;
  node->buffers.push_back(nullptr);
  node->keep.push_back(std::move(keep));
  node->buffers.push_back(offsets);
  node->children.push_back(std::make_unique<ArrowArray>());
  snode->children.push_back(std::make_unique<ArrowSchema>());
  ExportValues(values, node->children[0].get(), snode->children[0].get(), "item", op);
  FinishArray(a, std::move(node), rows);
  FinishSchema(s, std::move(snode));
}

// --- import -------------------------------------------------------------------------------------

// The imported array, released when the last tensor over its buffers goes.
struct Holder {
  ArrowArray array{};
  ~Holder() {
    if (array.release != nullptr) array.release(&array);
  }
};
using HolderPtr = std::shared_ptr<Holder>;

// What the import needs of a schema, copied before the schema is released.
struct Format {
  std::string format, name;
  std::string path;  // the names from the top, joined by '.' ("tags.item"), for errors
  bool nullable = false;
  std::vector<Format> children;
};

Format ReadSchema(const ArrowSchema* s, const char* op, const std::string& parent = "",
                  int depth = 0) {
  TK_CHECK(s != nullptr && s->release != nullptr && s->format != nullptr, kInvalidArgument, op,
           ": the ArrowSchema is null or released");
  TK_CHECK(depth < 64, kInvalidArgument, op, ": the ArrowSchema nests more than 64 levels");
  TK_CHECK(s->dictionary == nullptr, kUnsupported, op, ": field '", s->name ? s->name : "",
           "' is dictionary-encoded; decode it first (pyarrow: arr.dictionary_decode())");
  Format f;
  f.format = s->format;
  f.name = s->name != nullptr ? s->name : "";
  f.path = parent.empty() ? f.name : parent + "." + f.name;
  f.nullable = (s->flags & ARROW_FLAG_NULLABLE) != 0;
  TK_CHECK(s->n_children >= 0 && (s->n_children == 0 || s->children != nullptr), kInvalidArgument,
           op, ": field '", f.name, "' has ", s->n_children, " children and no child pointers");
  for (int64_t i = 0; i < s->n_children; ++i) {
    f.children.push_back(ReadSchema(s->children[i], op, f.path, depth + 1));
  }
  return f;
}

// Takes over `array` and `schema`: the schema is read and released, the array moved into a
// holder. Both are released on every path, an Error included.
struct Taken {
  Format format;
  HolderPtr holder;
};
Taken Take(ArrowArray* array, ArrowSchema* schema, const char* op) {
  Taken t;
  t.holder = std::make_shared<Holder>();
  if (array != nullptr && array->release != nullptr) {
    t.holder->array = *array;
    array->release = nullptr;  // moved
  }
  try {
    t.format = ReadSchema(schema, op);
  } catch (...) {
    if (schema != nullptr && schema->release != nullptr) schema->release(schema);
    throw;
  }
  schema->release(schema);
  TK_CHECK(t.holder->array.release != nullptr, kInvalidArgument, op,
           ": the ArrowArray is null or released");
  return t;
}

// One array and where its rows start: a view into the holder's tree.
struct View {
  const ArrowArray* a;
  const Format* f;
};

void CheckArray(const View& v, int64_t n_buffers, int64_t n_children, const char* op) {
  TK_CHECK(v.a->n_buffers == n_buffers && v.a->n_children == n_children &&
               static_cast<int64_t>(v.f->children.size()) == n_children,
           kInvalidArgument, op, ": field '", v.f->name, "' of format '", v.f->format, "' has ",
           v.a->n_buffers, " buffers and ", v.a->n_children, " children; that format has ",
           n_buffers, " and ", n_children);
  TK_CHECK(v.a->length >= 0 && v.a->offset >= 0 &&
               v.a->length <= std::numeric_limits<int64_t>::max() - v.a->offset,
           kInvalidArgument, op, ": field '", v.f->name, "' has length ", v.a->length,
           " and offset ", v.a->offset);
  TK_CHECK(v.a->buffers != nullptr, kInvalidArgument, op, ": field '", v.f->name,
           "' has no buffer pointers");
  for (int64_t i = 0; i < n_children; ++i) {
    TK_CHECK(v.a->children != nullptr && v.a->children[i] != nullptr, kInvalidArgument, op,
             ": field '", v.f->name, "' has a null child array");
  }
}

bool BitSet(const void* bits, int64_t i) {
  return (static_cast<const uint8_t*>(bits)[i / 8] >> (i % 8)) & 1;
}

// Whether row i (of `count` from `begin`, relative to the array's offset) is null; an array
// without a validity buffer or with null_count 0 has none.
bool MayHaveNulls(const ArrowArray* a) { return a->buffers[0] != nullptr && a->null_count != 0; }
bool IsNull(const ArrowArray* a, int64_t i) {
  return MayHaveNulls(a) && !BitSet(a->buffers[0], a->offset + i);
}

// The first null of rows [begin, begin + count), or -1.
int64_t FirstNull(const ArrowArray* a, int64_t begin, int64_t count) {
  if (!MayHaveNulls(a)) return -1;
  for (int64_t i = begin; i < begin + count; ++i) {
    if (IsNull(a, i)) return i;
  }
  return -1;
}

DType PrimitiveDType(const std::string& format, const std::string& name, const char* op) {
  if (format == "b") return DType::kBool;
  if (format == "c") return DType::kInt8;
  if (format == "C") return DType::kUInt8;
  if (format == "s") return DType::kInt16;
  if (format == "i") return DType::kInt32;
  if (format == "l") return DType::kInt64;
  if (format == "e") return DType::kFloat16;
  if (format == "f") return DType::kFloat32;
  if (format == "g") return DType::kFloat64;
  if (format == "z" || format == "u" || format == "Z" || format == "U" || format == "vz" ||
      format == "vu") {
    return DType::kString;
  }
  if (format == "S" || format == "I" || format == "L") {
    Throw(ErrorCode::kUnsupported, op, ": field '", name, "' is unsigned (Arrow format '", format,
          "'), which tensorkit has no dtype for; cast it to a signed type first "
          "(pyarrow: arr.cast(pa.int64()))");
  }
  Throw(ErrorCode::kUnsupported, op, ": field '", name, "' has Arrow format '", format,
        "', not a primitive or string type tensorkit reads");
}

// "field 'tags.item'" in errors, or "the array" for an unnamed top-level array.
std::string FieldLabel(const Format& f) {
  return f.path.empty() ? std::string("the array") : "field '" + f.path + "'";
}

// Slots [first, first + count) of a string_view or binary_view array `v` ("vu", "vz"), whose
// buffers are the validity bitmap, the 16-byte views, the variadic data buffers and their int64
// sizes. A view holds its int32 length, then either the string itself (up to 12 bytes) or a
// 4-byte prefix, the index of a data buffer and the offset into it. Every view is checked
// against the buffers it names, as the producer's memory is not to be trusted; null slots are
// read as "" without looking at their views. `begin` numbers the slots in errors.
Tensor ViewStrings(const View& v, int64_t begin, int64_t first, int64_t count, const char* op) {
  constexpr int64_t kInline = 12;
  const int64_t n_data = v.a->n_buffers - 3;
  const auto* views = static_cast<const uint8_t*>(v.a->buffers[1]);
  const auto* sizes = static_cast<const uint8_t*>(v.a->buffers[v.a->n_buffers - 1]);
  std::vector<std::string> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    if (IsNull(v.a, begin + i)) continue;
    const uint8_t* view = views + (first + i) * 16;
    int32_t length = 0;
    std::memcpy(&length, view, 4);
    TK_CHECK(length >= 0, kInvalidArgument, op, ": ", FieldLabel(*v.f),
             " has a string view of length ", length, " at slot ", begin + i,
             "; a length is never negative (the array is corrupt)");
    if (length <= kInline) {
      out[i].assign(reinterpret_cast<const char*>(view + 4), static_cast<size_t>(length));
      continue;
    }
    int32_t index = 0, offset = 0;
    std::memcpy(&index, view + 8, 4);
    std::memcpy(&offset, view + 12, 4);
    TK_CHECK(index >= 0 && index < n_data, kInvalidArgument, op, ": ", FieldLabel(*v.f),
             " has a string view at slot ", begin + i, " (length ", length, ") into data buffer ",
             index, ", but the array has ", n_data, " data buffers (the array is corrupt)");
    const char* data = static_cast<const char*>(v.a->buffers[2 + index]);
    int64_t size = 0;
    if (sizes != nullptr) std::memcpy(&size, sizes + index * 8, 8);
    TK_CHECK(sizes != nullptr && data != nullptr && offset >= 0 && int64_t{offset} + length <= size,
             kInvalidArgument, op, ": ", FieldLabel(*v.f), " has a string view at slot ", begin + i,
             " of bytes [", offset, ", ", int64_t{offset} + length, ") of data buffer ", index,
             ", which holds ", size, " bytes", data == nullptr ? " (a null pointer)" : "",
             sizes == nullptr ? " (the buffer sizes are missing)" : "",
             "; the view points outside its data (the array is corrupt)");
    TK_CHECK(std::memcmp(view + 4, data + offset, 4) == 0, kInvalidArgument, op, ": ",
             FieldLabel(*v.f), " has a string view at slot ", begin + i,
             " whose 4-byte prefix differs from bytes [", offset, ", ", int64_t{offset} + 4,
             ") of data buffer ", index, " (the array is corrupt)");
    out[i].assign(data + offset, static_cast<size_t>(length));
  }
  return Tensor::FromVector(std::move(out));
}

// Elements [begin, begin + count) of a primitive or string array `v` (relative to its offset)
// as a 1-D tensor: zero-copy over the holder for numbers (a read-only Storage: Arrow memory is
// immutable), a copy for bools and strings. Nulls are not looked at here (string views of null
// slots excepted: they are read as "").
Tensor Flat(const View& v, int64_t begin, int64_t count, const HolderPtr& holder, const char* op) {
  const DType d = PrimitiveDType(v.f->format, v.f->name, op);
  const bool strings = d == DType::kString;
  const bool views = v.f->format == "vu" || v.f->format == "vz";
  // Views: validity, views, any number of data buffers, their sizes.
  CheckArray(v, views ? std::max<int64_t>(v.a->n_buffers, 3) : strings ? 3 : 2, 0, op);
  TK_CHECK(begin >= 0 && count >= 0 && begin + count <= v.a->length, kInvalidArgument, op,
           ": field '", v.f->name, "' has ", v.a->length, " values; its parent asks for [", begin,
           ", ", begin + count, ")");
  const int64_t first = v.a->offset + begin;
  if (count == 0) return Tensor::Empty({0}, d);
  TK_CHECK(v.a->buffers[1] != nullptr, kInvalidArgument, op, ": field '", v.f->name,
           "' has no data buffer");
  if (views) return ViewStrings(v, begin, first, count, op);
  if (d == DType::kBool) {
    Tensor out = Tensor::Empty({count}, d);
    bool* o = out.data<bool>();
    for (int64_t i = 0; i < count; ++i) o[i] = BitSet(v.a->buffers[1], first + i);
    return out;
  }
  if (strings) {
    const bool large = v.f->format == "Z" || v.f->format == "U";
    TK_CHECK(v.a->buffers[2] != nullptr, kInvalidArgument, op, ": field '", v.f->name,
             "' has no character buffer");
    auto at = [&](int64_t i) -> int64_t {
      if (large) return static_cast<const int64_t*>(v.a->buffers[1])[i];
      return static_cast<const int32_t*>(v.a->buffers[1])[i];
    };
    std::vector<std::string> out(static_cast<size_t>(count));
    const char* chars = static_cast<const char*>(v.a->buffers[2]);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t b = at(first + i), e = at(first + i + 1);
      TK_CHECK(b >= 0 && e >= b, kInvalidArgument, op, ": field '", v.f->name,
               "' has the string offsets ", b, " and ", e, " at slot ", begin + i);
      out[i].assign(chars + b, static_cast<size_t>(e - b));
    }
    return Tensor::FromVector(std::move(out));
  }
  const int64_t size = DTypeSize(d);
  char* data = static_cast<char*>(const_cast<void*>(v.a->buffers[1])) + first * size;
  if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(size) != 0) {
    Tensor out = Tensor::Empty({count}, d);  // misaligned: copied
    std::memcpy(out.raw_data(), data, static_cast<size_t>(count * size));
    return out;
  }
  auto storage = Storage::Wrap(
      data, count * size, Device::Cpu(), [holder](void*) {}, /*read_only=*/true);
  return Tensor(storage, DefaultPattern({count}, op), d);
}

// Rows [begin, begin + count) of `v`: a primitive array (1-D) or a fixed_size_list of one
// (2-D [count, width]).
Tensor Values(const View& v, int64_t begin, int64_t count, const HolderPtr& holder,
              const char* op) {
  const std::string& fmt = v.f->format;
  if (fmt.rfind("+w:", 0) != 0) return Flat(v, begin, count, holder, op);
  CheckArray(v, 1, 1, op);
  int64_t width = 0;
  const std::string digits = fmt.substr(3);
  TK_CHECK(!digits.empty() && digits.size() <= 18 &&
               digits.find_first_not_of("0123456789") == std::string::npos,
           kInvalidArgument, op, ": field '", v.f->name, "' has the malformed format '", fmt,
           "'; a fixed_size_list is '+w:<width>'");
  width = std::stoll(digits);
  const int64_t null = FirstNull(v.a, begin, count);
  TK_CHECK(null < 0, kInvalidArgument, op, ": field '", v.f->name, "' is null at slot ", null,
           "; a tensor row cannot be missing (drop or fill the nulls first)");
  const View child{v.a->children[0], &v.f->children[0]};
  const int64_t first = CheckedMul(v.a->offset + begin, width, v.f->name, "fixed_size_list slots");
  const int64_t slots = CheckedMul(count, width, v.f->name, "fixed_size_list slots");
  Tensor flat = Flat(child, first, slots, holder, op);
  const int64_t child_null = FirstNull(child.a, first, slots);
  TK_CHECK(child_null < 0, kInvalidArgument, op, ": field '", v.f->name,
           "' has a null value at slot ", child_null, " of its values; fill the nulls first");
  return flat.WithPattern(DefaultPattern({count, width}, op));
}

// Offset i of list `v` from its slot `first` (int64 for a large_list, else int32).
int64_t ListOffset(const View& v, bool large, int64_t first, int64_t i) {
  if (large) return static_cast<const int64_t*>(v.a->buffers[1])[first + i];
  return static_cast<const int32_t*>(v.a->buffers[1])[first + i];
}

// Rows [begin, begin + rows) of a list: their offsets from 0, and the child slots kept, [b, e)
// runs: one run from the first row's offset, unless null rows (empty, when the options allow
// them) drop theirs (a row starts where the previous one ends).
struct ListRows {
  std::vector<int64_t> offsets;
  std::vector<std::pair<int64_t, int64_t>> ranges;
};

ListRows ReadListRows(const View& v, const View& child, int64_t begin, int64_t rows, bool large,
                      const ArrowImportOptions& o, const char* op) {
  const int64_t first = v.a->offset + begin;
  ListRows l;
  l.offsets.assign(static_cast<size_t>(rows + 1), 0);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t b = ListOffset(v, large, first, i), e = ListOffset(v, large, first, i + 1);
    TK_CHECK(b >= 0 && e >= b && e <= child.a->length, kInvalidArgument, op, ": field '", v.f->name,
             "' has the list offsets ", b, " and ", e, " at row ", begin + i, " (its values have ",
             child.a->length, " slots)");
    int64_t n = e - b;
    if (IsNull(v.a, begin + i)) {
      TK_CHECK(o.null_lists_as_empty, kInvalidArgument, op, ": field '", v.f->name,
               "' is null at row ", begin + i,
               "; set ArrowImportOptions::null_lists_as_empty to read null lists as empty rows");
      n = 0;
    } else if (n > 0) {
      if (!l.ranges.empty() && l.ranges.back().second == b) {
        l.ranges.back().second = e;
      } else {
        l.ranges.emplace_back(b, e);
      }
    }
    l.offsets[i + 1] = l.offsets[i] + n;
  }
  return l;
}

// The weights of the `total` values kept in `ranges` of `child`: 0 for a null value (refused
// unless the options weigh them 0), 1 for the others; undefined when none is null.
Tensor NullValueWeights(const View& v, const View& child,
                        const std::vector<std::pair<int64_t, int64_t>>& ranges, int64_t total,
                        const ArrowImportOptions& o, const char* op) {
  bool any_null = false;
  for (const auto& [b, e] : ranges) {
    const int64_t null = FirstNull(child.a, b, e - b);
    if (null < 0) continue;
    TK_CHECK(o.null_values_as_zero_weight, kInvalidArgument, op, ": field '", v.f->name,
             "' has a null value at slot ", null,
             " of its values; set ArrowImportOptions::null_values_as_zero_weight to weigh "
             "them 0");
    any_null = true;
  }
  if (!any_null) return Tensor();
  Tensor weights = Tensor::Empty({total}, DType::kFloat32);
  float* w = weights.data<float>();
  int64_t k = 0;
  for (const auto& [b, e] : ranges) {
    for (int64_t j = b; j < e; ++j) w[k++] = IsNull(child.a, j) ? 0.0f : 1.0f;
  }
  return weights;
}

// A list or large_list `v` as a JaggedTensor, with the options' null handling.
JaggedTensor Jagged(const View& v, int64_t begin, int64_t rows, const HolderPtr& holder,
                    const ArrowImportOptions& o, const char* op) {
  const std::string& fmt = v.f->format;
  TK_CHECK(fmt == "+l" || fmt == "+L", kUnsupported, op, ": field '", v.f->name,
           "' has Arrow format '", fmt, "'; a JaggedTensor comes from a list or large_list");
  CheckArray(v, 2, 1, op);
  TK_CHECK(begin >= 0 && begin + rows <= v.a->length, kInvalidArgument, op, ": field '", v.f->name,
           "' has ", v.a->length, " rows; its parent asks for [", begin, ", ", begin + rows, ")");
  TK_CHECK(v.a->buffers[1] != nullptr || rows == 0, kInvalidArgument, op, ": field '", v.f->name,
           "' has no offsets buffer");
  const bool large = fmt == "+L";
  const int64_t first = v.a->offset + begin;
  const View child{v.a->children[0], &v.f->children[0]};
  ListRows l = ReadListRows(v, child, begin, rows, large, o, op);
  const std::vector<std::pair<int64_t, int64_t>>& ranges = l.ranges;
  const int64_t total = l.offsets[rows];
  Tensor values;
  if (ranges.size() <= 1) {  // a view, no copy
    values = ranges.empty() ? Values(child, 0, 0, holder, op)
                            : Values(child, ranges[0].first, total, holder, op);
  } else {
    std::vector<Tensor> parts;
    for (const auto& [b, e] : ranges) parts.push_back(Values(child, b, e - b, holder, op));
    values = ConcatenateRows(parts);
  }
  const Tensor weights = NullValueWeights(v, child, ranges, total, o, op);
  // Without null rows the offsets are the source's: shared when they are int64 from 0.
  Tensor off;
  if (large && !MayHaveNulls(v.a) && (rows == 0 || ListOffset(v, large, first, 0) == 0) &&
      reinterpret_cast<uintptr_t>(v.a->buffers[1]) % 8 == 0) {
    char* p = static_cast<char*>(const_cast<void*>(v.a->buffers[1])) + first * 8;
    off = Tensor(Storage::Wrap(
                     p, (rows + 1) * 8, Device::Cpu(), [holder](void*) {}, /*read_only=*/true),
                 DefaultPattern({rows + 1}, op), DType::kInt64);
  } else {
    off = Tensor::FromVector(std::move(l.offsets));
  }
  return JaggedTensor::FromOffsets(values, off, weights);
}

// Rows of the outermost array, a struct's rows included.
void CheckTop(const View& v, const char* op) {
  TK_CHECK(v.a->length >= 0 && v.a->offset >= 0, kInvalidArgument, op, ": the array has length ",
           v.a->length, " and offset ", v.a->offset);
  TK_CHECK(v.a->n_buffers >= 1 && v.a->buffers != nullptr, kInvalidArgument, op,
           ": the array has no buffers");
}

}  // namespace

void ExportArrow(const Tensor& t, ArrowArray* array, ArrowSchema* schema) {
  constexpr const char* kOp = "ExportArrow";
  CheckHost(t, kOp);
  ExportValues(t.HostContiguous(), array, schema, "", kOp);
}

void ExportArrow(const JaggedTensor& j, ArrowArray* array, ArrowSchema* schema) {
  constexpr const char* kOp = "ExportArrow";
  CheckHost(j.values(), kOp);
  const Tensor offsets = j.offsets().HostContiguous();
  ExportList(offsets.data<int64_t>(), offsets.storage(), j.values().HostContiguous(),
             j.batch_size(), array, schema, "", kOp);
}

void ExportArrow(const KeyedJaggedTensor& k, ArrowArray* array, ArrowSchema* schema) {
  constexpr const char* kOp = "ExportArrow";
  CheckHost(k.values(), kOp);
  const Tensor values = k.values().HostContiguous();
  // offsets() runs over every key's rows in turn ([F * B + 1]): key f's rows are the slice from
  // f * B, into the shared values (Arrow list offsets may start past 0).
  const Tensor offsets = k.offsets().HostContiguous();
  const int64_t B = k.batch_size();
  auto node = std::make_unique<ArrayNode>();
  auto snode = std::make_unique<SchemaNode>();
  snode->format = "+s";
  node->buffers.push_back(nullptr);
  for (int f = 0; f < k.num_keys(); ++f) {
    node->children.push_back(std::make_unique<ArrowArray>());
    snode->children.push_back(std::make_unique<ArrowSchema>());
    ExportList(offsets.data<int64_t>() + f * B, offsets.storage(), values, B,
               node->children.back().get(), snode->children.back().get(), k.keys()[f], kOp);
  }
  FinishArray(array, std::move(node), B);
  FinishSchema(schema, std::move(snode));
}

Tensor ImportArrowTensor(ArrowArray* array, ArrowSchema* schema, const ArrowImportOptions&) {
  constexpr const char* kOp = "ImportArrowTensor";
  const Taken t = Take(array, schema, kOp);
  const View v{&t.holder->array, &t.format};
  CheckTop(v, kOp);
  const int64_t null = FirstNull(v.a, 0, v.a->length);
  TK_CHECK(null < 0, kInvalidArgument, kOp, ": the array is null at slot ", null,
           "; a tensor has no missing elements (fill the nulls first, e.g. pyarrow.compute."
           "fill_null)");
  return Values(v, 0, v.a->length, t.holder, kOp);
}

JaggedTensor ImportArrowJagged(ArrowArray* array, ArrowSchema* schema,
                               const ArrowImportOptions& options) {
  constexpr const char* kOp = "ImportArrowJagged";
  const Taken t = Take(array, schema, kOp);
  const View v{&t.holder->array, &t.format};
  CheckTop(v, kOp);
  return Jagged(v, 0, v.a->length, t.holder, options, kOp);
}

KeyedJaggedTensor ImportArrowKeyedJagged(ArrowArray* array, ArrowSchema* schema,
                                         const ArrowImportOptions& options) {
  constexpr const char* kOp = "ImportArrowKeyedJagged";
  const Taken t = Take(array, schema, kOp);
  const View v{&t.holder->array, &t.format};
  CheckTop(v, kOp);
  TK_CHECK(t.format.format == "+s", kUnsupported, kOp, ": the array has Arrow format '",
           t.format.format, "'; a KeyedJaggedTensor comes from a struct of lists");
  CheckArray(v, 1, static_cast<int64_t>(t.format.children.size()), kOp);
  const int64_t null = FirstNull(v.a, 0, v.a->length);
  TK_CHECK(null < 0, kInvalidArgument, kOp, ": the struct is null at row ", null,
           "; fill or drop the null rows first");
  const int64_t B = v.a->length;
  const int F = static_cast<int>(t.format.children.size());
  TK_CHECK(F > 0, kInvalidArgument, kOp, ": the struct has no fields; give one list per key");
  std::vector<std::string> keys;
  std::vector<Tensor> values, weights;
  bool any_weights = false;
  std::vector<int64_t> lengths;
  lengths.reserve(static_cast<size_t>(F * B));
  std::vector<JaggedTensor> parts;
  for (int f = 0; f < F; ++f) {
    const View c{v.a->children[f], &t.format.children[f]};
    // A struct's child rows start at the struct's offset (plus the child's own).
    parts.push_back(Jagged(c, v.a->offset, B, t.holder, options, kOp));
    keys.push_back(t.format.children[f].name);
    TK_CHECK(parts[f].values().dtype() == parts[0].values().dtype(), kDTypeMismatch, kOp,
             ": field '", keys[f], "' holds ", DTypeName(parts[f].values().dtype()), " but '",
             keys[0], "' holds ", DTypeName(parts[0].values().dtype()),
             "; a KeyedJaggedTensor has one value dtype (cast the fields first)");
    values.push_back(parts[f].values());
    any_weights = any_weights || parts[f].weights().defined();
    const std::vector<int64_t> l = parts[f].lengths().ToVector<int64_t>();
    lengths.insert(lengths.end(), l.begin(), l.end());
  }
  if (any_weights) {
    for (const JaggedTensor& p : parts) {
      Tensor w = p.weights();
      if (!w.defined()) {
        w = Tensor::Empty({p.values().Dim(0)}, DType::kFloat32);
        Set(1.0, &w);
      }
      weights.push_back(w);
    }
  }
  Tensor all_values = F == 1 ? values[0] : ConcatenateRows(values);
  Tensor all_weights = !any_weights ? Tensor() : F == 1 ? weights[0] : ConcatenateRows(weights);
  return KeyedJaggedTensor(keys, all_values, Tensor::FromVector(std::move(lengths), {F, B}),
                           all_weights);
}

}  // namespace tensorkit::io
