// SPDX-License-Identifier: Apache-2.0
// ppsim._core: the library's calls (study/api.hpp) for the Python package beside it. Settings arrive
// as a JSON object's text; results leave as the Python objects json.loads would make of the JSON the
// command line's --format json prints (built from its value, not written and parsed back), so a
// dict from Python equals the CLI's output figure for figure. The GIL is released while C++ runs; a
// sweep's points run on C++ threads.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Python.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "study/api.hpp"
#include "study/input/config.hpp"
#include "study/trace/trace_study.hpp"

namespace py = pybind11;

namespace {

// The package's exceptions: bad input is a ValueError, a stuck or invalid schedule a RuntimeError
// whose `grid` shows where it broke (the command line's exit 2 and exit 3).
PyObject* input_error = nullptr;
PyObject* schedule_error = nullptr;

nlohmann::json parse_settings(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw ppsim::InputError(origin + ": the settings are not JSON: " + error.what());
  }
}

// What json.loads makes of `value`'s text, built directly: dicts in the keys' order, floats as the
// same doubles (nlohmann prints the shortest text that reads back to them), a NaN or an infinity as
// None (nlohmann prints null), invalid UTF-8 replaced as the text would have it. Needs the GIL.
py::object to_python(const nlohmann::ordered_json& value) {
  using Type = nlohmann::ordered_json::value_t;
  const auto owned = [](PyObject* object) {
    if (object == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(object);
  };
  const auto text = [&](const std::string& string) {
    return owned(PyUnicode_DecodeUTF8(string.data(), static_cast<Py_ssize_t>(string.size()), "replace"));
  };
  switch (value.type()) {
    case Type::null:
    case Type::discarded:
      return py::none();
    case Type::boolean:
      return py::bool_(value.get<bool>());
    case Type::number_integer:
      return owned(PyLong_FromLongLong(value.get<std::int64_t>()));
    case Type::number_unsigned:
      return owned(PyLong_FromUnsignedLongLong(value.get<std::uint64_t>()));
    case Type::number_float: {
      const double number = value.get<double>();
      return std::isfinite(number) ? owned(PyFloat_FromDouble(number)) : py::none();
    }
    case Type::string:
      return text(value.get_ref<const std::string&>());
    case Type::array: {
      py::object list = owned(PyList_New(static_cast<Py_ssize_t>(value.size())));
      Py_ssize_t i = 0;
      for (const auto& item : value) PyList_SET_ITEM(list.ptr(), i++, to_python(item).release().ptr());
      return list;
    }
    case Type::object: {
      py::object dict = owned(PyDict_New());
      for (const auto& [key, item] : value.items()) {
        if (PyDict_SetItem(dict.ptr(), text(key).ptr(), to_python(item).ptr()) != 0) throw py::error_already_set();
      }
      return dict;
    }
    case Type::binary:
      break;
  }
  throw std::logic_error("to_python: a binary JSON value");
}

// A result as JSON's value, or as its text where only text exists (a streamed timeline), and the
// failures of `expect` (--expect's lines), which the package raises.
struct Checked {
  nlohmann::ordered_json value;
  std::optional<std::string> text;
  std::vector<std::string> failures;
};

// The Python objects of a result (json.loads of its text where there is only text), with its failures.
py::tuple to_python(const Checked& checked) {
  py::object result = checked.text ? py::module_::import("json").attr("loads")(*checked.text) : to_python(checked.value);
  return py::make_tuple(result, checked.failures);
}

Checked run(const std::string& settings, const std::string& origin, const std::string& config,
            const ppsim::PictureFiles& pictures, bool compare, const std::vector<std::string>& expect) {
  ppsim::Scenario scenario = ppsim::scenario_from_settings(parse_settings(settings, origin), origin, config);
  scenario.format = ppsim::OutputFormat::kJson;
  scenario.sample_threads = 0;  // every core; the same figures for any count
  if (compare) {
    ppsim::default_compare_schedules(scenario);
  } else {
    ppsim::check_run_schedules(scenario);
  }
  const auto expectations = ppsim::parse_expectations(expect, "expect");
  if (std::optional<ppsim::ReportsAsData> data = ppsim::reports_as_data(scenario, compare, pictures)) {
    return {std::move(data->value), std::nullopt, ppsim::expectation_failures(expectations, data->reports)};
  }
  std::ostringstream out;
  const auto reports = ppsim::write_reports(scenario, compare, pictures, out);
  return {nullptr, out.str(), ppsim::expectation_failures(expectations, reports)};
}

struct SweepRequest {
  std::string study_text;  // a study's JSON, or "" with `path`
  std::string path;
  unsigned jobs = 0;
  bool simulate_all = false;
  std::string shard;  // "I/N" or ""
  std::string output;
  std::string html;
  std::string summary;
  std::vector<std::string> expect;
};

Checked sweep(const SweepRequest& request) {
  const ppsim::Study study =
      request.path.empty() ? ppsim::parse_study(nlohmann::ordered_json::parse(request.study_text), "ppsim.sweep",
                                                std::filesystem::current_path().string())
                           : ppsim::load_study(request.path);
  const auto expectations = ppsim::parse_expectations(request.expect, "expect");
  ppsim::SweepOptions options;
  if (!request.shard.empty()) {
    ppsim::parse_shard(request.shard, options.shard_index, options.shard_count);
    options.sharded = true;
  }
  options.threads = ppsim::sweep_threads(request.jobs);
  options.simulate_all = request.simulate_all;
  const auto points = ppsim::sweep_to_files(study, options, {request.output, request.html, request.summary});
  return {ppsim::sweep_result_json(study, points, options.shard_index, options.shard_count), std::nullopt,
          ppsim::expectation_failures(expectations, study, points)};
}

std::string formulas(const std::string& settings, bool check) {
  ppsim::Scenario scenario = ppsim::scenario_from_settings(parse_settings(settings, "ppsim.formulas"), "ppsim.formulas");
  std::ostringstream out;
  const bool agreed = ppsim::write_formulas_study(scenario, check, out);
  nlohmann::ordered_json result;
  result["agreed"] = agreed;
  result["report"] = out.str();
  return result.dump();
}

// ppsim trace --format json: the files read, replayed, attributed and calibrated.
std::string trace(const std::vector<std::string>& files, const std::string& calibrate, const std::string& svg,
                  const std::string& schedule, int step, int p, int m, int v) {
  ppsim::TraceStudyRequest request;
  request.files = files;
  request.calibrate_path = calibrate;
  request.svg_path = svg;
  request.json = true;
  request.read.schedule = schedule;
  request.read.step = step;
  request.hints = {p, m, v, schedule, step};
  std::ostringstream out;
  ppsim::write_trace_study(request, out);
  return out.str();
}

std::string export_schedule(const std::string& settings, bool lowered) {
  ppsim::Scenario scenario = ppsim::scenario_from_settings(parse_settings(settings, "ppsim.export"), "ppsim.export");
  scenario.format = ppsim::OutputFormat::kJson;
  return ppsim::export_schedule(scenario, lowered);
}

std::string synth(const std::string& settings, const ppsim::SynthSettings& search) {
  ppsim::Scenario scenario = ppsim::scenario_from_settings(parse_settings(settings, "ppsim.synth"), "ppsim.synth");
  scenario.format = ppsim::OutputFormat::kJson;
  std::ostringstream out;
  ppsim::write_synth(scenario, search, out);
  return out.str();
}

std::string plan(const std::string& settings, const std::string& html) {
  ppsim::PlanRequest request;
  ppsim::apply_plan_settings(parse_settings(settings, "ppsim.plan"), "ppsim.plan", "", request);
  if (request.settings.gpus == 0) throw ppsim::InputError("ppsim.plan: gpus: needs the GPU count");
  request.scenario.format = ppsim::OutputFormat::kJson;
  std::ostringstream out;
  ppsim::write_plan(request, html, out);
  return out.str();
}

std::string check(const std::string& path, double rtol, double atol, const std::vector<std::string>& only) {
  ppsim::CheckOptions options;
  options.rtol = rtol;
  options.atol = atol;
  options.only = only;
  const ppsim::CheckOutcome outcome = ppsim::check_baseline(path, options);
  nlohmann::ordered_json result;
  result["results"] = outcome.results;
  result["figures"] = outcome.figures;
  nlohmann::ordered_json& moved = result["moved"] = nlohmann::ordered_json::array();
  for (const ppsim::MovedFigure& figure : outcome.moved) {
    moved.push_back({{"figure", figure.figure}, {"baseline", figure.baseline}, {"now", figure.now}, {"change", figure.change}});
  }
  result["report"] = ppsim::check_report(path, options, outcome);
  return result.dump();
}

// Runs `body` without the GIL: it touches no Python object.
template <typename Body>
auto released(Body body) {
  py::gil_scoped_release release;
  return body();
}

}  // namespace

