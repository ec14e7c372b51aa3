#include "tensorkit/io/arrow.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"

namespace tensorkit::io {
namespace {

using tensorkit::testing::ExpectError;

// An exported pair, released at the end of the test unless imported (moved) first.
struct Exported {
  ArrowArray array{};
  ArrowSchema schema{};
  ~Exported() {
    if (array.release) array.release(&array);
    if (schema.release) schema.release(&schema);
  }
};

template <typename T>
void ExpectRoundTrip(std::vector<T> v) {
  const Tensor t = Tensor::FromVector(v);
  Exported e;
  ExportArrow(t, &e.array, &e.schema);
  EXPECT_EQ(e.array.length, static_cast<int64_t>(v.size()));
  EXPECT_EQ(e.array.null_count, 0);
  const Tensor back = ImportArrowTensor(&e.array, &e.schema);
  EXPECT_EQ(e.array.release, nullptr);  // moved
  EXPECT_EQ(e.schema.release, nullptr);
  EXPECT_EQ(back.dtype(), t.dtype());
  EXPECT_EQ(back.ToVector<T>(), v);
}

TEST(ArrowTest, EveryDTypeRoundTripsAsAPrimitiveArray) {
  ExpectRoundTrip<bool>({true, false, true, true, false, false, false, true, true});
  ExpectRoundTrip<int8_t>({-128, 0, 127});
  ExpectRoundTrip<uint8_t>({0, 255});
  ExpectRoundTrip<int16_t>({-300, 300});
  ExpectRoundTrip<int32_t>({-1, 1 << 30});
  ExpectRoundTrip<int64_t>({int64_t{1} << 62, -5});
  ExpectRoundTrip<Half>({Half(1.5f), Half(-2.0f)});
  ExpectRoundTrip<float>({0.5f, -1e30f});
  ExpectRoundTrip<double>({1e300, -0.0});
  ExpectRoundTrip<std::string>({"a", "", std::string("n\0ul", 4)});
  ExpectRoundTrip<float>({});
}

TEST(ArrowTest, NumbersAreSharedNotCopiedAndLiveAsLongAsTheConsumer) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4});
  const void* data = t.raw_data();
  Exported e;
  ExportArrow(t, &e.array, &e.schema);
  EXPECT_STREQ(e.schema.format, "f");
  EXPECT_EQ(e.array.n_buffers, 2);
  EXPECT_EQ(e.array.buffers[0], nullptr);
  EXPECT_EQ(e.array.buffers[1], data);  // the tensor's own storage
  const std::weak_ptr<Storage> watch = t.storage();
  t = Tensor();  // the export keeps the storage
  EXPECT_FALSE(watch.expired());
  Tensor back = ImportArrowTensor(&e.array, &e.schema);
  EXPECT_EQ(back.raw_data(), data);  // and the import reads it in place
  EXPECT_EQ(back.ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));
  back = Tensor();  // the last view gone: released
  EXPECT_TRUE(watch.expired());
}

TEST(ArrowTest, TwoDimensionalTensorsAreFixedSizeLists) {
  const Tensor t = Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Exported e;
  ExportArrow(t, &e.array, &e.schema);
  EXPECT_STREQ(e.schema.format, "+w:3");
  ASSERT_EQ(e.schema.n_children, 1);
  EXPECT_STREQ(e.schema.children[0]->format, "l");
  EXPECT_EQ(e.array.length, 2);
  const Tensor back = ImportArrowTensor(&e.array, &e.schema);
  EXPECT_EQ(back.Dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back.ToVector<int64_t>(), t.ToVector<int64_t>());
  ExpectError(
      [&] {
        Exported x;
        ExportArrow(Tensor::Zeros({2, 2, 2}, DType::kFloat32), &x.array, &x.schema);
      },
      ErrorCode::kUnsupported, {"dims [2 2 2]", "1-D", "2-D"});
  ExpectError(
      [&] {
        Exported x;
        ExportArrow(Tensor::Zeros({2}, DType::kBFloat16), &x.array, &x.schema);
      },
      ErrorCode::kUnsupported, {"bfloat16 has no Arrow type"});
}

