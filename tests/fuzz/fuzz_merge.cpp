// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: shard files as ppsim merge reads them (study/sweep/sweep_merge.hpp), all checks and
// the merge itself, without the file system. The first byte picks CSV or JSON Lines; NUL bytes split
// the rest into up to eight shard files.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "study/common/errors.hpp"
#include "study/sweep/sweep_merge.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const ppsim::SweepFormat format = (data[0] & 1) != 0 ? ppsim::SweepFormat::kJsonl : ppsim::SweepFormat::kCsv;
  std::vector<ppsim::ShardText> shards;
  std::string current;
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == 0 && shards.size() < 7) {
      shards.push_back({"shard-" + std::to_string(shards.size()), current});
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  shards.push_back({"shard-" + std::to_string(shards.size()), current});
  try {
    (void)ppsim::merge_sweep_texts(format, shards);
  } catch (const ppsim::InputError&) {
  }
  return 0;
}
