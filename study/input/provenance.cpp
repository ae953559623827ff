// SPDX-License-Identifier: Apache-2.0
#include "study/input/provenance.hpp"

#include <cstdio>
#include <memory>

#include "models/json/architecture_json.hpp"
#include "models/json/hardware_profile_json.hpp"
#include "study/common/version.hpp"
#include "study/trace/calibration.hpp"

namespace ppsim {
namespace {

using Json = nlohmann::ordered_json;

std::string text_at(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

// "the hardware profile changed (h100-sxm5-80gb)" when the two fingerprints under `key` differ.
void compare_input(const Json& baseline, const Json& now, const char* key, const char* what,
                   std::vector<std::string>& changes) {
  const Json empty;
  const Json& before = baseline.is_object() && baseline.contains(key) ? baseline[key] : empty;
  const Json& after = now.is_object() && now.contains(key) ? now[key] : empty;
  if (before.is_null() && after.is_null()) return;
  const std::string old_print = text_at(before, "fingerprint");
  const std::string new_print = text_at(after, "fingerprint");
  if (!old_print.empty() && old_print == new_print) return;
  const std::string old_name = text_at(before, "name");
  const std::string new_name = text_at(after, "name");
  std::string line = std::string("the ") + what + " changed";
  if (old_name != new_name && !old_name.empty() && !new_name.empty()) {
    line += " (" + old_name + " -> " + new_name + ")";
  } else if (!new_name.empty() || !old_name.empty()) {
    line += " (" + (new_name.empty() ? old_name : new_name) + ")";
  }
  changes.push_back(line);
}

// The fingerprint of a resolved profile, remembered per thread for the last one asked: a plan or a
// Python loop asks for the same shared profile again and again, and its canonical JSON is tens of
// thousands of instructions. The weak_ptr keeps the control block, so a live match is the same object.
template <typename Profile, typename ToJson>
const std::string& remembered_fingerprint(const std::shared_ptr<const Profile>& profile, ToJson to_json) {
  thread_local std::weak_ptr<const Profile> last;
  thread_local std::string print;
  if (last.expired() || last.owner_before(profile) || profile.owner_before(last)) {
    print = fingerprint(to_json(*profile).dump());
    last = profile;
  }
  return print;
}

}  // namespace

std::string fingerprint(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(hash));
  return digits;
}

nlohmann::ordered_json provenance_of(const Scenario& scenario) {
  Json out;
  out["ppsim"] = version();
  out["revision"] = git_revision();
  if (scenario.resolved_model) {
    out["model"] = {{"name", scenario.resolved_model->name},
                    {"fingerprint", remembered_fingerprint(scenario.resolved_model, [](const Architecture& arch) {
                       return architecture_to_json(arch);
                     })}};
  }
  if (scenario.calibration) {
    // Costs measured from a real run: where, and a fingerprint of what was measured.
    out["costs"] = {{"measured_from", scenario.calibration->files},
                    {"format", scenario.calibration->format},
                    {"fingerprint", fingerprint(calibration_json(*scenario.calibration).dump())}};
  }
  if (scenario.resolved_hardware) {
    out["hardware"] = {{"name", scenario.resolved_hardware->name},
                       {"fingerprint", remembered_fingerprint(scenario.resolved_hardware, [](const HardwareProfile& hw) {
                          return hardware_profile_to_json(hw);
                        })}};
  }
  return out;
}

std::vector<std::string> provenance_changes(const nlohmann::ordered_json& baseline, const nlohmann::ordered_json& now) {
  std::vector<std::string> changes;
  if (!baseline.is_object()) {
    changes.push_back("the baseline does not say which ppsim wrote it (no \"provenance\": an older ppsim)");
    return changes;
  }
  const std::string old_version = text_at(baseline, "ppsim");
  const std::string new_version = text_at(now, "ppsim");
  const std::string old_revision = text_at(baseline, "revision");
  const std::string new_revision = text_at(now, "revision");
  if (old_version != new_version) {
    changes.push_back("ppsim changed " + old_version + " -> " + new_version + " (git " + old_revision + " -> " +
                      new_revision + ")");
  } else if (old_revision != new_revision) {
    changes.push_back("ppsim changed: git " + old_revision + " -> " + new_revision + " (both " + new_version + ")");
  }
  compare_input(baseline, now, "model", "model", changes);
  compare_input(baseline, now, "hardware", "hardware profile", changes);
  return changes;
}

}  // namespace ppsim
