// SPDX-License-Identifier: Apache-2.0
// The validation against published, measured training runs (docs/validation.md): every case in
// configs/validation/cases.json is run as `ppsim run -c CASE --format json`, its predicted step time
// must be the one the document prints, and the overall mean absolute error may not rise above the
// figure the document states. The cases are never fitted: the efficiencies come from the presets
// (published kernel microbenchmarks), so this measures the model, and a change that makes the
// predictions worse fails here.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "study/common/errors.hpp"
#include "support/cli_run.hpp"
#include "support/documented_figures.hpp"

using ppsim::test::printed;
using ppsim::test::source_path;
using ppsim::test::stated_figure;

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
    CHECK_THAT(line, Catch::Matchers::Contains("| " + printed("%.3f", predicted) + " |"));
    CHECK_THAT(line, Catch::Matchers::Contains("| " + printed("%+.1f%%", 100 * error) + " |"));
    sum += std::fabs(error);
    worst = std::max(worst, std::fabs(error));
  }
  const double mean = 100 * sum / static_cast<double>(cases.size());
  CHECK(mean <= stated_figure(document, "Overall mean absolute error: ") + 0.05);
  CHECK(100 * worst <= stated_figure(document, "worst absolute error: ") + 0.05);
}