TEST(ArrowTest, JaggedAndKeyedJaggedTensorsRoundTrip) {
  const JaggedTensor j = JaggedTensor::FromLengths(Tensor::FromVector<int32_t>({1, 2, 3, 4, 5}),
                                                   Tensor::FromVector<int64_t>({2, 0, 3}));
  {
    Exported e;
    ExportArrow(j, &e.array, &e.schema);
    EXPECT_STREQ(e.schema.format, "+L");
    EXPECT_EQ(e.array.buffers[1], j.offsets().raw_data());
    const JaggedTensor back = ImportArrowJagged(&e.array, &e.schema);
    EXPECT_EQ(back.offsets().raw_data(), j.offsets().raw_data());  // zero-copy both ways
    EXPECT_EQ(back.values().raw_data(), j.values().raw_data());
    EXPECT_EQ(back.lengths().ToVector<int64_t>(), (std::vector<int64_t>{2, 0, 3}));
    EXPECT_EQ(back.values().ToVector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5}));
  }
  const KeyedJaggedTensor k({"a", "b"}, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}),
                            Tensor::FromVector<int64_t>({1, 2, 0, 3}, {2, 2}));
  Exported e;
  ExportArrow(k, &e.array, &e.schema);
  EXPECT_STREQ(e.schema.format, "+s");
  ASSERT_EQ(e.schema.n_children, 2);
  EXPECT_STREQ(e.schema.children[1]->name, "b");
  const KeyedJaggedTensor back = ImportArrowKeyedJagged(&e.array, &e.schema);
  EXPECT_EQ(back.keys(), k.keys());
  EXPECT_EQ(back.lengths().ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 0, 3}));
  EXPECT_EQ(back.values().ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// Hand-made arrays in the layouts other producers use: int32 list offsets, slices (an offset,
// list offsets past 0), validity bitmaps.
struct Hand {
  std::vector<const void*> bufs, child_bufs;
  ArrowArray child{}, array{};
  ArrowArray* child_ptr = &child;
  ArrowSchema child_schema{}, schema{};
  ArrowSchema* child_schema_ptr = &child_schema;
  int* released;
  explicit Hand(int* counter) : released(counter) {}
  static void Release(ArrowArray* a) {
    ++*static_cast<int*>(a->private_data);
    a->release = nullptr;
  }
  static void ReleaseChild(ArrowArray* a) { a->release = nullptr; }
  static void ReleaseSchema(ArrowSchema* s) { s->release = nullptr; }
  // A list (format "+l" or "+L") of `rows` rows from `offset`, over a child of `values`.
  void List(const char* fmt, const void* validity, const void* offsets, int64_t rows,
            int64_t offset, const char* value_fmt, const void* values, int64_t n_values,
            const void* value_validity = nullptr, int64_t value_nulls = 0) {
    child_bufs = {value_validity, values};
    child = ArrowArray{n_values, value_nulls,  0,      2, 0, child_bufs.data(), nullptr,
                       nullptr,  ReleaseChild, nullptr};
    bufs = {validity, offsets};
    array = ArrowArray{rows,        validity ? -1 : 0, offset,  2,       1,
                       bufs.data(), &child_ptr,        nullptr, Release, released};
    child_schema =
        ArrowSchema{value_fmt, "item", nullptr, 2, 0, nullptr, nullptr, ReleaseSchema, nullptr};
    schema =
        ArrowSchema{fmt, "f", nullptr, 2, 1, &child_schema_ptr, nullptr, ReleaseSchema, nullptr};
  }
};

TEST(ArrowTest, ListsOfOtherProducersSlicesAndNulls) {
  int released = 0;
  const int32_t off32[] = {0, 2, 2, 5, 6};
  const int64_t vals[] = {10, 11, 12, 13, 14, 15};
  {
    Hand h(&released);  // rows 1..3 of a list<int64> with int32 offsets
    h.List("+l", nullptr, off32, 3, 1, "l", vals, 6);
    const JaggedTensor j = ImportArrowJagged(&h.array, &h.schema);
    EXPECT_EQ(j.lengths().ToVector<int64_t>(), (std::vector<int64_t>{0, 3, 1}));
    EXPECT_EQ(j.values().ToVector<int64_t>(), (std::vector<int64_t>{12, 13, 14, 15}));
    EXPECT_EQ(j.offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 3, 4}));
    EXPECT_EQ(released, 0);  // the values are viewed in place: not yet
  }
  EXPECT_EQ(released, 1);
  // Row 2 null (bit 2 clear): refused, or an empty row whose segment is dropped.
  const uint8_t validity[] = {0b11111011};
  {
    Hand h(&released);
    h.List("+l", validity, off32, 4, 0, "l", vals, 6);
    ExpectError([&] { ImportArrowJagged(&h.array, &h.schema); },
                {"ImportArrowJagged", "null at row 2", "null_lists_as_empty"});
    EXPECT_EQ(released, 2);  // released on the Error too
    Hand g(&released);
    g.List("+l", validity, off32, 4, 0, "l", vals, 6);
    ArrowImportOptions o;
    o.null_lists_as_empty = true;
    const JaggedTensor j = ImportArrowJagged(&g.array, &g.schema, o);
    EXPECT_EQ(j.lengths().ToVector<int64_t>(), (std::vector<int64_t>{2, 0, 0, 1}));
    EXPECT_EQ(j.values().ToVector<int64_t>(), (std::vector<int64_t>{10, 11, 15}));
  }
  // A null value (slot 1): refused, or weight 0.
  const uint8_t value_validity[] = {0b11111101};
  const int64_t off64[] = {0, 2, 6};
  {
    Hand h(&released);
    h.List("+L", nullptr, off64, 2, 0, "l", vals, 6, value_validity, 1);
    ExpectError([&] { ImportArrowJagged(&h.array, &h.schema); },
                {"null value at slot 1", "null_values_as_zero_weight"});
    Hand g(&released);
    g.List("+L", nullptr, off64, 2, 0, "l", vals, 6, value_validity, 1);
    ArrowImportOptions o;
    o.null_values_as_zero_weight = true;
    const JaggedTensor j = ImportArrowJagged(&g.array, &g.schema, o);
    EXPECT_EQ(j.weights().ToVector<float>(), (std::vector<float>{1, 0, 1, 1, 1, 1}));
  }
  // Offsets that lie about the values: an Error, never a read past them.
  const int32_t lying[] = {0, 2, 99};
  {
    Hand h(&released);
    h.List("+l", nullptr, lying, 2, 0, "l", vals, 6);
    ExpectError([&] { ImportArrowJagged(&h.array, &h.schema); },
                {"list offsets 2 and 99 at row 1", "6 slots"});
  }
  // Formats tensorkit has no dtype for, and the wrong kind of array.
  {
    Hand h(&released);
    h.List("+l", nullptr, off32, 4, 0, "L", vals, 6);
    ExpectError([&] { ImportArrowJagged(&h.array, &h.schema); }, ErrorCode::kUnsupported,
                {"unsigned", "cast"});
    Hand g(&released);
    g.List("+l", nullptr, off32, 4, 0, "l", vals, 6);
    ExpectError([&] { ImportArrowTensor(&g.array, &g.schema); }, ErrorCode::kUnsupported, {"'+l'"});
  }
  // Malformed structs: a bad fixed_size_list width, a null child.
  {
    const int64_t none[] = {0};
    Hand h(&released);
    h.List("+w:x", nullptr, none, 1, 0, "l", vals, 6);
    h.array.n_buffers = 1;
    ExpectError([&] { ImportArrowTensor(&h.array, &h.schema); }, {"malformed format '+w:x'"});
    Hand g(&released);
    g.List("+l", nullptr, off32, 4, 0, "l", vals, 6);
    g.child_ptr = nullptr;
    ExpectError([&] { ImportArrowJagged(&g.array, &g.schema); }, {"null child array"});
  }
  EXPECT_EQ(released, 10);
}