PYBIND11_MODULE(_core, module) {
  module.doc() = "ppsim's library (study/api.hpp); use the ppsim package, not this module";
  module.attr("__version__") = ppsim::version();
  module.attr("__git_revision__") = ppsim::git_revision();
  input_error = PyErr_NewExceptionWithDoc("ppsim.InputError", "bad input: a setting, a file or a size (exit 2)",
                                          PyExc_ValueError, nullptr);
  schedule_error = PyErr_NewExceptionWithDoc(
      "ppsim.ScheduleError", "a schedule that is invalid or deadlocks; .grid shows where (exit 3)", PyExc_RuntimeError,
      nullptr);
  module.attr("InputError") = py::handle(input_error);
  module.attr("ScheduleError") = py::handle(schedule_error);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const ppsim::InputError& error) {
      PyErr_SetString(input_error, ppsim::one_line(error.what()).c_str());
    } catch (const ppsim::JsonInputError& error) {
      PyErr_SetString(input_error, ppsim::one_line(error.what()).c_str());
    } catch (const nlohmann::json::exception& error) {  // a sweep study's text
      PyErr_SetString(input_error, ppsim::one_line(std::string("ppsim.sweep: the study is not JSON: ") + error.what()).c_str());
    } catch (const ppsim::ScheduleError& error) {
      py::object exception = py::handle(schedule_error)(ppsim::one_line(error.what()));
      exception.attr("grid") = error.grid();
      PyErr_SetObject(schedule_error, exception.ptr());
    }
  });
  module.def(
      "run",
      [](const std::string& settings, const std::string& origin, const std::string& config, const std::string& svg,
         const std::string& html, const std::string& trace, bool compare, const std::vector<std::string>& expect) {
        return to_python(released([&] { return run(settings, origin, config, {svg, html, trace}, compare, expect); }));
      },
      "run or compare: what json.loads makes of --format json, and the expectations that failed");
  module.def(
      "sweep",
      [](const std::string& study, const std::string& path, unsigned jobs, bool simulate_all, const std::string& shard,
         const std::string& output, const std::string& html, const std::string& summary,
         const std::vector<std::string>& expect) {
        const SweepRequest request{study, path, jobs, simulate_all, shard, output, html, summary, expect};
        return to_python(released([&] { return sweep(request); }));
      },
      "a sweep's points and summary as Python objects, and the expectations that failed");
  module.def(
      "formulas", [](const std::string& settings, bool check) { return released([&] { return formulas(settings, check); }); },
      "ppsim formulas [--check]: whether they agreed, and the text");
  module.def(
      "trace",
      [](const std::vector<std::string>& files, const std::string& calibrate, const std::string& svg,
         const std::string& schedule, int step, int p, int m, int v) {
        return released([&] { return trace(files, calibrate, svg, schedule, step, p, m, v); });
      },
      "ppsim trace --format json");
  module.def(
      "merge",
      [](const std::string& output, const std::vector<std::string>& inputs) {
        released([&] {
          ppsim::merge_to_file(output, inputs);
          return 0;
        });
      },
      "ppsim merge");
  module.def(
      "export_schedule",
      [](const std::string& settings, bool lowered) {
        return released([&] { return export_schedule(settings, lowered); });
      },
      "ppsim export --format json");
  module.def(
      "check",
      [](const std::string& path, double rtol, double atol, const std::vector<std::string>& only) {
        return released([&] { return check(path, rtol, atol, only); });
      },
      "ppsim check: the figures that moved, as JSON text");
  module.def(
      "synth",
      [](const std::string& settings, const std::string& memory_limit, const std::string& placement,
         const std::string& time_limit, const std::string& output) {
        return released([&] { return synth(settings, {memory_limit, placement, time_limit, output}); });
      },
      "ppsim synth --format json");
  module.def(
      "plan", [](const std::string& settings, const std::string& html) { return released([&] { return plan(settings, html); }); },
      "ppsim plan --format json");
  module.def("schedules", [] { return ppsim::schedule_list_json().dump(); }, "ppsim schedules --format json");
  module.def("models", [] { return ppsim::preset_list_json().dump(); }, "ppsim models --format json");
  module.def(
      "settings",
      [] {
        // The table behind `ppsim run --help` and the config reader (study/input/config.hpp), so that
        // help(ppsim.run) lists what --help does.
        py::list rows;
        for (const ppsim::SettingInfo& setting : ppsim::scenario_settings()) {
          rows.append(py::make_tuple(std::string(setting.key), std::string(setting.flag), std::string(setting.value_name),
                                     std::string(setting.help)));
        }
        return rows;
      },
      "the settings: (key, flag, value name, help) as ppsim run --help lists them");
}
