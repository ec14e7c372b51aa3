// tensorkit/tools/json.h: the JSON the tool writes and reads back (manifests).
//
// Glossary
//   quoted     a JSON string literal of arbitrary bytes: valid UTF-8 is kept, control bytes and
//              quotes are escaped, and each byte that is not part of valid UTF-8 becomes
//              \udcXX (0x80 <= XX <= 0xff), the lone surrogate Python's `surrogateescape` uses
//              for undecodable file-name bytes; so the text is always valid UTF-8 and every
//              path (Linux paths are bytes) comes back exactly.
//   flat       a JSON object whose values are strings, numbers, true, false or null: the form
//              of a manifest record. Nested values are refused.
#ifndef TENSORKIT_TOOLS_JSON_H_
#define TENSORKIT_TOOLS_JSON_H_

#include <map>
#include <string>
#include <string_view>

namespace tensorkit::tools {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// `bytes` as a JSON string literal, quotes included (see "quoted").
std::string JsonQuote(std::string_view bytes);

struct JsonValue {
  enum class Kind { kString, kNumber, kBool, kNull };
  Kind kind = Kind::kNull;
  std::string text;   // kString: the decoded bytes (\udcXX back to the byte XX)
  double number = 0;  // kNumber; kBool: 1 or 0
};

// Parses one flat JSON object. Returns false and sets *why (short, no input quoted) on any
// syntax error, a nested value or trailing text; later duplicate keys replace earlier ones.
bool ParseFlatJsonObject(std::string_view text, std::map<std::string, JsonValue>* out,
                         std::string* why);

}  // namespace tensorkit::tools

#endif  // TENSORKIT_TOOLS_JSON_H_
