// SPDX-License-Identifier: Apache-2.0
#include "schedules/action_stream.hpp"

#include <algorithm>

namespace ppsim {

Program collect_program(const ScheduleStreams& streams) {
  Program program;
  program.num_devices = streams.params.p;
  program.num_microbatches = streams.num_microbatches();
  program.num_pipelines = streams.num_pipelines;
  program.units_per_microbatch = streams.units_per_microbatch;
  program.layerwise_pairs = streams.layerwise_pairs;
  program.stage_device = streams.stage_device;
  program.actions.resize(static_cast<std::size_t>(streams.params.p));
  for (int d = 0; d < streams.params.p; ++d) {
    std::vector<Action>& list = program.actions[static_cast<std::size_t>(d)];
    ActionStream stream = streams.device(streams.params, d);
    // Fill straight into the list, a chunk at a time, growing it geometrically.
    std::size_t chunk = 64;
    while (true) {
      const std::size_t size = list.size();
      list.resize(size + chunk);
      const std::size_t added = stream.fill(list.data() + size, chunk);
      list.resize(size + added);
      if (added < chunk) break;
      chunk = std::min<std::size_t>(2 * chunk, 1 << 20);
    }
    list.shrink_to_fit();
  }
  return program;
}

}  // namespace ppsim
