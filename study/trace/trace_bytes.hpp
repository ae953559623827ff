// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trace file's bytes, read in blocks (gunzipped as they come when the file is gzip, as
// torch.profiler's `.json.gz` and HolisticTraceAnalysis's test traces are), with the position every
// error names. Nothing holds more than one block: traces reach gigabytes.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace ppsim {

class TraceBytes {
 public:
  // InputError naming `path` when it cannot be opened.
  explicit TraceBytes(const std::string& path);
  // Text in memory (tests and fuzzing), `name` standing for the path in errors.
  TraceBytes(std::string text, const std::string& name);
  ~TraceBytes();
  TraceBytes(const TraceBytes&) = delete;
  TraceBytes& operator=(const TraceBytes&) = delete;

  const std::string& path() const { return path_; }
  // Bytes of the (decompressed) text consumed so far: where an error is.
  std::uint64_t position() const { return position_; }
  bool at_end() {
    if (next_ < filled_) return false;
    return !refill();
  }
  char peek() { return at_end() ? '\0' : buffer_[next_]; }
  void advance() {
    if (!at_end()) {
      ++next_;
      ++position_;
      ++since_mark_;
    }
  }
  // The reader marks each value it has taken; a stretch of more than `limit` bytes without a mark (one
  // JSON string or number that long) ends the input early, so that no token grows without bound.
  void mark() { since_mark_ = 0; }
  void set_token_limit(std::uint64_t limit) { token_limit_ = limit; }
  bool token_too_long() const { return too_long_; }
  // Why the input ended before the file did: a damaged gzip stream; empty otherwise.
  const std::string& damage() const { return damage_; }
  // Up to `limit` further bytes (fewer at the end of the file).
  std::string take(std::size_t limit);
  // The next line without its end ("\n" or "\r\n"); false at the end of the file.
  bool line(std::string& out, std::size_t limit);

 private:
  bool refill();
  std::string path_;
  void* gz_ = nullptr;  // gzFile
  std::string text_;    // the text, when read from memory
  bool in_memory_ = false;
  std::vector<char> buffer_;
  std::size_t next_ = 0;
  std::size_t filled_ = 0;
  std::uint64_t position_ = 0;
  std::uint64_t since_mark_ = 0;
  std::uint64_t token_limit_ = ~std::uint64_t{0};
  bool too_long_ = false;
  bool done_ = false;
  std::string damage_;
};

// The input iterator nlohmann's SAX parser reads through; copies share the source.
class TraceByteIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;
  TraceByteIterator() = default;
  explicit TraceByteIterator(TraceBytes* source) : source_(source) {}
  char operator*() const { return source_->peek(); }
  TraceByteIterator& operator++() {
    source_->advance();
    return *this;
  }
  TraceByteIterator operator++(int) {
    TraceByteIterator before = *this;
    source_->advance();
    return before;
  }
  friend bool operator==(const TraceByteIterator& a, const TraceByteIterator& b) { return a.done() == b.done(); }

 private:
  bool done() const { return source_ == nullptr || source_->at_end(); }
  TraceBytes* source_ = nullptr;
};

}  // namespace ppsim
