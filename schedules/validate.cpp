// SPDX-License-Identifier: Apache-2.0
#include "schedules/validate.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <vector>

namespace ppsim {
namespace {

enum Seen : std::uint8_t { kSeenF = 1, kSeenB = 2, kSeenI = 4, kSeenW = 8 };

std::string name(int stage, Op op, int mb) { return to_string(Action{stage, op, mb}); }

ScheduleProblem at(int device, std::size_t step, std::string message) {
  return ScheduleProblem{std::move(message), GridMark{device, step}};
}

std::optional<ScheduleProblem> check_shape(const Program& program) {
  if (program.num_devices < 1) return ScheduleProblem{"program has no devices", std::nullopt};
  if (program.num_microbatches < 1) return ScheduleProblem{"program has no micro-batches", std::nullopt};
  if (program.stage_device.empty()) return ScheduleProblem{"program has no stages", std::nullopt};
  if (program.num_pipelines < 1 || program.num_stages() % program.num_pipelines != 0) {
    return ScheduleProblem{"program has " + std::to_string(program.num_stages()) + " stages, which do not split into " +
                               std::to_string(program.num_pipelines) + " pipelines of equal length",
                           std::nullopt};
  }
  if (program.actions.size() != static_cast<std::size_t>(program.num_devices)) {
    return ScheduleProblem{"program has " + std::to_string(program.actions.size()) + " action lists for " +
                               std::to_string(program.num_devices) + " devices",
                           std::nullopt};
  }
  for (int s = 0; s < program.num_stages(); ++s) {
    int d = program.stage_device[static_cast<std::size_t>(s)];
    if (d < 0 || d >= program.num_devices) {
      return ScheduleProblem{"stage " + std::to_string(s) + " is mapped to device " + std::to_string(d) +
                                 ", outside 0.." + std::to_string(program.num_devices - 1),
                             std::nullopt};
    }
  }
  return std::nullopt;
}

// Why an action is out of order or repeated, given what its (stage, micro-batch) has seen so far.
// Called only once a check has failed, so the fast path stays a table lookup.
std::string order_problem(const Action& a, std::uint8_t flags) {
  const std::string text = to_string(a);
  switch (a.op) {
    case Op::kForward:
      return text + " appears twice";
    case Op::kBackward:
    case Op::kBackwardInput:
      if (flags & (kSeenB | kSeenI)) {
        return text + " repeats the backward of stage " + std::to_string(a.stage) + " micro-batch " +
               std::to_string(a.microbatch) + " (a backward is either one B or one I and one W)";
      }
      return text + " comes before its forward " + name(a.stage, Op::kForward, a.microbatch);
    case Op::kBackwardWeight:
      if (flags & kSeenW) return text + " appears twice";
      if (flags & kSeenB) {
        return text + " follows a full backward " + name(a.stage, Op::kBackward, a.microbatch) +
               ", which already computed the weight gradient";
      }
      return text + " comes before its input-gradient backward " + name(a.stage, Op::kBackwardInput, a.microbatch);
  }
  return text;
}

// Per op: the flag it sets, the flags that must not be set yet, and the flags that must be.
constexpr std::uint8_t kSets[kNumOps] = {kSeenF, kSeenB, kSeenI, kSeenW};
constexpr std::uint8_t kConflicts[kNumOps] = {kSeenF, kSeenB | kSeenI, kSeenB | kSeenI, kSeenW | kSeenB};
constexpr std::uint8_t kRequires[kNumOps] = {0, kSeenF, kSeenF, kSeenI};

}  // namespace

std::optional<ScheduleProblem> validate_program(const Program& program) {
  if (auto problem = check_shape(program)) return problem;
  const int stages = program.num_stages();
  const int m = program.num_microbatches;
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(stages) * static_cast<std::size_t>(m), 0);

  for (int d = 0; d < program.num_devices; ++d) {
    const auto& list = program.actions[static_cast<std::size_t>(d)];
    for (std::size_t step = 0; step < list.size(); ++step) {
      const Action& a = list[step];
      // Messages are built only on failure: validation runs once per simulated point in sweeps.
      if (a.stage < 0 || a.stage >= stages) {
        return at(d, step,
                  to_string(a) + ": stage " + std::to_string(a.stage) + " is outside 0.." + std::to_string(stages - 1));
      }
      if (a.microbatch < 0 || a.microbatch >= m) {
        return at(
            d, step,
            to_string(a) + ": micro-batch " + std::to_string(a.microbatch) + " is outside 0.." + std::to_string(m - 1));
      }
      const int owner = program.stage_device[static_cast<std::size_t>(a.stage)];
      if (owner != d) {
        return at(d, step,
                  to_string(a) + " is on device " + std::to_string(d) + " but stage " + std::to_string(a.stage) +
                      " belongs to device " + std::to_string(owner));
      }
      std::uint8_t& flags = seen[static_cast<std::size_t>(a.stage) * static_cast<std::size_t>(m) +
                                 static_cast<std::size_t>(a.microbatch)];
      if (a.fused_with_next &&
          (a.op != Op::kForward || step + 1 >= list.size() || !is_backward_input(list[step + 1].op))) {
        return at(d, step,
                  to_string(a) +
                      " is overlapped with the next action, which must be a B or an I (OVERLAP_F_B "
                      "pairs a forward with a backward)");
      }
      const auto op = static_cast<std::size_t>(a.op);
      if ((flags & kConflicts[op]) != 0 || (flags & kRequires[op]) != kRequires[op]) {
        return at(d, step, order_problem(a, flags));
      }
      flags |= kSets[op];
    }
  }

