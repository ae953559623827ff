// SPDX-License-Identifier: Apache-2.0
#include "study/trace/profiler_trace.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "study/common/errors.hpp"

namespace ppsim {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && text.size() <= 9 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int to_int(std::string_view text) {
  int value = 0;
  for (char c : text) value = value * 10 + (c - '0');
  return value;
}

// c10's ScalarType names, as record_param_comms writes "dtype".
int dtype_bytes(const std::string& dtype) {
  static const std::map<std::string, int, std::less<>> sizes = {
      {"Float", 4},         {"Double", 8},      {"Half", 2},         {"BFloat16", 2},      {"Byte", 1},
      {"Char", 1},          {"Bool", 1},        {"Short", 2},        {"Int", 4},           {"Long", 8},
      {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"ComplexFloat", 8}, {"ComplexDouble", 16}};
  const auto found = sizes.find(dtype);
  return found == sizes.end() ? 0 : found->second;
}

// The collective of an NCCL kernel's name: ncclKernel_AllReduce_RING_LL_Sum_float(...),
// ncclDevKernel_SendRecv(...), ncclDevKernel_AllGather_RING_LL(...) (NCCL 2.11 to 2.30).
std::string collective_of(const std::string& name) {
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_", "ncclSymkDevKernel_"}) {
    const std::size_t at = name.find(prefix);
    if (at == std::string::npos) continue;
    const std::size_t from = at + prefix.size();
    std::size_t to = from;
    while (to < name.size() && name[to] != '_' && name[to] != '(') ++to;
    return name.substr(from, to - from);
  }
  return "nccl";
}

// The rank in a file's name (rank-3.json, rank_3, rank3): torch.profiler's traces of older PyTorch
// have no distributedInfo.
std::optional<int> rank_in_name(const std::string& path) {
  const std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const std::size_t at = base.find("rank");
  if (at == std::string::npos) return std::nullopt;
  std::size_t from = at + 4;
  if (from < base.size() && (base[from] == '-' || base[from] == '_')) ++from;
  std::size_t to = from;
  while (to < base.size() && to - from < 7 && base[to] >= '0' && base[to] <= '9') ++to;
  if (to == from) return std::nullopt;
  return to_int(std::string_view(base).substr(from, to - from));
}

}  // namespace

namespace {
// Micro-batch indices a range may name: any real run's are far below.
constexpr int kMaxMicrobatch = 10'000'000;
}  // namespace

bool parse_pipeline_range(const std::string& name, ProfilerAnnotation& out) {
  if (name.starts_with("Forward ") || name.starts_with("Backward ")) {
    const bool forward = name[0] == 'F';
    const std::string_view index = std::string_view(name).substr(forward ? 8 : 9);
    if (!all_digits(index) || to_int(index) >= kMaxMicrobatch) return false;
    out = {};
    out.gpipe = true;
    out.action = Action(0, forward ? Op::kForward : Op::kBackward, to_int(index));
    return true;
  }
  if (!name.starts_with("PP:")) return false;
  const std::string_view rest = std::string_view(name).substr(3);
  out = {};
  if (rest.starts_with("(")) {
    const CellParse cell = parse_cell(rest);
    if (!cell.ok || !cell.pair || cell.first.stage >= 65536 || cell.second.stage >= 65536 ||
        cell.first.microbatch >= kMaxMicrobatch || cell.second.microbatch >= kMaxMicrobatch) {
      return false;
    }
    out.action = cell.first;
    out.partner = cell.second;
    return true;
  }
  std::size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 0 || digits > 5 || to_int(rest.substr(0, digits)) >= 65536) return false;  // stages below 65536
  const int stage = to_int(rest.substr(0, digits));
  const std::string_view tail = rest.substr(digits);
  for (const auto& [kind_name, kind, op] :
       {std::tuple{std::string_view("SEND_F"), ProfilerAnnotation::Kind::kSend, Op::kForward},
        std::tuple{std::string_view("RECV_F"), ProfilerAnnotation::Kind::kRecv, Op::kForward},
        std::tuple{std::string_view("SEND_B"), ProfilerAnnotation::Kind::kSend, Op::kBackward},
        std::tuple{std::string_view("RECV_B"), ProfilerAnnotation::Kind::kRecv, Op::kBackward}}) {
    if (!tail.starts_with(kind_name)) continue;
    const std::string_view index = tail.substr(kind_name.size());
    if (!all_digits(index) || to_int(index) >= kMaxMicrobatch) return false;
    out.kind = kind;
    out.action = Action(stage, op, to_int(index));
    return true;
  }
  const ActionParse action = parse_action(rest);
  if (!action.ok || action.action.microbatch >= kMaxMicrobatch)
    return false;  // UNSHARD, RESHARD, REDUCE_GRAD: not timed here
  out.action = action.action;
  return true;
}

