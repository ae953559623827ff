// SPDX-License-Identifier: Apache-2.0
#include "sim/report/streamed_timeline.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "sim/report/json_reporter.hpp"
#include "sim/report/report.hpp"

namespace ppsim {
namespace {

// An element as nlohmann's dump(2) prints it `indent` columns in, inside an array.
std::string element(const nlohmann::ordered_json& json, std::size_t indent) {
  const std::string text = json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out(indent, ' ');
  for (const char c : text) {
    out += c;
    if (c == '\n') out.append(indent, ' ');
  }
  return out;
}

}  // namespace

// Report keys sit at 2·depth + 2 columns, the timeline's at + 2 more, its arrays' elements + 2 more.
StreamedTimeline::StreamedTimeline(std::size_t depth)
    : depth_(depth),
      spans_(",\n", false),
      messages_(",\n", false),
      memory_(",\n", false),
      exchanges_(",\n", false) {}

void StreamedTimeline::on_span(const Span& span) { spans_.item(element(span_to_json(span), 2 * depth_ + 6)); }

void StreamedTimeline::on_message(const MessageSpan& message) {
  messages_.item(element(message_to_json(message), 2 * depth_ + 6));
}

void StreamedTimeline::on_memory(const MemorySample& sample) {
  memory_.item(element(memory_sample_to_json(sample), 2 * depth_ + 6));
}

void StreamedTimeline::on_exchange(const ExchangeSpan& exchange) {
  exchanges_.item(element(exchange_to_json(exchange), 2 * depth_ + 6));
}

void StreamedTimeline::write(std::ostream& out) {
  const std::string keys(2 * depth_ + 4, ' ');
  auto array = [&](const char* name, SpoolSection& section, bool last) {
    out << keys << '"' << name << "\": ";
    if (section.empty()) {
      out << "[]";
    } else {
      out << "[\n";
      section.copy_to(out);
      out << '\n' << keys << ']';
    }
    out << (last ? "\n" : ",\n");
  };
  out << "{\n";
  array("spans", spans_, false);
  array("messages", messages_, false);
  // As timeline_json: the all-to-alls only where some op has any, so other timelines keep their bytes.
  const bool exchanges = !exchanges_.empty();
  array("memory", memory_, !exchanges);
  if (exchanges) array("exchanges", exchanges_, true);
  out << std::string(2 * depth_ + 2, ' ') << '}';
}

TimelineSink& JsonTimelineStreamer::begin(const TimelineShape&) {
  current_ = std::make_shared<StreamedTimeline>(depth_);
  return *current_;
}

void JsonTimelineStreamer::end(Report& report) { report.streamed_timeline = std::move(current_); }

TimelineSink& TeeStreamer::begin(const TimelineShape& shape) {
  tee_.sinks.clear();
  for (TimelineStreamer* streamer : streamers_) tee_.sinks.push_back(&streamer->begin(shape));
  return tee_;
}

void TeeStreamer::end(Report& report) {
  for (TimelineStreamer* streamer : streamers_) streamer->end(report);
}

}  // namespace ppsim
