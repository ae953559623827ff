// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the reporters write of Monte-Carlo steps (--samples) and of a run's failures and
// checkpoints (--mtbf): tables for people, JSON under "samples" and "reliability".

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <span>

#include "sim/report/report.hpp"

namespace ppsim {

void write_samples_table(std::ostream& out, const SampleFigures& samples);
void write_reliability_table(std::ostream& out, const ReliabilityReport& reliability);
// Schedules side by side: mean and p99 of each, and whether their order by mean holds at p99.
void write_samples_side_by_side(std::ostream& out, std::span<const Report> reports);

// "gpipe < 1f1b < zbv" by mean; "" when it holds at p99, else what p99's order is.
std::string sample_order_note(std::span<const Report> reports);

nlohmann::ordered_json samples_to_json(const SampleFigures& samples);
nlohmann::ordered_json reliability_to_json(const ReliabilityReport& reliability);

}  // namespace ppsim
