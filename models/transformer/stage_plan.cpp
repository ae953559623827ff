// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/stage_plan.hpp"

#include <numeric>

namespace ppsim {

StagePlan plan_stages(const Architecture& arch, int stages, const std::vector<int>& layers_per_stage) {
  StagePlan plan;
  std::vector<int> counts = layers_per_stage;
  if (counts.empty()) {
    // The remainder goes to the first stages, not the last: the last stage already carries the LM
    // head, usually the most expensive extra.
    for (int s = 0; s < stages; ++s) counts.push_back(arch.layers / stages + (s < arch.layers % stages ? 1 : 0));
  } else {
    if (static_cast<int>(counts.size()) != stages) {
      plan.error = "has " + std::to_string(counts.size()) + (counts.size() == 1 ? " entry" : " entries") +
                   "; give one per stage (" + std::to_string(stages) + " = p * v)";
      // One number is how torchtitan's pipeline_parallel_layers_per_stage reads: layers in every
      // stage, the embedding and the output counted as one layer each, the stage count following.
      // Here the stage count is p * v and the list says each stage's transformer layers.
      if (counts.size() == 1 && stages > 1) {
        const int n = counts.front();
        plan.error += ", e.g. " + std::to_string(arch.layers / stages) + " each" +
                      (arch.layers % stages == 0 ? "" : " with the remainder on the first stages") +
                      "; not torchtitan's layers per stage (" + std::to_string(n) +
                      " there means ceil((layers + 2) / " + std::to_string(n) +
                      ") stages, embedding and output counted as layers): choose the stages with -v";
      }
      return plan;
    }
    for (std::size_t s = 0; s < counts.size(); ++s) {
      if (counts[s] < 0) {
        plan.error = "stage " + std::to_string(s) + " has a negative layer count";
        return plan;
      }
    }
    const int total = std::accumulate(counts.begin(), counts.end(), 0);
    if (total != arch.layers) {
      plan.error = "sums to " + std::to_string(total) + " layers but " + arch.name + " has " +
                   std::to_string(arch.layers);
      return plan;
    }
  }
  int next = 0;
  for (int s = 0; s < stages; ++s) {
    plan.stages.push_back(
        {.first_layer = next, .layers = counts[static_cast<std::size_t>(s)], .embedding = s == 0, .lm_head = s == stages - 1});
    next += counts[static_cast<std::size_t>(s)];
  }
  return plan;
}

}  // namespace ppsim
