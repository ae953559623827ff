// SPDX-License-Identifier: Apache-2.0
#include "schedules/action.hpp"

#include <array>
#include <charconv>

#include "schedules/excerpt.hpp"

namespace ppsim {
namespace {

// Ops that torch.distributed.pipelining writes in communication-lowered schedules; ppsim
// derives communication from the dependencies, so these are refused with a reason.
constexpr std::array<std::string_view, 7> kTorchCommOps = {"SEND_F",  "RECV_F",  "SEND_B",     "RECV_B",
                                                           "UNSHARD", "RESHARD", "REDUCE_GRAD"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Parses a non-negative decimal without leading zeros; returns false with `why` set otherwise.
bool parse_index(std::string_view digits, std::string_view what, std::int32_t& out, std::string& why) {
  if (digits.empty()) {
    why = "missing " + std::string(what) + " number";
    return false;
  }
  for (char c : digits) {
    if (!is_digit(c)) {
      why = "unexpected " + quoted_excerpt(std::string_view(&c, 1)) + " in the " + std::string(what) + " number";
      return false;
    }
  }
  if (digits.size() > 1 && digits[0] == '0') {
    why = std::string(what) + " number has a leading zero";
    return false;
  }
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    why = std::string(what) + " number is too large";
    return false;
  }
  return true;
}

}  // namespace

char op_letter(Op op) {
  switch (op) {
    case Op::kForward:
      return 'F';
    case Op::kBackward:
      return 'B';
    case Op::kBackwardInput:
      return 'I';
    case Op::kBackwardWeight:
      return 'W';
  }
  return '?';
}

std::string to_string(const Action& action) {
  std::string text = std::to_string(action.stage);
  text += op_letter(action.op);
  text += std::to_string(action.microbatch);
  return text;
}

ActionParse parse_action(std::string_view text) {
  ActionParse result;
  auto fail = [&](std::string why) {
    result.error =
        quoted_excerpt(text) + " is not an action (" + why + "; expected [stage][F|B|I|W][micro-batch], e.g. 0F1)";
    return result;
  };
  std::size_t pos = 0;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  std::string why;
  if (!parse_index(text.substr(0, pos), "stage", result.action.stage, why)) return fail(why);
  if (pos == text.size()) return fail("missing op letter");

  std::string_view rest = text.substr(pos);
  for (std::string_view comm : kTorchCommOps) {
    if (rest.starts_with(comm)) {
      return fail("'" + std::string(comm) +
                  "' is a communication op; ppsim derives communication from the compute ops");
    }
  }
  switch (rest[0]) {
    case 'F':
      result.action.op = Op::kForward;
      break;
    case 'B':
      result.action.op = Op::kBackward;
      break;
    case 'I':
      result.action.op = Op::kBackwardInput;
      break;
    case 'W':
      result.action.op = Op::kBackwardWeight;
      break;
    default:
      return fail("unknown op " + quoted_excerpt(rest.substr(0, 1)));
  }
  if (!parse_index(rest.substr(1), "micro-batch", result.action.microbatch, why)) return fail(why);
  result.ok = true;
  return result;
}

CellParse parse_cell(std::string_view text) {
  constexpr std::string_view kOverlapSuffix = ")OVERLAP_F_B";
  CellParse cell;
  if (!text.starts_with('(')) {
    const ActionParse single = parse_action(text);
    cell.ok = single.ok;
    cell.first = single.action;
    cell.error = single.error;
    return cell;
  }
  auto fail = [&](std::string why) {
    cell.error = quoted_excerpt(text) + " is not an overlapped pair (" + why +
                 "; expected (F action;B or I action)OVERLAP_F_B, e.g. (0F3;3B1)OVERLAP_F_B)";
    return cell;
  };
  if (!text.ends_with(kOverlapSuffix)) return fail("missing )OVERLAP_F_B");
  const std::string_view inside = text.substr(1, text.size() - 1 - kOverlapSuffix.size());
  const auto semicolon = inside.find(';');
  if (semicolon == std::string_view::npos) return fail("missing ';' between the two actions");
  const ActionParse forward = parse_action(inside.substr(0, semicolon));
  if (!forward.ok) return fail(forward.error);
  const ActionParse backward = parse_action(inside.substr(semicolon + 1));
  if (!backward.ok) return fail(backward.error);
  if (forward.action.op != Op::kForward) return fail("the first action must be a forward");
  if (!is_backward_input(backward.action.op)) return fail("the second action must be a B or an I");
  cell.ok = true;
  cell.pair = true;
  cell.first = forward.action;
  cell.first.fused_with_next = true;
  cell.second = backward.action;
  return cell;
}

std::string cell_text(const Action& action, const Action* next) {
  if (!action.fused_with_next || next == nullptr) return to_string(action);
  return "(" + to_string(action) + ";" + to_string(*next) + ")OVERLAP_F_B";
}

}  // namespace ppsim
