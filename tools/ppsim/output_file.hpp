#pragma once
// Output files are written beside the target and renamed into place, so a failed run never leaves a
// partial file where a script or a browser would read it.

#include <string>
#include <string_view>

namespace ppsim {

// Writes `text` to `path` atomically; throws InputError("<flag>: cannot write <path>") on failure.
void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag);

}  // namespace ppsim
