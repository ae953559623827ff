// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a shard's output file is, on its first line: the study it comes from (a fingerprint of the
// study's JSON), which shard of how many, how many points it holds of how many in all, and a
// checksum of every byte after that line. ppsim merge checks all of it before writing anything, so
// a missing shard, a lost row, a cut cell or a flipped byte is refused, never merged. Unsharded
// files carry no record: the merged file is exactly what one machine would have written.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "study/sweep/sweep_output.hpp"

namespace ppsim {

struct ShardRecord {
  std::string study;         // study_fingerprint() of the study the shard ran
  std::size_t index = 0;     // I of --shard I/N
  std::size_t count = 1;     // N
  std::size_t points = 0;    // rows in this file: the points with index % N == I
  std::size_t total = 0;     // points in the whole study
  std::string checksum;      // content_checksum() of the file after the record's line
};

// 16 hex digits of FNV-1a (64-bit) over `bytes`: a fingerprint that spots any changed byte, not a
// cryptographic hash (a shard file is checked against accidents, not adversaries).
std::string content_checksum(std::string_view bytes);

// The fingerprint of a study: content_checksum of its JSON as parsed, written compactly, so that the
// same study file (or the same dict from Python) gives the same fingerprint on every machine.
std::string study_fingerprint(std::string_view compact_json);

// The points shard I of N holds in a study of `total` points.
std::size_t shard_point_count(std::size_t total, std::size_t index, std::size_t count);

// The record's line, without its newline:
//   CSV:   #ppsim-shard study=0123456789abcdef shard=1/4 points=3 total=12 checksum=0123456789abcdef
//   JSONL: {"ppsim-shard":{"study":"...","shard":"1/4","points":3,"total":12,"checksum":"..."}}
std::string shard_record_line(const ShardRecord& record, SweepFormat format);

// The record in `line`, or InputError "<where>: ..." when the line is not a whole, consistent record.
ShardRecord parse_shard_record(std::string_view line, SweepFormat format, const std::string& where);

// A shard's file: its record's line, then the rows sweep_output writes for its points.
std::string shard_output(const Study& study, const std::vector<PointResult>& points, SweepFormat format,
                         std::size_t shard_index, std::size_t shard_count);

// Whether `line` is meant as a record (it starts like one), so that a damaged record is reported as
// such rather than as a row.
bool looks_like_shard_record(std::string_view line, SweepFormat format);

}  // namespace ppsim
