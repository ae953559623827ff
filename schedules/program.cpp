// SPDX-License-Identifier: Apache-2.0
#include "schedules/program.hpp"

namespace ppsim {

std::size_t Program::num_ops() const {
  std::size_t total = 0;
  for (const auto& list : actions) total += list.size();
  return total;
}

std::vector<int> loop_stage_mapping(int p, int v) {
  std::vector<int> mapping(static_cast<std::size_t>(p) * static_cast<std::size_t>(v));
  for (std::size_t s = 0; s < mapping.size(); ++s) mapping[s] = static_cast<int>(s % static_cast<std::size_t>(p));
  return mapping;
}

std::vector<int> v_stage_mapping(int p) {
  std::vector<int> mapping(2 * static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    mapping[static_cast<std::size_t>(d)] = d;
    mapping[static_cast<std::size_t>(2 * p - 1 - d)] = d;
  }
  return mapping;
}

std::vector<int> bidirectional_stage_mapping(int p) {
  std::vector<int> mapping(2 * static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j) {
    mapping[static_cast<std::size_t>(j)] = j;
    mapping[static_cast<std::size_t>(p + j)] = p - 1 - j;
  }
  return mapping;
}

}  // namespace ppsim
