// SPDX-License-Identifier: Apache-2.0
#include "study/run/layer_split.hpp"

#include <algorithm>
#include <numeric>

namespace ppsim {

namespace {

// The most even split of `layers` over `stages` that keeps every stage's load within `bound`: each
// stage takes the same level q of layers or what the bound allows it, q the lowest level that holds
// them all, and the remainder below q goes to the earliest stages that can take it. Empty when even
// one layer a stage exceeds the bound somewhere or the bound holds too few.
std::vector<int> even_within(int layers, int stages, double per_layer, double first_extra, double last_extra,
                             double bound) {
  std::vector<int> capacity;
  for (int s = 0; s < stages; ++s) {
    const double extra = (s == 0 ? first_extra : 0) + (s == stages - 1 ? last_extra : 0);
    const int cap = per_layer > 0 ? static_cast<int>((bound - extra) / per_layer + 1e-9) : layers;
    if (cap < 1) return {};
    capacity.push_back(std::min(cap, layers));
  }
  for (int level = 1; level <= layers; ++level) {
    int held = 0;
    for (const int cap : capacity) held += std::min(cap, level);
    if (held < layers) continue;
    std::vector<int> counts;
    int placed = 0;
    for (const int cap : capacity) {
      counts.push_back(std::min(cap, level - 1));
      placed += counts.back();
    }
    for (std::size_t s = 0; s < counts.size() && placed < layers; ++s) {
      if (capacity[s] >= level) {
        ++counts[s];
        ++placed;
      }
    }
    return counts;
  }
  return {};
}

}  // namespace

bool is_better_split(const SplitScore& a, const SplitScore& b) {
  if (a.fits != b.fits) return a.fits;
  if (a.step_time < b.step_time * (1 - 1e-12)) return true;
  if (a.step_time > b.step_time * (1 + 1e-12)) return false;
  return a.spread < b.spread * (1 - 1e-12);
}

std::vector<int> min_max_split(int layers, int stages, double per_layer, double first_extra, double last_extra) {
  if (stages <= 0 || layers < stages) return {};
  // The bottleneck is one of the loads a stage can carry: k layers plus its extra, for some k.
  std::vector<double> candidates;
  for (int k = 1; k <= layers - stages + 1; ++k) {
    for (const double extra : {0.0, first_extra, last_extra, first_extra + last_extra}) {
      candidates.push_back(k * per_layer + extra);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  for (const double bound : candidates) {
    std::vector<int> counts = even_within(layers, stages, per_layer, first_extra, last_extra, bound);
    if (!counts.empty()) return counts;
  }
  return {};
}

SplitSearch search_layer_split(std::vector<int> start, const SplitJudge& judge, int max_judged) {
  SplitSearch search;
  search.layers_per_stage = std::move(start);
  search.score = judge(search.layers_per_stage);
  search.evaluated = 1;
  const std::size_t stages = search.layers_per_stage.size();
  auto spent = [&] { return max_judged > 0 && search.evaluated >= max_judged; };
  // The best move of one layer from stage `from` to stage `to` over the pairs `neighbours_only` allows.
  auto best_move = [&](bool neighbours_only) {
    std::vector<int> best_split;
    SplitScore best = search.score;
    for (std::size_t from = 0; from < stages && !spent(); ++from) {
      if (search.layers_per_stage[from] <= 1) continue;
      for (std::size_t to = 0; to < stages && !spent(); ++to) {
        const std::size_t apart = from > to ? from - to : to - from;
        if (apart == 0 || (neighbours_only && apart != 1) || (!neighbours_only && apart == 1)) continue;
        std::vector<int> split = search.layers_per_stage;
        --split[from];
        ++split[to];
        const SplitScore score = judge(split);
        ++search.evaluated;
        if (is_better_split(score, best)) {
          best = score;
          best_split = std::move(split);
        }
      }
    }
    if (best_split.empty()) return false;
    search.layers_per_stage = std::move(best_split);
    search.score = best;
    return true;
  };
  while (!spent() && (best_move(true) || (!spent() && best_move(false)))) {
  }
  return search;
}

std::string megatron_layout(const std::vector<int>& layers_per_stage, int mtp_layers) {
  std::string out;
  for (std::size_t s = 0; s < layers_per_stage.size(); ++s) {
    if (s > 0) out += '|';
    if (s == 0) out += 'E';
    out.append(static_cast<std::size_t>(layers_per_stage[s]), 't');
    if (s + 1 == layers_per_stage.size()) {
      out.append(static_cast<std::size_t>(mtp_layers), 'm');
      out += 'L';
    }
  }
  return out;
}

std::vector<std::vector<std::string>> torchtitan_module_lists(const std::vector<int>& layers_per_stage) {
  std::vector<std::vector<std::string>> stages;
  int layer = 0;
  for (std::size_t s = 0; s < layers_per_stage.size(); ++s) {
    std::vector<std::string> modules;
    if (s == 0) modules.emplace_back("tok_embeddings");
    for (int k = 0; k < layers_per_stage[s]; ++k) modules.push_back("layers." + std::to_string(layer++));
    if (s + 1 == layers_per_stage.size()) {
      modules.emplace_back("norm");
      modules.emplace_back("output");
    }
    stages.push_back(std::move(modules));
  }
  return stages;
}

}  // namespace ppsim
