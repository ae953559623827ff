// SPDX-License-Identifier: Apache-2.0
#pragma once
// A what-if study's inputs after defaults, the config file and the flags have been merged.
// Lists of costs hold either one value for every stage or one value per stage (device, boundary).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/profile.hpp"
#include "models/noise.hpp"
#include "models/transformer/architecture.hpp"
#include "models/transformer/training_layout.hpp"
#include "models/units.hpp"
#include "schedules/program.hpp"
#include "sim/engine.hpp"
#include "sim/report/reporter.hpp"

namespace ppsim {

class ProgramCache;  // study/run/program_cache.hpp
struct Calibration;  // study/trace/calibration.hpp

struct Scenario {
  std::vector<std::string> schedules{"1f1b"};
  std::string schedule_file;  // the actions of schedule "custom" (torch's CSV, or JSON)
  ScheduleParams params{4, 8, 1};
  std::vector<Duration> forward{Duration{1}};
  std::vector<Duration> backward{Duration{2}};  // full backward B = I + W
  std::vector<Duration> weight;                 // W, for schedules that split B; empty: half of B on every stage
  std::vector<ByteCount> activation_bytes{ByteCount{0}};  // per stage: stash of one micro-batch
  std::vector<ByteCount> message_bytes{ByteCount{0}};     // per boundary between adjacent stages
  std::vector<ByteCount> static_bytes{ByteCount{0}};      // per device
  double weight_stash_fraction = 0.5;                     // share of a stash that W still needs after I
  std::optional<Duration> overlap;                        // an overlapped F&B op's time; unset: F + B of its halves
  // Whose costs F, B, W, overlap and activation bytes are. false (--costs-per device, the default):
  // the device's share of the model, which a schedule with v chunks splits into v equal parts, so
  // that -v changes how the work is cut, never how much there is. true (--costs-per chunk): each
  // stage's own cost, as written, one value or one per stage (p * v).
  bool costs_per_chunk = false;
  // A lowered schedule file's SEND/RECV (and FSDP) actions (--comm-actions): honoured as torch's
  // runtime runs them (kHonor: a SEND hands its message to the link where it stands, a RECV is
  // posted and waited for by the op that uses it), with a device waiting at every RECV
  // (kWaitAtRecv), or dropped, replaying only the compute (kIgnore).
  enum class CommActions : std::uint8_t { kHonor, kWaitAtRecv, kIgnore };
  CommActions comm_actions = CommActions::kHonor;
  Duration latency{0};
  Bandwidth bandwidth{};
  CommMode comm = CommMode::kOverlap;  // a transformer study without --comm: engine_comm_mode
  // A transformer study's --overlap-p2p-comm; unset: Megatron's default (engine_comm_mode).
  std::optional<bool> overlap_p2p_comm;
  OutputFormat format = OutputFormat::kTable;
  // A transformer study: when `model` is set, F, B, W, stashes, messages, static memory and links
  // all come from the architecture, the layout and the hardware profile instead of the cost flags.
  std::string model;                      // a preset name (ppsim models) or a configs/models-style JSON file
  std::string hardware = "h100-sxm5-80gb";  // a preset name or a configs/hardware-style JSON file
  TrainingLayout layout;                  // p and v are taken from params; global_batch 0 = m * b * d
  // Set by resolve_transformer_scenario, so the files are read once per study, not once per
  // schedule (shared: a scenario is copied for every schedule it runs).
  std::shared_ptr<const Architecture> resolved_model;
  std::shared_ptr<const HardwareProfile> resolved_hardware;
  // Set by ppsim plan: stored programs shared between its runs, built and validated once per schedule
  // and size. Null: each run builds its own.
  std::shared_ptr<ProgramCache> programs;
  bool timeline = false;
  // --layers-per-stage auto: each schedule's run searches its own split (study/run/layer_split.hpp)
  // and its report's scenario gives the split it chose.
  bool auto_layer_split = false;
  int auto_layer_split_budget = 0;  // splits that search judges at most (ppsim plan's); 0: no limit

  // Noise, stragglers and Monte-Carlo steps (README, "Noise, stragglers and failures").
  NoiseModel noise;             // per op kind and link variation, distribution; seed and sample per run
  bool jitter_measured = false;  // --jitter measured: the hardware profile's variability table
  std::vector<std::pair<int, double>> stragglers;  // --straggler D:FACTOR: device d always slower
  double straggler_probability = 0;                // --straggler-prob P:FACTOR: each sample, each device
  double straggler_factor = 1;
  std::int64_t samples = 0;  // --samples N: N independent steps beside the deterministic one; 0: none
  // Threads the samples run on (run and compare's -j; 0: every core). Not a setting: any count gives
  // the same bytes. A sweep or plan, whose points run side by side, keeps 1.
  unsigned sample_threads = 1;
  std::uint64_t seed = 0;

  // Failures and checkpoints of a whole training run (with a model; models/reliability/).
  struct Failures {
    std::optional<double> mtbf;  // of one GPU, seconds; unset: no reliability figures
    std::optional<double> train_time;
    std::optional<std::int64_t> train_steps;
    std::optional<double> checkpoint_time;    // unset: the checkpoint's bytes over storage_bandwidth
    // bytes/s per GPU; assumed: Llama 3's storage sustained 2 TB/s over its 16,384 GPUs (Llama 3 paper,
    // section 3.3.1, Tectonic), about 125 MB/s each
    double storage_bandwidth = 125e6;
    bool async_checkpoint = false;
    bool checksum_crc32 = false;
    double restart_time = 600;  // assumed: 10 minutes to detect, reschedule and reload
    std::optional<std::int64_t> checkpoint_every;  // steps; unset: Daly's optimum
  };
  Failures failures;

  // --calibrated-from: the files of a real run (or a calibration), and what they measured once read
  // (resolve_calibration; shared, as a scenario is copied for every schedule and sweep point).
  std::vector<std::string> calibrated_from;
  std::shared_ptr<const Calibration> calibration;

  // Where each setting came from ("--forward" or "cfg.json: $.forward"), so that errors found
  // later (list lengths, W > B) still name the flag or JSON path the user wrote.
  std::map<std::string, std::string, std::less<>> sources;
  std::string source_of(std::string_view key) const;
  // What the reader chose for the user ("--model: 'llama3-70b' is the preset llama3.1-70b"): the
  // command line prints them as notes on stderr.
  std::vector<std::string> notes;
};

// The built-in default study of `ppsim` without arguments: GPipe vs 1F1B, p=4, m=8, F=1, B=2.
Scenario default_study();

// W per stage as given, or half of B where it was not given (the zero-bubble paper's T_W ~ T_B / 2
// for the input and weight halves of a transformer layer's backward; 1 with the default B = 2).
std::vector<Duration> resolved_weight(const Scenario& scenario);

// Settings that only a transformer study (--model) reads, and the cost settings it replaces.
bool is_model_setting(std::string_view key);
bool is_cost_setting(std::string_view key);

const char* comm_mode_name(CommMode mode);

// How the engine sends for `schedule`: --comm as given; in a transformer study without --comm, as
// Megatron-LM does: asynchronous with --overlap-p2p-comm, paired (blocking, batched) without it;
// --overlap-p2p-comm defaults to off for 1f1b (Megatron's schedule without interleaving) and on
// for every other schedule.
CommMode engine_comm_mode(const Scenario& scenario, std::string_view schedule);

}  // namespace ppsim
