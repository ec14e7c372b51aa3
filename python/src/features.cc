// The feature ops (features/, DESIGN.md section 9) from Python: tk.JaggedTensor,
// tk.KeyedJaggedTensor, tk.Vocabulary, the segment reductions, embedding bags, hashes and
// bucketize. Arrays go through AsTensor (NumPy, torch, DLPack, lists; strings as NumPy U, S or
// object arrays); the ops that keep their input's structure take a tk.JaggedTensor or a
// tk.SparseTensor as well and give back the same kind.
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "python.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/features/bucketize.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/features/embedding.h"
#include "tensorkit/features/hash.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/features/segment.h"
#include "tensorkit/features/vocabulary.h"

namespace tensorkit::python {
namespace {

using namespace nb::literals;

Combiner CombinerArg(const std::string& name, const char* op) {
  for (Combiner c :
       {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN, Combiner::kMax, Combiner::kMin}) {
    if (name == CombinerName(c)) return c;
  }
  Throw(ErrorCode::kInvalidArgument, op, ": combiner '", name,
        "' is not one of 'sum', 'mean', 'sqrtn', 'max', 'min'");
}

// An integer array (lengths, offsets, ids) as int32 or int64: other integer dtypes are widened
// to int64 (a copy); anything else is an Error naming `what`.
Tensor IntegerArg(nb::handle obj, const char* what) {
  Tensor t = AsTensor(obj, what);
  if (t.dtype() == DType::kInt32 || t.dtype() == DType::kInt64) return t;
  TK_CHECK(IsInteger(t.dtype()) || t.NumElements() == 0, kDTypeMismatch, what, ": dtype ",
           DTypeName(t.dtype()), "; integers (int32 or int64) are needed");
  nb::gil_scoped_release release;
  return Converted(t, DType::kInt64);
}

// A Python number (bool, int, float, or a NumPy scalar) as a Scalar.
Scalar ScalarArg(nb::handle obj, const char* what) {
  if (PyBool_Check(obj.ptr())) return Scalar(obj.ptr() == Py_True);
  if (PyLong_Check(obj.ptr())) return Scalar(nb::cast<int64_t>(obj));
  if (PyFloat_Check(obj.ptr())) return Scalar(nb::cast<double>(obj));
  if (nb::hasattr(obj, "item") && !nb::hasattr(obj, "__len__")) {
    return ScalarArg(obj.attr("item")(), what);
  }
  throw nb::type_error((std::string(what) + ": expected a number").c_str());
}

// TensorFlow's key attribute [k0, k1]: int64 there (so -1 for 2**64 - 1), uint64 here; both read
// as the 64 bits of two's complement.
std::array<uint64_t, 2> HashKeyArg(nb::handle key) {
  std::array<uint64_t, 2> out{};
  if (!nb::isinstance<nb::sequence>(key) || nb::len(key) != 2) {
    throw nb::type_error("hash_bucket_strong: key must be a sequence of two integers [k0, k1]");
  }
  for (size_t i = 0; i < 2; ++i) {
    nb::object k = key[i];
    if (!PyLong_Check(k.ptr())) k = nb::int_(k);  // NumPy integers
    out[i] = PyLong_AsUnsignedLongLongMask(k.ptr());
    if (PyErr_Occurred()) throw nb::python_error();
  }
  return out;
}

std::string PathArg(nb::handle path) {
  nb::object p = nb::module_::import_("os").attr("fspath")(path);
  if (nb::isinstance<nb::bytes>(p)) {
    nb::bytes b = nb::borrow<nb::bytes>(p);
    return std::string(b.c_str(), b.size());
  }
  return nb::cast<std::string>(p);
}

JaggedTensor JaggedArg(nb::handle obj, const char* what) {
  if (nb::isinstance<JaggedTensor>(obj)) return nb::cast<JaggedTensor>(obj);
  throw nb::type_error((std::string(what) + ": expected a tensorkit.JaggedTensor").c_str());
}

// f(x) for a JaggedTensor, a SparseTensor (or scipy.sparse) or an array `values`, with the GIL
// released: the result has the input's kind.
template <typename F>
nb::object OnStructure(nb::handle values, const char* what, F&& f) {
  if (nb::isinstance<JaggedTensor>(values)) {
    const JaggedTensor j = nb::cast<JaggedTensor>(values);
    JaggedTensor r;
    {
      nb::gil_scoped_release release;
      r = f(j);
    }
    return nb::cast(std::move(r));
  }
  // Arrays first: hasattr on them would raise and clear an AttributeError (half a tiny call).
  const bool array = nb::isinstance<Tensor>(values) || PyObject_CheckBuffer(values.ptr());
  if (!array && (nb::isinstance<SparseTensor>(values) || nb::hasattr(values, "tocoo"))) {
    const SparseTensor s = SparseArg(values, what);
    SparseTensor r;
    {
      nb::gil_scoped_release release;
      r = f(s);
    }
    return nb::cast(std::move(r));
  }
  const Tensor t = AsTensor(values, what);
  Tensor r;
  {
    nb::gil_scoped_release release;
    r = f(t);
  }
  return nb::cast(std::move(r));
}

nb::object OptionalTensor(const Tensor& t) { return t.defined() ? nb::cast(t) : nb::none(); }

std::string JaggedRepr(const JaggedTensor& j) {
  if (!j.defined()) return "tensorkit.JaggedTensor()";
  return "tensorkit.JaggedTensor(batch_size=" + std::to_string(j.batch_size()) +
         ", num_values=" + std::to_string(j.num_values()) + ", dtype=" + DTypeName(j.dtype()) +
         (j.has_weights() ? ", weighted" : "") + ", device=" + j.device().ToString() + ")";
}

std::string KeyedRepr(const KeyedJaggedTensor& k) {
  std::string keys = "[";
  for (int f = 0; f < k.num_keys(); ++f) keys += (f ? ", '" : "'") + k.keys()[f] + "'";
  keys += "]";
  if (!k.values().defined()) return "tensorkit.KeyedJaggedTensor()";
  return "tensorkit.KeyedJaggedTensor(keys=" + keys +
         ", batch_size=" + std::to_string(k.batch_size()) +
         ", dtype=" + DTypeName(k.values().dtype()) + (k.has_weights() ? ", weighted" : "") + ")";
}

// Keras's lookup settings from Python: mask_token a str/bytes (string vocabularies) or an int.
LookupOptions LookupArg(int64_t num_oov_indices, nb::handle mask_token) {
  LookupOptions o;
  o.num_oov_indices = num_oov_indices;
  if (mask_token.is_none()) return o;
  if (nb::isinstance<nb::str>(mask_token)) {
    o.mask_token = nb::cast<std::string>(mask_token);
  } else if (nb::isinstance<nb::bytes>(mask_token)) {
    nb::bytes b = nb::borrow<nb::bytes>(mask_token);
    o.mask_token = std::string(b.c_str(), b.size());
  } else {
    o.mask_value = nb::cast<int64_t>(mask_token);
  }
  return o;
}

// The values a vocabulary is fitted on: one array, JaggedTensor or SparseTensor, or a list of
// such (a list of plain strings or numbers is one array).
std::vector<Tensor> FitValues(nb::handle values) {
  auto one = [](nb::handle v) -> Tensor {
    if (nb::isinstance<JaggedTensor>(v)) return nb::cast<JaggedTensor>(v).values();
    if (nb::isinstance<SparseTensor>(v)) return nb::cast<SparseTensor>(v).values();
    return AsTensor(v, "Vocabulary.fit: values");
  };
  if (nb::isinstance<nb::list>(values) || nb::isinstance<nb::tuple>(values)) {
    const size_t n = nb::len(values);
    bool parts = n > 0;
    for (nb::handle v : values) {
      parts = parts && (nb::isinstance<JaggedTensor>(v) || nb::isinstance<SparseTensor>(v) ||
                        nb::isinstance<Tensor>(v) || nb::hasattr(v, "__array_interface__") ||
                        nb::hasattr(v, "__dlpack__"));
    }
    if (parts) {
      std::vector<Tensor> out;
      for (nb::handle v : values) out.push_back(one(v));
      return out;
    }
  }
  return {one(values)};
}

void BindJagged(nb::module_& m) {
  nb::class_<JaggedTensor>(
      m, "JaggedTensor",
      "B rows of different lengths stored back to back: values [N, ...], offsets int64 [B + 1] "
      "(row i is values[offsets[i]:offsets[i + 1]]), optional float weights [N].")
      .def(
          "__init__",
          [](JaggedTensor* self, nb::handle values, nb::handle lengths, nb::handle offsets,
             nb::handle weights) {
            TK_CHECK(lengths.is_none() != offsets.is_none(), kInvalidArgument,
                     "JaggedTensor: give exactly one of lengths and offsets");
            Tensor v = AsTensor(values, "JaggedTensor: values");
            Tensor w = weights.is_none() ? Tensor() : AsTensor(weights, "JaggedTensor: weights");
            if (!lengths.is_none()) {
              Tensor l = IntegerArg(lengths, "JaggedTensor: lengths");
              nb::gil_scoped_release release;
              new (self) JaggedTensor(JaggedTensor::FromLengths(v, l, w));
            } else {
              Tensor o = IntegerArg(offsets, "JaggedTensor: offsets");
              nb::gil_scoped_release release;
              if (o.dtype() != DType::kInt64) o = Converted(o, DType::kInt64);
              new (self) JaggedTensor(JaggedTensor::FromOffsets(v, o, w));
            }
          },
          "values"_a, "lengths"_a = nb::none(), "offsets"_a = nb::none(), "weights"_a = nb::none(),
          "Shares the memory of values, lengths or offsets (int64) and weights. lengths [B] or "
          "offsets [B + 1] (offsets[0] == 0, non-decreasing, offsets[B] == N): exactly one.")
      .def_prop_ro("values", &JaggedTensor::values)
      .def_prop_ro("offsets", &JaggedTensor::offsets, "int64 [B + 1].")
      .def_prop_ro("lengths", &JaggedTensor::lengths, "int64 [B] (a new tensor).")
      .def_prop_ro(
          "weights", [](const JaggedTensor& j) { return OptionalTensor(j.weights()); },
          "float [N], or None.")
      .def_prop_ro("batch_size", &JaggedTensor::batch_size)
      .def_prop_ro("num_values", &JaggedTensor::num_values)
      .def_prop_ro("dtype", [](const JaggedTensor& j) { return std::string(DTypeName(j.dtype())); })
      .def_prop_ro("device", [](const JaggedTensor& j) { return j.device().ToString(); })
      .def("__len__", &JaggedTensor::batch_size)
      .def(
          "__getitem__",
          [](const JaggedTensor& j, int64_t i) {
            if (i < 0) i += j.batch_size();  // from the end, as Python's sequences
            return j.Row(i);
          },
          "i"_a, "Row i's values: a view, no copy.")
      .def(
          "row_weights",
          [](const JaggedTensor& j, int64_t i) {
            if (i < 0) i += j.batch_size();
            return j.RowWeights(i);
          },
          "i"_a, "Row i's weights: a view.")
      .def(
          "with_weights",
          [](const JaggedTensor& j, nb::handle weights) {
            Tensor w = AsTensor(weights, "JaggedTensor.with_weights");
            nb::gil_scoped_release release;
            return j.WithWeights(w);
          },
          "weights"_a, "The same values and offsets with these weights (float [N]).")
      .def(
          "to_padded",
          [](const JaggedTensor& j, std::optional<int64_t> max_length, nb::handle pad) {
            const Scalar p = ScalarArg(pad, "JaggedTensor.to_padded: pad");
            nb::gil_scoped_release release;
            return j.ToPadded(max_length.value_or(-1), p);
          },
          "max_length"_a = nb::none(), "pad"_a = 0,
          "[B, max_length, ...]: each row's first max_length items (longer rows are truncated), "
          "then pad. max_length None or -1: the longest row's length.")
      .def_static(
          "from_padded",
          [](nb::handle dense, nb::handle lengths) {
            Tensor d = AsTensor(dense, "JaggedTensor.from_padded: dense");
            Tensor l = IntegerArg(lengths, "JaggedTensor.from_padded: lengths");
            nb::gil_scoped_release release;
            return JaggedTensor::FromPadded(d, l);
          },
          "dense"_a, "lengths"_a, "Row i is dense[i, :lengths[i]].")
      .def("to_sparse", &JaggedTensor::ToSparse, nb::call_guard<nb::gil_scoped_release>(),
           "TensorFlow's VarLenFeature layout: a [B, max length] SparseTensor, entry (i, j) the "
           "j-th item of row i.")
      .def_static(
          "from_sparse",
          [](nb::handle st) {
            SparseTensor s = SparseArg(st, "JaggedTensor.from_sparse");
            nb::gil_scoped_release release;
            return JaggedTensor::FromSparse(s);
          },
          "st"_a, "The rows of a 2-D SparseTensor in TensorFlow's VarLenFeature layout.")
      .def(
          "tolist",
          [](nb::handle self) {
            const JaggedTensor& j = nb::cast<const JaggedTensor&>(self);
            nb::list rows;
            for (int64_t i = 0; i < j.batch_size(); ++i) {
              rows.append(nb::cast(j.Row(i)).attr("numpy")());
            }
            return rows;
          },
          "The rows as a list of NumPy arrays (views; string rows are copied).")
      .def("__repr__", &JaggedRepr);

  nb::class_<KeyedJaggedTensor>(
      m, "KeyedJaggedTensor",
      "F named jagged features of one batch of B rows in one values tensor (TorchRec's "
      "KeyedJaggedTensor): lengths [F, B], the values grouped by key.")
      .def(
          "__init__",
          [](KeyedJaggedTensor* self, std::vector<std::string> keys, nb::handle values,
             nb::handle lengths, nb::handle weights) {
            Tensor v = AsTensor(values, "KeyedJaggedTensor: values");
            Tensor l = IntegerArg(lengths, "KeyedJaggedTensor: lengths");
            Tensor w =
                weights.is_none() ? Tensor() : AsTensor(weights, "KeyedJaggedTensor: weights");
            nb::gil_scoped_release release;
            if (l.NumAxes() == 1) {
              // TorchRec's flat lengths [F * B], feature-major.
              const int64_t F = static_cast<int64_t>(keys.size());
              TK_CHECK(F > 0 && l.Dim(0) % F == 0, kShapeMismatch, "KeyedJaggedTensor: ", l.Dim(0),
                       " lengths do not split into ", F,
                       " keys of one batch size; give lengths [F * B] or [F, B]");
              l = Reshape(l, {F, l.Dim(0) / F});
            }
            new (self) KeyedJaggedTensor(std::move(keys), v, l, w);
          },
          "keys"_a, "values"_a, "lengths"_a, "weights"_a = nb::none(),
          "keys: unique names; lengths [F * B] (TorchRec's) or [F, B]; values [N, ...]; weights "
          "None or float [N]. Shares the memory of values and weights.")
      .def_prop_ro("keys", &KeyedJaggedTensor::keys)
      .def_prop_ro("values", &KeyedJaggedTensor::values)
      .def_prop_ro("lengths", &KeyedJaggedTensor::lengths, "int64 [F, B].")
      .def_prop_ro("offsets", &KeyedJaggedTensor::offsets,
                   "int64 [F * B + 1]: the offsets of the F * B rows, feature-major.")
      .def_prop_ro(
          "weights", [](const KeyedJaggedTensor& k) { return OptionalTensor(k.weights()); },
          "float [N], or None.")
      .def_prop_ro("batch_size", &KeyedJaggedTensor::batch_size)
      .def_prop_ro("num_keys", &KeyedJaggedTensor::num_keys)
      .def_prop_ro(
          "dtype",
          [](const KeyedJaggedTensor& k) { return std::string(DTypeName(k.values().dtype())); })
      .def_prop_ro("device", [](const KeyedJaggedTensor& k) { return k.device().ToString(); })
      .def(
          "__getitem__",
          [](const KeyedJaggedTensor& k, const std::string& key) {
            nb::gil_scoped_release release;
            return k.Get(key);
          },
          "key"_a, "Feature `key` as a JaggedTensor over views of this tensor's values.")
      .def("__contains__",
           [](const KeyedJaggedTensor& k, const std::string& key) {
             for (const std::string& x : k.keys()) {
               if (x == key) return true;
             }
             return false;
           })
      .def(
          "to_dict",
          [](const KeyedJaggedTensor& k) {
            nb::dict d;
            for (const std::string& key : k.keys()) d[key.c_str()] = k.Get(key);
            return d;
          },
          "{key: JaggedTensor} (views).")
      .def(
          "permute",
          [](const KeyedJaggedTensor& k, const std::vector<std::string>& keys) {
            nb::gil_scoped_release release;
            return k.Permute(keys);
          },
          "keys"_a, "The features `keys` in that sequence (repeats allowed), values gathered.")
      .def_static(
          "concat",
          [](const std::vector<KeyedJaggedTensor>& parts) {
            nb::gil_scoped_release release;
            return KeyedJaggedTensor::Concat(parts);
          },
          "kjts"_a,
          "Joins batches with the same keys along the batch, or features of different keys and "
          "one batch size along the keys (TorchRec's concat).")
      .def(
          "split",
          [](const KeyedJaggedTensor& k, const std::vector<int64_t>& batch_sizes) {
            nb::gil_scoped_release release;
            return k.Split(batch_sizes);
          },
          "batch_sizes"_a, "Pieces of these batch sizes (adding up to batch_size).")
      .def(
          "to_sparse",
          [](const KeyedJaggedTensor& k, const std::string& key) {
            nb::gil_scoped_release release;
            return k.ToSparse(key);
          },
          "key"_a, "Feature `key` as a [B, max length] SparseTensor (JaggedTensor.to_sparse).")
      .def("__repr__", &KeyedRepr);
}

void BindOps(nb::module_& m) {
  m.def(
      "fill_empty_rows",
      [](nb::handle st, nb::handle default_value) {
        SparseTensor s = SparseArg(st, "fill_empty_rows: st");
        FillEmptyRowsResult r;
        if (nb::isinstance<nb::str>(default_value) || nb::isinstance<nb::bytes>(default_value)) {
          std::string d;
          if (nb::isinstance<nb::bytes>(default_value)) {
            nb::bytes b = nb::borrow<nb::bytes>(default_value);
            d.assign(b.c_str(), b.size());
          } else {
            d = nb::cast<std::string>(default_value);
          }
          nb::gil_scoped_release release;
          r = FillEmptyRowsOfStrings(s, d);
        } else {
          const Scalar d = ScalarArg(default_value, "fill_empty_rows: default_value");
          nb::gil_scoped_release release;
          r = FillEmptyRows(s, d);
        }
        return nb::make_tuple(r.output, r.empty_row_indicator, r.reverse_index_map);
      },
      nb::sig("def fill_empty_rows(st: object, default_value: object) -> tuple[SparseTensor, "
              "Tensor, Tensor]"),
      "st"_a, "default_value"_a,
      "TensorFlow's sparse.fill_empty_rows: (filled, empty_row_indicator, reverse_index_map).");

  auto segment = [&m](const char* name, auto op, const char* doc) {
    m.def(
        name,
        [name, op](nb::handle data, nb::handle segment_ids, int64_t num_segments,
                   const std::string& combiner) {
          Tensor d = AsTensor(data, name);
          Tensor ids = IntegerArg(segment_ids, name);
          const Combiner c = CombinerArg(combiner, name);
          nb::gil_scoped_release release;
          return op(d, ids, num_segments, c);
        },
        "data"_a, "segment_ids"_a, "num_segments"_a = -1, "combiner"_a = "sum", doc);
  };
  segment("segment_reduce", &SegmentReduce,
          "TensorFlow's segment_sum / mean / sqrt_n / max / min over sorted segment_ids; "
          "num_segments -1: the last id + 1.");
  segment("unsorted_segment_reduce", &UnsortedSegmentReduce,
          "TensorFlow's unsorted_segment_sum / mean / sqrt_n / max / min; negative ids are "
          "dropped; num_segments -1: the largest id + 1.");
  m.def(
      "sparse_segment_reduce",
      [](nb::handle data, nb::handle indices, nb::handle segment_ids, int64_t num_segments,
         const std::string& combiner) {
        constexpr const char* kName = "sparse_segment_reduce";
        Tensor d = AsTensor(data, kName);
        Tensor i = IntegerArg(indices, kName);
        Tensor ids = IntegerArg(segment_ids, kName);
        const Combiner c = CombinerArg(combiner, kName);
        nb::gil_scoped_release release;
        return SparseSegmentReduce(d, i, ids, num_segments, c);
      },
      "data"_a, "indices"_a, "segment_ids"_a, "num_segments"_a = -1, "combiner"_a = "sum",
      "TensorFlow's sparse_segment_sum / mean / sqrt_n (and max / min): rows data[indices[k]] "
      "reduced into segment segment_ids[k].");

  m.def(
      "embedding_bag",
      [](nb::handle table, nb::handle ids, const std::string& combiner, int64_t padding_id) {
        Tensor t = AsTensor(table, "embedding_bag: table");
        JaggedTensor j = JaggedArg(ids, "embedding_bag: ids");
        const Combiner c = CombinerArg(combiner, "embedding_bag");
        nb::gil_scoped_release release;
        return EmbeddingBag(t, j, c, padding_id);
      },
      "table"_a, "ids"_a, "combiner"_a = "sum", "padding_id"_a = -1,
      "[B, D]: bag b reduces the table rows of row b of ids (a JaggedTensor of int32 or int64, "
      "its weights scaling the rows); an empty bag gives zeros.");
  m.def(
      "embedding_bags",
      [](nb::handle tables, nb::handle kjt, nb::handle combiners) {
        std::vector<Tensor> ts;
        for (nb::handle t : tables) ts.push_back(AsTensor(t, "embedding_bags: tables"));
        if (!nb::isinstance<KeyedJaggedTensor>(kjt)) {
          throw nb::type_error("embedding_bags: expected a tensorkit.KeyedJaggedTensor");
        }
        KeyedJaggedTensor k = nb::cast<KeyedJaggedTensor>(kjt);
        std::vector<Combiner> cs;
        if (nb::isinstance<nb::str>(combiners)) {
          cs.assign(ts.size(), CombinerArg(nb::cast<std::string>(combiners), "embedding_bags"));
        } else {
          for (nb::handle c : combiners) {
            cs.push_back(CombinerArg(nb::cast<std::string>(c), "embedding_bags"));
          }
        }
        nb::gil_scoped_release release;
        return EmbeddingBags(ts, k, cs);
      },
      "tables"_a, "kjt"_a, "combiners"_a = "sum",
      "One table and combiner per key of kjt (a combiner name applies to every key): "
      "[B, sum of D], key f's bags in its own columns.");
  m.def(
      "embedding_bag_backward",
      [](nb::handle grad, nb::handle ids, const std::string& combiner, int64_t num_rows,
         int64_t padding_id, nb::handle table) {
        Tensor g = AsTensor(grad, "embedding_bag_backward: grad");
        JaggedTensor j = JaggedArg(ids, "embedding_bag_backward: ids");
        const Combiner c = CombinerArg(combiner, "embedding_bag_backward");
        Tensor t = table.is_none() ? Tensor() : AsTensor(table, "embedding_bag_backward: table");
        nb::gil_scoped_release release;
        return EmbeddingBagBackward(g, j, c, num_rows, padding_id, t);
      },
      "grad"_a, "ids"_a, "combiner"_a, "num_rows"_a, "padding_id"_a = -1, "table"_a = nb::none(),
      "The gradient of embedding_bag with respect to the table: a [num_rows, D] SparseTensor "
      "holding the rows the ids touch. max and min need the forward table.");

  m.def(
      "hash_bucket_fast",
      [](nb::handle values, int64_t num_buckets) {
        return OnStructure(values, "hash_bucket_fast",
                           [&](const auto& v) { return HashBucketFast(v, num_buckets); });
      },
      nb::sig("def hash_bucket_fast(values: object, num_buckets: int) -> Tensor | JaggedTensor | "
              "SparseTensor"),
      "values"_a, "num_buckets"_a,
      "TensorFlow's strings.to_hash_bucket_fast: Fingerprint64(value) % num_buckets, int64 of "
      "the input's structure. values: strings (NumPy U, S or object arrays), int32 / int64 "
      "(hashed through their decimal string), or a JaggedTensor / SparseTensor of them.");
  m.def(
      "hash_bucket_strong",
      [](nb::handle values, int64_t num_buckets, nb::handle key_obj) {
        const std::array<uint64_t, 2> key = HashKeyArg(key_obj);
        return OnStructure(values, "hash_bucket_strong",
                           [&](const auto& v) { return HashBucketStrong(v, num_buckets, key); });
      },
      nb::sig("def hash_bucket_strong(values: object, num_buckets: int, key: object) -> Tensor | "
              "JaggedTensor | SparseTensor"),
      "values"_a, "num_buckets"_a, "key"_a,
      "TensorFlow's strings.to_hash_bucket_strong: SipHash-2-4 under key [k0, k1], modulo "
      "num_buckets.");
  m.def(
      "bucketize",
      [](nb::handle values, nb::handle boundaries) {
        // A list of numbers is TensorFlow's attribute, float32; an array keeps its dtype (float64
        // compares as double).
        const bool listed =
            nb::isinstance<nb::list>(boundaries) || nb::isinstance<nb::tuple>(boundaries);
        Tensor b = AsTensor(boundaries, "bucketize: boundaries");
        const DType want =
            listed || b.dtype() == DType::kFloat32 ? DType::kFloat32 : DType::kFloat64;
        if (b.dtype() != want) b = Converted(b, want);
        std::vector<float> bf;
        std::vector<double> bd;
        if (b.dtype() == DType::kFloat32) {
          bf = b.ToVector<float>();
        } else {
          bd = b.ToVector<double>();
        }
        return OnStructure(values, "bucketize", [&](const auto& v) {
          return bf.empty() && !bd.empty() ? Bucketize(v, bd) : Bucketize(v, bf);
        });
      },
      nb::sig("def bucketize(values: object, boundaries: object) -> Tensor | JaggedTensor | "
              "SparseTensor"),
      "values"_a, "boundaries"_a,
      "TensorFlow's Bucketize: the index of the first boundary above each value, int32 of the "
      "input's structure. A list of boundaries is float32 (TensorFlow's); an array keeps float64.");
}

void BindVocabulary(nb::module_& m) {
  nb::class_<Vocabulary>(m, "Vocabulary",
                         "Tokens (strings or integers) and their ids, as Keras's StringLookup and "
                         "IntegerLookup give them: [mask?][OOV ids][tokens].")
      .def_static(
          "fit",
          [](nb::handle values, int64_t min_frequency, std::optional<int64_t> max_tokens,
             int64_t num_oov_indices, nb::handle mask_token) {
            std::vector<Tensor> v = FitValues(values);
            VocabularyFitOptions fit;
            fit.min_frequency = min_frequency;
            fit.max_tokens = max_tokens.value_or(-1);
            const LookupOptions lookup = LookupArg(num_oov_indices, mask_token);
            nb::gil_scoped_release release;
            return Vocabulary::Fit(v, fit, lookup);
          },
          "values"_a, "min_frequency"_a = 1, "max_tokens"_a = nb::none(), nb::kw_only(),
          "num_oov_indices"_a = 1, "mask_token"_a = nb::none(),
          "The tokens seen at least min_frequency times, at most max_tokens of them (mask and OOV "
          "ids not counted), most frequent first, ties by value ascending. values: an array, a "
          "JaggedTensor or SparseTensor, or a list of them.")
      .def_static(
          "from_tokens",
          [](nb::handle tokens, int64_t num_oov_indices, nb::handle mask_token) {
            Tensor t = AsTensor(tokens, "Vocabulary.from_tokens");
            const LookupOptions lookup = LookupArg(num_oov_indices, mask_token);
            nb::gil_scoped_release release;
            return Vocabulary::FromTensor(t, lookup);
          },
          "tokens"_a, nb::kw_only(), "num_oov_indices"_a = 1, "mask_token"_a = nb::none(),
          "A vocabulary of these tokens in this order (Keras's vocabulary=[...]).")
      .def_static(
          "load",
          [](nb::handle path, nb::handle dtype, int64_t num_oov_indices, nb::handle mask_token) {
            const std::string p = PathArg(path);
            const DType d = DTypeArg(dtype);
            const LookupOptions lookup = LookupArg(num_oov_indices, mask_token);
            nb::gil_scoped_release release;
            return Vocabulary::Load(p, d == DType::kString ? d : DType::kInt64, lookup);
          },
          "path"_a, "dtype"_a = "string", nb::kw_only(), "num_oov_indices"_a = 1,
          "mask_token"_a = nb::none(),
          "Reads TensorFlow's vocabulary file (one token a line); dtype 'string' or an integer "
          "dtype for decimal lines.")
      .def(
          "save",
          [](const Vocabulary& v, nb::handle path) {
            const std::string p = PathArg(path);
            nb::gil_scoped_release release;
            v.Save(p);
          },
          "path"_a, "Writes TensorFlow's vocabulary file (one token a line, in id order).")
      .def(
          "lookup",
          [](const Vocabulary& voc, nb::handle values) {
            return OnStructure(values, "Vocabulary.lookup",
                               [&](const auto& v) { return voc.Lookup(v); });
          },
          nb::sig("def lookup(self, values: object) -> Tensor | JaggedTensor | SparseTensor"),
          "values"_a, "The id of every value, int64 of the input's structure.")
      .def_prop_ro("tokens", &Vocabulary::tokens, "The tokens in id order (1-D).")
      .def_prop_ro("size", &Vocabulary::size, "Tokens, without the mask and OOV ids.")
      .def_prop_ro("num_ids", &Vocabulary::num_ids,
                   "Every id: tokens, OOV ids and the mask (Keras's vocabulary_size()).")
      .def_prop_ro("token_start", &Vocabulary::token_start, "The id of token 0.")
      .def_prop_ro("dtype", [](const Vocabulary& v) { return std::string(DTypeName(v.dtype())); })
      .def("__len__", &Vocabulary::size)
      .def("__repr__", [](const Vocabulary& v) {
        return "tensorkit.Vocabulary(size=" + std::to_string(v.size()) +
               ", dtype=" + DTypeName(v.dtype()) +
               ", num_oov_indices=" + std::to_string(v.options().num_oov_indices) + ")";
      });
}

}  // namespace

void BindFeatures(nb::module_& m) {
  BindJagged(m);
  BindOps(m);
  BindVocabulary(m);
}

}  // namespace tensorkit::python
