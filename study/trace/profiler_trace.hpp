// SPDX-License-Identifier: Apache-2.0
#pragma once
// torch.profiler's Chrome traces (Kineto's export_chrome_trace), one file per rank.
//
// Pipeline actions come from torch.distributed.pipelining's ranges: its runtime wraps every action in
// record_function(f"PP:{action}") (schedules.py, _get_profiler_function_name), "PP:0F1", "PP:1I0",
// "PP:(0F1;1B0)OVERLAP_F_B", "PP:2RECV_F0", which Kineto writes as user_annotation on the CPU and as
// gpu_user_annotation spanning the kernels the range launched; ScheduleGPipe's "Forward i" and
// "Backward i" ranges. The GPU spans are taken where there are any, the CPU ranges otherwise. A RECV
// range's end on the GPU is when its message had arrived. NCCL kernels give each rank's
// communication; every kernel adds to its busy time, which is reconciled with the actions read.

#include <string>
#include <vector>

#include "study/trace/chrome_events.hpp"
#include "study/trace/trace_import.hpp"

namespace ppsim {

struct ProfilerAnnotation {
  enum class Kind : std::uint8_t { kCompute, kSend, kRecv };
  Kind kind = Kind::kCompute;
  Action action;  // kSend/kRecv: stage and micro-batch of the SEND/RECV, op F or B for its direction
  Action partner;
  bool gpipe = false;  // "Forward i"/"Backward i": the stage is the rank's place in the pipeline
  double start = 0;
  double end = 0;
  double duration = 0;  // as written
};

struct ProfilerKernel {
  double start = 0;
  double end = 0;
  double duration = 0;  // as written: end - start loses bits where ts counts from the epoch
  bool nccl = false;
  bool point_to_point = false;  // SendRecv, send, recv
  std::int64_t bytes = -1;      // In msg nelems x the dtype's size, where the args say
  std::string collective;       // non-P2P NCCL: the collective's name
};

struct ProfilerRank {
  int rank = 0;
  bool rank_known = false;  // from distributedInfo or the file's name
  std::string file;
  std::vector<ProfilerAnnotation> gpu;  // actions from gpu_user_annotation
  std::vector<ProfilerAnnotation> cpu;  // from user_annotation
  std::vector<ProfilerKernel> kernels;
  std::int64_t steps = 0;
  double offset = 0;  // microseconds to add to align with the other ranks (baseTimeNanoseconds)
  double base_ns = 0;
};

class ProfilerRankCollector {
 public:
  ProfilerRankCollector(std::string file, int index);
  void on_event(const ChromeEvent& event);
  ProfilerRank finish(const ChromeTraceHeader& header);

 private:
  ProfilerRank rank_;
  int index_ = 0;
};

// The ranks' pipeline step as a TraceRun (when any rank holds actions) and each rank's kernels.
void build_profiler_reading(std::vector<ProfilerRank>& ranks, const TraceReadOptions& options, TraceReading& out);

// "PP:0F1" and the rest; false for any other name. Exposed for the tests.
bool parse_pipeline_range(const std::string& name, ProfilerAnnotation& out);

}  // namespace ppsim
