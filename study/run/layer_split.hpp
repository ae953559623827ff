// SPDX-License-Identifier: Apache-2.0
#pragma once
// --layers-per-stage auto: the layer split chosen by the schedule. It starts from the split whose
// stages' compute is most even (embedding on the first stage, head and loss on the last counted),
// then moves one layer at a time between neighbouring stages while the engine says the step gets
// shorter and every device still fits its memory. The result is a plain split, so the report's
// scenario reruns it exactly; layer_split_layouts writes it in each framework's own form.

#include <functional>
#include <string>
#include <vector>

#include "models/transformer/architecture.hpp"

namespace ppsim {

// What one evaluated split scores: whether every device fits, its step time, and, to leave a
// plateau where moving one layer leaves the slowest device as slow, how uneven it is (the sum of the
// stages' squared compute: lower is more even).
struct SplitScore {
  double step_time = 0;
  bool fits = true;
  double spread = 0;
};
using SplitJudge = std::function<SplitScore(const std::vector<int>& layers_per_stage)>;

struct SplitSearch {
  std::vector<int> layers_per_stage;
  SplitScore score;
  int evaluated = 0;  // splits the judge ran
};

// The split of `layers` over `stages` (at least one each) whose heaviest stage is lightest, a layer
// costing `per_layer` and the first and last stages carrying `first_extra` and `last_extra`; ties go
// to the earlier stages.
std::vector<int> min_max_split(int layers, int stages, double per_layer, double first_extra, double last_extra);

// Whether `a` beats `b`: fitting first, then a shorter step, then, as long, a more even split.
bool is_better_split(const SplitScore& a, const SplitScore& b);

// From `start`, the best split a one-layer-move search reaches. Each round judges every move of
// one layer between adjacent stages (each keeping at least one) and takes the best that beats the
// current split; when none does, it tries every move between any two stages; it stops when none of
// those beats it either. Deterministic: of equal moves the first found wins. `max_judged` > 0 stops
// the search once it has judged that many splits (the planner's budget per layout), keeping the best
// move of the round it stopped in.
SplitSearch search_layer_split(std::vector<int> start, const SplitJudge& judge, int max_judged = 0);

// Megatron-LM's --pipeline-model-parallel-layout (PipelineParallelLayerLayout: stages separated
// by '|', E the embedding, t a transformer layer, m an MTP layer, L the loss and head), for a split
// of stages in model order.
std::string megatron_layout(const std::vector<int>& layers_per_stage, int mtp_layers);

// torchtitan's parallelism.module_fqns_per_model_part for the same split: each stage's modules by
// their names in torchtitan's Llama (tok_embeddings, layers.N, norm, output), in model order.
std::vector<std::vector<std::string>> torchtitan_module_lists(const std::vector<int>& layers_per_stage);

}  // namespace ppsim
