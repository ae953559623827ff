// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which part of the model each pipeline stage holds: a run of transformer layers, plus the token
// embedding on the first stage and the final norm, LM head and loss on the last (as Megatron-LM and
// torch.distributed.pipelining place them).

#include <string>
#include <vector>

#include "models/transformer/architecture.hpp"

namespace ppsim {

struct StageContents {
  int first_layer = 0;
  int layers = 0;
  bool embedding = false;  // token (and position) embedding
  bool lm_head = false;    // final norm, LM head and cross-entropy loss
};

struct StagePlan {
  std::vector<StageContents> stages;
  std::string error;  // set when layers_per_stage does not fit the model; stages is then empty
};

// `stages` stages of `arch`: the split in `layers_per_stage` (one entry per stage, each >= 0, summing
// to arch.layers) or, when empty, layers / stages each with the remainder on the first stages.
StagePlan plan_stages(const Architecture& arch, int stages, const std::vector<int>& layers_per_stage);

}  // namespace ppsim
