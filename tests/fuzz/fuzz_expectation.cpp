// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: --expect's expressions ("bubble_ratio <= 0.1", "peak_memory_bytes < 80 GiB",
// "fits"). Anything is either an expectation or an InputError; an accepted one evaluates.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "study/common/errors.hpp"
#include "study/output/expectation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ppsim::Expectation expectation = ppsim::parse_expectation(text, "--expect");
    if (!std::isfinite(expectation.value)) std::abort();  // values are finite numbers, units resolved
    ppsim::PointFigures figures;
    figures.bubble_ratio = 0.25;
    (void)ppsim::holds(expectation, figures);
    if (ppsim::shown_value(expectation, figures).empty()) std::abort();
  } catch (const ppsim::InputError& error) {
    if (std::string_view(error.what()).substr(0, 10) != "--expect: ") std::abort();  // names its flag
  }
  return 0;
}
