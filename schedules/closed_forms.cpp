// SPDX-License-Identifier: Apache-2.0
#include "schedules/closed_forms.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

double p_of(const FormulaInput& in) { return in.params.p; }
double m_of(const FormulaInput& in) { return in.params.m; }

// Uniform costs with free links: the textbook regime.
bool free_links(const FormulaInput& in) { return in.latency == 0 && in.transfer == 0; }
// Latency but no transfer time: the message is in flight, never queued.
bool latency_only(const FormulaInput& in) { return in.transfer == 0; }
// Counts that no cost or link changes.
bool always(const FormulaInput&) { return true; }

// GPipe and 1F1B share the makespan (m+p-1)(F+B): a pipeline fill and drain of p-1 ops each
// way around m steady (F+B) steps. The folklore that 1F1B halves the bubble is wrong; it only
// bounds the stash (Narayanan et al., SC'21 §2.2.1).
double fill_drain_makespan(const FormulaInput& in, int) {
  return (m_of(in) + p_of(in) - 1) * (in.forward + in.backward);
}
double fill_drain_bubble_ratio(const FormulaInput& in, int) { return (p_of(in) - 1) / (m_of(in) + p_of(in) - 1); }
double fill_drain_bubble_overhead(const FormulaInput& in, int) { return (p_of(in) - 1) / m_of(in); }

// Every adjacent pair of the p devices exchanges one activation and one gradient per micro-batch.
double single_chunk_messages(const FormulaInput& in, int) { return 2 * m_of(in) * (p_of(in) - 1); }

double gpipe_peak(const FormulaInput& in, int) { return m_of(in); }
double one_f_one_b_peak(const FormulaInput& in, int device) { return std::min(p_of(in) - device, m_of(in)); }

// GPipe pays the latency once per hop of the forward wave and once per hop of the backward wave.
double gpipe_latency_makespan(const FormulaInput& in, int device) {
  return fill_drain_makespan(in, device) + 2 * (p_of(in) - 1) * in.latency;
}

// 1F1B pays GPipe's 2(p-1)L and, for every p micro-batches of its steady state, the round trip
// from the last device to device 0 and back: 2 floor((p-1)(m-1)/p) L more. Derived in
// tests/link_test.cpp, where the engine is checked against it.
double one_f_one_b_latency_makespan(const FormulaInput& in, int device) {
  const double p = p_of(in);
  const double m = m_of(in);
  return fill_drain_makespan(in, device) + 2 * (p - 1) * in.latency +
         2 * std::floor((p - 1) * (m - 1) / p) * in.latency;
}

// ZB-V at F = I = W = t with m >= 2p-1: device p-1 cannot start before (p-1)t and has 2m(F+I+W)
// of work, and the schedule meets that bound (Qi et al.; torch's ScheduleZBVZeroBubble order).
bool zbv_balanced(const FormulaInput& in) {
  const double i = in.backward - in.weight;
  return free_links(in) && in.forward == i && in.weight == i && in.params.v == 2 && in.params.m >= 2 * in.params.p - 1;
}
double zbv_makespan(const FormulaInput& in, int) { return (6 * m_of(in) + p_of(in) - 1) * in.forward; }
double zbv_bubble_ratio(const FormulaInput& in, int) { return (p_of(in) - 1) / (6 * m_of(in) + p_of(in) - 1); }
// Forwards issued before the device's first I: its two chunks' warmup.
double zbv_peak(const FormulaInput& in, int device) {
  return std::min(m_of(in), 2 * p_of(in) - 1 - device) + std::min(m_of(in), device + 1.0);
}
// The V keeps stages p-1 and p on one device, so one boundary of 2p-1 sends no message.
double v_messages(const FormulaInput& in, int) { return 2 * m_of(in) * std::max(0.0, 2 * p_of(in) - 2); }

