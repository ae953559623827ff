#pragma once
// A min-heap of events ordered by (time, sequence number): ties break by insertion order, so a
// run is deterministic. Storage is reused across runs; push and pop never allocate once reserved.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ppsim {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    double time;
    std::uint64_t sequence;
    Payload payload;
  };

  void reset(std::size_t capacity) {
    heap_.clear();
    heap_.reserve(capacity);
    next_sequence_ = 0;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

  void push(double time, Payload payload) {
    heap_.push_back(Event{time, next_sequence_++, payload});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }

  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Event event = heap_.back();
    heap_.pop_back();
    return event;
  }

 private:
  // std heap functions build a max-heap; "later" as the less-than makes the earliest event the top.
  static bool later(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time > b.time;
    return a.sequence > b.sequence;
  }

  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace ppsim
