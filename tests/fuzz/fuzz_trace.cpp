// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a recorded run as ppsim trace reads one file (study/trace/trace_import.hpp): a
// Chrome trace (ppsim's own or torch.profiler's), or a ppsim calibration, streamed from memory; what
// reads is replayed, its idle time attributed and its costs calibrated, and the calibration written
// and read back.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "study/common/errors.hpp"
#include "study/trace/calibration.hpp"
#include "study/trace/trace_import.hpp"
#include "study/trace/trace_replay.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ppsim::TraceReading reading = ppsim::read_trace_text(text, "trace.json");
    if (reading.run) {
      (void)ppsim::replay_trace(*reading.run);
      (void)ppsim::replay_trace(*reading.run, {false, false}, false);
      const ppsim::Calibration calibration = ppsim::calibrate_trace(*reading.run);
      (void)ppsim::calibration_from_json(ppsim::calibration_json(calibration), "calibration.json");
    }
  } catch (const ppsim::InputError&) {
  }
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (ppsim::is_calibration_json(json)) {
    try {
      (void)ppsim::calibration_from_json(json, "calibration.json");
    } catch (const ppsim::InputError&) {
    }
  }
  return 0;
}