// Interleaved 1F1B and looped BFS with uniform per-chunk costs: the fill and drain still take
// p-1 ops, but each op is one chunk, so the bubble is (p-1)(F+B) against m*v*(F+B) of work:
// 1/v of 1F1B's relative bubble (Narayanan et al. SC'21 2.2.2, with t_f = vF).
double v_of(const FormulaInput& in) { return in.params.v; }
bool interleaved_balanced(const FormulaInput& in) {
  return free_links(in) && in.params.v >= 2 && in.params.m % in.params.p == 0 &&
         (in.params.microbatch_group == 0 || in.params.microbatch_group == in.params.p);
}
double interleaved_makespan(const FormulaInput& in, int) {
  return (m_of(in) * v_of(in) + p_of(in) - 1) * (in.forward + in.backward);
}
double interleaved_bubble_ratio(const FormulaInput& in, int) {
  return (p_of(in) - 1) / (m_of(in) * v_of(in) + p_of(in) - 1);
}
double interleaved_bubble_overhead(const FormulaInput& in, int) { return (p_of(in) - 1) / (m_of(in) * v_of(in)); }
// Device d's warmup of (v-1)r + 2(p-1-d) chunk-forwards, plus the one before its first backward;
// r = m / max(1, floor(m/p)) micro-batches per round (p when p | m), or Megatron's group size N.
double interleaved_peak(const FormulaInput& in, int device) {
  const double rounds = std::max(1.0, std::floor(m_of(in) / p_of(in)));
  const double r = in.params.microbatch_group > 0 ? in.params.microbatch_group : m_of(in) / rounds;
  return std::min((v_of(in) - 1) * r + 2 * (p_of(in) - 1 - device) + 1, m_of(in) * v_of(in));
}
bool looped_bfs_free(const FormulaInput& in) { return free_links(in) && in.params.v >= 2; }
double looped_bfs_makespan(const FormulaInput& in, int) {
  return (std::max(m_of(in), p_of(in)) * v_of(in) + std::min(m_of(in), p_of(in)) - 1) * (in.forward + in.backward);
}
double all_chunks_peak(const FormulaInput& in, int) { return m_of(in) * v_of(in); }
// On the loop mapping every one of the p*v-1 stage boundaries crosses devices once p > 1: v times
// 1F1B's communication volume, roughly.
double loop_messages(const FormulaInput& in, int) {
  return in.params.p > 1 ? 2 * m_of(in) * (p_of(in) * v_of(in) - 1) : 0.0;
}

// V-Half and V-Min (Qi et al., NeurIPS 2024; the zero-bubble repository's zbv_greedy.py). The paper
// gives their activation memory as (p+2)//2 and (p+4)//3 micro-batches, i.e. p+2 (p even), p+1 (p odd)
// and 2 floor((p+4)/3) stage stashes against 1F1B's 2p, and their bubbles as about 1/2 and 2/3 of
// 1F1B's. At F = I = W = t the makespan is the work 6mt plus (3p-7)t and (4p-5)t (p even; 3p-4 odd;
// 4p-7 when 3 | p): simulated over formulas --check's grid, the repository's own timing agrees.
bool v_half_sized(const FormulaInput& in) { return in.params.v == 2 && in.params.m > in.params.p; }
bool v_min_sized(const FormulaInput& in) {
  return in.params.v == 2 && in.params.m >= in.params.p && in.params.p % 3 != 2;
}
bool v_unit_costs(const FormulaInput& in) {
  const double i = in.backward - in.weight;
  return free_links(in) && in.forward == i && in.weight == i && in.params.v == 2 &&
         in.params.m >= 2 * in.params.p - 1;
}
bool v_half_balanced(const FormulaInput& in) { return v_unit_costs(in) && in.params.p >= 3; }
bool v_min_balanced(const FormulaInput& in) { return v_unit_costs(in) && in.params.p >= 2; }
double v_half_makespan(const FormulaInput& in, int) {
  return (6 * m_of(in) + 3 * p_of(in) - (in.params.p % 2 == 0 ? 7 : 4)) * in.forward;
}
double v_min_makespan(const FormulaInput& in, int) {
  return (6 * m_of(in) + 4 * p_of(in) - (in.params.p % 3 == 0 ? 7 : 5)) * in.forward;
}
double v_half_peak(const FormulaInput& in, int) { return 2.0 * ((in.params.p + 2) / 2); }
double v_min_peak(const FormulaInput& in, int) { return 2.0 * ((in.params.p + 4) / 3); }

// Interleaved zero bubble with p | m (rounds of r = p): device d's warmup of vp-1-d forwards ends just
// as its first I can start, one I per hop back up, and its W's fill every later wait, so at
// F = I = W = t only the fill of p-1 ops is left: (3mv + p - 1)t (simulated over the grid of
// formulas --check, torch ScheduleInterleavedZeroBubble's order). Its stash: vp-d forwards in flight
// when the first I starts, and d stashes that only W still needs.
bool interleaved_zb_rounds(const FormulaInput& in) { return in.params.m % in.params.p == 0; }
bool interleaved_zb_balanced(const FormulaInput& in) {
  const double i = in.backward - in.weight;
  return free_links(in) && in.forward == i && in.weight == i && interleaved_zb_rounds(in);
}
double interleaved_zb_makespan(const FormulaInput& in, int) {
  return (3 * m_of(in) * v_of(in) + p_of(in) - 1) * in.forward;
}
double interleaved_zb_bubble_ratio(const FormulaInput& in, int) {
  return (p_of(in) - 1) / (3 * m_of(in) * v_of(in) + p_of(in) - 1);
}
double interleaved_zb_peak(const FormulaInput& in, int device) {
  return v_of(in) * p_of(in) - device + device * in.weight_stash_fraction;
}

