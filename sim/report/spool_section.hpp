// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text too large to hold in memory, appended in blocks to an anonymous temporary file and copied
// out at the end: one section of a streamed output (a trace's ops, a timeline's spans).

#include <cstdio>
#include <iosfwd>
#include <memory>
#include <string>

namespace ppsim {

class SpoolSection {
 public:
  // `separator` goes before every item, or (`before_first` false) between items only.
  explicit SpoolSection(std::string separator = ",\n", bool before_first = true);
  void item(const std::string& text);
  bool empty() const { return items_ == 0; }
  // Writes everything so far to `out`.
  void copy_to(std::ostream& out);

 private:
  void flush();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  std::string separator_;
  bool before_first_;
  std::size_t items_ = 0;
  std::string buffer_;
};

}  // namespace ppsim
