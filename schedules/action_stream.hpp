// SPDX-License-Identifier: Apache-2.0
#pragma once
// A device's action list generated on demand: a C++20 coroutine that `co_yield`s actions into the
// reader's buffer and suspends only when that buffer is full. A schedule written as a stream is both
// materialised (collect_program) and replayed without storing its lists (Engine::run on
// ScheduleStreams), from one definition, so memory does not grow with m.

#include <algorithm>
#include <coroutine>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "schedules/program.hpp"

namespace ppsim {

class ActionStream {
 public:
  struct promise_type {
    Action* out = nullptr;
    std::size_t count = 0;
    std::size_t capacity = 0;

    // Suspends only when the buffer is full, so a yield costs one store and one comparison.
    struct Yield {
      bool full;
      bool await_ready() const noexcept { return !full; }
      void await_suspend(std::coroutine_handle<>) const noexcept {}
      void await_resume() const noexcept {}
    };

    // Room left in the reader's buffer, for a steady state's loop that writes many actions without
    // suspending: it writes up to room() actions from free_slots() on through a local pointer, with
    // its counters in locals (the stores then alias nothing the loop reads), commits how many it
    // wrote, then co_yields as usual. The last slot is kept out of room(): a co_yield writes before
    // it tests for a full buffer, so it must always find one slot free (a running coroutine always
    // has one: a full buffer suspends it).
    std::size_t room() const noexcept { return capacity - count - 1; }
    Action* free_slots() const noexcept { return out + count; }
    void commit(std::size_t written) noexcept { count += written; }

    ActionStream get_return_object() { return ActionStream(Handle::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    Yield yield_value(const Action& action) noexcept {
      out[count++] = action;
      return Yield{count == capacity};
    }
    void return_void() noexcept {}
    void unhandled_exception() { throw; }  // bad_alloc from a builder reaches the reader
  };

  // `promise_type& buffer = co_await ActionStream::buffer();` gives a coroutine its own promise
  // (room and put) without suspending. Its room changes at every co_yield that suspends.
  struct BufferAccess {
    promise_type* promise = nullptr;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<promise_type> handle) noexcept {
      promise = &handle.promise();
      return false;  // resume at once
    }
    promise_type& await_resume() const noexcept { return *promise; }
  };
  static BufferAccess buffer() noexcept { return {}; }

  ActionStream() = default;
  ActionStream(ActionStream&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  ActionStream& operator=(ActionStream&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  ActionStream(const ActionStream&) = delete;
  ActionStream& operator=(const ActionStream&) = delete;
  ~ActionStream() { reset(); }

  // Writes the next actions into buffer[0, capacity) (capacity >= 1) and returns how many: fewer
  // than `capacity` only when the list has ended.
  std::size_t fill(Action* buffer, std::size_t capacity) {
    if (!handle_ || handle_.done()) return 0;
    promise_type& promise = handle_.promise();
    promise.out = buffer;
    promise.count = 0;
    promise.capacity = capacity;
    handle_.resume();
    return promise.count;
  }

 private:
  using Handle = std::coroutine_handle<promise_type>;
  explicit ActionStream(Handle handle) : handle_(handle) {}
  void reset() {
    if (handle_) handle_.destroy();
    handle_ = {};
  }
  Handle handle_;
};

// A registry schedule as generators: its size, its stage placement and one stream per device. The
// parameters are copied into each coroutine's frame, so a stream outlives the call that made it.
using DeviceStream = ActionStream (*)(ScheduleParams params, int device);

struct ScheduleStreams {
  ScheduleParams params;
  std::vector<int> stage_device;
  DeviceStream device = nullptr;
  // Whether its lists hold overlapped pairs (Action::fused_with_next): the engine's trusted loop
  // tests for them at every op only when they may come (a registry test holds every schedule to it).
  bool overlapped_pairs = false;
  bool layerwise_pairs = false;  // Program::layerwise_pairs
  // Program::num_pipelines: two for DualPipe, whose m micro-batches split over its two directions.
  int num_pipelines = 1;
  // Schedulable units per micro-batch: Seq1F1B's sequence slices, each its own program micro-batch.
  int units_per_microbatch = 1;

  int num_devices() const { return params.p; }
  // Per pipeline, as Program's.
  int num_microbatches() const { return params.m * units_per_microbatch / num_pipelines; }
  int num_stages() const { return static_cast<int>(stage_device.size()); }
  PipelineShape pipeline_shape() const { return {num_stages(), num_pipelines}; }
};

// Runs every device's stream to its end: the stored Program the streams describe.
Program collect_program(const ScheduleStreams& streams);

// Reads one stream through a fixed buffer. The engine keeps a window [cur, end) of it; refill keeps
// the actions not yet consumed (an overlapped pair may straddle two fills) and appends the next ones.
class StreamReader {
 public:
  static constexpr std::size_t kChunk = 1024;

  // The buffer is kept across streams (sweeps open thousands of small runs) and sized to the list
  // it reads, at most kChunk: a million devices of a few ops each need a few actions apiece.
  void open(ActionStream stream, std::size_t expected_size) {
    stream_ = std::move(stream);
    chunk_ = std::max<std::size_t>(1, std::min(kChunk, expected_size));
    if (!buffer_ || capacity_ < chunk_ + 2) {  // a moved-from reader has no buffer
      capacity_ = chunk_ + 2;
      buffer_.reset(static_cast<Action*>(::operator new(capacity_ * sizeof(Action))));
    }
  }
  void close() { stream_ = ActionStream(); }
  // Moves [cur, end) (at most two actions: the engine refills at its last one) to the front and
  // fills after it; false when nothing new came.
  bool refill(const Action*& cur, const Action*& end) {
    const std::size_t kept = static_cast<std::size_t>(end - cur);
    for (std::size_t i = 0; i < kept; ++i) buffer_.get()[i] = cur[i];
    const std::size_t added = stream_.fill(buffer_.get() + kept, chunk_);
    cur = buffer_.get();
    end = cur + kept + added;
    return added > 0;
  }

 private:
  ActionStream stream_;
  // Raw storage, not a vector: a vector would construct every action of every device's buffer
  // before a run (a quarter of a million instructions at p=64), and the stream writes them all
  // before the engine reads one. Action is an implicit-lifetime type, so the allocation itself
  // creates the objects the writes then assign (C++20, [intro.object]).
  struct FreeActions {
    void operator()(Action* actions) const { ::operator delete(actions); }
  };
  std::unique_ptr<Action, FreeActions> buffer_;
  std::size_t capacity_ = 0;
  std::size_t chunk_ = kChunk;
};

}  // namespace ppsim