// ZB-H1 and ZB-H2 (Qi et al., ICLR 2024 2.1-2.3): with T_F = F, T_B = I = B - W and T_W = W,
// device d idles (p-1-d)X inside its own span, X = T_F + T_B - T_W (H1) or T_F + T_B - 2T_W (H2),
// so device 0's bubble is the paper's (p-1)X; peak memory (p-d)M_B + d M_W and (2p-2d-1)M_B + 2d M_W.
double input_grad(const FormulaInput& in) { return in.backward - in.weight; }
double h1_gap(const FormulaInput& in) { return in.forward + input_grad(in) - in.weight; }
double h2_gap(const FormulaInput& in) { return in.forward + input_grad(in) - 2 * in.weight; }
bool h1_regime(const FormulaInput& in) {
  return free_links(in) && in.params.v == 1 && in.params.m >= in.params.p && in.weight <= in.forward;
}
bool h2_regime(const FormulaInput& in) {
  return free_links(in) && in.params.v == 1 && in.params.m >= 2 * in.params.p - 1 && in.weight <= in.forward &&
         in.weight <= input_grad(in);
}
// Their stash formulas count a full warmup and d (2d) held W's: from m = p (2p-1) on.
bool h1_sized(const FormulaInput& in) { return in.params.m >= in.params.p; }
bool h2_sized(const FormulaInput& in) { return in.params.m >= 2 * in.params.p - 1; }
double h1_device_bubble(const FormulaInput& in, int device) { return (p_of(in) - 1 - device) * h1_gap(in); }
double h2_device_bubble(const FormulaInput& in, int device) { return (p_of(in) - 1 - device) * h2_gap(in); }
// Simulated, not published: the last device never waits, and device 0 ends the step.
double h1_makespan(const FormulaInput& in, int) {
  return m_of(in) * (in.forward + in.backward) + (p_of(in) - 1) * std::max(in.forward, h1_gap(in));
}
double h2_makespan(const FormulaInput& in, int) {
  return m_of(in) * (in.forward + in.backward) + (p_of(in) - 1) * std::max(in.forward, h2_gap(in));
}
double h1_peak(const FormulaInput& in, int device) { return (p_of(in) - device) + device * in.weight_stash_fraction; }
double h2_peak(const FormulaInput& in, int device) {
  return (2 * p_of(in) - 2 * device - 1) + 2 * device * in.weight_stash_fraction;
}

// DualPipeV at F = I = W = t with F&B = F + B (no overlap gain) and m >= 2p: every device idles
// 2(p-1)t, and device d idles (2p-2-d)t inside its own span; on device 0 that is DualPipe's README
// (PP/2-1)(F&B+B-3W) with PP = 2p stages. Its stash is the README's PP+1 = 2p+1 stages: the warmup
// stashes 2p and the first overlapped op allocates its F before its B frees.
bool dualpipev_balanced(const FormulaInput& in) {
  const double i = in.backward - in.weight;
  const bool no_gain = !in.overlap || *in.overlap == in.forward + in.backward;
  return free_links(in) && no_gain && in.forward == i && in.weight == i && in.params.v == 2 &&
         in.params.m >= 2 * in.params.p;
}
bool dualpipev_sized(const FormulaInput& in) { return in.params.v == 2 && in.params.m >= 2 * in.params.p; }
double dualpipev_makespan(const FormulaInput& in, int) { return (6 * m_of(in) + 2 * p_of(in) - 2) * in.forward; }
double dualpipev_bubble_ratio(const FormulaInput& in, int) { return (p_of(in) - 1) / (3 * m_of(in) + p_of(in) - 1); }
double dualpipev_device_bubble(const FormulaInput& in, int device) { return (2 * p_of(in) - 2 - device) * in.forward; }
double dualpipev_peak(const FormulaInput& in, int) { return 2 * p_of(in) + 1; }

