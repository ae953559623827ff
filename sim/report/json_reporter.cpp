// SPDX-License-Identifier: Apache-2.0
#include "sim/report/json_reporter.hpp"

#include "sim/report/streamed_timeline.hpp"
#include "sim/report/training_report.hpp"
#include "sim/report/variability_report.hpp"

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
  for (const Span& span : timeline.spans) spans.push_back(span_to_json(span));
  Json messages = Json::array();
  for (const MessageSpan& message : timeline.messages) messages.push_back(message_to_json(message));
  Json memory = Json::array();
  for (const MemorySample& sample : timeline.memory) memory.push_back(memory_sample_to_json(sample));
  Json object;
  object["spans"] = std::move(spans);
  object["messages"] = std::move(messages);
  object["memory"] = std::move(memory);
  // Expert all-to-alls only where there are some, so that every other timeline keeps its bytes.
  if (!timeline.exchanges.empty()) {
    Json exchanges = Json::array();
    for (const ExchangeSpan& exchange : timeline.exchanges) exchanges.push_back(exchange_to_json(exchange));
    object["exchanges"] = std::move(exchanges);
  }
  return object;
}

std::string dump(const Json& json) { return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

// `text`, a value nlohmann dumped at the top level, as it would print nested `indent` columns in.
std::string indented(const std::string& text, std::size_t indent) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out += c;
    if (c == '\n') out.append(indent, ' ');
  }
  return out;
}

// One report object at `depth` (0 alone, 1 inside compare's array), its streamed timeline spliced
// in as the last key where a stored one would be.
void write_report(std::ostream& out, const Report& report, const ReportOptions& options, std::size_t depth) {
  const std::string text = indented(dump(report_to_json(report, options)), 2 * depth);
  if (!(options.timeline && report.streamed_timeline)) {
    out << text;
    return;
  }
  const std::size_t closing = text.rfind('\n');  // the line of the object's closing brace
  out << text.substr(0, closing) << ",\n" << std::string(2 * depth + 2, ' ') << "\"timeline\": ";
  report.streamed_timeline->write(out);
  out << text.substr(closing);
}

}  // namespace

nlohmann::ordered_json span_to_json(const Span& span) {
  Json object;
  object["device"] = span.device;
  // An overlapped F&B op is one span, named as torch names it: "(0F3;3B1)OVERLAP_F_B".
  object["action"] = cell_text(span.action, span.action.fused_with_next ? &span.partner : nullptr);
  object["start"] = span.start;
  object["end"] = span.end;
  return object;
}

nlohmann::ordered_json message_to_json(const MessageSpan& message) {
  Json object;
  object["src"] = message.src;
  object["dst"] = message.dst;
  object["from"] = to_string(message.from);
  object["enqueued"] = message.enqueued;
  object["depart_start"] = message.depart_start;
  object["depart_end"] = message.depart_end;
  object["arrival"] = message.arrival;
  object["bytes"] = message.bytes;
  return object;
}

nlohmann::ordered_json memory_sample_to_json(const MemorySample& sample) {
  Json object;
  object["device"] = sample.device;
  object["time"] = sample.time;
  object["bytes"] = sample.bytes;
  object["stashed"] = sample.stashed;
  return object;
}

nlohmann::ordered_json exchange_to_json(const ExchangeSpan& exchange) {
  Json object;
  object["device"] = exchange.device;
  object["action"] = to_string(exchange.action);
  object["exchange"] = exchange_name(exchange.kind);
  object["recomputed"] = exchange.recomputed;
  object["start"] = exchange.start;
  object["end"] = exchange.end;
  return object;
}

nlohmann::ordered_json report_to_json(const Report& report, const ReportOptions& options) {
  const Result& result = report.result;
  Json object;
  object["schedule"] = report.schedule;
  object["p"] = report.params.p;
  object["m"] = report.params.m;
  object["v"] = report.params.v;
  object["scenario"] = Json(report.scenario);  // as given; its keys keep the order they have there
  if (!report.provenance.is_null()) object["provenance"] = report.provenance;
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
  if (report.samples) object["samples"] = samples_to_json(*report.samples);
  if (report.reliability) object["reliability"] = reliability_to_json(*report.reliability);
  if (options.timeline && result.timeline) object["timeline"] = timeline_json(*result.timeline);
  return object;
}

nlohmann::ordered_json reports_to_json(std::span<const Report> reports, const ReportOptions& options) {
  if (reports.size() == 1 && !options.side_by_side) return report_to_json(reports.front(), options);
  Json array = Json::array();
  for (const Report& report : reports) array.push_back(report_to_json(report, options));
  return array;
}

void JsonReporter::write(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) const {
  // Names and paths come from the command line and may hold any bytes: invalid UTF-8 is written as
  // U+FFFD rather than thrown as an error after the simulation succeeded.
  if (reports.size() == 1 && !options.side_by_side) {
    write_report(out, reports.front(), options, 0);
  } else {
    out << '[';
    for (std::size_t i = 0; i < reports.size(); ++i) {
      out << (i == 0 ? "\n  " : ",\n  ");
      write_report(out, reports[i], options, 1);
    }
    out << (reports.empty() ? "]" : "\n]");
  }
  out << '\n';
}

}  // namespace ppsim
