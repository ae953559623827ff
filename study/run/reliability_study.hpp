// SPDX-License-Identifier: Apache-2.0
#pragma once
// --mtbf and the settings beside it: the failures, checkpoints and goodput of a whole training run
// of the simulated step (models/reliability/checkpointing.hpp), its checkpoint sized from the model.

#include "models/reliability/checkpointing.hpp"
#include "models/transformer/training_step.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "sim/sample_statistics.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

// Bytes one GPU writes per checkpoint: its share of the bf16 parameters and the optimizer state,
// each byte once across the data-parallel replicas (torch.distributed.checkpoint and Megatron's
// distributed checkpointing deduplicate replicated tensors and spread them over the ranks), the
// most of any pipeline device.
double checkpoint_bytes_per_gpu(const TransformerCostModel& model);

// The closed forms for the run, and with `samples` the Monte-Carlo over training runs (the step time
// is then the samples' mean step time).
ReliabilityReport reliability_report(const Scenario& scenario, const TransformerCostModel& model,
                                     const TrainingFigures& training, const SampleFigures* samples);

}  // namespace ppsim
