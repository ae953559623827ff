// SPDX-License-Identifier: Apache-2.0
#pragma once
// The sweep's page (ppsim sweep STUDY.json --html FILE): the counts, the bubble ratio against m for
// every schedule and p, throughput against peak memory with the Pareto front, and the summary's
// tables. One self-contained file (inline CSS and SVG; no scripts, fonts or links) that is also
// well-formed XML. Its bytes depend only on the study and the points, so they are the same for any
// number of threads.

#include <cstddef>
#include <string>
#include <vector>

#include "study/sweep/sweep_runner.hpp"

namespace ppsim {

// Above this many points a series of the bubble chart is drawn as a line without markers.
inline constexpr std::size_t kMaxSeriesMarkers = 64;

// `points` in point order, as run_sweep returns them; a shard's page draws that shard's points.
std::string render_sweep_html(const Study& study, const std::vector<PointResult>& points, std::size_t shard_index = 0,
                              std::size_t shard_count = 1);

}  // namespace ppsim
