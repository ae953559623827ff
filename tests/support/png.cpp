#include "support/png.hpp"

#include <zlib.h>

#include <cstdlib>

namespace ppsim::test {
namespace {

std::uint32_t big_endian(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<std::uint8_t>(bytes[at + i]);
  return value;
}

// The Paeth predictor of the PNG specification, section 9.4.
std::uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a);
  const int pb = std::abs(p - b);
  const int pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<std::uint8_t>(a);
  return static_cast<std::uint8_t>(pb <= pc ? b : c);
}

}  // namespace

std::optional<Image> decode_png(const std::string& bytes, std::string& error) {
  static const std::string kSignature = "\x89PNG\r\n\x1a\n";
  if (bytes.compare(0, kSignature.size(), kSignature) != 0) {
    error = "not a PNG file";
    return std::nullopt;
  }
  Image image;
  int channels = 0;
  std::string compressed;
  for (std::size_t at = kSignature.size(); at + 8 <= bytes.size();) {
    const std::uint32_t length = big_endian(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) {
      error = "truncated chunk " + type;
      return std::nullopt;
    }
    const std::size_t data = at + 8;
    if (type == "IHDR") {
      image.width = static_cast<int>(big_endian(bytes, data));
      image.height = static_cast<int>(big_endian(bytes, data + 4));
      const int depth = static_cast<std::uint8_t>(bytes[data + 8]);
      const int colour = static_cast<std::uint8_t>(bytes[data + 9]);
      const int interlace = static_cast<std::uint8_t>(bytes[data + 12]);
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) {
        error = "unsupported PNG: bit depth " + std::to_string(depth) + ", colour type " + std::to_string(colour) +
                ", interlace " + std::to_string(interlace);
        return std::nullopt;
      }
      channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      compressed += bytes.substr(data, length);
    } else if (type == "IEND") {
      break;
    }
    at = data + length + 4;  // skip the CRC
  }
  if (channels == 0 || image.width <= 0 || image.height <= 0) {
    error = "no image header";
    return std::nullopt;
  }
  const std::size_t stride = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(channels);
  std::vector<std::uint8_t> raw((stride + 1) * static_cast<std::size_t>(image.height));
  uLongf raw_size = static_cast<uLongf>(raw.size());
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()),
                 static_cast<uLong>(compressed.size())) != Z_OK ||
      raw_size != raw.size()) {
    error = "cannot inflate the image data";
    return std::nullopt;
  }
  // Undo each row's filter (PNG specification, section 9.2), in place.
  std::vector<std::uint8_t> previous(stride, 0);
  image.rgb.resize(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3);
  for (std::size_t y = 0; y < static_cast<std::size_t>(image.height); ++y) {
    std::uint8_t* row = raw.data() + y * (stride + 1);
    const int filter = row[0];
    std::uint8_t* pixels = row + 1;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? pixels[i - static_cast<std::size_t>(channels)] : 0;
      const int b = previous[i];
      const int c = i >= static_cast<std::size_t>(channels) ? previous[i - static_cast<std::size_t>(channels)] : 0;
      int predicted = 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          predicted = a;
          break;
        case 2:
          predicted = b;
          break;
        case 3:
          predicted = (a + b) / 2;
          break;
        case 4:
          predicted = paeth(a, b, c);
          break;
        default:
          error = "unknown row filter " + std::to_string(filter);
          return std::nullopt;
      }
      pixels[i] = static_cast<std::uint8_t>(pixels[i] + predicted);
    }
    previous.assign(pixels, pixels + stride);
    for (std::size_t x = 0; x < static_cast<std::size_t>(image.width); ++x) {
      for (std::size_t k = 0; k < 3; ++k) {
        image.rgb[(y * static_cast<std::size_t>(image.width) + x) * 3 + k] =
            pixels[x * static_cast<std::size_t>(channels) + k];
      }
    }
  }
  return image;
}

}  // namespace ppsim::test
