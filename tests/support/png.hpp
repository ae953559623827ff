// SPDX-License-Identifier: Apache-2.0
#pragma once
// A browser's screenshot as 8-bit RGB pixels, decoded by Debian's libpng.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ppsim::test {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  // 3 bytes per pixel, rows top to bottom

  const std::uint8_t* pixel(int x, int y) const {
    return rgb.data() +
           3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x));
  }
};

// The image in `bytes`, or nothing with the reason in `error`.
std::optional<Image> decode_png(const std::string& bytes, std::string& error);

}  // namespace ppsim::test
