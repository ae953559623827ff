// SPDX-License-Identifier: Apache-2.0
#pragma once
// Megatron-LM's timer log, as its training loop prints it (megatron/core/timers.py, Timers.log, and
// megatron/training/training.py, training_log):
//   iteration line   " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples: ... |
//                     elapsed time per iteration (ms): 5361.6 | ..."
//   --timing-log-option minmax (default)  "(min, max) time across ranks (ms):" then
//                     "    forward-compute ..........: (1030.20, 1100.11)" per timer
//   --timing-log-option max   "max time across ranks (ms):" then "    name ....: 1100.11"
//   --timing-log-option all   "times across ranks (ms):" then "  name:" and "     rank  3: 12.50"
//   before August 2022 one line: "time (ms) | forward-compute: 193.77 | backward-compute: 73.02 | ..."
// Only the first line of a block may carry the logger's prefix ("INFO:megatron.core.timers:"). Each
// value is the timer's sum over the iteration's micro-batches (and chunks), averaged over the log
// interval; the level-2 timers (--timing-log-level 2) are the per-micro-batch ones.
//
// Also the zero-bubble repository's profile (sail-sg/zero-bubble-pipeline-parallelism,
// megatron/core/pipeline_parallel/zerobubble/runtime.py): "rank R profiling conclusion:
// [(f_c0, ...), (b_c0, ...), (w_c0, ...), comm, (f_mem...), ...]", each rank's average F, B (input
// gradient) and W per model chunk in integer microseconds, and its communication time.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ppsim {

struct TimerValue {
  std::optional<double> min;
  std::optional<double> max;    // the only value of the max and one-line forms
  std::map<int, double> ranks;  // --timing-log-option all
};

struct TimerBlock {
  int iteration = -1;                        // from the iteration line before it; -1: none
  double iteration_ms = -1;                  // its "elapsed time per iteration (ms)"
  std::string form;                          // "minmax", "max", "all" or "one line"
  std::map<std::string, TimerValue> timers;  // milliseconds
  std::size_t line = 0;                      // where it starts, for messages
};

struct ZeroBubbleProfile {
  int rank = 0;
  std::vector<double> forward;   // per chunk, microseconds
  std::vector<double> backward;  // input-gradient backward (ppsim's I), per chunk
  std::vector<double> weight;    // W, per chunk
  double communication = 0;      // microseconds
};

struct TimerLog {
  std::string file;
  std::vector<TimerBlock> blocks;  // only blocks with a pipeline timer (forward-compute, forward-backward, ...)
  std::vector<ZeroBubbleProfile> zero_bubble;
  std::size_t lines = 0;
};

// Whether `head` (a file's first bytes) looks like a timer log rather than JSON.
bool looks_like_timer_log(const std::string& head);

// Reads the log (plain or gzip); InputError "FILE: line N: ..." for a block it cannot read, and for a
// log without any pipeline timer block or zero-bubble profile.
TimerLog read_timer_log(const std::string& path);
TimerLog read_timer_log_text(const std::string& text, const std::string& name);

}  // namespace ppsim
