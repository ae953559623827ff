// SPDX-License-Identifier: Apache-2.0
// What links cost GPipe and 1F1B: a per-message latency L (free bandwidth), a transfer time
// T = bytes / bandwidth, blocking versus overlapping communication, and the per_link figures.
//
// Derivations (uniform F and B, p devices, m micro-batches, stage d on device d). The engine starts
// every op at the latest of its device being free and its inputs having arrived, so a start time is
// the longest chain of ops and hops that ends there; each device-to-device hop of a chain adds L.
//
// GPipe with latency L. Device d gets its first input at d(F + L) and the next ones every F, exactly
// when it frees up, so it runs F(j) at d(F + L) + jF. The last device ends its forwards at
// (p - 1)(F + L) + mF and runs B(0..m-1) back to back; each gradient then takes B + L per hop down,
// and the other devices finished their forwards long before. Device 0 ends at
//     (p - 1)(F + L) + mF + (p - 1)(B + L) + mB = (m + p - 1)(F + B) + 2(p - 1)L:
// the forward wave pays L per hop, and so does the backward wave, whatever L is.
//
// 1F1B with latency L. Let f(j) be the start of F(j) on the last device (p >= 2).
// - Fill: f(0) = (p - 1)(F + L).
// - For 1 <= r <= p - 1: device p - r has r - 1 warmup forwards, so its first pair is F(r-1), B(0)
//   and the op after its B(0) is F(r). The chain F(0) and B(0) on the last device, the gradient down
//   r - 1 hops to device p - r, its B(0), its F(r), and r - 1 hops up gives
//     f(r) = f(0) + r(F + B) + 2(r - 1)L.
// - Steady state: device 0 runs B(j) then F(j + p). The chain F(j), B(j) on the last device, the
//   gradient down p - 1 hops, B(j) and F(j + p) on device 0, and p - 1 hops up gives
//     f(j + p) = f(j) + p(F + B) + 2(p - 1)L,
//   a round trip through the whole pipeline for every p micro-batches: the period is
//   p(F + B) + 2(p - 1)L per p micro-batches, F + B + 2(p - 1)L/p on average, where 1F1B with
//   free links has F + B (the device-bound chain F(j), B(j), F(j+1) on the last device).
// - Together: f(j) = (p - 1)(F + L) + j(F + B) + 2(j - ceil(j/p))L. After f(m - 1) only the last
//   backward's walk down is left: makespan = f(m - 1) + F + B + (p - 1)(B + L), i.e.
//     (m + p - 1)(F + B) + 2(p - 1)L + 2 floor((p - 1)(m - 1)/p) L
//   (using n - ceil(n/p) = floor((p - 1)n/p)).
// These chains are lower bounds that are tight: each carries exactly the compute of the device-bound
// chain it competes with (a tie at L = 0), so with any L > 0 it is the longest. By hand, F = 1, B = 2:
//   p=2 m=2: device 1 runs F0 [1+L, 2+L], B0 [2+L, 4+L], F1 [4+L, 5+L], B1 [5+L, 7+L];
//            device 0 runs B0 [4+2L, 6+2L], B1 [7+2L, 9+2L]: makespan 9 + 2L (formula: 9 + 2L).
//   p=2 m=3: device 0 runs F2 after B0, so it ends at 7+2L; device 1 runs F2 [7+3L, 8+3L],
//            B2 [8+3L, 10+3L]; device 0 B2 ends 12 + 4L (formula: 12 + 2L + 2L).
// So the GPipe-like 2(p - 1)L holds for 1F1B exactly when m <= 2 (or p = 1), for every L; with
// m >= 3 the steady state stalls on every round trip, and the larger L is against F + B, the more
// the run is latency-bound (per micro-batch ~ 2(p - 1)L/p instead of F + B).
//
// Bandwidth (L = 0, every message takes T on its link, one at a time per direction):
// - GPipe with T >= F: device 0 ends F(j) at (j + 1)F but its link sends one message per T, so the
//   activation of F(j) arrives at device 1 at F + (j + 1)T; device d runs F(j) at dF + (j + d)T
//   (d >= 1) and its own link is free exactly when it sends. Consecutive forward starts on the last
//   device are T apart: the link, not the devices, paces the forward wave.
// - 1F1B: T sits on every hop of the round-trip chains above, so the window of p micro-batches on the
//   last device lasts p(F + B) + 2(p - 1)T, more than the pT the link needs: the round trip, not the
//   link, sets the period, even when T > F + B (it is not T). Consecutive forwards on the last device
//   are at least T apart (one message at a time) and exactly T apart where the link is the limit.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/engine.hpp"
#include "support/invariants.hpp"

