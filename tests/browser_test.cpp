// SPDX-License-Identifier: Apache-2.0
// A real browser renders the default study's HTML report, a V-shape's and a faceted sweep page:
// Debian's chromium, headless and kept off the network, takes a screenshot and dumps the DOM. The test checks that the page loaded without
// console messages, that the browser built every lane and box, and that every lane's region of
// the picture is mostly ink (ops drawn), not blank. Exit 77 (ctest's SKIP_RETURN_CODE) when no
// chromium is installed.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report/html_report.hpp"
#include "study/input/scenario.hpp"
#include "study/output/pictures.hpp"
#include "study/run/study.hpp"
#include "study/sweep/sweep_html.hpp"
#include "study/sweep/sweep_runner.hpp"
#include "study/sweep/sweep_study.hpp"
#include "support/png.hpp"
#include "support/xml_check.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int kSkip = 77;

// A lane counts as drawn when most of its pixels are strongly coloured (the orange and blue ops);
// the default study keeps each device busy 24 of its 33 time units.
constexpr double kMinInkShare = 0.5;

std::string read(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// $PPSIM_CHROMIUM, else the first of Debian's and upstream's names found on PATH.
std::string find_chromium() {
  if (const char* given = std::getenv("PPSIM_CHROMIUM"); given != nullptr && *given != '\0') return given;
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return {};
}

std::string quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

bool ink(const std::uint8_t* pixel) {
  const int high = std::max({pixel[0], pixel[1], pixel[2]});
  const int low = std::min({pixel[0], pixel[1], pixel[2]});
  return high - low > 60;
}

int fail(const std::string& why) {
  std::cerr << "browser test: FAILED: " << why << '\n';
  return 1;
}

// Renders `html` (written to DIR/NAME.html) in chromium at `width` x `height`: its screenshot and
// DOM in DIR, or a failure's message.
std::string render(const std::string& chromium, const fs::path& dir, const std::string& name, const std::string& html,
                   int width, int height) {
  std::ofstream(dir / (name + ".html"), std::ios::binary) << html;
  // Off the network: no background, component, sync or first-run traffic, and every host name fails
  // to resolve; a private profile in the temporary directory; --no-sandbox because CI runs as root.
  const std::string command =
      "timeout 120 " + quote(chromium) +
      " --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check"
      " --disable-background-networking --disable-component-update --disable-sync --disable-default-apps"
      " --disable-extensions --host-resolver-rules='MAP * ~NOTFOUND' --hide-scrollbars"
      " --force-device-scale-factor=1 --enable-logging=stderr --v=0 --user-data-dir=" +
      quote((dir / "profile").string()) + " --window-size=" + std::to_string(width) + "," + std::to_string(height) +
      " --screenshot=" + quote((dir / (name + ".png")).string()) + " --dump-dom " +
      quote("file://" + (dir / (name + ".html")).string()) + " > " + quote((dir / (name + ".dom")).string()) + " 2> " +
      quote((dir / (name + ".log")).string());
  std::cout << "browser test: " << chromium << " renders " << (dir / (name + ".html")).string() << " at " << width
            << "x" << height << '\n';
  const int status = std::system(command.c_str());
  const std::string log = read(dir / (name + ".log"));
  if (status != 0) return "chromium exited with status " + std::to_string(status) + "; its log:\n" + log;
  // Console messages are logged as "...:CONSOLE..."; a page without scripts has none.
  std::stringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      return "console message: " + line;
    }
  }
  if (read(dir / (name + ".dom")).find("</html>") == std::string::npos) return "the DOM has no end";
  return {};
}

