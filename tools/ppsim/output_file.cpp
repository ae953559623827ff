#include "tools/ppsim/output_file.hpp"

#include <cstdio>
#include <fstream>

#include "tools/ppsim/errors.hpp"

namespace ppsim {

void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag) {
  const OutputFile file{path, text, std::string(flag)};
  write_files_atomically(std::span<const OutputFile>(&file, 1));
}

void write_files_atomically(std::span<const OutputFile> files) {
  auto temporary = [](const OutputFile& file) { return file.path + ".ppsim-tmp"; };
  auto error = [](const OutputFile& file) { return file.flag + ": cannot write " + file.path; };
  auto remove_temporaries = [&](std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) std::remove(temporary(files[i]).c_str());
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::ofstream stream(temporary(files[i]), std::ios::binary | std::ios::trunc);
    if (!stream) {
      remove_temporaries(i);  // this one was not created
      throw InputError(error(files[i]));
    }
    stream << files[i].text;
    stream.flush();
    if (!stream) {
      stream.close();
      remove_temporaries(i + 1);
      throw InputError(error(files[i]));
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (std::rename(temporary(files[i]).c_str(), files[i].path.c_str()) != 0) {
      for (std::size_t k = i; k < files.size(); ++k) std::remove(temporary(files[k]).c_str());
      throw InputError(error(files[i]));
    }
  }
}

}  // namespace ppsim
