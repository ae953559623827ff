#include "sim/report/json_reporter.hpp"

#include "sim/report/training_report.hpp"

#include <ostream>

namespace ppsim {
namespace {

using Json = nlohmann::ordered_json;

Json phase_json(const PhaseFigures& phase) {
  Json object;
  object["ops"] = phase.ops;
  object["busy"] = phase.busy;
  // An empty phase (GPipe has no steady state) has no start or end; null says so, 0 would not.
  object["start"] = phase.ops > 0 ? Json(phase.start) : Json(nullptr);
  object["end"] = phase.ops > 0 ? Json(phase.end) : Json(nullptr);
  object["duration"] = phase.duration();
  return object;
}

Json device_json(int device, const DeviceFigures& figures) {
  Json object;
  object["device"] = device;
  object["start"] = figures.start;
  object["end"] = figures.end;
  object["busy"] = figures.busy;
  object["idle"] = figures.idle;
  object["bubble_ratio"] = figures.bubble_ratio;
  object["ops"] = figures.ops;
  object["peak_stashed"] = figures.peak_stashed;
  object["static_bytes"] = figures.static_bytes;
  object["peak_activation_bytes"] = figures.peak_activation_bytes;
  object["peak_memory_bytes"] = figures.peak_memory_bytes;
  Json phases;
  for (std::size_t i = 0; i < kPhaseNames.size(); ++i) phases[kPhaseNames[i]] = phase_json(figures.phases[i]);
  object["phases"] = std::move(phases);
  return object;
}

Json link_json(const LinkFigures& link) {
  Json object;
  object["src"] = link.src;
  object["dst"] = link.dst;
  object["messages"] = link.messages;
  object["bytes"] = link.bytes;
  object["busy"] = link.busy;
  return object;
}

Json timeline_json(const Timeline& timeline) {
  Json spans = Json::array();
  for (const Span& span : timeline.spans) {
    Json object;
    object["device"] = span.device;
    // An overlapped F&B op is one span, named as torch names it: "(0F3;3B1)OVERLAP_F_B".
    object["action"] = cell_text(span.action, span.action.fused_with_next ? &span.partner : nullptr);
    object["start"] = span.start;
    object["end"] = span.end;
    spans.push_back(std::move(object));
  }
  Json messages = Json::array();
  for (const MessageSpan& message : timeline.messages) {
    Json object;
    object["src"] = message.src;
    object["dst"] = message.dst;
    object["from"] = to_string(message.from);
    object["enqueued"] = message.enqueued;
    object["depart_start"] = message.depart_start;
    object["depart_end"] = message.depart_end;
    object["arrival"] = message.arrival;
    object["bytes"] = message.bytes;
    messages.push_back(std::move(object));
  }
  Json memory = Json::array();
  for (const MemorySample& sample : timeline.memory) {
    Json object;
    object["device"] = sample.device;
    object["time"] = sample.time;
    object["bytes"] = sample.bytes;
    object["stashed"] = sample.stashed;
    memory.push_back(std::move(object));
  }
  Json object;
  object["spans"] = std::move(spans);
  object["messages"] = std::move(messages);
  object["memory"] = std::move(memory);
  return object;
}

}  // namespace

nlohmann::ordered_json report_to_json(const Report& report, const ReportOptions& options) {
  const Result& result = report.result;
  Json object;
  object["schedule"] = report.schedule;
  object["p"] = report.params.p;
  object["m"] = report.params.m;
  object["v"] = report.params.v;
  object["scenario"] = Json(report.scenario);  // as given; its keys keep the order they have there
  object["makespan"] = result.makespan;
  object["bubble_ratio"] = result.bubble_ratio;
  object["bubble_overhead"] = result.bubble_overhead;
  object["comm_ratio"] = result.comm_ratio;
  object["total_busy"] = result.total_busy;
  object["compute_ops"] = result.compute_ops;
  object["messages"] = result.messages;
  Json devices = Json::array();
  for (std::size_t d = 0; d < result.per_device.size(); ++d) {
    devices.push_back(device_json(static_cast<int>(d), result.per_device[d]));
  }
  object["per_device"] = std::move(devices);
  Json links = Json::array();
  for (const LinkFigures& link : result.per_link) links.push_back(link_json(link));
  object["per_link"] = std::move(links);
  if (report.training) object["training"] = training_to_json(*report.training);
  if (options.timeline && result.timeline) object["timeline"] = timeline_json(*result.timeline);
  return object;
}

void JsonReporter::write(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) const {
  Json document;
  if (reports.size() == 1 && !options.side_by_side) {
    document = report_to_json(reports.front(), options);
  } else {
    document = Json::array();
    for (const Report& report : reports) document.push_back(report_to_json(report, options));
  }
  // Names and paths come from the command line and may hold any bytes: invalid UTF-8 is written as
  // U+FFFD rather than thrown as an error after the simulation succeeded.
  out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace ppsim