ProfilerRankCollector::ProfilerRankCollector(std::string file, int index) : index_(index) {
  rank_.file = std::move(file);
}

void ProfilerRankCollector::on_event(const ChromeEvent& event) {
  if (event.ph != "X" || !event.ts || !event.dur || !(*event.dur >= 0)) return;
  const double start = *event.ts;
  const double end = *event.ts + *event.dur;
  if (event.cat == "kernel") {
    ProfilerKernel kernel;
    kernel.start = start;
    kernel.end = end;
    kernel.duration = *event.dur;
    kernel.nccl = event.name.find("nccl") != std::string::npos;
    if (kernel.nccl) {
      const std::string* named = event.text("Collective name");
      kernel.collective = named != nullptr ? *named : collective_of(event.name);
      kernel.point_to_point = kernel.collective == "SendRecv" || kernel.collective == "send" ||
                              kernel.collective == "recv" || kernel.collective == "Send" || kernel.collective == "Recv";
      const std::optional<double> elements = event.number("In msg nelems");
      const std::string* dtype = event.text("dtype");
      if (elements && dtype != nullptr && dtype_bytes(*dtype) > 0 && *elements >= 0 && *elements < 1e17) {
        kernel.bytes = static_cast<std::int64_t>(*elements) * dtype_bytes(*dtype);
      }
    }
    rank_.kernels.push_back(std::move(kernel));
    return;
  }
  const bool gpu = event.cat == "gpu_user_annotation";
  // The legacy profiler (torch.autograd.profiler, and PyTorch built without Kineto) writes no cat.
  if (!gpu && event.cat != "user_annotation" && !event.cat.empty()) return;
  if (!gpu && event.name.starts_with("ProfilerStep#")) {
    ++rank_.steps;
    return;
  }
  ProfilerAnnotation annotation;
  if (!parse_pipeline_range(event.name, annotation)) return;
  annotation.start = start;
  annotation.end = end;
  annotation.duration = *event.dur;
  (gpu ? rank_.gpu : rank_.cpu).push_back(annotation);
}

ProfilerRank ProfilerRankCollector::finish(const ChromeTraceHeader& header) {
  if (header.rank && *header.rank >= 0 && *header.rank < 1e7) {
    rank_.rank = static_cast<int>(*header.rank);
    rank_.rank_known = true;
  } else if (const std::optional<int> named = rank_in_name(rank_.file)) {
    rank_.rank = *named;
    rank_.rank_known = true;
  } else {
    rank_.rank = index_;
  }
  rank_.base_ns = header.base_ns.value_or(0);
  return std::move(rank_);
}