// A string_view ("vu") or binary_view ("vz") array over hand-made 16-byte views, data buffers
// and their sizes, as polars and newer pyarrow export strings.
struct ViewArray {
  std::vector<uint8_t> views;
  std::vector<std::string> data;
  std::vector<int64_t> sizes;
  std::vector<const void*> bufs;
  ArrowArray array{};
  ArrowSchema schema{};
  static void Release(ArrowArray* a) { a->release = nullptr; }
  static void ReleaseSchema(ArrowSchema* s) { s->release = nullptr; }

  void View(int32_t length, const std::string& inline_or_prefix, int32_t index = 0,
            int32_t offset = 0) {
    uint8_t v[16] = {};
    std::memcpy(v, &length, 4);
    std::memcpy(v + 4, inline_or_prefix.data(), std::min<size_t>(inline_or_prefix.size(), 12));
    if (length > 12) {
      std::memcpy(v + 8, &index, 4);
      std::memcpy(v + 12, &offset, 4);
    }
    views.insert(views.end(), v, v + 16);
  }
  void Inline(const std::string& s) { View(static_cast<int32_t>(s.size()), s); }
  // A long string stored in data buffer `index` (appended to it).
  void Long(const std::string& s, int32_t index) {
    if (data.size() <= static_cast<size_t>(index)) data.resize(index + 1);
    View(static_cast<int32_t>(s.size()), s.substr(0, 4), index,
         static_cast<int32_t>(data[index].size()));
    data[index] += s;
  }
  void Finish(const char* format, const void* validity = nullptr, int64_t nulls = 0,
              int64_t offset = 0) {
    sizes.clear();
    bufs = {validity, views.data()};
    for (const std::string& d : data) {
      bufs.push_back(d.data());
      sizes.push_back(static_cast<int64_t>(d.size()));
    }
    bufs.push_back(sizes.data());
    const int64_t n = static_cast<int64_t>(views.size() / 16);
    array = ArrowArray{n - offset, nulls,       offset,  static_cast<int64_t>(bufs.size()),
                       0,          bufs.data(), nullptr, nullptr,
                       Release,    nullptr};
    schema = ArrowSchema{format, "w", nullptr, 2, 0, nullptr, nullptr, ReleaseSchema, nullptr};
  }
};

