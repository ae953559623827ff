// SPDX-License-Identifier: Apache-2.0
#include "sim/report/spool_section.hpp"

#include <ostream>
#include <stdexcept>
#include <vector>

namespace ppsim {
namespace {

constexpr std::size_t kBlock = 1 << 20;

}  // namespace

SpoolSection::SpoolSection(std::string separator, bool before_first)
    : file_(std::tmpfile(), &std::fclose), separator_(std::move(separator)), before_first_(before_first) {
  if (!file_) throw std::runtime_error("cannot create a temporary file for a streamed output");
}

void SpoolSection::item(const std::string& text) {
  if (before_first_ || items_ > 0) buffer_ += separator_;
  buffer_ += text;
  ++items_;
  if (buffer_.size() >= kBlock) flush();
}

void SpoolSection::flush() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) != buffer_.size()) {
    throw std::runtime_error("cannot write a streamed output's temporary file (disk full?)");
  }
  buffer_.clear();
}

void SpoolSection::copy_to(std::ostream& out) {
  flush();
  std::fflush(file_.get());
  std::rewind(file_.get());
  std::vector<char> block(kBlock);
  std::size_t got = 0;
  while ((got = std::fread(block.data(), 1, block.size(), file_.get())) > 0) {
    out.write(block.data(), static_cast<std::streamsize>(got));
  }
  if (std::ferror(file_.get())) throw std::runtime_error("cannot read a streamed output's temporary file");
  std::fseek(file_.get(), 0, SEEK_END);  // further items append
}

}  // namespace ppsim
