// SPDX-License-Identifier: Apache-2.0
#pragma once
// What Chimera and BitPipe share: rank r paired with rank p-1-r, the replica of its stages, and two
// pipelines in opposite directions over them, their micro-batches in units of p.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/action_stream.hpp"

namespace ppsim {

// Why the parameters are outside such a schedule: v other than `v`, p odd or m not a multiple of p,
// each reason ending with what the reference says of it (`v_why`, `p_why`, `m_why`).
std::optional<std::string> check_paired_ranks(const ScheduleParams& params, int v, std::string_view v_why,
                                              std::string_view p_why, std::string_view m_why);

// The streams of two pipelines over `stage_device`, each carrying m/2 micro-batches.
ScheduleStreams two_pipelines(const ScheduleParams& params, std::vector<int> stage_device, DeviceStream device);

}  // namespace ppsim
