// A naive protobuf encoder for the tf.Example tests, written from the wire format's definition
// (not from any protobuf library), so that tests can build well-formed and malformed records.
#ifndef TENSORKIT_TESTS_IO_PROTO_ENCODER_H_
#define TENSORKIT_TESTS_IO_PROTO_ENCODER_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tensorkit::io::proto_test {

inline std::string Varint(uint64_t v) {
  std::string s;
  do {
    const uint8_t b = v & 0x7f;
    v >>= 7;
    s.push_back(static_cast<char>(b | (v ? 0x80 : 0)));
  } while (v);
  return s;
}
inline std::string Tag(int field, int wire) { return Varint(uint64_t(field) << 3 | wire); }
// A length-delimited field.
inline std::string Ld(int field, const std::string& payload) {
  return Tag(field, 2) + Varint(payload.size()) + payload;
}
inline std::string Fixed32(float f) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &f, 4);
  return s;
}
// Features holding a packed int64_list, a packed float_list, a bytes_list.
inline std::string Int64s(const std::vector<int64_t>& v) {
  std::string p;
  for (int64_t x : v) p += Varint(static_cast<uint64_t>(x));
  return Ld(3, Ld(1, p));
}
inline std::string Floats(const std::vector<float>& v) {
  std::string p;
  for (float x : v) p += Fixed32(x);
  return Ld(2, Ld(1, p));
}
inline std::string Bytes(const std::vector<std::string>& v) {
  std::string p;
  for (const auto& x : v) p += Ld(1, x);
  return Ld(1, p);
}
// A Features map entry, and an Example of map entries.
inline std::string Entry(const std::string& key, const std::string& feature) {
  return Ld(1, Ld(1, key) + Ld(2, feature));
}
inline std::string Example(const std::string& entries) { return Ld(1, entries); }
// `core` inside `depth` length-delimited fields `field`, built outside in (no copy per level).
inline std::string Nested(int depth, int field, const std::string& core) {
  std::vector<uint64_t> size(static_cast<size_t>(depth) + 1, core.size());  // level k's payload
  for (int k = 1; k <= depth; ++k) {
    size[k] = Tag(field, 2).size() + Varint(size[k - 1]).size() + size[k - 1];
  }
  std::string out;
  for (int k = depth; k >= 1; --k) out += Tag(field, 2) + Varint(size[k - 1]);
  return out + core;
}

}  // namespace tensorkit::io::proto_test

#endif  // TENSORKIT_TESTS_IO_PROTO_ENCODER_H_
