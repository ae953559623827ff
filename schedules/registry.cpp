#include "schedules/registry.hpp"

#include <array>

namespace ppsim {
namespace {

constexpr std::array kRegistry = {
    ScheduleInfo{"gpipe", "all forwards, then all backwards; stashes all m micro-batches", "v = 1; any p >= 1, m >= 1",
                 "Huang et al., GPipe, NeurIPS 2019", check_single_chunk, build_gpipe},
    ScheduleInfo{"1f1b", "PipeDream-Flush: warmup, one forward one backward, cooldown; stashes <= p",
                 "v = 1; any p >= 1, m >= 1 (m < p simulates with a partial pipeline)",
                 "Narayanan et al., SC'21 2.2.1; Megatron-LM schedules.py", check_single_chunk, build_one_f_one_b},
};

}  // namespace

std::span<const ScheduleInfo> schedule_registry() { return kRegistry; }

const ScheduleInfo* find_schedule(std::string_view name) {
  for (const auto& info : kRegistry) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace ppsim
