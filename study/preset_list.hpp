#pragma once
// `ppsim models`: the architecture and hardware presets a transformer study can name.

#include <iosfwd>

namespace ppsim {

void write_preset_list(std::ostream& out);

}  // namespace ppsim
