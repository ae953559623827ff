#pragma once
// Output files are all or none: every file is written to a unique temporary beside its target, and
// the temporaries are renamed into place only once all were written, so a failed run never leaves a
// partial file, nor some files of a run and not others, where a script or a browser would read it.
// A target that exists and is not a regular file (a FIFO, /dev/stdout, a terminal) is written in
// place, never replaced; a symlink is followed, so its target is replaced and the link stays.

#include <span>
#include <string>
#include <string_view>

namespace ppsim {

struct OutputFile {
  std::string path;
  std::string text;
  std::string flag;  // names the file in the error
};

// Writes every file, or none; throws InputError("<flag>: cannot write <path>: <reason>") on failure.
void write_files_atomically(std::span<const OutputFile> files);

// One file, the same way.
void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag);

}  // namespace ppsim
