// SPDX-License-Identifier: Apache-2.0
#pragma once
// The host's CRC32 rate, which a checkpoint with --checksum crc32 is checksummed at: zlib's crc32
// (the checksum torch.distributed.checkpoint's and most storage layers' integrity checks use) over a
// buffer of random bytes, timed as every other measurement is (measure.hpp).

#include <cstdint>

#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate {

inline constexpr std::int64_t kChecksumBytes = std::int64_t{32} << 20;

Spread host_crc32_seconds(std::int64_t bytes);

}  // namespace ppsim::calibrate