// DualPipe (bidirectional) at F = I = W = t with F&B = F + B and its sizes (p even, m even, m >= 2p):
// every device idles (p-2)t, the README's (PP/2-1)(F&B+B-3W) with PP = p ranks, of which device d
// spends (p-2-h)t inside its own span, h = min(d, p-1-d) being how late it starts. Each rank stashes
// the README's PP+1 chunk activations (one stage's each, the stages being a p-th of the model).
bool dualpipe_sized(const FormulaInput& in) {
  return in.params.v == 1 && in.params.p % 2 == 0 && in.params.m % 2 == 0 && in.params.m >= 2 * in.params.p;
}
bool dualpipe_balanced(const FormulaInput& in) {
  const double i = in.backward - in.weight;
  const bool no_gain = !in.overlap || *in.overlap == in.forward + in.backward;
  return free_links(in) && no_gain && in.forward == i && in.weight == i && dualpipe_sized(in);
}
double dualpipe_makespan(const FormulaInput& in, int) { return (3 * m_of(in) + p_of(in) - 2) * in.forward; }
double dualpipe_bubble_ratio(const FormulaInput& in, int) { return (p_of(in) - 2) / (3 * m_of(in) + p_of(in) - 2); }
double dualpipe_device_bubble(const FormulaInput& in, int device) {
  const int h = std::min(device, in.params.p - 1 - device);
  return (p_of(in) - 2 - h) * in.forward;
}
double dualpipe_peak(const FormulaInput& in, int) { return p_of(in) + 1; }
double dualpipe_messages(const FormulaInput& in, int) { return 2 * m_of(in) * (p_of(in) - 1); }

// Chimera and BitPipe (two pipelines in opposite directions over replicated stages) at uniform F and B
// per program stage, B >= F, free links, p even and m a multiple of p: every device idles (p-2)B in
// the first unit of p micro-batches, and each further unit, concatenated as the references do, opens
// (p-2)(B-F) more, where one direction's backwards meet the next unit's forwards. At F = B that is
// Chimera's (D-2)/(2N+D-2) (Li and Hoefler, SC'21, Table 1), D stages and N micro-batches. Derived
// from the orders and checked against the engine (tests/bidirectional_test.cpp).
bool bidirectional_sized(const FormulaInput& in, int v) {
  return in.params.v == v && in.params.p % 2 == 0 && in.params.m % in.params.p == 0;
}
bool bidirectional_regime(const FormulaInput& in, int v) {
  return free_links(in) && in.backward >= in.forward && bidirectional_sized(in, v);
}
double bidirectional_idle(const FormulaInput& in) {
  const double p = p_of(in);
  return (p - 2) * in.backward + (m_of(in) / p - 1) * (p - 2) * (in.backward - in.forward);
}
// Each device computes m forwards and m backwards of a stage per chunk it holds of each direction.
double bidirectional_busy(const FormulaInput& in) { return in.params.v * m_of(in) * (in.forward + in.backward); }
double bidirectional_makespan(const FormulaInput& in, int) { return bidirectional_busy(in) + bidirectional_idle(in); }
double bidirectional_bubble_ratio(const FormulaInput& in, int) {
  return bidirectional_idle(in) / (bidirectional_busy(in) + bidirectional_idle(in));
}
bool chimera_sized(const FormulaInput& in) { return bidirectional_sized(in, 1); }
bool chimera_regime(const FormulaInput& in) { return bidirectional_regime(in, 1); }
bool bitpipe_sized(const FormulaInput& in) { return bidirectional_sized(in, 2); }
bool bitpipe_regime(const FormulaInput& in) { return bidirectional_regime(in, 2); }
// Stashes at the peak: p/2 + 1 + h stages on device d, h = min(d, p-1-d) (Chimera's [D/2+1, D]);
// BitPipe's w + 1 = 3p/2 + 1 + h chunks, its warmup forwards and the first steady one.
double chimera_peak(const FormulaInput& in, int device) {
  return in.params.p / 2 + 1 + std::min(device, in.params.p - 1 - device);
}
double bitpipe_peak(const FormulaInput& in, int device) {
  return 3 * in.params.p / 2 + 1 + std::min(device, in.params.p - 1 - device);
}
// One message per crossing stage boundary and direction, activation and gradient: Chimera's p-1
// boundaries per pipeline, BitPipe's 2p-2 (its V turns on one device).
double chimera_messages(const FormulaInput& in, int) { return 2 * m_of(in) * (p_of(in) - 1); }
double bitpipe_messages(const FormulaInput& in, int) { return 2 * m_of(in) * (2 * p_of(in) - 2); }

// Seq1F1B, F and B being a micro-batch's and each of its k slices costing 1/k of them: 1F1B over mk
// units, whose fill and drain shrink with the slices: (mk+p-1)(F+B)/k, bubble (p-1)/(mk+p-1). Its warmup holds
// p-d-2+k slices and the first steady forward one more. Derived from the order (the paper's figures
// compare measured runs); checked against the engine (tests/seq_one_f_one_b_test.cpp).
double slices_of(const FormulaInput& in) { return in.params.m * static_cast<double>(sequence_splits(in.params)); }
bool seq_regime(const FormulaInput& in) { return free_links(in) && in.params.v == 1; }
bool seq_sized(const FormulaInput& in) { return in.params.v == 1; }
double seq_makespan(const FormulaInput& in, int) {
  return (slices_of(in) + p_of(in) - 1) * (in.forward + in.backward) / sequence_splits(in.params);
}
double seq_bubble_ratio(const FormulaInput& in, int) { return (p_of(in) - 1) / (slices_of(in) + p_of(in) - 1); }
double seq_peak(const FormulaInput& in, int device) {
  const double k = sequence_splits(in.params);
  return std::min(p_of(in) - device + k - 1, slices_of(in)) / k;
}
double seq_messages(const FormulaInput& in, int) { return 2 * slices_of(in) * (p_of(in) - 1); }

