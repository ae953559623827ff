// SPDX-License-Identifier: Apache-2.0
#pragma once
// The training-step part of a report (a transformer study): step time, throughput, MFU, the stage
// costs and memory per device against capacity, for the table and JSON reporters.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <span>

#include "models/transformer/training_step.hpp"
#include "sim/report/report.hpp"

namespace ppsim {

// `ppsim run`: the step figures, the per-stage costs and the memory table with its verdict.
void write_training_table(std::ostream& out, const TrainingFigures& training);

// `ppsim compare`: one row per figure, one column per schedule; reports without training show "-".
void write_training_side_by_side(std::ostream& out, std::span<const Report> reports);

// The same figures under their fixed names, for --format json.
nlohmann::ordered_json training_to_json(const TrainingFigures& training);

}  // namespace ppsim
