// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: one cell of the `0F1` notation (single actions and overlapped pairs); what
// parses must print back and parse to the same action.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "schedules/action.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ppsim::CellParse cell = ppsim::parse_cell(text);
  if (cell.ok && !cell.pair) {
    const ppsim::ActionParse again = ppsim::parse_action(ppsim::to_string(cell.first));
    if (!again.ok || again.action.stage != cell.first.stage || again.action.op != cell.first.op ||
        again.action.microbatch != cell.first.microbatch) {
      std::abort();  // print and parse must round-trip (DESIGN.md)
    }
  }
  return 0;
}
