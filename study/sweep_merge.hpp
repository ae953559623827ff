#pragma once
// ppsim merge: joins the output files of a sharded sweep (--shard I/N) into exactly the file one
// machine would have written: the same header, every point once, in point order.

#include <string>
#include <vector>

namespace ppsim {

// The merged text of `inputs` (all .csv or all .jsonl, like `output`). InputError when the files
// differ in their columns, a point appears twice, or a point is missing (a shard's file left out).
std::string merge_sweep_files(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace ppsim
