// SPDX-License-Identifier: Apache-2.0
#pragma once
// The other names a config key goes by: the long option names (`"tensor-parallel": 2` is `t`), and
// the names Megatron-LM's arguments and torchtitan's job config give the same settings, so that a
// user can paste what their launcher says. A name whose meaning differs from ppsim's (Megatron's
// layers per virtual stage, torchtitan's layers per stage) is answered with how to write it here.

#include <optional>
#include <string>
#include <string_view>

namespace ppsim {

struct SettingAlias {
  std::string key;          // ppsim's key, or "" when the name has no direct equivalent
  std::string explanation;  // for "": how to say it in ppsim, the line an error prints
};

// ppsim's key for `name` (itself when it is one), or nullopt when it is no name ppsim knows.
// ppsim's own names are kebab-case only; Megatron-LM's also with underscores
// ("tensor_model_parallel_size", as its Python names them).
std::optional<SettingAlias> setting_alias(std::string_view name);

// The sections of a torchtitan job config ("parallelism", "training", "activation_checkpoint")
// that a ppsim config may hold as objects of torchtitan's own keys.
bool is_torchtitan_section(std::string_view name);

}  // namespace ppsim