namespace {

struct Key {
  int stage;
  int op;  // Op, or 10 + kind for SEND/RECV
  int microbatch;
  auto operator<=>(const Key&) const = default;
};

Key key_of(const ProfilerAnnotation& a) {
  const int op = a.kind == ProfilerAnnotation::Kind::kCompute
                     ? static_cast<int>(a.action.op)
                     : 10 + static_cast<int>(a.kind) * 2 + (a.action.op == Op::kForward ? 0 : 1);
  return {a.action.stage, op, a.action.microbatch};
}

// The union of intervals' length, and the sum of those that start inside `spans` (sorted, disjoint
// enough: each kernel counts once).
double union_length(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  double open_start = 0;
  double open_end = -std::numeric_limits<double>::infinity();
  for (const auto& [s, e] : intervals) {
    if (s > open_end) {
      if (open_end > open_start) total += open_end - open_start;
      open_start = s;
      open_end = e;
    } else {
      open_end = std::max(open_end, e);
    }
  }
  if (open_end > open_start) total += open_end - open_start;
  return total;
}

// Ranks whose traces share no time base (the legacy profiler's times count from each process's own
// start) are aligned by their messages, as NTP aligns clocks: a message arrives after it was sent, so
// each message from device a to b bounds b's offset against a's from below and each from b to a from
// above; the middle of the bounds is taken, device by device from device 0.
void align_clocks(TraceRun& run, std::vector<std::string>& notes) {
  const int p = run.num_devices();
  std::vector<std::optional<double>> offset(static_cast<std::size_t>(p));
  offset[0] = 0;
  bool conflict = false;
  for (bool progress = true; progress;) {
    progress = false;
    for (int b = 0; b < p; ++b) {
      if (offset[static_cast<std::size_t>(b)]) continue;
      for (int a = 0; a < p && !offset[static_cast<std::size_t>(b)]; ++a) {
        if (!offset[static_cast<std::size_t>(a)]) continue;
        double lower = -std::numeric_limits<double>::infinity();
        double upper = std::numeric_limits<double>::infinity();
        for (const TracedMessage& m : run.messages) {
          if (m.src == a && m.dst == b) lower = std::max(lower, m.depart_start - m.arrival);
          if (m.src == b && m.dst == a) upper = std::min(upper, m.arrival - m.depart_start);
        }
        if (std::isinf(lower) && std::isinf(upper)) continue;
        double relative = std::isinf(lower) ? upper : std::isinf(upper) ? lower : (lower + upper) / 2;
        if (lower > upper) conflict = true;
        offset[static_cast<std::size_t>(b)] = *offset[static_cast<std::size_t>(a)] + relative;
        progress = true;
      }
    }
  }
  for (int d = 0; d < p; ++d) {
    const double shift = offset[static_cast<std::size_t>(d)].value_or(0);
    for (TracedItem& item : run.devices[static_cast<std::size_t>(d)]) {
      item.start += shift;
      item.end += shift;
    }
  }
  for (TracedMessage& m : run.messages) {
    const double sent = offset[static_cast<std::size_t>(m.src)].value_or(0);
    m.depart_start += sent;
    m.depart_end += sent;
    m.arrival += offset[static_cast<std::size_t>(m.dst)].value_or(0);
  }
  notes.push_back(std::string("the ranks' traces share no time base: their clocks are aligned by their messages") +
                  (conflict ? " (which disagree: some messages still arrive before they leave)" : ""));
}

}  // namespace

