#include "tools/ppsim/scenario.hpp"

namespace ppsim {

Scenario default_study() {
  Scenario scenario;
  scenario.schedules = {"gpipe", "1f1b"};
  scenario.timeline = true;
  return scenario;
}

std::string Scenario::source_of(std::string_view key) const {
  if (auto it = sources.find(key); it != sources.end()) return it->second;
  return key.size() == 1 ? "-" + std::string(key) : "--" + std::string(key);
}

const char* comm_mode_name(CommMode mode) { return mode == CommMode::kOverlap ? "overlap" : "blocking"; }

}  // namespace ppsim