constexpr std::string_view kUniformFree = "uniform costs, free links (latency 0, no transfer time)";
constexpr std::string_view kLatencyOnly = "uniform costs, per-message latency L, no transfer time";
constexpr std::string_view kNarayanan = "Narayanan et al., SC'21 2.2.1";
constexpr std::string_view kOrderOnly = "any costs and links: the action order alone fixes it";

constexpr std::array kForms = {
    ClosedForm{"gpipe", Figure::kMakespan, "(m+p-1)(F+B)", kUniformFree, "Huang et al., GPipe, NeurIPS 2019",
               free_links, fill_drain_makespan},
    ClosedForm{"gpipe", Figure::kBubbleRatio, "(p-1)/(m+p-1)", kUniformFree, "Huang et al., GPipe, NeurIPS 2019",
               free_links, fill_drain_bubble_ratio},
    ClosedForm{"gpipe", Figure::kBubbleOverhead, "(p-1)/m", kUniformFree, kNarayanan, free_links,
               fill_drain_bubble_overhead},
    ClosedForm{"gpipe", Figure::kPeakStashed, "m on every device", kOrderOnly, "Huang et al., GPipe, NeurIPS 2019",
               always, gpipe_peak},
    ClosedForm{"gpipe", Figure::kMessages, "2m(p-1), as 1F1B", kOrderOnly, "one per stage boundary", always,
               single_chunk_messages},
    ClosedForm{"gpipe", Figure::kMakespan, "(m+p-1)(F+B) + 2(p-1)L", kLatencyOnly, "derived (tests/link_test.cpp)",
               latency_only, gpipe_latency_makespan},
    ClosedForm{"1f1b", Figure::kMakespan, "(m+p-1)(F+B)", kUniformFree, kNarayanan, free_links, fill_drain_makespan},
    ClosedForm{"1f1b", Figure::kBubbleRatio, "(p-1)/(m+p-1), the same as GPipe", kUniformFree, kNarayanan, free_links,
               fill_drain_bubble_ratio},
    ClosedForm{"1f1b", Figure::kBubbleOverhead, "(p-1)/m", kUniformFree, kNarayanan, free_links,
               fill_drain_bubble_overhead},
    ClosedForm{"1f1b", Figure::kPeakStashed, "min(p-d, m) on device d", kOrderOnly, kNarayanan, always,
               one_f_one_b_peak},
    ClosedForm{"1f1b", Figure::kMessages, "2m(p-1)", kOrderOnly, "one per stage boundary", always,
               single_chunk_messages},
    ClosedForm{"1f1b", Figure::kMakespan, "(m+p-1)(F+B) + 2(p-1)L + 2 floor((p-1)(m-1)/p) L", kLatencyOnly,
               "derived (tests/link_test.cpp)", latency_only, one_f_one_b_latency_makespan},
    ClosedForm{"interleaved-1f1b", Figure::kMakespan, "(mv+p-1)(F+B), F and B per chunk",
               "uniform costs, free links, p | m", "Narayanan et al., SC'21 2.2.2", interleaved_balanced,
               interleaved_makespan},
    ClosedForm{"interleaved-1f1b", Figure::kBubbleRatio, "(p-1)/(mv+p-1)", "uniform costs, free links, p | m",
               "Narayanan et al., SC'21 2.2.2", interleaved_balanced, interleaved_bubble_ratio},
    ClosedForm{"interleaved-1f1b", Figure::kBubbleOverhead, "(p-1)/(mv): 1/v of 1F1B's",
               "uniform costs, free links, p | m", "Narayanan et al., SC'21 2.2.2", interleaved_balanced,
               interleaved_bubble_overhead},
    ClosedForm{"interleaved-1f1b", Figure::kPeakStashed, "min((v-1)N + 2(p-1-d) + 1, mv), N = p when p | m, or --microbatch-group-size", kOrderOnly,
               "Megatron-LM warmup count; torch ScheduleInterleaved1F1B", always, interleaved_peak},
    ClosedForm{"interleaved-1f1b", Figure::kMessages, "2m(pv-1): about v times 1F1B's", kOrderOnly,
               "one per stage boundary", always, loop_messages},
    ClosedForm{"interleaved-zb", Figure::kMakespan, "(3mv+p-1)F: the fill only, at F = I = W per chunk",
               "F = I = W, free links, p | m", "simulated (tests/interleaved_zero_bubble_test.cpp)",
               interleaved_zb_balanced, interleaved_zb_makespan},
    ClosedForm{"interleaved-zb", Figure::kBubbleRatio, "(p-1)/(3mv+p-1)", "F = I = W, free links, p | m",
               "simulated (tests/interleaved_zero_bubble_test.cpp)", interleaved_zb_balanced,
               interleaved_zb_bubble_ratio},
    ClosedForm{"interleaved-zb", Figure::kPeakStashed, "(vp-d) M_B + d M_W, p | m", "any costs and links, p | m",
               "torch ScheduleInterleavedZeroBubble warmup count", interleaved_zb_rounds, interleaved_zb_peak},
    ClosedForm{"interleaved-zb", Figure::kMessages, "2m(pv-1)", kOrderOnly, "one per stage boundary", always,
               loop_messages},
    ClosedForm{"looped-bfs", Figure::kMakespan, "(max(m,p)v + min(m,p) - 1)(F+B)", "uniform costs, free links",
               "derived (tests/interleaved_test.cpp); Lamy-Poirier, arXiv 2211.05953", looped_bfs_free,
               looped_bfs_makespan},
    ClosedForm{"looped-bfs", Figure::kPeakStashed, "mv on every device", kOrderOnly, "Lamy-Poirier, arXiv 2211.05953",
               always, all_chunks_peak},
    ClosedForm{"looped-bfs", Figure::kMessages, "2m(pv-1)", kOrderOnly, "one per stage boundary", always,
               loop_messages},
    ClosedForm{"zb-h1", Figure::kDeviceBubble, "(p-1-d)(T_F+T_B-T_W); device 0: the paper's (p-1)(T_F+T_B-T_W)",
               "free links, T_W <= T_F, m >= p", "Qi et al., ICLR 2024 2.1", h1_regime, h1_device_bubble},
    ClosedForm{"zb-h1", Figure::kMakespan, "m(F+B) + (p-1) max(T_F, T_F+T_B-T_W)", "free links, T_W <= T_F, m >= p",
               "simulated (tests/zero_bubble_test.cpp)", h1_regime, h1_makespan},
    ClosedForm{"zb-h1", Figure::kPeakStashed, "(p-d) M_B + d M_W: 1F1B's peak", "any costs and links, m >= p",
               "Qi et al., ICLR 2024 2.3", h1_sized, h1_peak},
    ClosedForm{"zb-h1", Figure::kMessages, "2m(p-1)", kOrderOnly, "one per stage boundary", always,
               single_chunk_messages},
    ClosedForm{"zb-h2", Figure::kDeviceBubble, "(p-1-d)(T_F+T_B-2T_W); device 0: the paper's (p-1)(T_F+T_B-2T_W)",
               "free links, T_W <= T_F, T_W <= T_B, m >= 2p-1", "Qi et al., ICLR 2024 2.2", h2_regime,
               h2_device_bubble},
    ClosedForm{"zb-h2", Figure::kMakespan, "m(F+B) + (p-1) max(T_F, T_F+T_B-2T_W)",
               "free links, T_W <= T_F, T_W <= T_B, m >= 2p-1", "simulated (tests/zero_bubble_test.cpp)", h2_regime,
               h2_makespan},
    ClosedForm{"zb-h2", Figure::kPeakStashed, "(2p-2d-1) M_B + 2d M_W", "any costs and links, m >= 2p-1",
               "Qi et al., ICLR 2024 2.3", h2_sized, h2_peak},
    ClosedForm{"zb-h2", Figure::kMessages, "2m(p-1)", kOrderOnly, "one per stage boundary", always,
               single_chunk_messages},
    ClosedForm{"v-half", Figure::kPeakStashed, "2 floor((p+2)/2) stage stashes: (p+2)//2 micro-batches, half of 1F1B's p",
               "any costs and links, m > p", "Qi et al., Controllable Memory, NeurIPS 2024", v_half_sized,
               v_half_peak},
    ClosedForm{"v-half", Figure::kMakespan, "(6m+3p-7)F, p even; (6m+3p-4)F, p odd: about half of 1F1B's bubble",
               "F = I = W, free links, p >= 3, m >= 2p-1", "simulated (tests/controllable_memory_v_test.cpp)",
               v_half_balanced, v_half_makespan},
    ClosedForm{"v-half", Figure::kMessages, "2m(2p-2)", kOrderOnly, "one per stage boundary that crosses devices",
               always, v_messages},
    ClosedForm{"v-min", Figure::kPeakStashed, "2 floor((p+4)/3) stage stashes: (p+4)//3 micro-batches, a third of 1F1B's",
               "any costs and links, m >= p, p mod 3 != 2 (else device 0 holds one fewer)", "Qi et al., Controllable Memory, NeurIPS 2024", v_min_sized,
               v_min_peak},
    ClosedForm{"v-min", Figure::kMakespan, "(6m+4p-5)F; (6m+4p-7)F when 3 | p: about 2/3 of 1F1B's bubble",
               "F = I = W, free links, p >= 2, m >= 2p-1", "simulated (tests/controllable_memory_v_test.cpp)",
               v_min_balanced, v_min_makespan},
    ClosedForm{"v-min", Figure::kMessages, "2m(2p-2)", kOrderOnly, "one per stage boundary that crosses devices",
               always, v_messages},
    ClosedForm{"dualpipev", Figure::kMakespan, "(6m+2p-2)F", "F = I = W, F&B = F+B, free links, m >= 2p",
               "derived (tests/dualpipe_v_test.cpp)", dualpipev_balanced, dualpipev_makespan},
    ClosedForm{"dualpipev", Figure::kBubbleRatio, "(p-1)/(3m+p-1)", "F = I = W, F&B = F+B, free links, m >= 2p",
               "derived (tests/dualpipe_v_test.cpp)", dualpipev_balanced, dualpipev_bubble_ratio},
    ClosedForm{"dualpipev", Figure::kDeviceBubble, "(2p-2-d)F; device 0: DualPipe's (PP/2-1)(F&B+B-3W), PP = 2p",
               "F = I = W, F&B = F+B, free links, m >= 2p", "deepseek-ai/DualPipe README", dualpipev_balanced,
               dualpipev_device_bubble},
    ClosedForm{"dualpipev", Figure::kPeakStashed, "2p+1 = DualPipe's PP+1 stages on every device",
               "any costs and links, m >= 2p", "deepseek-ai/DualPipe README", dualpipev_sized, dualpipev_peak},
    ClosedForm{"dualpipev", Figure::kMessages, "2m(2p-2)", kOrderOnly, "one per stage boundary that crosses devices",
               always, v_messages},
    ClosedForm{"dualpipe", Figure::kMakespan, "(3m+p-2)F: each device's 3mF of work and the README's bubble",
               "F = I = W, F&B = F+B, free links", "deepseek-ai/DualPipe README; derived (tests/dualpipe_test.cpp)",
               dualpipe_balanced, dualpipe_makespan},
    ClosedForm{"dualpipe", Figure::kBubbleRatio, "(p-2)/(3m+p-2)", "F = I = W, F&B = F+B, free links",
               "deepseek-ai/DualPipe README; derived (tests/dualpipe_test.cpp)", dualpipe_balanced,
               dualpipe_bubble_ratio},
    ClosedForm{"dualpipe", Figure::kDeviceBubble,
               "(p-2-min(d,p-1-d))F; device 0: DualPipe's (PP/2-1)(F&B+B-3W), PP = p",
               "F = I = W, F&B = F+B, free links", "deepseek-ai/DualPipe README", dualpipe_balanced,
               dualpipe_device_bubble},
    ClosedForm{"dualpipe", Figure::kPeakStashed, "p+1 = DualPipe's PP+1 on every device", "any costs and links",
               "deepseek-ai/DualPipe README", dualpipe_sized, dualpipe_peak},
    ClosedForm{"dualpipe", Figure::kMessages, "2m(p-1): m/2 each way over p-1 boundaries, activation and gradient",
               kOrderOnly, "one per stage boundary that crosses devices", dualpipe_sized, dualpipe_messages},
    ClosedForm{"seq1f1b", Figure::kMakespan, "(mk+p-1)(F+B)/k: 1F1B's fill and drain cut by k", "uniform costs, free links",
               "derived from thunlp/Seq1F1B's order (tests/seq_one_f_one_b_test.cpp)", seq_regime, seq_makespan},
    ClosedForm{"seq1f1b", Figure::kBubbleRatio, "(p-1)/(mk+p-1): 1F1B's over k times the units",
               "uniform costs, free links", "derived from thunlp/Seq1F1B's order (tests/seq_one_f_one_b_test.cpp)",
               seq_regime, seq_bubble_ratio},
    ClosedForm{"seq1f1b", Figure::kPeakStashed, "min(p-d+k-1, mk)/k micro-batches: p-d+k-1 slices, (p+k-1)/k on d0",
               kOrderOnly, "thunlp/Seq1F1B schedules.py's warmup, p-d-2+k", seq_sized, seq_peak},
    ClosedForm{"seq1f1b", Figure::kMessages, "2mk(p-1): every slice crosses every boundary", kOrderOnly,
               "one per stage boundary and slice", seq_sized, seq_messages},
    ClosedForm{"chimera", Figure::kMakespan, "m(F+B) + (p-2)B + (m/p-1)(p-2)(B-F); (2m+p-2)F at F = B",
               "uniform F <= B, free links, p even, p | m", "Li and Hoefler, SC'21, Table 1 at F = B; derived "
               "(tests/bidirectional_test.cpp)", chimera_regime, bidirectional_makespan},
    ClosedForm{"chimera", Figure::kBubbleRatio, "((p-2)B + (m/p-1)(p-2)(B-F)) / makespan; (p-2)/(2m+p-2) at F = B",
               "uniform F <= B, free links, p even, p | m", "Li and Hoefler, SC'21, Table 1 at F = B; derived "
               "(tests/bidirectional_test.cpp)", chimera_regime, bidirectional_bubble_ratio},
    ClosedForm{"chimera", Figure::kPeakStashed, "p/2 + 1 + min(d, p-1-d): from D/2+1 at the ends to D in the middle",
               "any costs and links, p even, p | m", "Li and Hoefler, SC'21, Table 1 ([D/2+1, D] M_a)", chimera_sized,
               chimera_peak},
    ClosedForm{"chimera", Figure::kMessages, "2m(p-1): m/2 each way over p-1 boundaries, activation and gradient",
               kOrderOnly, "one per stage boundary that crosses devices", chimera_sized, chimera_messages},
    ClosedForm{"bitpipe", Figure::kMakespan, "2m(F+B) + (p-2)B + (m/p-1)(p-2)(B-F), F and B per chunk",
               "uniform F <= B, free links, v = 2, p even, p | m",
               "derived from wuhouming/BitPipe's order (tests/bidirectional_test.cpp)", bitpipe_regime,
               bidirectional_makespan},
    ClosedForm{"bitpipe", Figure::kBubbleRatio, "((p-2)B + (m/p-1)(p-2)(B-F)) / makespan",
               "uniform F <= B, free links, v = 2, p even, p | m",
               "derived from wuhouming/BitPipe's order (tests/bidirectional_test.cpp)", bitpipe_regime,
               bidirectional_bubble_ratio},
    ClosedForm{"bitpipe", Figure::kPeakStashed, "3p/2 + 1 + min(d, p-1-d) chunk stashes", "any costs and links, v = 2, "
               "p even, p | m", "derived from bitpipe_schedule.py's warmup (3p/2 + d forwards)", bitpipe_sized,
               bitpipe_peak},
    ClosedForm{"bitpipe", Figure::kMessages, "2m(2p-2): m/2 each way over 2p-2 boundaries between devices",
               kOrderOnly, "one per stage boundary that crosses devices", bitpipe_sized, bitpipe_messages},
    ClosedForm{"zbv", Figure::kMakespan, "(6m+p-1)F, zero bubble at F = I = W", "F = I = W, free links, m >= 2p-1",
               "Qi et al., ZB-V; torch ScheduleZBVZeroBubble", zbv_balanced, zbv_makespan},
    ClosedForm{"zbv", Figure::kBubbleRatio, "(p-1)/(6m+p-1): fill only", "F = I = W, free links, m >= 2p-1",
               "Qi et al., ZB-V; torch ScheduleZBVZeroBubble", zbv_balanced, zbv_bubble_ratio},
    ClosedForm{"zbv", Figure::kPeakStashed, "min(m, 2p-1-d) + min(m, d+1) stage stashes; 2p = p M_B once m >= 2p-1",
               kOrderOnly, "Qi et al., ZB-V: 1F1B's peak activation memory", always, zbv_peak},
    ClosedForm{"zbv", Figure::kMessages, "2m(2p-2): the V's turn stays on one device", kOrderOnly,
               "one per stage boundary that crosses devices", always, v_messages},
};

}  // namespace

std::string_view figure_name(Figure figure) {
  switch (figure) {
    case Figure::kMakespan:
      return "makespan";
    case Figure::kBubbleRatio:
      return "bubble_ratio";
    case Figure::kBubbleOverhead:
      return "bubble_overhead";
    case Figure::kMessages:
      return "messages";
    case Figure::kPeakStashed:
      return "peak_stashed";
    case Figure::kDeviceBubble:
      return "device_bubble";
  }
  return "?";
}

std::span<const ClosedForm> closed_forms() { return kForms; }

}  // namespace ppsim
