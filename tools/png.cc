// PNG encoding with libpng (see png.h).
#include "tensorkit/tools/png.h"

#include <png.h>

#include <csetjmp>
#include <cstring>

#include "tensorkit/common/error.h"

namespace tensorkit::tools {
namespace {

// libpng reports errors by longjmp, which must not cross C++ frames with destructors: the
// message goes into this plain buffer and Encode returns false.
struct PngFailure {
  char message[256] = {};
};

[[noreturn]] void OnError(png_structp png, png_const_charp message) {
  auto* f = static_cast<PngFailure*>(png_get_error_ptr(png));
  std::strncpy(f->message, message, sizeof(f->message) - 1);
  png_longjmp(png, 1);
}

void OnWarning(png_structp, png_const_charp) {}  // nothing the tool's user can act on

void Append(png_structp png, png_bytep data, size_t n) {
  auto* out = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(png));
  try {
    out->insert(out->end(), data, data + n);
  } catch (...) {  // an exception must not unwind through libpng
    png_error(png, "out of memory for the encoded image");
  }
}

void Flush(png_structp) {}

// Only trivially destructible locals live here, since OnError longjmps back into it.
bool Encode(png_bytep* rows, png_uint_32 width, png_uint_32 height, png_textp text, int num_text,
            std::vector<uint8_t>* out, PngFailure* failure) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, failure, OnError, OnWarning);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, out, Append, Flush);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (num_text > 0) png_set_text(png, info, text, num_text);
  png_set_rows(png, info, rows);
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

std::vector<uint8_t> EncodeGrayPng(const std::vector<uint8_t>& gray, int64_t width, int64_t height,
                                   const std::vector<std::pair<std::string, std::string>>& text) {
  TK_INTERNAL_CHECK(width >= 1 && height >= 1 && width <= (int64_t{1} << 24) &&
                    height <= (int64_t{1} << 24) &&
                    static_cast<int64_t>(gray.size()) == width * height);
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y) {
    rows[y] = const_cast<png_bytep>(gray.data() + y * width);  // libpng only reads them
  }
  std::vector<png_text> chunks(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    chunks[i].compression = PNG_TEXT_COMPRESSION_NONE;
    chunks[i].key = const_cast<char*>(text[i].first.c_str());
    chunks[i].text = const_cast<char*>(text[i].second.c_str());
    chunks[i].text_length = text[i].second.size();
  }
  std::vector<uint8_t> out;
  PngFailure failure;
  if (!Encode(rows.data(), static_cast<png_uint_32>(width), static_cast<png_uint_32>(height),
              chunks.data(), static_cast<int>(chunks.size()), &out, &failure)) {
    Throw(ErrorCode::kInternal, "spy: libpng could not encode the ", width, " x ", height,
          " image: ", failure.message[0] ? failure.message : "out of memory");
  }
  return out;
}

}  // namespace tensorkit::tools
