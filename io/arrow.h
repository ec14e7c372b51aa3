// tensorkit/io/arrow.h: tensors to and from the Arrow C Data Interface, the ABI-stable structs
// through which pyarrow, polars, DuckDB and Arrow C++ hand columns over without a dependency on
// each other (https://arrow.apache.org/docs/format/CDataInterface.html). No Arrow library is
// linked: the two structs are declared here, exactly as the specification declares them.
//
// Glossary
//   export        ExportArrow(x, &array, &schema) fills two caller-owned structs. The array's
//                 buffers are tensorkit's own storage whenever the layout allows (no copy): the
//                 array's release callback, which the consumer calls once, drops tensorkit's
//                 reference, so the storage lives as long as the consumer needs it. The schema is
//                 self-contained.
//   import        ImportArrow*(&array, &schema) takes both structs over: the schema is released at
//                 once, the array is moved (its struct marked released, as the specification's
//                 "move" says) and released when the last tensor viewing its buffers is destroyed
//                 (no copy), or at once when the data had to be copied. On an Error both are
//                 released too, so nothing leaks.
//   layouts       a 1-D Tensor <-> a primitive array; a 2-D Tensor [N, W] <-> fixed_size_list<W>
//                 of a primitive; a JaggedTensor <-> large_list (int64 offsets, zero-copy both
//                 ways) and, on import, list (int32 offsets, widened: a copy of the offsets); a
//                 KeyedJaggedTensor <-> a struct of one large_list per key (field names = keys).
//                 Sliced arrays (offset != 0, list offsets not starting at 0) are read through.
//   dtypes        bool "b" (Arrow packs bits: converted both ways, a copy), int8 "c", uint8 "C",
//                 int16 "s", int32 "i", int64 "l", float16 "e", float32 "f", float64 "g", and
//                 strings: tensorkit exports binary "z" (bytes need not be UTF-8) and imports "z",
//                 "u", "Z", "U" and the view layouts "vz", "vu" (binary_view, string_view: how
//                 polars, DuckDB and newer pyarrow hand strings over), all as a copy. Every
//                 string view is checked against the data buffer it names (an Error naming the
//                 field, the slot and the view's values, never a read outside the buffers).
//                 bfloat16 has no Arrow type and uint16/32/64 no tensorkit one: Errors naming
//                 the cast to make.
//   read-only     the tensors over imported buffers (numbers, int64 list offsets) have a
//                 read-only Storage (Storage::read_only()), as Arrow data is immutable: the
//                 Python package then exports them read-only. Copies (bools, strings, widened
//                 offsets, misaligned buffers) are ordinary writable tensors.
//   nulls         refused by default (an Error naming the first null slot), as a tensor has no
//                 missing elements. ArrowImportOptions turns null list slots into empty rows
//                 (their child segment dropped) and null values of a jagged import into
//                 weights of 0 beside 1 for the valid values.
//   Parquet       through pyarrow (no Arrow C++ is linked): pq.read_table(path)[column], its
//                 combine_chunks() (or each chunk), then array._export_to_c(array_ptr,
//                 schema_ptr) into the two structs a C++ extension hands to ImportArrow*; the
//                 other way, ExportArrow then pa.Array._import_from_c and pq.write_table.
//                 tests/io/pyarrow_test.py does both with ctypes.
//   devices       CPU memory only: a tensor on another device is an Error (copy it with
//                 To(Device::Cpu()) first); imported buffers are host memory.
#ifndef TENSORKIT_IO_ARROW_H_
#define TENSORKIT_IO_ARROW_H_

#include <cstdint>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/jagged.h"

// The Arrow C Data Interface, as its specification declares it (guarded so that a translation
// unit that also includes Arrow's own abi.h sees one definition).
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

extern "C" {
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};
}  // extern "C"

#endif  // ARROW_C_DATA_INTERFACE

namespace tensorkit::io {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

struct ArrowImportOptions {
  // A null list slot (of a list, large_list or a struct's child list) is an empty row.
  bool null_lists_as_empty = false;
  // Null values inside the lists of a jagged import get weight 0, the others 1 (the weights of
  // the JaggedTensor / KeyedJaggedTensor); their value slots keep whatever the buffer holds.
  bool null_values_as_zero_weight = false;
};

// A 1-D tensor as a primitive array, a 2-D one as a fixed_size_list array (C order; a strided
// tensor is exported from a contiguous copy).
void ExportArrow(const Tensor& t, ArrowArray* array, ArrowSchema* schema);
// A large_list array of B rows (its offsets and values are the tensor's; weights are not
// exported: export them as a Tensor of their own).
void ExportArrow(const JaggedTensor& j, ArrowArray* array, ArrowSchema* schema);
// A struct array of B rows with one large_list child per key, named by the key.
void ExportArrow(const KeyedJaggedTensor& k, ArrowArray* array, ArrowSchema* schema);

// A primitive array as a 1-D Tensor, a fixed_size_list of a primitive as a 2-D one.
Tensor ImportArrowTensor(ArrowArray* array, ArrowSchema* schema,
                         const ArrowImportOptions& options = {});
// A list or large_list array of a primitive (or of strings) as a JaggedTensor.
JaggedTensor ImportArrowJagged(ArrowArray* array, ArrowSchema* schema,
                               const ArrowImportOptions& options = {});
// A struct array whose children are lists of one value type as a KeyedJaggedTensor (keys = the
// field names, in order; the values of all keys concatenated, a copy).
KeyedJaggedTensor ImportArrowKeyedJagged(ArrowArray* array, ArrowSchema* schema,
                                         const ArrowImportOptions& options = {});

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_ARROW_H_
