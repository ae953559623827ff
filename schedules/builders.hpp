// SPDX-License-Identifier: Apache-2.0
#pragma once
// The constructor of every schedule, one per file in schedules/; the registry table lists them.

#include <optional>
#include <string>
#include <string_view>

#include "schedules/action_stream.hpp"
#include "schedules/program.hpp"

namespace ppsim {

// Returns why the parameters are outside what the schedule supports, or nothing when they are fine.
// The reason starts "needs v ..." or "needs m ...", so the CLI can name the flag at fault.
using ScheduleCheck = std::optional<std::string> (*)(const ScheduleParams&);
using ScheduleBuild = Program (*)(const ScheduleParams&);
// A schedule's definition: its placement and one generator per device (schedules/action_stream.hpp).
using ScheduleStreamsFn = ScheduleStreams (*)(const ScheduleParams&);

std::optional<std::string> check_single_chunk(const ScheduleParams& params);

// `custom` has no constructor: the CLI reads its program from --schedule-file, so the check
// refuses every size, and loops over the registry (tests, formulas --check) skip it.
std::optional<std::string> check_custom(const ScheduleParams& params);

ScheduleStreams gpipe_streams(const ScheduleParams& params);
inline Program build_gpipe(const ScheduleParams& params) { return collect_program(gpipe_streams(params)); }
ScheduleStreams one_f_one_b_streams(const ScheduleParams& params);
inline Program build_one_f_one_b(const ScheduleParams& params) { return collect_program(one_f_one_b_streams(params)); }

// torch's rule for its interleaved schedules: m splits into max(1, floor(m/p)) equal rounds. The
// reason names `torch_class`, the schedule whose constructor refuses it.
std::optional<std::string> check_equal_rounds(const ScheduleParams& params, std::string_view torch_class);

// Megatron-LM's interleaved 1F1B (virtual pipeline) and breadth-first looping over the chunks.
std::optional<std::string> check_interleaved(const ScheduleParams& params);
ScheduleStreams interleaved_one_f_one_b_streams(const ScheduleParams& params);
inline Program build_interleaved_one_f_one_b(const ScheduleParams& params) { return collect_program(interleaved_one_f_one_b_streams(params)); }
// Megatron-LM's combined 1F1B (--overlap-moe-expert-parallel-comm): interleaved 1F1B, or no
// pipelining, with each steady forward and backward one overlapped op.
std::optional<std::string> check_combined_one_f_one_b(const ScheduleParams& params);
ScheduleStreams combined_one_f_one_b_streams(const ScheduleParams& params);
std::optional<std::string> check_looped_bfs(const ScheduleParams& params);
ScheduleStreams looped_bfs_streams(const ScheduleParams& params);
inline Program build_looped_bfs(const ScheduleParams& params) { return collect_program(looped_bfs_streams(params)); }

// Zero-bubble schedules (Qi et al.): the backward split into I and W.
std::optional<std::string> check_zero_bubble_h1(const ScheduleParams& params);
ScheduleStreams zero_bubble_h1_streams(const ScheduleParams& params);
inline Program build_zero_bubble_h1(const ScheduleParams& params) { return collect_program(zero_bubble_h1_streams(params)); }
std::optional<std::string> check_zero_bubble_h2(const ScheduleParams& params);
ScheduleStreams zero_bubble_h2_streams(const ScheduleParams& params);
inline Program build_zero_bubble_h2(const ScheduleParams& params) { return collect_program(zero_bubble_h2_streams(params)); }
std::optional<std::string> check_zero_bubble_v(const ScheduleParams& params);
ScheduleStreams zero_bubble_v_streams(const ScheduleParams& params);
inline Program build_zero_bubble_v(const ScheduleParams& params) { return collect_program(zero_bubble_v_streams(params)); }

// torch's ScheduleInterleavedZeroBubble: interleaved chunks with the backward split into I and W.
std::optional<std::string> check_interleaved_zero_bubble(const ScheduleParams& params);
ScheduleStreams interleaved_zero_bubble_streams(const ScheduleParams& params);

// V-Half and V-Min (Qi et al., NeurIPS 2024): V schedules at 1/2 and 1/3 of 1F1B's activation memory.
std::optional<std::string> check_controllable_memory_v(const ScheduleParams& params);
ScheduleStreams v_half_streams(const ScheduleParams& params);
ScheduleStreams v_min_streams(const ScheduleParams& params);

// DeepSeek's DualPipeV: two chunks per device on the V mapping, with overlapped F&B ops.
std::optional<std::string> check_dualpipev(const ScheduleParams& params);
ScheduleStreams dualpipev_streams(const ScheduleParams& params);
inline Program build_dualpipev(const ScheduleParams& params) { return collect_program(dualpipev_streams(params)); }
// Device d's order in DualPipeV over p devices and m micro-batches, its chunk 0 on stage0 and chunk 1
// on stage1: also each rank's order in the bidirectional DualPipe.
ActionStream dualpipe_rank_order(int p, int m, int d, int stage0, int stage1);
// DeepSeek's DualPipe: two pipelines in opposite directions over the same p stages, each stage on two
// devices (Program::num_pipelines = 2), m/2 micro-batches each way.
std::optional<std::string> check_dualpipe(const ScheduleParams& params);
ScheduleStreams dualpipe_streams(const ScheduleParams& params);

// Seq1F1B (Sun et al., NAACL 2025): 1F1B over k sequence slices of each micro-batch, the program's
// micro-batch b*k + j being micro-batch b's slice j (schedules/seq_one_f_one_b.cpp).
inline constexpr int kDefaultSequenceSplits = 4;  // thunlp/Seq1F1B exp.sh's --pipe-sp-splits
int sequence_splits(const ScheduleParams& params);
std::optional<std::string> check_seq_one_f_one_b(const ScheduleParams& params);
ScheduleStreams seq_one_f_one_b_streams(const ScheduleParams& params);

// Chimera (Li and Hoefler, SC'21): two 1F1B pipelines in opposite directions over replicated stages,
// units of p micro-batches concatenated as MindSpeed builds them (schedules/bidirectional/chimera.cpp).
std::optional<std::string> check_chimera(const ScheduleParams& params);
ScheduleStreams chimera_streams(const ScheduleParams& params);
// BitPipe (Wu et al. 2024): two V-shaped pipelines of 2p stages in opposite directions, four chunks
// per device (schedules/bidirectional/bitpipe.cpp).
std::optional<std::string> check_bitpipe(const ScheduleParams& params);
ScheduleStreams bitpipe_streams(const ScheduleParams& params);
// Rank r holds down stages r and 2p-1-r (program stages) and up stages p-1-r and p+r (program stages
// 2p + those).
std::vector<int> bitpipe_stage_mapping(int p);

}  // namespace ppsim
