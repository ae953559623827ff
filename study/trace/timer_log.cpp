// SPDX-License-Identifier: Apache-2.0
#include "study/trace/timer_log.hpp"

#include <cmath>
#include <cstdlib>
#include <map>

#include "study/common/errors.hpp"
#include "study/trace/trace_bytes.hpp"

namespace ppsim {
namespace {

constexpr std::size_t kLineLimit = 1 << 16;

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

// A number as the logs print it ("1234.56"); nullopt for anything else.
std::optional<double> number(std::string_view text) {
  text = trim(text);
  if (text.empty() || text.size() > 64) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// "forward-compute ................................" -> "forward-compute".
std::string timer_name(std::string_view text) {
  text = trim(text);
  while (!text.empty() && (text.back() == '.' || text.back() == ' ')) text.remove_suffix(1);
  return std::string(text);
}

bool is_pipeline_timer(const std::string& name) {
  return name == "forward-backward" || name == "forward-compute" || name == "backward-compute";
}

class LogReader {
 public:
  LogReader(TraceBytes& bytes) : bytes_(bytes) { log_.file = bytes.path(); }

  TimerLog read() {
    std::string line;
    while (bytes_.line(line, kLineLimit)) {
      ++log_.lines;
      if (log_.lines > 100'000'000) fail("more than 100 M lines");
      take(line);
    }
    close_block();
    if (!bytes_.damage().empty())
      throw InputError(excerpt(log_.file) + ": line " + std::to_string(log_.lines) + ": " + bytes_.damage());
    if (log_.blocks.empty() && log_.zero_bubble.empty()) {
      throw InputError(excerpt(log_.file) +
                       ": no Megatron-LM timer block with forward-backward, forward-compute or backward-compute "
                       "(--timing-log-level 2 prints them) and no zero-bubble profiling conclusion");
    }
    return std::move(log_);
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(excerpt(log_.file) + ": line " + std::to_string(log_.lines) + ": " + why);
  }

  void take(std::string_view line) {
    if (in_block_ && continue_block(line)) return;
    close_block();
    if (const std::size_t at = line.find("time across ranks (ms):"); at != std::string_view::npos) {
      open_block(at >= 11 && line.substr(at - 11, 11) == "(min, max) " ? "minmax" : "max");
      return;
    }
    if (line.find("times across ranks (ms):") != std::string_view::npos) {
      open_block("all");
      return;
    }
    if (const std::size_t at = line.find("time (ms) |"); at != std::string_view::npos) {
      one_line(line.substr(at + 11));
      return;
    }
    if (const std::size_t at = line.find("elapsed time per iteration (ms):"); at != std::string_view::npos) {
      iteration_line(line, at);
      return;
    }
    if (const std::size_t at = line.find(" profiling conclusion:"); at != std::string_view::npos) {
      zero_bubble(line, at);
    }
  }

  void open_block(const char* form) {
    block_ = TimerBlock{};
    block_.form = form;
    block_.iteration = iteration_;
    block_.iteration_ms = iteration_ms_;
    block_.line = log_.lines;
    in_block_ = true;
    current_.clear();
  }

  void close_block() {
    if (!in_block_) return;
    in_block_ = false;
    bool pipeline = false;
    for (const auto& [name, value] : block_.timers) pipeline = pipeline || is_pipeline_timer(name);
    if (pipeline) log_.blocks.push_back(std::move(block_));
  }

  // A line of the open block; false when the block has ended.
  bool continue_block(std::string_view line) {
    const std::string_view body = trim(line);
    // Timer lines are indented and hold no '|' (which the iteration line after the block has).
    if (body.empty() || line.front() != ' ' || body.find('|') != std::string_view::npos) return false;
    if (block_.form == "all") {
      if (body.starts_with("rank ")) {
        const std::size_t colon = body.find(':');
        if (current_.empty() || colon == std::string_view::npos) return false;
        const std::optional<double> rank = number(body.substr(5, colon - 5));
        const std::optional<double> value = number(body.substr(colon + 1));
        if (!rank || !value || *rank < 0 || *rank > 1e7 || *value < 0)
          fail("not a rank's time: '" + excerpt(body) + "'");
        block_.timers[current_].ranks[static_cast<int>(*rank)] = *value;
        return true;
      }
      if (body.back() == ':' && body.find(": ") == std::string_view::npos) {
        current_ = std::string(body.substr(0, body.size() - 1));
        return true;
      }
      return false;
    }
    const std::size_t colon = body.rfind(": ");
    if (colon == std::string_view::npos) return false;
    const std::string name = timer_name(body.substr(0, colon));
    std::string_view value = trim(body.substr(colon + 2));
    TimerValue timer;
    if (value.starts_with("(") && value.ends_with(")")) {
      const std::size_t comma = value.find(',');
      if (comma == std::string_view::npos) fail(excerpt(name) + ": not a (min, max) pair: '" + excerpt(value) + "'");
      timer.min = number(value.substr(1, comma - 1));
      timer.max = number(value.substr(comma + 1, value.size() - comma - 2));
      if (!timer.min || !timer.max || *timer.min < 0 || *timer.max < *timer.min) {
        fail(excerpt(name) + ": not a (min, max) pair of times: '" + excerpt(value) + "'");
      }
    } else {
      timer.max = number(value);
      if (!timer.max || *timer.max < 0) fail(excerpt(name) + ": not a time: '" + excerpt(value) + "'");
    }
    if (name.empty()) return false;
    block_.timers[name] = timer;
    return true;
  }

  void one_line(std::string_view rest) {
    open_block("one line");
    while (!rest.empty()) {
      const std::size_t bar = std::min(rest.find('|'), rest.size());
      const std::string_view pair = trim(rest.substr(0, bar));
      rest.remove_prefix(std::min(bar + 1, rest.size()));
      if (pair.empty()) continue;
      const std::size_t colon = pair.rfind(':');
      if (colon == std::string_view::npos) fail("not 'name: time': '" + excerpt(pair) + "'");
      TimerValue timer;
      timer.max = number(pair.substr(colon + 1));
      if (!timer.max || *timer.max < 0)
        fail(excerpt(timer_name(pair.substr(0, colon))) + ": not a time: '" + excerpt(pair) + "'");
      block_.timers[timer_name(pair.substr(0, colon))] = timer;
    }
    close_block();
  }

  void iteration_line(std::string_view line, std::size_t at) {
    const std::size_t word = line.find("iteration ");
    iteration_ = -1;
    if (word != std::string_view::npos && word < at) {
      std::size_t i = word + 10;
      while (i < line.size() && line[i] == ' ') ++i;
      std::size_t j = i;
      while (j < line.size() && j - i < 9 && line[j] >= '0' && line[j] <= '9') ++j;
      if (j > i) iteration_ = std::atoi(std::string(line.substr(i, j - i)).c_str());
    }
    std::string_view value = line.substr(at + 32);
    value = value.substr(0, std::min(value.find('|'), value.size()));
    const std::optional<double> ms = number(value);
    if (!ms || *ms < 0) fail("elapsed time per iteration (ms): not a time: '" + excerpt(trim(value)) + "'");
    iteration_ms_ = *ms;
  }

  // "rank 3 profiling conclusion: [(1200,), (1300,), (900,), 150, (10,), (20,), (-30,)]"
  void zero_bubble(std::string_view line, std::size_t at) {
    const std::size_t word = line.rfind("rank ", at);
    const std::optional<double> rank =
        word == std::string_view::npos ? std::nullopt : number(line.substr(word + 5, at - word - 5));
    if (!rank || *rank < 0 || *rank > 1e7) fail("profiling conclusion: no rank before it");
    std::string_view rest = trim(line.substr(at + 22));
    std::vector<std::vector<double>> items;
    if (!rest.starts_with("[")) fail("profiling conclusion: not a list: '" + excerpt(rest) + "'");
    rest.remove_prefix(1);
    while (!rest.empty() && rest.front() != ']') {
      rest = trim(rest);
      std::vector<double> item;
      const bool tuple = rest.starts_with("(");
      if (tuple) rest.remove_prefix(1);
      while (!rest.empty()) {
        rest = trim(rest);
        if (tuple && rest.starts_with(")")) {
          rest.remove_prefix(1);
          break;
        }
        std::size_t end = 0;
        while (end < rest.size() && rest[end] != ',' && rest[end] != ')' && rest[end] != ']') ++end;
        const std::optional<double> value = number(rest.substr(0, end));
        if (!value) fail("profiling conclusion: not a number: '" + excerpt(rest.substr(0, end)) + "'");
        item.push_back(*value);
        rest.remove_prefix(end);
        if (rest.starts_with(",")) rest.remove_prefix(1);
        if (!tuple) break;
      }
      items.push_back(std::move(item));
      rest = trim(rest);
      if (rest.starts_with(",")) rest.remove_prefix(1);
      rest = trim(rest);
      if (items.size() > 64) fail("profiling conclusion: too many items");
    }
    if (items.size() < 4 || items[0].empty() || items[0].size() != items[1].size() ||
        items[0].size() != items[2].size() || items[3].size() != 1) {
      fail("profiling conclusion: needs [(F per chunk), (B per chunk), (W per chunk), communication, ...]");
    }
    for (std::size_t k = 0; k < 3; ++k) {
      for (double v : items[k]) {
        if (!(v >= 0)) fail("profiling conclusion: a negative time");
      }
    }
    ZeroBubbleProfile profile;
    profile.rank = static_cast<int>(*rank);
    profile.forward = items[0];
    profile.backward = items[1];
    profile.weight = items[2];
    profile.communication = std::max(0.0, items[3][0]);
    // A rank prints it once per conclusion; the last one stands.
    const auto [known, fresh] = zero_bubble_index_.emplace(profile.rank, log_.zero_bubble.size());
    if (!fresh) {
      log_.zero_bubble[known->second] = profile;
      return;
    }
    log_.zero_bubble.push_back(profile);
  }

  TraceBytes& bytes_;
  TimerLog log_;
  bool in_block_ = false;
  TimerBlock block_;
  std::string current_;
  int iteration_ = -1;
  double iteration_ms_ = -1;
  std::map<int, std::size_t> zero_bubble_index_;  // rank -> its profile in log_.zero_bubble
};

}  // namespace

bool looks_like_timer_log(const std::string& head) {
  // JSON starts with '{', or '[' and an event object (the format's bare array); a log line may start
  // with '[' too ("[2024-09-16 22:59:27]", "[Rank 0]", "[default0]:").
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return false;
  if (head[first] == '{') return false;
  if (head[first] != '[') return true;
  const std::size_t next = head.find_first_not_of(" \t\r\n", first + 1);
  return next != std::string::npos && head[next] != '{' && head[next] != ']';
}

TimerLog read_timer_log(const std::string& path) {
  TraceBytes bytes(path);
  return LogReader(bytes).read();
}

TimerLog read_timer_log_text(const std::string& text, const std::string& name) {
  TraceBytes bytes(text, name);
  return LogReader(bytes).read();
}

}  // namespace ppsim
