// SPDX-License-Identifier: Apache-2.0
#include "study/trace/trace_bytes.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "study/common/errors.hpp"

namespace ppsim {
namespace {
constexpr std::size_t kBlock = 1 << 16;
}

TraceBytes::TraceBytes(const std::string& path) : path_(path), buffer_(kBlock) {
  // gzopen reads a file that is not gzip as it is ("transparent" mode), so one path serves both.
  errno = 0;
  gz_ = gzopen(path.c_str(), "rb");
  if (gz_ == nullptr) {
    throw InputError(excerpt(path) + ": cannot open: " + (errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(static_cast<gzFile>(gz_), kBlock);
}

TraceBytes::TraceBytes(std::string text, const std::string& name)
    : path_(name), text_(std::move(text)), in_memory_(true) {}

TraceBytes::~TraceBytes() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
}

bool TraceBytes::refill() {
  if (done_) return false;
  if (since_mark_ > token_limit_) {
    too_long_ = true;
    done_ = true;
    return false;
  }
  if (in_memory_) {
    const std::size_t from = static_cast<std::size_t>(position_);
    if (from >= text_.size()) {
      done_ = true;
      return false;
    }
    // Served in blocks, as from a file, so that the token limit is checked as often.
    const std::size_t size = std::min(kBlock, text_.size() - from);
    buffer_.assign(text_.begin() + static_cast<std::ptrdiff_t>(from),
                   text_.begin() + static_cast<std::ptrdiff_t>(from + size));
    next_ = 0;
    filled_ = size;
    return true;
  }
  const int got = gzread(static_cast<gzFile>(gz_), buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (got <= 0) {
    done_ = true;
    int code = Z_OK;
    const char* message = gzerror(static_cast<gzFile>(gz_), &code);
    if (got < 0 || (code != Z_OK && code != Z_STREAM_END)) {
      damage_ = code == Z_BUF_ERROR ? "the gzip stream ends early (a truncated file)"
                                    : std::string("the gzip stream is damaged: ") + (message ? message : "?");
      if (code == Z_ERRNO) damage_ = std::string("cannot read: ") + std::strerror(errno);
    }
    return false;
  }
  next_ = 0;
  filled_ = static_cast<std::size_t>(got);
  return true;
}

std::string TraceBytes::take(std::size_t limit) {
  std::string out;
  while (out.size() < limit && !at_end()) {
    out.push_back(peek());
    advance();
  }
  return out;
}

bool TraceBytes::line(std::string& out, std::size_t limit) {
  out.clear();
  if (at_end()) return false;
  while (!at_end()) {
    const char c = peek();
    advance();
    if (c == '\n') break;
    if (out.size() < limit) out.push_back(c);
  }
  if (!out.empty() && out.back() == '\r') out.pop_back();
  mark();
  return true;
}

}  // namespace ppsim
