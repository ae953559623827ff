// SPDX-License-Identifier: Apache-2.0
#include "schedules/registry.hpp"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace ppsim {

std::optional<std::string> check_custom(const ScheduleParams&) {
  return "takes its actions from --schedule-file FILE, not from p, m and v";
}

namespace {

constexpr std::array kRegistry = {
    ScheduleInfo{"gpipe", "all forwards, then all backwards; stashes all m micro-batches", "v = 1; any p >= 1, m >= 1",
                 "Huang et al., GPipe, NeurIPS 2019", 1, check_single_chunk, gpipe_streams},
    ScheduleInfo{"1f1b", "PipeDream-Flush: warmup, one forward one backward, cooldown; stashes <= p",
                 "v = 1; any p >= 1, m >= 1 (m < p simulates with a partial pipeline)",
                 "Narayanan et al., SC'21 2.2.1; Megatron-LM schedules.py", 1, check_single_chunk, one_f_one_b_streams},
    ScheduleInfo{"seq1f1b",
                 "Seq1F1B: 1F1B over k sequence slices of each micro-batch (--sequence-splits, default 4), the "
                 "last slice's backward first; warmup p-d-2+k slices, so about (p+k-1)/k micro-batches stashed on "
                 "device 0 and a bubble of (p-1)/(mk+p-1)",
                 "v = 1; any p >= 1, m >= 1, k >= 1; slices of equal cost (thunlp's uniform_comp split)",
                 "Sun et al., Seq1F1B, NAACL 2025; thunlp/Seq1F1B schedules.py = sail-sg zero-bubble seq1f1b.py", 1,
                 check_seq_one_f_one_b, seq_one_f_one_b_streams},
    ScheduleInfo{"interleaved-1f1b",
                 "Megatron's virtual pipeline: v chunks per device, depth-first rounds of micro-batches, then 1F1B; "
                 "bubble (p-1)(F+B) per device, 1/v of 1F1B's",
                 "v >= 2; m a multiple of max(1, floor(m/p)): any m with p | m (Megatron-LM's default), m < p, or "
                 "equal rounds such as p=4, m=10 (torch's rule); with --microbatch-group-size N (Megatron's "
                 "microbatch_group_size_per_vp_stage), p <= N <= m and m mod N = 0 or >= p",
                 "Narayanan et al., SC'21 2.2.2; Megatron-LM schedule table = torch ScheduleInterleaved1F1B", 2,
                 check_interleaved, interleaved_one_f_one_b_streams},
    ScheduleInfo{"combined-1f1b",
                 "Megatron's combined 1F1B (--overlap-moe-expert-parallel-comm): interleaved 1F1B with one more "
                 "warmup forward, each steady forward and the backward after it one overlapped op whose MoE "
                 "all-to-alls run beside the other's compute",
                 "v >= 2 with interleaved-1f1b's rules on m, or p = 1 and v = 1 (no pipelining); Megatron refuses "
                 "p > 1 with v = 1",
                 "Megatron-LM combined_1f1b.py and schedules.py (forward_backward_pipelining_with_interleaving); "
                 "DeepSeek-V3 Technical Report 3.2.1 (overlapping a micro-batch's all-to-all with another's compute)",
                 2, check_combined_one_f_one_b, combined_one_f_one_b_streams},
    ScheduleInfo{"looped-bfs",
                 "breadth-first looping: every micro-batch through chunk 0, then chunk 1, ...; backwards last chunk "
                 "first; stashes m*v",
                 "v >= 2; any p >= 1, m >= 1",
                 "Lamy-Poirier, Breadth-First Pipeline Parallelism, arXiv 2211.05953; torch ScheduleLoopedBFS", 2,
                 check_looped_bfs, looped_bfs_streams, /*bounded_window=*/false},
    ScheduleInfo{"zb-h1",
                 "zero bubble H1: 1F1B with B split into I and W, device d holds d W's back; 1F1B's peak memory, "
                 "a third of its bubble at F = I = W",
                 "v = 1; any m (below m = p the zero-bubble repository's hand-written order, where its bubble "
                 "and memory formulas do not hold yet)",
                 "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024 2.1, Fig. 3; Megatron-DeepSpeed "
                 "deepspeed_zbh1_schedule.py",
                 1, check_zero_bubble_h1, zero_bubble_h1_streams},
    ScheduleInfo{"zb-h2",
                 "zero bubble H2: 2p-1 micro-batches in flight, device d holds 2d W's back; no idle inside any "
                 "device's span at F = I = W",
                 "v = 1; any m (below m = 2p-1 device d holds 2d-(2p-1-m) W's, as the zero-bubble repository's "
                 "scheduler does)",
                 "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024 2.2, Fig. 3; sail-sg zero-bubble "
                 "scheduler/zb.py below m = 2p-1",
                 1, check_zero_bubble_h2,
                 zero_bubble_h2_streams},
    ScheduleInfo{"interleaved-zb",
                 "interleaved zero bubble: v looped chunks as interleaved 1F1B, backward split into I and W, "
                 "device d holds d W's back; warmup (v-1)r + p-1-d forwards, one per hop",
                 "any v >= 1 (default 2); m a multiple of max(1, floor(m/p)), as torch requires",
                 "Qi et al., Zero Bubble PP, ICLR 2024; torch.distributed.pipelining ScheduleInterleavedZeroBubble",
                 2, check_interleaved_zero_bubble, interleaved_zero_bubble_streams},
    ScheduleInfo{"zbv",
                 "ZB-V: two chunks per device on a V, backward split into I and W; zero bubble at F = I = W "
                 "once m >= 2p-1, with 1F1B's peak activation memory",
                 "v = 2 (device d holds stages d and 2p-1-d); any p >= 1, m >= 1 (below m = 2p-1 it runs "
                 "torch's order for 2p-1 micro-batches with the extra ones dropped, and leaves bubbles)",
                 "Qi et al., ZB-V (Zero Bubble PP, ICLR 2024, and Controllable Memory, NeurIPS 2024); "
                 "torch.distributed.pipelining ScheduleZBVZeroBubble",
                 2, check_zero_bubble_v, zero_bubble_v_streams},
    ScheduleInfo{"v-half",
                 "V-Half: two chunks per device on a V, backward split into I and W, built from a repeating block "
                 "whose lifespan holds half of 1F1B's activations; about half of 1F1B's bubble",
                 "v = 2 (device d holds stages d and 2p-1-d); any p >= 1, m >= 1",
                 "Qi et al., Pipeline Parallelism with Controllable Memory, NeurIPS 2024; sail-sg "
                 "zero-bubble zbv_greedy.py (--zero-bubble-v-schedule-mem-setup half)",
                 2, check_controllable_memory_v, v_half_streams, /*bounded_window=*/false},
    ScheduleInfo{"v-min",
                 "V-Min: the V with the shortest building block, a third of 1F1B's activations; about two thirds "
                 "of 1F1B's bubble at F = I = W",
                 "v = 2 (device d holds stages d and 2p-1-d); any p >= 1, m >= 1",
                 "Qi et al., Pipeline Parallelism with Controllable Memory, NeurIPS 2024; sail-sg "
                 "zero-bubble zbv_greedy.py (--zero-bubble-v-schedule-mem-setup min)",
                 2, check_controllable_memory_v, v_min_streams, /*bounded_window=*/false},
    ScheduleInfo{"dualpipev",
                 "DeepSeek's DualPipeV: two chunks per device on a V; in the steady state each forward overlaps the "
                 "other chunk's full backward (OVERLAP_F_B); I/W split in warmup and drain; stashes 2p+1 stages",
                 "v = 2 (device d holds stages d and 2p-1-d); any p >= 1; m >= 2p (odd m and p included, as "
                 "dualpipev.py and torch accept them)",
                 "DeepSeek-V3 Technical Report (arXiv 2412.19437); deepseek-ai/DualPipe dualpipev.py; "
                 "torch.distributed.pipelining ScheduleDualPipeV",
                 2, check_dualpipev, dualpipev_streams},
    ScheduleInfo{"dualpipe",
                 "DeepSeek's DualPipe: two pipelines in opposite directions over the same p stages, each device "
                 "holding one stage of each (twice the parameters); m/2 micro-batches each way, forwards overlapped "
                 "with the other direction's backwards; the replicas' gradients summed after the step",
                 "v = 1; p even; m even and m >= 2p (dualpipe.py's asserts)",
                 "DeepSeek-V3 Technical Report (arXiv 2412.19437) 3.2.1; deepseek-ai/DualPipe dualpipe.py", 1,
                 check_dualpipe, dualpipe_streams, /*bounded_window=*/true, /*pipelines=*/2},
    ScheduleInfo{"chimera",
                 "Chimera: two 1F1B pipelines in opposite directions over the same p stages, each device holding one "
                 "stage of each (twice the parameters); m/2 micro-batches each way in units of p, one direction's "
                 "forwards filling the other's bubbles; the replicas' gradients summed after the step",
                 "v = 1; p even; m a multiple of p (MindSpeed's check)",
                 "Li and Hoefler, Chimera, SC'21; Ascend/MindSpeed chimera_scheduler.py (core_r0.8.0) = "
                 "Shigangli/Chimera main_with_runtime_direct.py",
                 1, check_chimera, chimera_streams, /*bounded_window=*/true, /*pipelines=*/2},
    ScheduleInfo{"bitpipe",
                 "BitPipe: two V-shaped pipelines of 2p stages in opposite directions, each device holding two "
                 "chunks of each (twice the parameters); m/2 micro-batches each way in blocks of p; the replicas' "
                 "gradients summed after the step",
                 "v = 2 (chunks per device and direction); p even; m a multiple of p (bitpipe_schedule.py's check)",
                 "Wu et al., BitPipe, arXiv 2410.19367; wuhouming/BitPipe bitpipe_schedule.py", 2, check_bitpipe,
                 bitpipe_streams, /*bounded_window=*/true, /*pipelines=*/2},
    ScheduleInfo{"custom",
                 "any schedule given as a file (--schedule-file): torch.distributed.pipelining's _dump_csv CSV, "
                 "or JSON lists of the same action strings",
                 "p, m and the stages come from the file; every (stage, micro-batch) needs its ops once, in a legal "
                 "order",
                 "torch.distributed.pipelining _dump_csv / _load_csv", 1, check_custom, nullptr},
};

// A name as people vary it: lowercase, without '-', '_' and spaces, without torch's "Schedule".
std::string name_key(std::string_view name) {
  std::string key;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == ' ') continue;
    key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (key.starts_with("schedule") && key.size() > 8) key.erase(0, 8);
  return key;
}

// Names of other projects that are not a registry name's key.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"zbvzerobubble", "zbv"},           // torch's ScheduleZBVZeroBubble
    {"interleavedzerobubble", "interleaved-zb"},  // torch's ScheduleInterleavedZeroBubble
    {"interleaved", "interleaved-1f1b"},  // Megatron-LM's interleaved schedule (virtual pipeline)
    {"overlapmoeexpertparallelcomm", "combined-1f1b"},  // Megatron-LM's flag that selects it
};

}  // namespace

std::span<const ScheduleInfo> schedule_registry() { return kRegistry; }

const ScheduleInfo* resolve_schedule(std::string_view name) {
  if (const ScheduleInfo* exact = find_schedule(name)) return exact;
  const std::string key = name_key(name);
  if (key.empty()) return nullptr;
  for (const auto& info : kRegistry) {
    if (name_key(info.name) == key) return &info;
  }
  for (const auto& [alias, target] : kAliases) {
    if (alias == key) return find_schedule(target);
  }
  return nullptr;
}

const ScheduleInfo* find_schedule(std::string_view name) {
  for (const auto& info : kRegistry) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace ppsim
