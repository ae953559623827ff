#pragma once
// Output files are written beside the target and renamed into place, so a failed run never leaves a
// partial file where a script or a browser would read it.

#include <span>
#include <string>
#include <string_view>

namespace ppsim {

// Writes `text` to `path` atomically; throws InputError("<flag>: cannot write <path>") on failure.
void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag);

struct OutputFile {
  std::string path;
  std::string text;
  std::string flag;  // names the file in the error
};

// Writes every file beside its target first and renames them into place only once all were written,
// so one path that cannot be written leaves none of the files.
void write_files_atomically(std::span<const OutputFile> files);

}  // namespace ppsim