using Catch::Matchers::WithinRel;
using ppsim::CommMode;
using ppsim::Op;

namespace {

constexpr double kF = 1;
constexpr double kB = 2;

// Message sizes and bandwidths are powers of two, so that T = bytes / bandwidth is exact.
ppsim::UniformCostModel link_costs(double latency, double transfer = 0, double forward = kF, double backward = kB) {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{forward};
  costs.backward = ppsim::Duration{backward};
  costs.latency = ppsim::Duration{latency};
  costs.activation_bytes = ppsim::ByteCount{1 << 20};
  if (transfer > 0) {
    costs.message_bytes = ppsim::ByteCount{1 << 20};
    costs.bandwidth = ppsim::Bandwidth{static_cast<double>(1 << 20) / transfer};
  }
  return ppsim::UniformCostModel(costs);
}

ppsim::Program build(const char* name, int p, int m) { return ppsim::find_schedule(name)->build({p, m, 1}); }

// Start of F(j) on `device`, from the timeline.
std::vector<double> forward_starts(const ppsim::Result& result, int device, int m) {
  std::vector<double> starts(static_cast<std::size_t>(m), -1);
  for (const ppsim::Span& span : result.timeline->spans) {
    if (span.device == device && span.action.op == Op::kForward) {
      starts[static_cast<std::size_t>(span.action.microbatch)] = span.start;
    }
  }
  return starts;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("GPipe pays a per-message latency once per hop of its forward wave and once per hop of its backward") {
  const int p = GENERATE(1, 2, 3, 5, 8);
  const int m = GENERATE(1, 2, 3, 7, 16);
  const double latency = GENERATE(0.1, 1.0, 2.5, 20.0);
  INFO("p=" << p << " m=" << m << " L=" << latency);
  const ppsim::Result result = ppsim::run_checked(build("gpipe", p, m), link_costs(latency));
  CHECK_THAT(result.makespan, WithinRel((m + p - 1) * (kF + kB) + 2 * (p - 1) * latency, 1e-12));
  // The forward wave: device d starts F(j) at d(F + L) + jF.
  for (int d = 0; d < p; ++d) {
    const auto starts = forward_starts(result, d, m);
    for (int j = 0; j < m; ++j) {
      CHECK(starts[static_cast<std::size_t>(j)] == Approx(d * (kF + latency) + j * kF).epsilon(1e-12));
    }
  }
}

TEST_CASE("1F1B with at most two micro-batches pays latency only while filling and draining, like GPipe") {
  const int p = GENERATE(range(1, 9));
  const int m = GENERATE(1, 2);
  const double latency = GENERATE(0.1, 1.0, 7.0);
  INFO("p=" << p << " m=" << m << " L=" << latency);
  const ppsim::Result result = ppsim::run_checked(build("1f1b", p, m), link_costs(latency));
  CHECK_THAT(result.makespan, WithinRel((m + p - 1) * (kF + kB) + 2 * (p - 1) * latency, 1e-12));
}

TEST_CASE("1F1B with three or more micro-batches also pays latency on every steady-state round trip") {
  const int p = GENERATE(range(2, 9));
  const int m = GENERATE(3, 4, 5, 8, 13, 24);
  const double latency = GENERATE(0.1, 1.0, 7.0);
  INFO("p=" << p << " m=" << m << " L=" << latency);
  const ppsim::Result result = ppsim::run_checked(build("1f1b", p, m), link_costs(latency));
  const double fill_only = (m + p - 1) * (kF + kB) + 2 * (p - 1) * latency;
  const double steady_hops = 2.0 * ((p - 1) * (m - 1) / p);  // integer division: the floor
  CHECK_THAT(result.makespan, WithinRel(fill_only + steady_hops * latency, 1e-12));
  CHECK(result.makespan > fill_only);
}

TEST_CASE("1F1B's last device starts a forward on a p-micro-batch cycle of p(F+B) + 2(p-1)L") {
  const int p = GENERATE(2, 3, 4, 6);
  const int m = GENERATE_COPY(p + 1, 3 * p + 2);
  const double latency = GENERATE(0.5, 3.0);
  const auto [forward, backward] = GENERATE(values<std::pair<double, double>>({{1.0, 2.0}, {0.7, 1.3}}));
  INFO("p=" << p << " m=" << m << " L=" << latency << " F=" << forward << " B=" << backward);
  const ppsim::Result result = ppsim::run_checked(build("1f1b", p, m), link_costs(latency, 0, forward, backward));
  const auto f = forward_starts(result, p - 1, m);
  for (int j = 0; j < m; ++j) {
    INFO("j=" << j);
    const double expected =
        (p - 1) * (forward + latency) + j * (forward + backward) + 2.0 * (j - ceil_div(j, p)) * latency;
    CHECK(f[static_cast<std::size_t>(j)] == Approx(expected).epsilon(1e-12));
    if (j + p < m) {
      CHECK(f[static_cast<std::size_t>(j + p)] - f[static_cast<std::size_t>(j)] ==
            Approx(p * (forward + backward) + 2 * (p - 1) * latency).epsilon(1e-12));
    }
  }
}

TEST_CASE("A message slower than a forward paces GPipe's forward wave at one message per transfer time") {
  const int p = GENERATE(2, 3, 5);
  const int m = GENERATE(4, 9);
  const double transfer = GENERATE(1.0, 1.5, 2.5, 4.0);  // >= F
  INFO("p=" << p << " m=" << m << " T=" << transfer);
  const ppsim::Result result = ppsim::run_checked(build("gpipe", p, m), link_costs(0, transfer));
  for (int d = 1; d < p; ++d) {
    const auto starts = forward_starts(result, d, m);
    for (int j = 0; j < m; ++j) {
      CHECK(starts[static_cast<std::size_t>(j)] == Approx(d * kF + (j + d) * transfer).epsilon(1e-12));
    }
  }
  const auto last = forward_starts(result, p - 1, m);
  for (int j = 1; j < m; ++j) {
    CHECK(last[static_cast<std::size_t>(j)] - last[static_cast<std::size_t>(j - 1)] == Approx(transfer));
  }
}

TEST_CASE("A message faster than a forward leaves GPipe's forward wave paced by the forwards") {
  const int p = GENERATE(2, 4);
  const double transfer = GENERATE(0.25, 0.5);
  const int m = 6;
  const ppsim::Result result = ppsim::run_checked(build("gpipe", p, m), link_costs(0, transfer));
  const auto last = forward_starts(result, p - 1, m);
  // Each hop costs F + T for the first micro-batch; the next ones follow every F.
  for (int j = 0; j < m; ++j) {
    CHECK(last[static_cast<std::size_t>(j)] == Approx((p - 1) * (kF + transfer) + j * kF));
  }
}

TEST_CASE("In 1F1B a slow link does not set the period: the round trip does") {
  const int p = GENERATE(2, 3, 4);
  const double transfer = GENERATE(1.5, 4.0, 6.0);  // below and above F + B = 3
  const int m = 3 * p + 1;
  INFO("p=" << p << " T=" << transfer);
  const ppsim::Result result = ppsim::run_checked(build("1f1b", p, m), link_costs(0, transfer));
  const auto f = forward_starts(result, p - 1, m);
  for (int j = 0; j + 1 < m; ++j) {
    // One message at a time on the link into the last device.
    CHECK(f[static_cast<std::size_t>(j + 1)] - f[static_cast<std::size_t>(j)] >= transfer - 1e-9);
  }
  for (int j = 0; j + p < m; ++j) {
    const double window = f[static_cast<std::size_t>(j + p)] - f[static_cast<std::size_t>(j)];
    CHECK(window == Approx(p * (kF + kB) + 2 * (p - 1) * transfer).epsilon(1e-12));
    CHECK(window > p * transfer);
  }
}

TEST_CASE("In blocking mode the sender waits until its message has left the link, in overlap mode it does not") {
  // p=2, m=2 GPipe, F=1, B=2, T=3, L=0. By hand:
  // overlap:  device 0 F0 [0,1], F1 [1,2]; link 0->1 sends [1,4], [4,7]; device 1 F0 [4,5], F1 [7,8],
  //           B0 [8,10], B1 [10,12]; link 1->0 sends [10,13], [13,16]; device 0 B0 [13,15], B1 [16,18].
  // blocking: device 0 F0 [0,1], held while it sends [1,4]; F1 [4,5], sends [5,8]; device 1 F0 [4,5],
  //           F1 [8,9], B0 [9,11], held while it sends [11,14]; B1 [14,16], sends [16,19];
  //           device 0 B0 [14,16], B1 [19,21].
  const ppsim::Program program = build("gpipe", 2, 2);
  const ppsim::UniformCostModel costs = link_costs(0, 3);
  const ppsim::Result overlap = ppsim::run_checked(program, costs, CommMode::kOverlap);
  const ppsim::Result blocking = ppsim::run_checked(program, costs, CommMode::kBlocking);
  CHECK(overlap.makespan == 18);
  CHECK(blocking.makespan == 21);
  CHECK(forward_starts(overlap, 0, 2)[1] == 1);
  CHECK(forward_starts(blocking, 0, 2)[1] == 4);
  // Busy time does not count the blocked stream: only the links' and the bubble's share grow.
  CHECK(blocking.total_busy == overlap.total_busy);
  CHECK(blocking.bubble_ratio > overlap.bubble_ratio);
}

TEST_CASE("In blocking mode no device starts its next op before its previous op's message has left the link") {
  const char* name = GENERATE("gpipe", "1f1b");
  const int p = GENERATE(2, 4);
  const int m = GENERATE(3, 8);
  const double transfer = GENERATE(0.5, 2.5);
  const double latency = GENERATE(0.0, 1.0);
  INFO(name << " p=" << p << " m=" << m << " T=" << transfer << " L=" << latency);
  const ppsim::Program program = build(name, p, m);
  const ppsim::UniformCostModel costs = link_costs(latency, transfer);
  const ppsim::Result blocking = ppsim::run_checked(program, costs, CommMode::kBlocking);
  const ppsim::Result overlap = ppsim::run_checked(program, costs, CommMode::kOverlap);

  // For every message: the sender's next span (in its action order) starts after the message left.
  const auto& spans = blocking.timeline->spans;
  std::size_t checked = 0;
  for (const ppsim::MessageSpan& message : blocking.timeline->messages) {
    const auto& list = program.actions[static_cast<std::size_t>(message.src)];
    for (std::size_t k = 0; k + 1 < list.size(); ++k) {
      if (!(list[k] == message.from)) continue;
      for (const ppsim::Span& span : spans) {
        if (span.device == message.src && span.action == list[k + 1]) {
          CHECK(span.start >= message.depart_end);
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 0);
  CHECK(blocking.makespan >= overlap.makespan);
}

TEST_CASE("In paired mode a 1F1B send waits for its receiver to finish the op before the one that takes it") {
  // p=2, m=2 1F1B, F=1, B=2, L=0.5, free bandwidth. Device 0 runs F0 F1 B0 B1, device 1 F0 B0 F1 B1.
  // overlap (formula above): makespan 9 + 2L = 10.
  // paired: device 0 F0 [0,1], sent at once (device 1 posted the receive at 0), arrives 1.5: held
  //         until then. F1 [1.5,2.5]: device 1 posts F1's receive only after its B0, so the send
  //         waits. Device 1 F0 [1.5,2.5], B0 [2.5,4.5]; its gradient goes at once (device 0 posted
  //         B0's receive when its F1 ended at 2.5), arrives 5; at 4.5 device 1 posts F1's receive:
  //         device 0's activation leaves, arrives 5. Device 1 (held to 5) F1 [5,6], B1 [6,8];
  //         device 0 B0 [5,7] posts B1's receive at 7; the gradient leaves at 8, arrives 8.5;
  //         B1 [8.5,10.5]: makespan 10.5.
  const ppsim::Program program = build("1f1b", 2, 2);
  const ppsim::UniformCostModel costs = link_costs(0.5);
  CHECK(ppsim::run_checked(program, costs, CommMode::kOverlap).makespan == 10);
  CHECK(ppsim::run_checked(program, costs, CommMode::kBlocking).makespan == 10);  // messages leave at once
  const ppsim::Result paired = ppsim::run_checked(program, costs, CommMode::kPaired);
  CHECK(paired.makespan == 10.5);
  CHECK(forward_starts(paired, 0, 2)[1] == 1.5);
  CHECK(forward_starts(paired, 1, 2)[1] == 5);
  // The message of device 0's F1 was ready at 2.5 and left at 4.5, when device 1 posted.
  bool found = false;
  for (const ppsim::MessageSpan& message : paired.timeline->messages) {
    if (message.src == 0 && message.from == ppsim::Action{0, Op::kForward, 1}) {
      CHECK(message.enqueued == 2.5);
      CHECK(message.depart_start == 4.5);
      CHECK(message.arrival == 5);
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("In paired mode GPipe without latency runs as in blocking mode, and latency holds the sender too") {
  // p=2, m=2 GPipe, F=1, B=2, T=3 (the blocking case above, makespan 21): every receiver is
  // waiting when GPipe's messages are ready, so pairing adds nothing while L=0. With L=1 each of the
  // four sends also holds its sender for the latency, which blocking mode does not.
  const ppsim::Program program = build("gpipe", 2, 2);
  CHECK(ppsim::run_checked(program, link_costs(0, 3), CommMode::kPaired).makespan == 21);
  const double blocking = ppsim::run_checked(program, link_costs(1, 3), CommMode::kBlocking).makespan;
  const double paired = ppsim::run_checked(program, link_costs(1, 3), CommMode::kPaired).makespan;
  CHECK(paired > blocking);
}

TEST_CASE("In paired mode every message leaves after its receiver's previous op and before its sender goes on") {
  const char* name = GENERATE("gpipe", "1f1b", "zb-h1");
  const int p = GENERATE(2, 3, 5);
  const int m = GENERATE(1, 4, 9);
  const double transfer = GENERATE(0.0, 0.5, 2.5);
  const double latency = GENERATE(0.0, 1.0);
  INFO(name << " p=" << p << " m=" << m << " T=" << transfer << " L=" << latency);
  const ppsim::Program program = ppsim::find_schedule(name)->build({p, m, 1});
  const ppsim::UniformCostModel costs = link_costs(latency, transfer);
  const ppsim::Result paired = ppsim::run_checked(program, costs, CommMode::kPaired);
  const ppsim::Result blocking = ppsim::run_checked(program, costs, CommMode::kBlocking);
  CHECK(paired.makespan >= blocking.makespan);
  CHECK(paired.total_busy == blocking.total_busy);
  auto span_of = [&](int device, const ppsim::Action& action) -> const ppsim::Span* {
    for (const ppsim::Span& span : paired.timeline->spans) {
      if (span.device == device && span.action == action) return &span;
    }
    return nullptr;
  };
  std::size_t checked = 0;
  for (const ppsim::MessageSpan& message : paired.timeline->messages) {
    // The consumer: the next stage's forward, or the previous stage's backward of the same micro-batch.
    const auto& receiver = program.actions[static_cast<std::size_t>(message.dst)];
    const auto& sender = program.actions[static_cast<std::size_t>(message.src)];
    const bool forward = message.from.op == Op::kForward;
    const int stage = message.from.stage + (forward ? 1 : -1);
    for (std::size_t k = 0; k < receiver.size(); ++k) {
      const ppsim::Action& consumer = receiver[k];
      if (consumer.stage != stage || consumer.microbatch != message.from.microbatch) continue;
      if ((consumer.op == Op::kForward) != forward || consumer.op == Op::kBackwardWeight) continue;
      if (k > 0) CHECK(message.depart_start >= span_of(message.dst, receiver[k - 1])->end);
      ++checked;
    }
    for (std::size_t k = 0; k + 1 < sender.size(); ++k) {
      if (sender[k] == message.from) CHECK(span_of(message.src, sender[k + 1])->start >= message.arrival);
    }
  }
  CHECK(checked == paired.timeline->messages.size());
}

TEST_CASE("A schedule whose paired sends wait on each other deadlocks and names the receive each device waits for") {
  // ZB-H2 runs extra warmup forwards that its neighbour does not receive in time: with blocking
  // paired sends every device ends up held in a send to a device that is itself held.
  const ppsim::Program program = ppsim::find_schedule("zb-h2")->build({4, 8, 1});
  ppsim::Engine engine;
  const ppsim::SimulationOutcome outcome = engine.run(program, link_costs(0.1), {CommMode::kPaired});
  REQUIRE(outcome.deadlock);
  const std::string summary = outcome.deadlock->summary();
  CHECK_THAT(summary, Catch::Matchers::Contains("to post the receive of"));
  CHECK_THAT(summary, Catch::Matchers::Contains("(paired sends block)"));
  CHECK(engine.run(program, link_costs(0.1), {CommMode::kOverlap}).result);
}

TEST_CASE("Each adjacent device pair carries m messages each way, and comm_ratio is link time over compute time") {
  const char* name = GENERATE("gpipe", "1f1b");
  const int p = GENERATE(1, 2, 4, 8);
  const int m = GENERATE(1, 8);
  const double transfer = 0.25;
  INFO(name << " p=" << p << " m=" << m);
  const ppsim::Result result = ppsim::run_checked(build(name, p, m), link_costs(0, transfer));

  REQUIRE(result.per_link.size() == static_cast<std::size_t>(2 * (p - 1)));
  for (const ppsim::LinkFigures& link : result.per_link) {
    INFO("link " << link.src << "->" << link.dst);
    CHECK(std::abs(link.src - link.dst) == 1);
    CHECK(link.messages == m);
    CHECK(link.bytes == static_cast<std::int64_t>(m) * (1 << 20));
    CHECK(link.busy == Approx(m * transfer));
  }
  CHECK(result.messages == 2 * static_cast<std::int64_t>(p - 1) * m);
  // Links busy 2(p-1)·m·T against p·m·(F+B) of compute.
  CHECK(result.comm_ratio == Approx(2.0 * (p - 1) * transfer / (p * (kF + kB))).margin(1e-15));
}

TEST_CASE("Free links send messages of zero transfer time and a latency-only link is never busy") {
  const ppsim::Result result = ppsim::run_checked(build("1f1b", 4, 8), link_costs(2.0));
  for (const ppsim::LinkFigures& link : result.per_link) {
    CHECK(link.messages == 8);
    CHECK(link.busy == 0);
  }
  CHECK(result.comm_ratio == 0);
  for (const ppsim::MessageSpan& message : result.timeline->messages) {
    CHECK(message.depart_end == message.depart_start);
    CHECK(message.arrival == message.depart_end + 2.0);
  }
}
