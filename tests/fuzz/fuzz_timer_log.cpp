// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: Megatron-LM timer logs and the zero-bubble profile (study/trace/timer_log.hpp),
// read from memory and calibrated; the first byte gives p (1-8) and m (1-32) as a user would.
#include <cstddef>
#include <cstdint>
#include <string>

#include "study/common/errors.hpp"
#include "study/trace/calibration.hpp"
#include "study/trace/timer_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ppsim::TimerHints hints;
  hints.p = 1 + (data[0] & 7);
  hints.m = 1 + (data[0] >> 3);
  hints.v = 1 + (data[0] & 1);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const ppsim::TimerLog log = ppsim::read_timer_log_text(text, "timers.log");
    (void)ppsim::calibrate_timers(log, hints);
  } catch (const ppsim::InputError&) {
  }
  return 0;
}
