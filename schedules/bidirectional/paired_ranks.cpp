// SPDX-License-Identifier: Apache-2.0
#include "schedules/bidirectional/paired_ranks.hpp"

#include <utility>

namespace ppsim {

std::optional<std::string> check_paired_ranks(const ScheduleParams& params, int v, std::string_view v_why,
                                              std::string_view p_why, std::string_view m_why) {
  if (params.v != v) {
    return "needs v = " + std::to_string(v) + ": " + std::string(v_why) + " (got v = " + std::to_string(params.v) + ")";
  }
  if (params.p % 2 != 0) return "needs p even: " + std::string(p_why) + " (got p = " + std::to_string(params.p) + ")";
  if (params.m % params.p != 0) {
    return "needs m a multiple of p: " + std::string(m_why) + " (got m = " + std::to_string(params.m) +
           " for p = " + std::to_string(params.p) + ")";
  }
  return std::nullopt;
}

ScheduleStreams two_pipelines(const ScheduleParams& params, std::vector<int> stage_device, DeviceStream device) {
  ScheduleStreams streams{params, std::move(stage_device), device};
  streams.num_pipelines = 2;
  return streams;
}

}  // namespace ppsim
