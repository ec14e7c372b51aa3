// Quoting arbitrary bytes as JSON and parsing the flat objects of manifests.
#include "tensorkit/tools/json.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tensorkit/common/file_util.h"

namespace tensorkit::tools {
namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xc0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xe0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    *out += static_cast<char>(0xf0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// A cursor over one line of JSON.
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  bool Object(std::map<std::string, JsonValue>* out) {
    Space();
    if (!Eat('{')) return Fail("expected '{'");
    Space();
    if (Eat('}')) return End();
    while (true) {
      Space();
      std::string key;
      if (!String(&key)) return false;
      Space();
      if (!Eat(':')) return Fail("expected ':' after a key");
      Space();
      JsonValue v;
      if (!Value(&v)) return false;
      (*out)[key] = std::move(v);
      Space();
      if (Eat('}')) return End();
      if (!Eat(',')) return Fail("expected ',' or '}'");
    }
  }

  const std::string& why() const { return why_; }

 private:
  bool Fail(const char* why) {
    why_ = std::string(why) + " at column " + std::to_string(i_ + 1);
    return false;
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool End() {
    Space();
    return i_ == s_.size() ? true : Fail("text after the object");
  }
  bool Word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  bool Value(JsonValue* v) {
    if (i_ >= s_.size()) return Fail("expected a value");
    const char c = s_[i_];
    if (c == '"') {
      v->kind = JsonValue::Kind::kString;
      return String(&v->text);
    }
    if (Word("true") || Word("false")) {
      v->kind = JsonValue::Kind::kBool;
      v->number = c == 't';
      return true;
    }
    if (Word("null")) {
      v->kind = JsonValue::Kind::kNull;
      return true;
    }
    if (c == '{' || c == '[') return Fail("nested values are not part of a manifest record");
    // strtod accepts more than JSON's grammar (hex, inf); only what the tool writes matters.
    const size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                              s_[i_] == '+' || s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
    }
    const std::string num(s_.substr(start, i_ - start));
    char* end = nullptr;
    v->number = num.empty() ? 0 : std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size()) {
      i_ = start;
      return Fail("expected a value");
    }
    v->kind = JsonValue::Kind::kNumber;
    return true;
  }

  bool Hex4(uint32_t* cp) {
    if (i_ + 4 > s_.size()) return Fail("short \\u escape");
    auto r = std::from_chars(s_.data() + i_, s_.data() + i_ + 4, *cp, 16);
    if (r.ptr != s_.data() + i_ + 4) return Fail("bad \\u escape");
    i_ += 4;
    return true;
  }

  bool String(std::string* out) {
    if (!Eat('"')) return Fail("expected a string");
    while (true) {
      if (i_ >= s_.size()) return Fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return Fail("a control byte inside a string");
      if (c != '\\') {
        *out += static_cast<char>(c);
        ++i_;
        continue;
      }
      if (++i_ >= s_.size()) return Fail("unterminated string");
      const char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          *out += e;
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xdc80 && cp <= 0xdcff) {  // an undecodable byte (see "quoted")
            *out += static_cast<char>(cp - 0xdc00);
          } else if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t low = 0;
            if (!Word("\\u") || !Hex4(&low) || low < 0xdc00 || low > 0xdfff) {
              return Fail("a high surrogate without its low half");
            }
            AppendUtf8(0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00), out);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return Fail("a lone low surrogate");
          } else {
            AppendUtf8(cp, out);
          }
          break;
        }
        default:
          return Fail("an unknown escape");
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string why_;
};

}  // namespace

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    char buf[8];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
      ++i;
    } else if (size_t j = i; io::NextUtf8(s, &j) >= 0) {  // valid UTF-8 passes through
      out.append(s.substr(i, j - i));
      i = j;
    } else {
      std::snprintf(buf, sizeof(buf), "\\udc%02x", c);
      out += buf;
      ++i;
    }
  }
  return out + "\"";
}

bool ParseFlatJsonObject(std::string_view text, std::map<std::string, JsonValue>* out,
                         std::string* why) {
  Parser p(text);
  if (p.Object(out)) return true;
  *why = p.why();
  return false;
}

}  // namespace tensorkit::tools
