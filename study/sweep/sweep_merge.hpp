// SPDX-License-Identifier: Apache-2.0
#pragma once
// ppsim merge: joins the output files of a sharded sweep (--shard I/N) into exactly the file one
// machine would have written: the same header, every point once, in point order. Every shard file
// starts with its record (study/sweep/sweep_shard_record.hpp); all of it, and every row's shape, is
// checked before anything is written.

#include <cstddef>
#include <string>
#include <vector>

#include "study/sweep/sweep_output.hpp"

namespace ppsim {

// A shard file above this is refused before it is read (a million points of a wide study stay far
// below it).
inline constexpr std::size_t kMaxShardFileBytes = std::size_t{1} << 30;  // 1 GiB

// One shard file's name (for messages) and its bytes.
struct ShardText {
  std::string name;
  std::string text;
};

// The merged text of shard files already read, all in `format`. InputError naming the file and
// line when a file is not a shard's, its record or a row is damaged, the files come from different
// studies or splits, a shard is given twice, or one is missing.
std::string merge_sweep_texts(SweepFormat format, const std::vector<ShardText>& shards);

// Reads `inputs` (regular files only, each at most kMaxShardFileBytes, all .csv or all .jsonl like
// `output`) and merges them.
std::string merge_sweep_files(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace ppsim
