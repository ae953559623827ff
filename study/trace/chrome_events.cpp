// SPDX-License-Identifier: Apache-2.0
#include "study/trace/chrome_events.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/report/format.hpp"
#include "study/common/errors.hpp"
#include "study/trace/trace_bytes.hpp"

namespace ppsim {

const std::string* ChromeEvent::text(std::string_view key) const {
  for (const auto& [k, v] : text_args) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<double> ChromeEvent::number(std::string_view key) const {
  for (const auto& [k, v] : number_args) {
    if (k == key) return v;
  }
  return std::nullopt;
}

namespace {

constexpr std::uint64_t kTokenLimit = 16u << 20;  // one JSON value at most 16 MiB
constexpr std::size_t kNameLimit = 4096;          // a kernel's name (C++ templates) is kept this long
constexpr std::size_t kArgLimit = 64;             // args kept per event
constexpr std::size_t kMaxDepth = 512;            // objects and arrays within each other

// Where the parser is: what the object or array just opened is to the trace.
enum class Context : std::uint8_t { kTop, kEvents, kEvent, kArgs, kDistributed, kOther, kRuns, kRun, kSkip };

class EventSax {
 public:
  using number_integer_t = nlohmann::json::number_integer_t;
  using number_unsigned_t = nlohmann::json::number_unsigned_t;
  using number_float_t = nlohmann::json::number_float_t;
  using string_t = nlohmann::json::string_t;
  using binary_t = nlohmann::json::binary_t;

  EventSax(TraceBytes& bytes, const std::function<void(const ChromeEvent&)>& on_event)
      : bytes_(bytes), on_event_(on_event) {}

  bool null() { return scalar(nullptr, std::nullopt); }
  bool boolean(bool value) { return scalar(nullptr, value ? 1.0 : 0.0); }
  bool number_integer(number_integer_t value) { return scalar(nullptr, static_cast<double>(value)); }
  bool number_unsigned(number_unsigned_t value) { return scalar(nullptr, static_cast<double>(value)); }
  bool number_float(number_float_t value, const string_t&) { return scalar(nullptr, value); }
  bool string(string_t& value) { return scalar(&value, std::nullopt); }
  bool binary(binary_t&) { return scalar(nullptr, std::nullopt); }

  bool start_object(std::size_t) {
    bytes_.mark();
    const Context parent = stack_.empty() ? Context::kSkip : stack_.back();
    Context next = Context::kSkip;
    if (stack_.empty()) {
      next = Context::kTop;
    } else if (parent == Context::kEvents) {
      next = Context::kEvent;
      event_ = ChromeEvent{};
    } else if (parent == Context::kEvent && key_ == "args") {
      next = Context::kArgs;
    } else if (parent == Context::kTop && key_ == "distributedInfo") {
      next = Context::kDistributed;
    } else if (parent == Context::kTop && key_ == "otherData") {
      next = Context::kOther;
    } else if (parent == Context::kRuns && header_.runs.size() < 1024) {
      next = Context::kRun;
      header_.runs.emplace_back();
    }
    if (stack_.size() >= kMaxDepth) return fail("values nested deeper than 512 levels");
    stack_.push_back(next);
    return true;
  }
  bool end_object() {
    bytes_.mark();
    const Context closing = stack_.back();
    stack_.pop_back();
    if (closing == Context::kEvent) {
      event_.position = bytes_.position();
      ++header_.events;
      on_event_(event_);
    }
    return true;
  }
  bool start_array(std::size_t) {
    bytes_.mark();
    Context next = Context::kSkip;
    if (stack_.empty()) {
      next = Context::kEvents;  // the format's "JSON Array Format": the file is the events alone
      found_events_ = true;
    } else if (stack_.back() == Context::kTop && key_ == "traceEvents") {
      next = Context::kEvents;
      found_events_ = true;
    } else if (stack_.back() == Context::kOther && key_ == "schedules") {
      next = Context::kRuns;
    }
    if (stack_.size() >= kMaxDepth) return fail("values nested deeper than 512 levels");
    stack_.push_back(next);
    return true;
  }
  bool end_array() {
    bytes_.mark();
    stack_.pop_back();
    return true;
  }
  bool key(string_t& value) {
    bytes_.mark();
    key_ = std::move(value);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) {
    std::string what = error.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 7: syntax error ... - why":
    // the byte is ours, the reason nlohmann's.
    const std::size_t dash = what.rfind(" - ");
    if (dash != std::string::npos) what = what.substr(dash + 3);
    // "...; last read: '<the token>'": the token may be megabytes long.
    const std::size_t read = what.find("; last read: '");
    if (read != std::string::npos && what.size() > read + 15) {
      what = what.substr(0, read) + "; last read: " + quoted_excerpt(what.substr(read + 14, what.size() - read - 15));
    }
    error_ = "byte " + std::to_string(position) + ": not JSON: " + what;
    if (bytes_.token_too_long()) {
      error_ = "byte " + std::to_string(bytes_.position()) + ": a single JSON value longer than 16 MiB";
    } else if (!bytes_.damage().empty()) {
      error_ = "byte " + std::to_string(bytes_.position()) + ": " + bytes_.damage();
    }
    return false;
  }

  const std::string& error() const { return error_; }
  bool found_events() const { return found_events_; }
  ChromeTraceHeader& header() { return header_; }

 private:
  bool fail(const std::string& why) {
    error_ = "byte " + std::to_string(bytes_.position()) + ": " + why;
    return false;
  }
  static std::string number_text(double value) {
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
      return std::to_string(static_cast<long long>(value));
    }
    return format_exact(value);
  }

  bool scalar(std::string* text, std::optional<double> number) {
    bytes_.mark();
    if (stack_.empty()) return fail("the file is a single value, not a trace (an object with traceEvents)");
    switch (stack_.back()) {
      case Context::kEvent:
        return event_field(text, number);
      case Context::kArgs:
        if (event_.text_args.size() + event_.number_args.size() >= kArgLimit || key_.size() > 256) return true;
        if (text != nullptr) {
          if (text->size() > kNameLimit) text->resize(kNameLimit);
          event_.text_args.emplace_back(key_, std::move(*text));
        } else if (number) {
          event_.number_args.emplace_back(key_, *number);
        }
        return true;
      case Context::kTop:
        if (key_ == "baseTimeNanoseconds" && number && std::fabs(*number) < 1e21) header_.base_ns = number;
        return true;
      case Context::kDistributed:
        if (key_ == "rank" && number) header_.rank = number;
        if (key_ == "world_size" && number) header_.world_size = number;
        return true;
      case Context::kOther:
        if (key_ == "generator" && text != nullptr) header_.generator = text->substr(0, 64);
        if (key_ == "time_unit" && text != nullptr) header_.time_unit = text->substr(0, 256);
        return true;
      case Context::kRun:
        if (key_ == "schedule" && text != nullptr) header_.runs.back().schedule = text->substr(0, 256);
        if (key_ == "p" && number) header_.runs.back().p = number;
        if (key_ == "m" && number) header_.runs.back().m = number;
        if (key_ == "v" && number) header_.runs.back().v = number;
        if (key_ == "sequence-splits" && number) header_.runs.back().sequence_splits = number;
        return true;
      default:
        return true;
    }
  }

  bool event_field(std::string* text, std::optional<double> number) {
    auto keep = [&](std::string& field) {
      if (text != nullptr) {
        field = text->substr(0, kNameLimit);
      } else if (number) {
        field = number_text(*number);
      }
    };
    if (key_ == "name") {
      keep(event_.name);
    } else if (key_ == "cat") {
      keep(event_.cat);
    } else if (key_ == "ph") {
      keep(event_.ph);
    } else if (key_ == "pid") {
      keep(event_.pid);
    } else if (key_ == "tid") {
      keep(event_.tid);
    } else if (key_ == "ts" || key_ == "dur") {
      // Some writers give times as strings; a number is what the format says.
      std::optional<double> value = number;
      if (text != nullptr) {
        char* end = nullptr;
        const double parsed = std::strtod(text->c_str(), &end);
        if (end != text->c_str() && *end == '\0') value = parsed;
      }
      // Microseconds since 1970 are below 1e17; a time beyond 1e18 would overflow the sums made of it.
      if (!value || !std::isfinite(*value) || std::fabs(*value) > 1e18) {
        return fail("event " + std::to_string(header_.events) + ": \"" + key_ +
                    "\" must be a finite number of microseconds");
      }
      (key_ == "ts" ? event_.ts : event_.dur) = value;
    }
    return true;
  }

  TraceBytes& bytes_;
  const std::function<void(const ChromeEvent&)>& on_event_;
  std::vector<Context> stack_;
  std::string key_;
  ChromeEvent event_;
  ChromeTraceHeader header_;
  std::string error_;
  bool found_events_ = false;
};

ChromeTraceHeader read_from(TraceBytes& bytes, const std::function<void(const ChromeEvent&)>& on_event) {
  bytes.set_token_limit(kTokenLimit);
  EventSax sax(bytes, on_event);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(TraceByteIterator(&bytes), TraceByteIterator(), &sax);
  } catch (const InputError&) {
    throw;
  }
  const std::string& file = excerpt(bytes.path());
  if (!ok) {
    throw InputError(file + ": " +
                     (sax.error().empty() ? "byte " + std::to_string(bytes.position()) + ": not JSON" : sax.error()));
  }
  if (!bytes.damage().empty()) {
    throw InputError(file + ": byte " + std::to_string(bytes.position()) + ": " + bytes.damage());
  }
  if (!sax.found_events()) {
    throw InputError(file +
                     ": no traceEvents array: not a Chrome trace (torch.profiler's export_chrome_trace, ppsim's "
                     "--trace)");
  }
  return sax.header();
}

}  // namespace

ChromeTraceHeader read_chrome_events(const std::string& path, const std::function<void(const ChromeEvent&)>& on_event) {
  TraceBytes bytes(path);
  return read_from(bytes, on_event);
}

ChromeTraceHeader read_chrome_events_text(const std::string& text, const std::string& name,
                                          const std::function<void(const ChromeEvent&)>& on_event) {
  TraceBytes bytes(text, name);
  return read_from(bytes, on_event);
}

}  // namespace ppsim
