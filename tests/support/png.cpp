// SPDX-License-Identifier: Apache-2.0
#include "support/png.hpp"

#include <png.h>

namespace ppsim::test {

// libpng's simplified API (png.h, "simplified API"): any PNG, converted to 8-bit RGB on a white
// background where it has alpha, as a screenshot is seen.
std::optional<Image> decode_png(const std::string& bytes, std::string& error) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size())) {
    error = png.message;
    return std::nullopt;
  }
  png.format = PNG_FORMAT_RGB;
  Image image;
  image.width = static_cast<int>(png.width);
  image.height = static_cast<int>(png.height);
  image.rgb.resize(PNG_IMAGE_SIZE(png));
  const png_color white{255, 255, 255};
  if (!png_image_finish_read(&png, &white, image.rgb.data(), 0, nullptr)) {
    error = png.message;
    png_image_free(&png);
    return std::nullopt;
  }
  return image;
}

}  // namespace ppsim::test