  for (int s = 0; s < stages; ++s) {
    const int d = program.stage_device[static_cast<std::size_t>(s)];
    const std::size_t end = program.actions[static_cast<std::size_t>(d)].size();
    for (int j = 0; j < m; ++j) {
      const std::uint8_t flags =
          seen[static_cast<std::size_t>(s) * static_cast<std::size_t>(m) + static_cast<std::size_t>(j)];
      if (!(flags & kSeenF)) return at(d, end, name(s, Op::kForward, j) + " is missing");
      if (!(flags & (kSeenB | kSeenI))) {
        return at(d, end,
                  name(s, Op::kBackward, j) + " (or " + name(s, Op::kBackwardInput, j) + " and " +
                      name(s, Op::kBackwardWeight, j) + ") is missing");
      }
      if ((flags & kSeenI) && !(flags & kSeenW)) return at(d, end, name(s, Op::kBackwardWeight, j) + " is missing");
    }
  }
  return std::nullopt;
}

std::string format_step_grid(const Program& program, std::span<const GridMark> all_marks, std::size_t context) {
  // A hostile program may have 100,000 devices, all stuck: the grid shows the first kMaxGridMarks
  // marks, their devices (and a neighbour each side) when there are more than kMaxGridDevices, and
  // only the steps near them, so that it costs and prints in proportion to what it shows.
  const std::span<const GridMark> marks = all_marks.first(std::min(all_marks.size(), kMaxGridMarks));
  std::size_t rows = 0;
  for (const auto& list : program.actions) rows = std::max(rows, list.size());
  for (const auto& mark : marks) rows = std::max(rows, mark.step + 1);

  std::vector<int> devices;
  if (program.num_devices <= static_cast<int>(kMaxGridDevices)) {
    for (int d = 0; d < program.num_devices; ++d) devices.push_back(d);
  } else {
    std::set<int> near;
    for (const auto& mark : marks) {
      for (int d = mark.device - 1; d <= mark.device + 1; ++d) {
        if (d >= 0 && d < program.num_devices && near.size() < kMaxGridDevices) near.insert(d);
      }
    }
    if (near.empty()) near.insert(0);
    devices.assign(near.begin(), near.end());
  }
  std::vector<std::size_t> steps;  // ascending
  if (marks.empty()) {
    for (std::size_t step = 0; step < std::min(rows, 2 * context + 1); ++step) steps.push_back(step);
  } else {
    std::set<std::size_t> near;
    for (const auto& mark : marks) {
      for (std::size_t step = mark.step > context ? mark.step - context : 0; step <= mark.step + context && step < rows;
           ++step) {
        near.insert(step);
      }
    }
    steps.assign(near.begin(), near.end());
  }

  auto is_marked = [&](int d, std::size_t step) {
    return std::any_of(marks.begin(), marks.end(), [&](const GridMark& g) { return g.device == d && g.step == step; });
  };
  auto cell = [&](int d, std::size_t step) -> std::string {
    const auto& list = program.actions[static_cast<std::size_t>(d)];
    std::string text = step < list.size() ? to_string(list[step]) : (step == list.size() ? "(end)" : "");
    if (step < list.size() && list[step].fused_with_next) text += "+";  // overlapped with the next row's action
    return is_marked(d, step) ? "[" + text + "]" : text;
  };

  std::size_t width = 8;  // fits "device 0"
  for (int d : devices) {
    for (std::size_t step : steps) width = std::max(width, cell(d, step).size());
  }
  std::ostringstream out;
  auto pad = [&](std::string text) {
    text.resize(std::max(text.size(), width), ' ');
    return text;
  };
  // Between two shown devices that are not neighbours, a "..." column says some are left out.
  auto gap_before = [&](std::size_t k) { return k > 0 && devices[k] != devices[k - 1] + 1; };
  std::string header = "step  ";
  for (std::size_t k = 0; k < devices.size(); ++k) {
    if (gap_before(k)) header += "...  ";
    header += pad("device " + std::to_string(devices[k])) + "  ";
  }
  while (header.back() == ' ') header.pop_back();
  out << header << '\n';
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::size_t step = steps[k];
    if (k == 0 ? step > 0 : step != steps[k - 1] + 1) out << " ...\n";
    std::string row = std::to_string(step);
    row.resize(std::max<std::size_t>(row.size(), 4), ' ');
    row += "  ";
    bool marked_row = false;
    for (std::size_t c = 0; c < devices.size(); ++c) {
      if (gap_before(c)) row += "     ";
      row += pad(cell(devices[c], step)) + "  ";
      marked_row = marked_row || is_marked(devices[c], step);
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out << row << (marked_row ? "  <-- here" : "") << '\n';
  }
  if (!steps.empty() && steps.back() + 1 < rows) out << " ...\n";
  if (all_marks.size() > marks.size()) {
    out << "(" << all_marks.size() - marks.size() << " more marked cells not shown)\n";
  }
  return out.str();
}

}  // namespace ppsim
