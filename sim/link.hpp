// SPDX-License-Identifier: Apache-2.0
#pragma once
// One direction of a link between two devices: sends one message at a time, first come first served.
// A message occupies the link for bytes / bandwidth, then arrives `latency` later.

#include <algorithm>
#include <cstdint>

namespace ppsim {

// 64 bytes, so that finding a link is a shift: the trusted loop does it for every timed message.
struct alignas(64) Link {
  int src = 0;
  int dst = 0;
  double latency = 0;
  double free_at = 0;  // when the message in flight has left the link
  std::int64_t messages = 0;
  std::int64_t bytes = 0;
  double busy = 0;

  struct Departure {
    double start;  // message starts leaving
    double end;    // message has left
  };

  // Messages must be sent in nondecreasing `time` (the engine sends in event order), which makes
  // the queue FIFO without storing it.
  Departure send(double time, std::int64_t message_bytes, double send_time) {
    ++messages;
    bytes += message_bytes;
    return depart(time, send_time);
  }
  // send() without the counts, for runs that count their messages afterwards.
  Departure depart(double time, double send_time) {
    const double start = std::max(time, free_at);
    free_at = start + send_time;
    busy += send_time;
    return Departure{start, free_at};
  }
};

}  // namespace ppsim
