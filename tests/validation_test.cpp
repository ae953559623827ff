// SPDX-License-Identifier: Apache-2.0
// The validation against published, measured training runs (docs/validation.md): every case in
// configs/validation/cases.json is run as `ppsim run -c CASE --format json`, its predicted step time
// must be the one the document prints, and the overall mean absolute error may not rise above the
// figure the document states. The cases are never fitted: the efficiency tables come from the
// presets (datasheets and stated assumptions), so this measures the model, and a change that makes
// the predictions worse fails here.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.hpp"
#include "study/errors.hpp"

namespace {

std::string source_path(const std::string& relative) { return std::string(PPSIM_SOURCE_DIR) + "/" + relative; }

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// The number after `label` in the document, e.g. "overall mean absolute error: 13.0%".
double stated_figure(const std::string& document, const std::string& label) {
  const std::size_t at = document.find(label);
  REQUIRE(at != std::string::npos);
  return std::stod(document.substr(at + label.size()));
}

}  // namespace

TEST_CASE("every validation case predicts the step time docs/validation.md prints, within its stated error",
          "[validation]") {
  const std::string document = ppsim::test::read_whole(source_path("docs/validation.md"));
  REQUIRE_FALSE(document.empty());
  const nlohmann::json cases =
      nlohmann::json::parse(ppsim::test::read_whole(source_path("configs/validation/cases.json")))["cases"];
  REQUIRE(cases.size() >= 25);
  double sum = 0;
  double worst = 0;
  for (const nlohmann::json& c : cases) {
    const std::string name = c["name"];
    INFO(name);
    const ppsim::test::CliRun run = ppsim::test::cli(
        {"run", "-c", source_path("configs/validation/" + c["config"].get<std::string>()), "--format", "json"});
    REQUIRE(run.status == ppsim::kExitOk);
    const double predicted = nlohmann::json::parse(run.out)["training"]["step_time"].get<double>();
    const double measured = c["measured_step_time"].get<double>();
    const double error = (predicted - measured) / measured;
    // The document's row for this case shows this prediction and this error.
    const std::size_t row = document.find("| `" + name + "` |");
    REQUIRE(row != std::string::npos);
    const std::string line = document.substr(row, document.find('\n', row) - row);
    CHECK_THAT(line, Catch::Matchers::Contains("| " + format("%.3f", predicted) + " |"));
    CHECK_THAT(line, Catch::Matchers::Contains("| " + format("%+.1f%%", 100 * error) + " |"));
    sum += std::fabs(error);
    worst = std::max(worst, std::fabs(error));
  }
  const double mean = 100 * sum / static_cast<double>(cases.size());
  CHECK(mean <= stated_figure(document, "Overall mean absolute error: ") + 0.05);
  CHECK(100 * worst <= stated_figure(document, "worst absolute error: ") + 0.05);
}
