// SPDX-License-Identifier: Apache-2.0
#pragma once
// The HTML report's section on Monte-Carlo steps (--samples): each schedule's percentiles in one
// table and a histogram of its step time (its makespan without a model) in a small inline SVG,
// all at a fixed height so that the page's layout is known before it is drawn.

#include <span>
#include <string>

#include "sim/report/report.hpp"

namespace ppsim {

// 0 when no report has samples.
double samples_section_height(std::span<const Report> reports, double row_height);
std::string render_samples_section(std::span<const Report> reports, double row_height);

}  // namespace ppsim
