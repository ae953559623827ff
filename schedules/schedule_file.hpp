// SPDX-License-Identifier: Apache-2.0
#pragma once
// Custom schedules as files: a Program read from and written to torch.distributed.pipelining's
// schedule CSV (_dump_csv / _load_csv), and written as JSON, so schedules move between ppsim and PyTorch.
//
// CSV, as torch's _dump_csv writes it (Python's csv.writer, default dialect):
//   - one row per device (rank), in device order; the row's cells are its actions in execution order,
//     comma-separated, in the `0F1` notation (parse_action / to_string);
//   - every row ends with "\r\n", the csv module's line terminator; there is no header row;
//   - an empty cell is an idle step (torch writes None as an empty cell).
// Reading accepts what torch's _load_csv accepts for compute-only schedules, and a little more:
//   - rows may end with "\r\n", "\n" or "\r"; a UTF-8 byte-order mark at the start is skipped;
//   - blanks (space, tab, ...) around a cell are ignored, as _Action.from_str strips them;
//   - empty cells are skipped: ppsim's engine derives idle time, so idle steps carry nothing;
//   - cells may be double-quoted as csv.reader reads them ("" inside quotes is one quote);
//   - blank rows at the end of the file are ignored (editors add them); a row with no actions before
//     the last row is refused, because torch would count it as a rank that runs nothing.
// The shape is inferred: devices = rows; a stage belongs to the one row that holds it (a stage on two
// rows is refused); stages = largest stage + 1, and every stage 0..S-1 must be on some row;
// micro-batches = largest micro-batch + 1.
//
// JSON (for the CLI, which parses it with nlohmann and hands the cells to program_from_cells):
//   either the minimal form, a list of rows of action strings:
//     [["0F0", "0F1", "0B0", "0B1"], ["1F0", "1F1", "1B0", "1B1"]]
//   or an object whose only required member is "actions", in that same form:
//     {"stage_device": [0, 1], "microbatches": 2, "actions": [["0F0", ...], ["1F0", ...]]}
//   "pipelines" (Program::num_pipelines, DualPipe's 2) is written only above 1; torch's CSV has no
//   place for it, so a program of several pipelines is written as JSON only.
//   "stage_device" (stage -> device) and "microbatches", when present, are taken as stated rather
//   than inferred, and validate_program then checks the actions against them. In "actions", an empty
//   string or null is an idle step, as an empty CSV cell. write_schedule_json writes the object form.
//
// Parsing checks only what the file format decides (cells, the stage -> device map, the sizes).
// Missing or repeated ops and an illegal order are validate_program's to report, and cross-device
// cycles the engine's.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/program.hpp"
#include "schedules/validate.hpp"

namespace ppsim {

// Reading stops, with a problem, past this many cells and rows in all (actions, idle steps and
// line ends): the op limit of one run (kMaxOps in study/run/study.hpp), so that a hostile file
// costs memory in proportion to what a run may simulate, not to its size.
inline constexpr std::size_t kMaxScheduleFileCells = 50'000'000;

// A schedule file's cells as read: rows are devices, each row's cells in order; "" is an idle step.
using ScheduleCells = std::vector<std::vector<std::string>>;

// What a JSON schedule may state beside its actions; what it leaves out is inferred from them.
struct DeclaredShape {
  std::optional<std::vector<int>> stage_device;  // stage -> device
  std::optional<int> num_microbatches;
  std::optional<int> num_pipelines;  // Program::num_pipelines; one when absent
  std::optional<int> units_per_microbatch;  // "sequence-splits": Program::units_per_microbatch; one when absent
  bool layerwise_pairs = false;      // Program::layerwise_pairs
};

struct ScheduleFileParse {
  // The whole program when ok(). Otherwise what could be read, for format_step_grid: every row up to
  // its first malformed cell, so a mark at the bad cell shows as the end of its device's list.
  Program program;
  // Messages name the cell in file terms, rows and columns counted from 1 as editors count them:
  // "row 2 (device 1), column 5: '0X1' is not an action (...)". `where` is the same cell in the
  // program's (device, step) terms, which differ from the column when empty cells come before it.
  // Absent for problems of no single cell (an empty file, a stage on no row).
  std::optional<ScheduleProblem> problem;

  bool ok() const { return !problem.has_value(); }
};

// Builds a Program from cells, inferring what `declared` leaves out (see the top of this file).
ScheduleFileParse program_from_cells(const ScheduleCells& cells, const DeclaredShape& declared = {});

// Reads a schedule CSV (torch's _dump_csv layout, see above).
ScheduleFileParse parse_schedule_csv(std::string_view text);

// The program as torch's _dump_csv writes it: "\r\n"-terminated rows of comma-separated actions.
// For canonical input (as written here) parse_schedule_csv and this are exact inverses.
std::string write_schedule_csv(const Program& program);

// The program as JSON in the object form above, one device's actions per line, ending in a newline.
// Unlike the CSV it keeps stage_device and num_microbatches as they are, even where the actions
// alone would not tell them.
std::string write_schedule_json(const Program& program);

}  // namespace ppsim