TEST(ArrowTest, StringViewsInlineAndInDataBuffers) {
  const std::string a(20, 'a'), b = "0123456789abcdef", c = "exactly12byt", d = "thirteen byte";
  ViewArray v;
  v.Inline("");
  v.Inline("short");
  v.Inline(c);
  v.Long(a, 0);
  v.Long(d, 1);  // a second data buffer
  v.Long(b, 0);
  v.Finish("vu");
  const Tensor t = ImportArrowTensor(&v.array, &v.schema);
  EXPECT_EQ(t.dtype(), DType::kString);
  EXPECT_EQ(t.ToVector<std::string>(), (std::vector<std::string>{"", "short", c, a, d, b}));
  EXPECT_FALSE(t.storage()->read_only());  // strings are a copy: the caller's
  // Sliced (offset 2), binary bytes.
  ViewArray w;
  for (const std::string& s : {std::string("x"), std::string("\xff\0", 2), a, c}) {
    s.size() > 12 ? w.Long(s, 0) : w.Inline(s);
  }
  w.Finish("vz", nullptr, 0, 2);
  EXPECT_EQ(ImportArrowTensor(&w.array, &w.schema).ToVector<std::string>(),
            (std::vector<std::string>{a, c}));
  // A null is refused at the top; inside a list it is weighed 0 and read as "", and its view,
  // whatever it holds, is not looked at.
  const uint8_t validity[] = {0b101};
  ViewArray n;
  n.Inline("p");
  n.View(-7, "");
  n.Long(a, 0);
  n.Finish("vu", validity, 1);
  ExpectError([&] { ImportArrowTensor(&n.array, &n.schema); }, {"null at slot 1"});
  int released = 0;
  Hand h(&released);
  const int32_t off[] = {0, 1, 3};
  const int64_t unused[] = {0};
  h.List("+l", nullptr, off, 2, 0, "vu", unused, 3);
  ViewArray m;
  m.Inline("p");
  m.View(-7, "");
  m.Long(a, 0);
  m.Finish("vu", validity, 1);
  h.child = m.array;
  h.child_schema.format = "vu";
  ArrowImportOptions o;
  o.null_values_as_zero_weight = true;
  const JaggedTensor j = ImportArrowJagged(&h.array, &h.schema, o);
  EXPECT_EQ(j.lengths().ToVector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(j.values().ToVector<std::string>(), (std::vector<std::string>{"p", "", a}));
  EXPECT_EQ(j.weights().ToVector<float>(), (std::vector<float>{1, 0, 1}));
}

TEST(ArrowTest, CorruptStringViewsAreErrorsNamingTheSlotAndValues) {
  const std::string a(20, 'a');
  auto expect = [&](auto make, const std::vector<std::string>& parts) {
    ViewArray v;
    v.Long(a, 0);
    make(v);
    v.Finish("vu");
    ExpectError([&] { ImportArrowTensor(&v.array, &v.schema); }, ErrorCode::kInvalidArgument,
                parts);
  };
  expect([](ViewArray& v) { v.View(15, "aaaa", 0, 10); },
         {"ImportArrowTensor", "field 'w'", "slot 1", "bytes [10, 25) of data buffer 0",
          "holds 20 bytes"});
  expect([](ViewArray& v) { v.View(13, "aaaa", 1, 0); },
         {"slot 1 (length 13) into data buffer 1", "has 1 data buffers"});
  expect([](ViewArray& v) { v.View(13, "aaaa", -2, 0); }, {"data buffer -2"});
  expect([](ViewArray& v) { v.View(13, "aaaa", 0, -1); }, {"bytes [-1, 12)"});
  expect([](ViewArray& v) { v.View(-3, ""); }, {"length -3 at slot 1", "never negative"});
  expect([](ViewArray& v) { v.View(13, "zzzz", 0, 0); }, {"slot 1", "prefix differs"});
  // Too few buffers for the layout, and sizes missing.
  ViewArray f;
  f.Long(a, 0);
  f.Finish("vu");
  f.array.n_buffers = 2;
  ExpectError([&] { ImportArrowTensor(&f.array, &f.schema); }, {"2 buffers", "has 3"});
  ViewArray g;
  g.Long(a, 0);
  g.Finish("vu");
  g.bufs.back() = nullptr;
  ExpectError([&] { ImportArrowTensor(&g.array, &g.schema); }, {"buffer sizes are missing"});
}

TEST(ArrowTest, ImportedBuffersAreReadOnlyCopiesAreNot) {
  int released = 0;
  const int64_t off64[] = {0, 2, 3};
  const int64_t vals[] = {1, 2, 3};
  Hand h(&released);
  h.List("+L", nullptr, off64, 2, 0, "l", vals, 3);
  const JaggedTensor j = ImportArrowJagged(&h.array, &h.schema);
  EXPECT_EQ(j.values().raw_data(), vals);
  EXPECT_TRUE(j.values().storage()->read_only());
  EXPECT_EQ(j.offsets().raw_data(), off64);
  EXPECT_TRUE(j.offsets().storage()->read_only());
  EXPECT_TRUE(j.Row(1).storage()->read_only());  // views share the flag
  EXPECT_FALSE(j.values().Clone().storage()->read_only());
  const int32_t off32[] = {0, 2, 3};
  Hand g(&released);
  g.List("+l", nullptr, off32, 2, 0, "l", vals, 3);
  const JaggedTensor k = ImportArrowJagged(&g.array, &g.schema);
  EXPECT_FALSE(k.offsets().storage()->read_only());  // widened: a copy
  EXPECT_TRUE(k.values().storage()->read_only());
}

TEST(ArrowTest, AReleasedOrNullArrayIsAnError) {
  ArrowArray a{};
  ArrowSchema s{};
  ExpectError([&] { ImportArrowTensor(&a, &s); }, {"ArrowSchema is null or released"});
  ExpectError([&] { ImportArrowTensor(nullptr, nullptr); }, {"null or released"});
}

}  // namespace
}  // namespace tensorkit::io
