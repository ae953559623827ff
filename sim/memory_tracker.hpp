// SPDX-License-Identifier: Apache-2.0
#pragma once
// Activation memory of one device: static bytes plus stashes. A device runs one op at a time, so
// its allocations and frees arrive in time order and a running peak is exact.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "schedules/action.hpp"

namespace ppsim {

class MemoryTracker {
 public:
  void reset(std::int64_t static_bytes, double weight_fraction) {
    static_bytes_ = static_bytes;
    weight_fraction_ = weight_fraction;
    activation_bytes_ = peak_activation_bytes_ = 0;
    stash_units_ = weight_parts_ = 0;
    held_bytes_ = peak_with_held_ = 0;
    peak_stashed_ = 0;
    stash_bound_ = stash_bound();
  }

  // F allocates a whole stash; B frees it; I frees all but the weight part; W frees that part.
  void on_forward(std::int64_t bytes) {
    activation_bytes_ += bytes;
    ++stash_units_;
    note_peak();
  }
  void on_backward(std::int64_t bytes) {
    activation_bytes_ -= bytes;
    --stash_units_;
  }
  void on_input_grad(std::int64_t bytes, std::int64_t weight_bytes) {
    activation_bytes_ -= bytes - weight_bytes;
    ++weight_parts_;  // a whole stash becomes a weight part: the units stay
  }
  void on_weight_grad(std::int64_t weight_bytes) {
    activation_bytes_ -= weight_bytes;
    --weight_parts_;
    --stash_units_;
  }

  // What a backward op frees when it ends, by its kind (B, I or W).
  void on_backward_end(Op op, std::int64_t bytes, std::int64_t weight_bytes) {
    if (op == Op::kBackward) {
      on_backward(bytes);
    } else if (op == Op::kBackwardInput) {
      on_input_grad(bytes, weight_bytes);
    } else if (op == Op::kBackwardWeight) {
      on_weight_grad(weight_bytes);
    }
  }

  // Buffers held beside the stashes for part of the step (FSDP's unsharded parameters and gradients).
  // The hot path never looks at them: a caller that holds any calls note_held_peak after each
  // allocation, on_forward included.
  void hold(std::int64_t bytes) {
    held_bytes_ += bytes;
    note_held_peak();
  }
  void release(std::int64_t bytes) { held_bytes_ -= bytes; }
  void note_held_peak() { peak_with_held_ = std::max(peak_with_held_, activation_bytes_ + held_bytes_); }

  std::int64_t static_bytes() const { return static_bytes_; }
  std::int64_t activation_bytes() const { return activation_bytes_; }
  std::int64_t memory_bytes() const { return static_bytes_ + activation_bytes_ + held_bytes_; }
  std::int64_t peak_activation_bytes() const { return peak_activation_bytes_; }
  // The peak of activations and held buffers together (the activations' own peak when none is held).
  std::int64_t peak_transient_bytes() const { return std::max(peak_activation_bytes_, peak_with_held_); }
  double stashed() const {
    const std::int64_t full_stashes = stash_units_ - weight_parts_;
    return static_cast<double>(full_stashes) + weight_fraction_ * static_cast<double>(weight_parts_);
  }
  double peak_stashed() const { return peak_stashed_; }

 private:
  // Only allocations can raise a peak. The stash count, a double, is computed only when the whole
  // stashes plus weight parts (the units) exceed the bound: with a weight fraction in [0, 1],
  // stashed() is at most the units (rounding is monotone), so below the bound it cannot be a new peak.
  void note_peak() {
    if (activation_bytes_ > peak_activation_bytes_) peak_activation_bytes_ = activation_bytes_;
    if (stash_units_ > stash_bound_) [[unlikely]] note_stash_peak();
  }
  void note_stash_peak() {
    peak_stashed_ = std::max(peak_stashed_, stashed());
    stash_bound_ = stash_bound();
  }
  std::int64_t stash_bound() const {
    if (!(weight_fraction_ >= 0 && weight_fraction_ <= 1)) return std::numeric_limits<std::int64_t>::min();  // no bound: always compute
    return static_cast<std::int64_t>(peak_stashed_);  // its floor: the peak is never negative
  }

  std::int64_t static_bytes_ = 0;
  double weight_fraction_ = 0.5;
  std::int64_t activation_bytes_ = 0;
  std::int64_t peak_activation_bytes_ = 0;
  std::int64_t stash_units_ = 0;  // whole stashes plus weight parts: what F adds and B or W removes
  std::int64_t weight_parts_ = 0;
  std::int64_t held_bytes_ = 0;
  std::int64_t peak_with_held_ = 0;
  double peak_stashed_ = 0;
  std::int64_t stash_bound_ = 0;
};

}  // namespace ppsim
