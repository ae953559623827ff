// SPDX-License-Identifier: Apache-2.0
#include "tools/cli_docs/program_docs.hpp"

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"
#include "schedules/registry.hpp"
#include "study/common/version.hpp"
#include "study/input/config.hpp"
#include "study/input/preset_family.hpp"
#include "study/sweep/sweep_study.hpp"

namespace ppsim::cli_docs {

CommandDocs ppsim_docs(std::string_view data_dir) {
  CommandDocs docs;
  const std::string dir(data_dir);
  docs.program = "ppsim";
  docs.summary = "simulate pipeline-parallel training schedules";
  docs.version = std::string("ppsim ") + ppsim::version();
  std::vector<std::string> schedules;
  std::vector<std::string> schedule_lines;
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    schedules.emplace_back(info.name);
    schedule_lines.push_back(std::string(info.name) + ": " + std::string(info.summary) + " (" +
                             std::string(info.constraints) + ")");
  }
  std::vector<std::string> models;
  for (const ppsim::Architecture& model : ppsim::architecture_presets()) models.push_back(lower_case(model.name));
  std::vector<std::string> hardware;
  // As `ppsim models` lists them; names are matched in any case.
  for (const ppsim::HardwareProfile& profile : ppsim::hardware_presets()) hardware.push_back(lower_case(profile.name));
  // The words each enumerated setting accepts (study/input/config.cpp); tests/cli_docs_test.cpp runs
  // every one of them through ppsim, so a word that stops being accepted fails there.
  docs.choices = {{"--schedule", schedules},
                  {"--model", models},
                  {"--hardware", hardware},
                  {"--format", {"table", "json", "csv"}},
                  {"--comm", {"overlap", "blocking", "paired"}},
                  {"--costs-per", {"device", "chunk"}},
                  {"--comm-actions", {"honor", "wait-at-recv", "ignore"}},
                  {"--recompute", {"none", "selective", "full"}},
                  {"--precision", {"bf16", "fp16", "fp8"}}};
  docs.sections.emplace_back("Schedules", schedule_lines);
  // The config file's keys are the settings' (the long option names and Megatron-LM's and
  // torchtitan's names work too); a study file's are its own.
  std::vector<std::string> config_lines;
  for (const ppsim::SettingInfo& setting : ppsim::scenario_settings()) {
    config_lines.push_back("\"" + std::string(setting.key) + "\"" +
                           (setting.value_name.empty() ? ": true or false" : ": " + std::string(setting.value_name)) +
                           " - " + std::string(setting.help) + ".");
  }
  config_lines.push_back("A key may also be the long option name (\"tensor-parallel\"), Megatron-LM's argument "
                         "(\"tensor-model-parallel-size\") or torchtitan's, in \"parallelism\", \"training\" and "
                         "\"activation_checkpoint\" objects as its TOML sections.");
  docs.sections.emplace_back("Config files", config_lines);
  std::vector<std::string> study_lines;
  for (const ppsim::StudyKeyInfo& key : ppsim::study_keys()) {
    study_lines.push_back("\"" + std::string(key.key) + "\" - " + std::string(key.help) + ".");
  }
  docs.sections.emplace_back("Study files (ppsim sweep)", study_lines);
  docs.sections.emplace_back(
      "Files", std::vector<std::string>{
                   "ppsim-report.html: what a bare `ppsim` (no command) writes, the pictures of its default study "
                   "(GPipe and 1F1B, p=4, m=8) in the current directory.",
                   dir + "/examples: run configs (ppsim run -c FILE).",
                   dir + "/models and " + dir + "/hardware: the model and hardware presets as JSON, to copy and edit.",
                   dir + "/studies: sweep studies (ppsim sweep FILE).",
                   dir + "/validation: published training runs that ppsim's predictions are checked against.",
                   dir + " is where the Debian package puts them; `cmake --install` puts them in share/ppsim under "
                         "its prefix (" PPSIM_INSTALL_DATA_DIR ")."});
  docs.sections.emplace_back(
      "Examples",
      std::vector<std::string>{"ppsim compare -s gpipe,1f1b,zb-h1 -p 8 -m 32",
                               "ppsim synth -p 8 -m 32 -v 2 --activation-bytes 1GiB --memory-limit 6GiB -o found.csv",
                               "ppsim run -s interleaved-1f1b --model llama3.1-70b --hardware h100 -t 8 -p 8 "
                               "--global-batch 512 -d 4",
                               "ppsim sweep " + dir + "/studies/m_vs_p_bubble.json -o points.csv",
                               "ppsim trace rank-*.json --calibrate measured.json --svg idle.svg",
                               "ppsim compare --calibrated-from measured.json -s 1f1b,zbv -m 32"});
  docs.see_also = {"ppsim-calibrate(1)"};
  return docs;
}

CommandDocs calibrate_docs() {
  CommandDocs docs;
  docs.program = "ppsim-calibrate";
  docs.summary = "measure a GPU's kernels as a ppsim hardware profile";
  docs.version = std::string("ppsim-calibrate ") + ppsim::version();
  std::vector<std::string> models;
  for (const ppsim::Architecture& model : ppsim::architecture_presets()) models.push_back(model.name);
  docs.choices = {{"--backend", {"cpu", "cuda"}}, {"--model", models}, {"--precision", {"bf16", "fp16", "tf32", "fp32"}}};
  docs.sections.emplace_back("Exit status", std::vector<std::string>{"0 success, 2 bad input, 1 anything else."});
  docs.see_also = {"ppsim(1)"};
  return docs;
}

}  // namespace ppsim::cli_docs
