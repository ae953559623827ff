// SPDX-License-Identifier: Apache-2.0
#include "study/run/program_cache.hpp"

namespace ppsim {

std::shared_ptr<const Program> ProgramCache::get(const std::string& schedule, const ScheduleParams& params,
                                                 bool lowered, const std::function<Program()>& build) {
  const Key key{schedule, params.p, params.m, params.v, params.microbatch_group, params.sequence_splits, lowered};
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = programs_.find(key); found != programs_.end()) return found->second;
  }
  // Built outside the lock: two threads may build the same program, and the first one kept wins.
  auto program = std::make_shared<const Program>(build());
  const std::lock_guard<std::mutex> lock(mutex_);
  return programs_.emplace(key, std::move(program)).first->second;
}

}  // namespace ppsim
