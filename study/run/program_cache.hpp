// SPDX-License-Identifier: Apache-2.0
#pragma once
// Stored programs of registry schedules, built (under FSDP, lowered as torch's runtime lowers them)
// and validated once per schedule and size, for a caller that runs many layouts of the same shapes:
// ppsim plan runs thousands of layouts over a few hundred (schedule, p, m, v), and building and
// lowering a program costs more than replaying it. Safe to share between threads.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "schedules/program.hpp"

namespace ppsim {

class ProgramCache {
 public:
  // The program of `schedule` at `params` (`lowered`: with torch's FSDP actions), made by `build` on
  // first use; `build`'s exceptions pass through and nothing is kept.
  std::shared_ptr<const Program> get(const std::string& schedule, const ScheduleParams& params, bool lowered,
                                     const std::function<Program()>& build);

 private:
  using Key = std::tuple<std::string, int, int, int, int, int, bool>;
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<const Program>> programs_;
};

}  // namespace ppsim
