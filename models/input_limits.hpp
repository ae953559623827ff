// SPDX-License-Identifier: Apache-2.0
#pragma once
// Floors and ceilings for quantities that a flag and a file can both set (--storage-bandwidth and a
// profile's crc32_rate or host_link; --mtbf and the other durations of a training run), so that
// neither route lets through a value whose figures overflow to inf or NaN. Each is far outside any
// real machine: a value beyond them is a typo or a unit slip.

namespace ppsim {

inline constexpr double kMinRateBytesPerSecond = 1e3;   // 1 kB/s: a checkpoint of 1 TB would take 30 years
inline constexpr double kMaxRateBytesPerSecond = 1e15;  // 1 PB/s: a thousand times HBM3e
inline constexpr double kMaxDurationSeconds = 1e12;     // about 31,700 years

}  // namespace ppsim
