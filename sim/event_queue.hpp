// SPDX-License-Identifier: Apache-2.0
#pragma once
// A binary min-heap of events ordered by (time, sequence number): ties break by insertion order,
// so a run is deterministic. Storage is reused across runs; push and pop never allocate once
// reserved. Hand-written rather than std::push_heap so that the comparison inlines: the queue
// is a large share of the engine's cost per op.

#include <cstdint>
#include <vector>

namespace ppsim {

// Payload is a small unsigned value (a device index); it shares a 64-bit key with the sequence
// number so that an event is 16 bytes and compares as (time, sequence).
class EventQueue {
 public:
  struct Event {
    double time;
    std::uint64_t key;  // sequence << 32 | payload
    std::uint32_t payload() const { return static_cast<std::uint32_t>(key); }
  };

  void reset(std::size_t capacity) {
    heap_.clear();
    heap_.reserve(capacity);
    next_sequence_ = 0;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

  void push(double time, std::uint32_t payload) {
    std::size_t hole = heap_.size();
    heap_.push_back(Event{time, (next_sequence_++ << 32) | payload});
    const Event event = heap_[hole];
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 2;
      if (!earlier(event, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = event;
  }

  Event pop() {
    const Event top = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t size = heap_.size();
    if (size > 0) {
      std::size_t hole = 0;
      while (true) {
        std::size_t child = 2 * hole + 1;
        if (child >= size) break;
        if (child + 1 < size && earlier(heap_[child + 1], heap_[child])) ++child;
        if (!earlier(heap_[child], last)) break;
        heap_[hole] = heap_[child];
        hole = child;
      }
      heap_[hole] = last;
    }
    return top;
  }

 private:
  static bool earlier(const Event& a, const Event& b) { return a.time < b.time || (a.time == b.time && a.key < b.key); }

  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace ppsim
