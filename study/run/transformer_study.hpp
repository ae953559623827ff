// SPDX-License-Identifier: Apache-2.0
#pragma once
// The transformer side of a study (--model): finding the architecture and the hardware profile,
// checking the training layout against them, and deriving m from the global batch. Errors name the
// flag or JSON path, as everywhere in the CLI.

#include <memory>
#include <string>

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

// A preset by name (case-insensitive, e.g. "llama3.1-70b") or a configs/models-style JSON file.
Architecture resolve_architecture(const Scenario& scenario);

// A preset by name (case-insensitive: "h100-sxm5-80gb" or "H100-SXM5-80GB") or a JSON file.
HardwareProfile resolve_hardware(const Scenario& scenario);

// Checks the settings of a transformer study (or that none is given without --model) and returns
// the scenario with m and the global batch made consistent: m = global batch / (b * d) when the
// global batch is given, global batch = m * b * d otherwise. It keeps the architecture and hardware
// it found in the returned scenario.
Scenario resolve_transformer_scenario(Scenario scenario);

// The same checks with the architecture and hardware already found (ppsim plan checks thousands of
// layouts of one model): `scenario` must name a model, and its cost settings are not checked again.
Scenario resolve_transformer_scenario_with(const Scenario& scenario, std::shared_ptr<const Architecture> model,
                                           std::shared_ptr<const HardwareProfile> hardware);

// The architecture, layout (p and v from the scenario's params) and hardware of a scenario: the ones
// resolve_transformer_scenario kept, or read now when it has not run.
TransformerSetup transformer_setup(const Scenario& scenario);

}  // namespace ppsim
