// tensorkit/tools/png.h: 8-bit grayscale PNG files for `tensorkit spy`, encoded by libpng.
//
// Glossary
//   gray     one byte a pixel, 0 black to 255 white, rows top to bottom.
//   text     (keyword, value) tEXt chunks: what the picture shows (shape, cell size, ...), so
//            that a reader of the file needs no side channel to interpret it.
#ifndef TENSORKIT_TOOLS_PNG_H_
#define TENSORKIT_TOOLS_PNG_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tensorkit::tools {

// The PNG bytes of a width x height gray image (width, height >= 1); throws Error(kInternal)
// with libpng's message should libpng fail.
std::vector<uint8_t> EncodeGrayPng(const std::vector<uint8_t>& gray, int64_t width, int64_t height,
                                   const std::vector<std::pair<std::string, std::string>>& text);

}  // namespace tensorkit::tools

#endif  // TENSORKIT_TOOLS_PNG_H_