void build_profiler_reading(std::vector<ProfilerRank>& ranks, const TraceReadOptions& options, TraceReading& out) {
  std::sort(ranks.begin(), ranks.end(), [](const ProfilerRank& a, const ProfilerRank& b) { return a.rank < b.rank; });
  for (std::size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].rank == ranks[i - 1].rank) {
      throw InputError(excerpt(ranks[i].file) + ": rank " + std::to_string(ranks[i].rank) + " again (as in " +
                       excerpt(ranks[i - 1].file) + "): give each rank's trace once");
    }
  }
  double base = std::numeric_limits<double>::infinity();
  for (const ProfilerRank& r : ranks) base = std::min(base, r.base_ns);
  for (ProfilerRank& r : ranks) r.offset = (r.base_ns - base) / 1000;
  out.format = "PyTorch profiler trace";

  // Which ranks run the pipeline, from which source.
  std::vector<ProfilerRank*> pipeline;
  bool any_cpu_only = false;
  for (ProfilerRank& r : ranks) {
    if (r.gpu.empty() && !r.cpu.empty()) {
      r.gpu = std::move(r.cpu);  // CPU ranges stand in: no kernels ran inside them (a CPU-only run)
      any_cpu_only = true;
    }
    const bool compute = std::any_of(r.gpu.begin(), r.gpu.end(), [](const ProfilerAnnotation& a) {
      return a.kind == ProfilerAnnotation::Kind::kCompute;
    });
    if (compute) pipeline.push_back(&r);
  }
  if (any_cpu_only) out.notes.push_back("times of the CPU-side ranges: the trace has no GPU spans of them");

  // Every rank's kernels, reconciled whether or not it runs pipeline actions.
  for (ProfilerRank& r : ranks) {
    RankKernels totals;
    totals.rank = r.rank;
    totals.file = r.file;
    totals.steps = r.steps;
    std::vector<std::pair<double, double>> intervals;
    intervals.reserve(r.kernels.size());
    totals.first = std::numeric_limits<double>::infinity();
    totals.last = -std::numeric_limits<double>::infinity();
    for (const ProfilerKernel& k : r.kernels) {
      ++totals.kernels;
      totals.kernel_time += k.duration;
      if (k.nccl) {
        ++totals.communication_kernels;
        totals.communication_time += k.duration;
      }
      totals.first = std::min(totals.first, k.start);
      totals.last = std::max(totals.last, k.end);
    }
    if (r.kernels.empty()) totals.first = totals.last = 0;
    // From the first kernel's start, so that start + duration keeps its bits where ts counts from the epoch.
    for (const ProfilerKernel& k : r.kernels)
      intervals.emplace_back(k.start - totals.first, k.start - totals.first + k.duration);
    totals.busy = union_length(std::move(intervals));
    // Kernel time inside the compute actions: each kernel by its start.
    std::vector<std::pair<double, double>> spans;
    for (const ProfilerAnnotation& a : r.gpu) {
      if (a.kind == ProfilerAnnotation::Kind::kCompute) spans.emplace_back(a.start, a.end);
    }
    std::sort(spans.begin(), spans.end());
    for (const ProfilerKernel& k : r.kernels) {
      auto after =
          std::upper_bound(spans.begin(), spans.end(), std::pair{k.start, std::numeric_limits<double>::infinity()});
      // Spans may nest in a CPU-only trace; the latest one starting before the kernel decides.
      if (after != spans.begin() && k.start < std::prev(after)->second) totals.in_actions += k.duration;
    }
    out.ranks.push_back(totals);
  }
  if (pipeline.empty()) return;

  // GPipe's ranges carry no stage: it is the rank's place among the pipeline's ranks.
  for (std::size_t i = 0; i < pipeline.size(); ++i) {
    for (ProfilerAnnotation& a : pipeline[i]->gpu) {
      if (a.gpipe) a.action.stage = static_cast<int>(i);
    }
  }
  // Stage -> the lowest rank that runs it; a rank whose stages all have one is a replica (data
  // parallel) and is left out.
  std::map<int, int> stage_rank;
  std::vector<ProfilerRank*> devices;
  int replicas = 0;
  for (ProfilerRank* r : pipeline) {
    std::set<int> stages;
    for (const ProfilerAnnotation& a : r->gpu) {
      if (a.kind != ProfilerAnnotation::Kind::kCompute) continue;
      stages.insert(a.action.stage);
      if (a.action.fused_with_next) stages.insert(a.partner.stage);
    }
    const bool fresh = std::any_of(stages.begin(), stages.end(), [&](int s) { return stage_rank.count(s) == 0; });
    if (!fresh) {
      ++replicas;
      continue;
    }
    for (int s : stages) {
      if (stage_rank.count(s) != 0) {
        throw InputError(excerpt(r->file) + ": stage " + std::to_string(s) + " also runs on rank " +
                         std::to_string(stage_rank[s]) + ", with other stages: not one pipeline");
      }
      stage_rank[s] = static_cast<int>(devices.size());
    }
    devices.push_back(r);
  }
  if (replicas > 0) {
    out.notes.push_back(std::to_string(replicas) +
                        " rank(s) run the same stages again (data-parallel replicas): the "
                        "first pipeline's ranks are read");
  }
  const int stages = stage_rank.rbegin()->first + 1;
  for (int s = 0; s < stages; ++s) {
    if (stage_rank.count(s) == 0) {
      throw InputError(excerpt(devices.front()->file) + ": no rank runs stage " + std::to_string(s) +
                       " (stages up to " + std::to_string(stages - 1) + " run): give every pipeline rank's trace");
    }
  }

  // Steps: the k-th time a rank runs an action is its step k.
  std::vector<std::vector<int>> occurrence(devices.size());
  int complete = std::numeric_limits<int>::max();
  for (std::size_t d = 0; d < devices.size(); ++d) {
    auto& list = devices[d]->gpu;
    std::stable_sort(list.begin(), list.end(),
                     [](const ProfilerAnnotation& a, const ProfilerAnnotation& b) { return a.start < b.start; });
    std::map<Key, int> seen;
    std::map<int, int> per_step;
    for (const ProfilerAnnotation& a : list) {
      const int k = seen[key_of(a)]++;
      occurrence[d].push_back(k);
      ++per_step[k];
    }
    int full = 0;
    while (per_step.count(full) != 0 && per_step[full] == per_step[0]) ++full;
    complete = std::min(complete, full);
  }
  if (complete <= 0) throw InputError(excerpt(devices.front()->file) + ": no complete pipeline step");
  const int step = options.step >= 0 ? options.step : complete - 1;
  if (step >= complete) {
    throw InputError("--step: " + std::to_string(step) + " is beyond the " + std::to_string(complete) +
                     " complete step(s) of the trace (counted from 0)");
  }
  if (complete > 1)
    out.notes.push_back("step " + std::to_string(step) + " of " + std::to_string(complete) + " complete steps");

  TraceRun run;
  run.format = out.format;
  run.unit_seconds = 1e-6;
  run.devices.resize(devices.size());
  run.stage_device.assign(static_cast<std::size_t>(stages), 0);
  for (const auto& [s, d] : stage_rank) run.stage_device[static_cast<std::size_t>(s)] = d;
  std::map<Key, std::pair<int, const ProfilerAnnotation*>> sends;
  std::vector<std::pair<int, const ProfilerAnnotation*>> receives;
  std::set<Key> done;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    ProfilerRank& r = *devices[d];
    run.files.push_back(r.file);
    double first = std::numeric_limits<double>::infinity();
    double last = -first;
    double next_step = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < r.gpu.size(); ++i) {
      const ProfilerAnnotation& a = r.gpu[i];
      if (occurrence[d][i] == step + 1) next_step = std::min(next_step, a.start + r.offset);
      if (occurrence[d][i] != step) continue;
      if (a.kind == ProfilerAnnotation::Kind::kSend) {
        sends[key_of(a)] = {static_cast<int>(d), &a};
        continue;
      }
      if (a.kind == ProfilerAnnotation::Kind::kRecv) {
        receives.emplace_back(static_cast<int>(d), &a);
        continue;
      }
      TracedItem item;
      item.action = a.action;
      item.partner = a.partner;
      item.start = a.start + r.offset;
      item.end = a.end + r.offset;
      item.duration = a.duration;
      first = std::min(first, item.start);
      last = std::max(last, item.end);
      for (const Action* h : {&item.action, &item.partner}) {
        run.num_microbatches = std::max(run.num_microbatches, h->microbatch + 1);
        if (run.stage_device[static_cast<std::size_t>(h->stage)] != static_cast<int>(d)) {
          throw InputError(excerpt(r.file) + ": " + to_string(*h) + " runs on rank " + std::to_string(r.rank) +
                           ", but its stage on another");
        }
        if (!item.action.fused_with_next) break;
      }
      run.devices[d].push_back(item);
    }
    // Blocking collectives of the step (the data-parallel reduction after the last backward):
    // NCCL kernels other than sends and receives that overlap none of the rank's actions.
    std::vector<TracedItem>& items = run.devices[d];
    std::vector<TracedItem> collectives;
    std::vector<double> ends;  // each action's end, for the overlap test
    double latest = -std::numeric_limits<double>::infinity();
    for (const TracedItem& it : items) ends.push_back(latest = std::max(latest, it.end));
    for (const ProfilerKernel& k : r.kernels) {
      const double s = k.start + r.offset;
      const double e = k.end + r.offset;
      if (!k.nccl || k.point_to_point || s < first || s >= next_step) continue;
      // The actions are in order of start and do not overlap: the first to end after s decides.
      const auto after = std::upper_bound(ends.begin(), ends.end(), s);
      const bool overlaps = after != ends.end() && items[static_cast<std::size_t>(after - ends.begin())].start < e;
      if (overlaps) continue;
      TracedItem item;
      item.kind = TracedItem::Kind::kCollective;
      item.name = k.collective;
      item.start = s;
      item.end = e;
      item.duration = k.duration;
      collectives.push_back(item);
    }
    if (!collectives.empty()) {
      items.insert(items.end(), collectives.begin(), collectives.end());
      std::stable_sort(items.begin(), items.end(),
                       [](const TracedItem& a, const TracedItem& b) { return a.start < b.start; });
      // Collectives on one stream may overlap each other; keep each starting after the previous ends.
      std::vector<TracedItem> serial;
      for (TracedItem& it : items) {
        if (!it.compute() && !serial.empty() && it.start < serial.back().end) continue;
        serial.push_back(std::move(it));
      }
      items = std::move(serial);
    }
    (void)last;
  }
  // A RECV's end is when its message had arrived; the SEND of the same message says when it left.
  for (const auto& [d, recv] : receives) {
    TracedMessage message;
    const bool forward = recv->action.op == Op::kForward;
    message.from = Action(recv->action.stage + (forward ? -1 : 1), forward ? Op::kForward : Op::kBackward,
                          recv->action.microbatch);
    if (message.from.stage < 0 || message.from.stage >= stages) continue;
    message.src = run.stage_device[static_cast<std::size_t>(message.from.stage)];
    message.dst = d;
    const ProfilerRank& receiver = *devices[static_cast<std::size_t>(d)];
    message.arrival = recv->end + receiver.offset;
    message.depart_start = message.depart_end = message.arrival;
    ProfilerAnnotation send_key;
    send_key.kind = ProfilerAnnotation::Kind::kSend;
    send_key.action = Action(message.from.stage, message.from.op, message.from.microbatch);
    const auto send = sends.find(key_of(send_key));
    if (send != sends.end()) {
      const ProfilerRank& sender = *devices[static_cast<std::size_t>(send->second.first)];
      message.depart_start = send->second.second->start + sender.offset;
      message.depart_end = send->second.second->end + sender.offset;
    }
    run.messages.push_back(message);
  }
  bool timed = false;
  for (const ProfilerRank* r : devices) timed = timed || r->base_ns != 0;
  if (!timed && devices.size() > 1 && !run.messages.empty()) align_clocks(run, out.notes);
  if (run.messages.empty()) {
    out.notes.push_back(
        "no RECV ranges: a receiver's wait after its input's producer ended counts as the message's time");
  }
  check_trace_shape(run, devices.front()->file);
  out.run = std::move(run);
}

}  // namespace ppsim
