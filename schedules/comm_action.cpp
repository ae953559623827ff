// SPDX-License-Identifier: Apache-2.0
#include "schedules/comm_action.hpp"

#include <array>
#include <charconv>
#include <utility>

namespace ppsim {
namespace {

// Longest names first, so that a name is never taken for the start of a longer one.
constexpr std::array<std::pair<std::string_view, CommOp>, 7> kNames = {{
    {"REDUCE_GRAD", CommOp::kReduceGrad},
    {"UNSHARD", CommOp::kUnshard},
    {"RESHARD", CommOp::kReshard},
    {"SEND_F", CommOp::kSendF},
    {"RECV_F", CommOp::kRecvF},
    {"SEND_B", CommOp::kSendB},
    {"RECV_B", CommOp::kRecvB},
}};

std::string_view name_of(CommOp op) {
  for (const auto& [name, named] : kNames) {
    if (named == op) return name;
  }
  return "?";
}

// A non-negative decimal without a sign or a leading zero that fits an int32.
std::optional<std::int32_t> number(std::string_view digits) {
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  std::int32_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::string to_string(const CommAction& action) {
  std::string text = std::to_string(action.stage) + std::string(name_of(action.op));
  if (action.microbatch >= 0) text += std::to_string(action.microbatch);
  return text;
}

CommParse parse_comm_action(std::string_view text) {
  CommParse parse;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string_view rest = text.substr(digits);
  for (const auto& [name, op] : kNames) {
    if (!rest.starts_with(name)) continue;
    parse.recognized = true;
    const std::string quoted = "'" + std::string(text) + "'";
    const std::optional<std::int32_t> stage = number(text.substr(0, digits));
    if (!stage) {
      parse.error = quoted + " needs its stage before " + std::string(name) + ", as in 0" + std::string(name);
      return parse;
    }
    const std::string_view tail = rest.substr(name.size());
    const bool moves_a_message = is_send(op) || is_recv(op);
    if (!moves_a_message) {
      if (!tail.empty()) {
        parse.error = quoted + ": " + std::string(name) + " takes no micro-batch, as in " +
                      std::to_string(*stage) + std::string(name);
        return parse;
      }
      parse.ok = true;
      parse.action = CommAction{0, op, *stage, -1};
      return parse;
    }
    const std::optional<std::int32_t> microbatch = number(tail);
    if (!microbatch) {
      parse.error = quoted + ": " + std::string(name) + " needs a micro-batch, as in " + std::to_string(*stage) +
                    std::string(name) + "0";
      return parse;
    }
    parse.ok = true;
    parse.action = CommAction{0, op, *stage, *microbatch};
    return parse;
  }
  return parse;
}

}  // namespace ppsim
