#include "tools/ppsim/output_file.hpp"

#include <cstdio>
#include <fstream>

#include "tools/ppsim/errors.hpp"

namespace ppsim {

void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag) {
  const std::string temporary = path + ".ppsim-tmp";
  const std::string error = std::string(flag) + ": cannot write " + path;
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) throw InputError(error);  // nothing created, so nothing to remove
    file << text;
    file.flush();
    if (!file) {
      file.close();
      std::remove(temporary.c_str());
      throw InputError(error);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw InputError(error);
  }
}

}  // namespace ppsim