// A run's HTML report: every lane and op box in the DOM, its labels as written, and every lane's
// region of the screenshot mostly ink.
std::string check_report_page(const std::string& chromium, const fs::path& dir, const std::string& name,
                              const ppsim::Scenario& study) {
  const auto reports = ppsim::simulate_all(study, true);
  const std::string html = ppsim::html_report(study, reports);
  const ppsim::HtmlLayout layout = ppsim::html_layout(reports);
  const int width = static_cast<int>(layout.width);
  const int height = static_cast<int>(layout.height + 0.5);
  if (std::string why = render(chromium, dir, name, html, width, height); !why.empty()) return why;

  // The DOM the browser built: every lane, every op box and every label the page holds.
  const std::string dom = read(dir / (name + ".dom"));
  std::size_t ops = 0;
  for (const auto& report : reports) ops += report.result.timeline->spans.size();
  const std::size_t dom_lanes = ppsim::test::count_of(dom, "<g class=\"lane\"");
  const std::size_t dom_ops = ppsim::test::count_of(dom, "<rect class=\"op ");
  if (dom_lanes != layout.lanes.size() || dom_ops != ops) {
    return name + ": the DOM has " + std::to_string(dom_lanes) + " lanes and " + std::to_string(dom_ops) +
           " op boxes; expected " + std::to_string(layout.lanes.size()) + " and " + std::to_string(ops);
  }
  if (ppsim::test::count_of(dom, "<text class=\"mb") != ppsim::test::count_of(html, "<text class=\"mb")) {
    return name + ": the DOM lost op labels";
  }

  std::string error;
  const auto image = ppsim::test::decode_png(read(dir / (name + ".png")), error);
  if (!image) return name + ": screenshot: " + error;
  if (image->width != width || image->height != height) {
    return name + ": screenshot is " + std::to_string(image->width) + "x" + std::to_string(image->height);
  }
  // The page's left margin is background: the picture is not one colour all over.
  for (int y = 0; y < image->height; ++y) {
    for (int x = 0; x < 8; ++x) {
      const std::uint8_t* pixel = image->pixel(x, y);
      if (pixel[0] != 255 || pixel[1] != 255 || pixel[2] != 255) return name + ": the page margin is not white";
    }
  }
  int failures = 0;
  for (const ppsim::HtmlLane& lane : layout.lanes) {
    std::size_t inked = 0;
    std::size_t total = 0;
    for (int y = static_cast<int>(lane.y) + 1; y < static_cast<int>(lane.y + lane.height) - 1; ++y) {
      for (int x = static_cast<int>(lane.x) + 1; x < static_cast<int>(lane.x + lane.width) - 1; ++x) {
        if (x < 0 || y < 0 || x >= image->width || y >= image->height) continue;
        ++total;
        inked += ink(image->pixel(x, y));
      }
    }
    const double share = total == 0 ? 0 : static_cast<double>(inked) / static_cast<double>(total);
    std::cout << "  " << reports[lane.schedule].schedule << " d" << lane.device << ": " << inked << " of " << total
              << " pixels inked (" << static_cast<int>(share * 100) << "%)\n";
    if (share < kMinInkShare) ++failures;
  }
  if (failures > 0) return name + ": " + std::to_string(failures) + " lanes are blank or nearly so; see " + dir.string();
  return {};
}

}  // namespace

int main() {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    std::cout << "SKIP: no chromium on PATH (nor $PPSIM_CHROMIUM); on Debian, `tools/install-deps.sh --test` "
                 "installs it\n";
    return kSkip;
  }
  const fs::path dir = fs::temp_directory_path() / ("ppsim-browser-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);

  // The default study's report, exactly as `ppsim` writes it; then a V-shape's, two stages a device
  // and 64 micro-batches, whose figure grows wider to label its boxes.
  if (std::string why = check_report_page(chromium, dir, "report", ppsim::default_study()); !why.empty()) {
    return fail(why);
  }
  ppsim::Scenario v_shape;
  v_shape.schedules = {"zbv"};
  v_shape.params = {4, 64, 2};
  v_shape.timeline = true;
  if (std::string why = check_report_page(chromium, dir, "zbv", v_shape); !why.empty()) return fail(why);

  // A sweep page whose bubble chart is faceted by schedule: it loads, and holds every chart.
  const ppsim::Study study = ppsim::parse_study(nlohmann::ordered_json::parse(R"({"axes": {
      "schedule": ["gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zbv", "looped-bfs"], "p": [2, 4, 8, 16, 32],
      "v": [1, 2, 3, 4], "m": [8, 16, 32, 64]}, "objective": "bubble"})"),
                                               "study.json");
  const std::string sweep = ppsim::render_sweep_html(study, ppsim::run_sweep(study, {}));
  if (std::string why = render(chromium, dir, "sweep", sweep, 1200, 4000); !why.empty()) return fail(why);
  const std::string dom = read(dir / "sweep.dom");
  const std::size_t charts = ppsim::test::count_of(sweep, "<svg class=\"sweep-chart\"");
  if (charts < 6 || ppsim::test::count_of(dom, "<svg class=\"sweep-chart\"") != charts) {
    return fail("the sweep page's DOM does not hold its " + std::to_string(charts) + " charts");
  }
  fs::remove_all(dir);
  std::cout << "browser test: the reports and the sweep page loaded without console messages and every lane is drawn\n";
  return 0;
}
