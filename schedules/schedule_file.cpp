// SPDX-License-Identifier: Apache-2.0
// Custom schedules as files: torch.distributed.pipelining's schedule CSV in both directions, and JSON out.
#include "schedules/schedule_file.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

namespace ppsim {
namespace {

// A cell the CSV reader could not finish (an unclosed quote); 0-based, as the cells are indexed.
struct CellIssue {
  std::size_t row = 0;
  std::size_t column = 0;
  std::string message;
};

struct CsvCells {
  ScheduleCells cells;
  std::optional<CellIssue> issue;
};

// The blanks Python's str.strip() removes from ASCII text, which _Action.from_str relies on.
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

bool row_is_blank(const std::vector<std::string>& row) {
  return std::all_of(row.begin(), row.end(), [](const std::string& cell) { return trim(cell).empty(); });
}

// Rows and columns from 1, as editors and spreadsheets show them; the device as the grid shows it.
std::string cell_name(std::size_t row, std::size_t column) {
  return "row " + std::to_string(row + 1) + " (device " + std::to_string(row) + "), column " +
         std::to_string(column + 1);
}

ScheduleProblem at(std::size_t row, std::size_t step, std::string message) {
  return ScheduleProblem{std::move(message), GridMark{static_cast<int>(row), step}};
}

// Splits CSV text into records and fields the way Python's csv.reader does with the default dialect,
// so a file torch reads is read the same here: a field that starts with a quote runs to the closing
// quote ("" is a literal quote, and commas and line breaks inside are data); text after the closing
// quote is kept; a blank line is a record with no fields.
CsvCells split_csv(std::string_view text) {
  CsvCells out;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark (spreadsheets write one)
  const std::size_t n = text.size();
  auto is_line_end = [&](std::size_t i) { return text[i] == '\n' || text[i] == '\r'; };
  auto skip_line_end = [&](std::size_t& i) { i += (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ? 2 : 1; };

  std::size_t pos = 0;
  std::size_t entries = 0;  // rows and cells so far, against kMaxScheduleFileCells
  auto over_budget = [&](std::size_t column) {
    if (++entries <= kMaxScheduleFileCells) return false;
    out.issue = CellIssue{out.cells.size(), column,
                          "the file holds more than " + std::to_string(kMaxScheduleFileCells) +
                              " cells and rows, above the op limit of one run"};
    return true;
  };
  while (pos < n) {
    std::vector<std::string> row;
    if (over_budget(0)) {
      row.emplace_back();  // the cell the issue names
      out.cells.push_back(std::move(row));
      return out;
    }
    if (is_line_end(pos)) {
      skip_line_end(pos);
      out.cells.push_back(std::move(row));
      continue;
    }
    while (true) {
      std::string field;
      if (over_budget(row.size())) {
        row.emplace_back();
        out.cells.push_back(std::move(row));
        return out;
      }
      if (pos < n && text[pos] == '"') {
        ++pos;
        bool closed = false;
        while (pos < n) {
          if (text[pos] != '"') {
            field += text[pos++];
          } else if (pos + 1 < n && text[pos + 1] == '"') {
            field += '"';
            pos += 2;
          } else {
            ++pos;
            closed = true;
            break;
          }
        }
        if (!closed) {
          out.issue = CellIssue{out.cells.size(), row.size(), "a quoted cell has no closing quote"};
          row.push_back(std::move(field));
          out.cells.push_back(std::move(row));
          return out;
        }
      }
      while (pos < n && text[pos] != ',' && !is_line_end(pos)) field += text[pos++];
      row.push_back(std::move(field));
      if (pos < n && text[pos] == ',') {
        ++pos;
        continue;
      }
      break;
    }
    if (pos < n) skip_line_end(pos);
    out.cells.push_back(std::move(row));
  }
  return out;
}

// Where an action came from, to name its cell in messages.
struct Origin {
  std::size_t row = 0;
  std::size_t column = 0;
  std::size_t step = 0;
};

ScheduleFileParse build_program(const ScheduleCells& cells, const DeclaredShape& declared,
                                const std::optional<CellIssue>& issue) {
  ScheduleFileParse result;
  Program& program = result.program;

  std::size_t rows = cells.size();
  while (rows > 0 && row_is_blank(cells[rows - 1])) --rows;
  if (issue) rows = std::max(rows, issue->row + 1);  // an unclosed quote may hold nothing but blanks
  if (rows == 0) {
    result.problem = ScheduleProblem{"the schedule has no actions (expected one row of actions per device)", {}};
    return result;
  }
  program.num_devices = static_cast<int>(rows);
  program.actions.resize(rows);
  std::vector<std::vector<CommAction>> comms(rows);
  std::vector<std::vector<std::size_t>> columns(rows);  // the column of every action, for messages

  // Every row is read up to its first bad cell, so the grid shows the rows around the one reported.
  std::optional<ScheduleProblem> first_bad;
  for (std::size_t r = 0; r < rows; ++r) {
    auto& list = program.actions[r];
    for (std::size_t c = 0; c < cells[r].size(); ++c) {
      std::optional<std::string> why;
      if (issue && issue->row == r && issue->column == c) {
        why = issue->message;
      } else {
        const std::string_view text = trim(cells[r][c]);
        if (text.empty()) continue;  // an idle step: the engine derives idle time itself
        // torch's lowered format: a send, a receive or an FSDP action, before the next compute action.
        CommParse comm = parse_comm_action(text);
        if (comm.recognized) {
          if (comm.ok) {
            comm.action.before = list.size();
            comms[r].push_back(comm.action);
            continue;
          }
          why = std::move(comm.error);
          if (!first_bad) first_bad = at(r, list.size(), cell_name(r, c) + ": " + *why);
          break;
        }
        CellParse parsed = parse_cell(text);
        if (parsed.ok) {
          list.push_back(parsed.first);
          columns[r].push_back(c);
          if (parsed.pair) {  // an overlapped F&B cell holds two actions
            list.push_back(parsed.second);
            columns[r].push_back(c);
          }
          continue;
        }
        why = std::move(parsed.error);
      }
      if (!first_bad) first_bad = at(r, list.size(), cell_name(r, c) + ": " + *why);
      break;
    }
  }
  if (first_bad) {
    result.problem = std::move(first_bad);
    return result;
  }
  const bool lowered = std::any_of(comms.begin(), comms.end(), [](const auto& list) { return !list.empty(); });
  if (lowered) program.comms = std::move(comms);

  for (std::size_t r = 0; r < rows; ++r) {
    if (program.actions[r].empty()) {
      result.problem = at(r, 0,
                          "row " + std::to_string(r + 1) + " (device " + std::to_string(r) +
                              ") has no actions; every device must run at least one stage");
      return result;
    }
  }

  std::size_t total = 0;
  std::optional<Origin> largest_mb;  // the first cell with the largest micro-batch
  std::int32_t max_mb = -1;
  for (std::size_t r = 0; r < rows; ++r) {
    total += program.actions[r].size();
    for (std::size_t step = 0; step < program.actions[r].size(); ++step) {
      if (program.actions[r][step].microbatch > max_mb) {
        max_mb = program.actions[r][step].microbatch;
        largest_mb = Origin{r, columns[r][step], step};
      }
    }
  }

  if (declared.stage_device) {
    program.stage_device = *declared.stage_device;  // validate_program checks the actions against it
  } else {
    std::map<std::int32_t, Origin> owner;  // stage -> its first cell; ordered, to find gaps
    for (std::size_t r = 0; r < rows; ++r) {
      const auto& list = program.actions[r];
      for (std::size_t step = 0; step < list.size(); ++step) {
        const Action& a = list[step];
        const auto [it, inserted] = owner.try_emplace(a.stage, Origin{r, columns[r][step], step});
        const Origin& first = it->second;
        if (!inserted && first.row != r) {
          result.problem =
              at(r, step,
                 cell_name(r, columns[r][step]) + ": " + to_string(a) + " is on device " + std::to_string(r) +
                     ", but stage " + std::to_string(a.stage) + " is on device " + std::to_string(first.row) +
                     " (row " + std::to_string(first.row + 1) + ", column " + std::to_string(first.column + 1) + ": " +
                     to_string(program.actions[first.row][first.step]) + ")");
          return result;
        }
      }
    }
    // Stages are 0..S-1; a gap means a stage no row holds, which no later check could name as clearly.
    std::int32_t expected = 0;
    for (const auto& [stage, origin] : owner) {
      if (stage != expected) {
        const std::int32_t last = owner.rbegin()->first;
        result.problem = ScheduleProblem{"no row holds stage " + std::to_string(expected) +
                                             ", but rows hold stages up to " + std::to_string(last) +
                                             "; stages are numbered 0.." + std::to_string(last) + " without gaps",
                                         {}};
        return result;
      }
      ++expected;
    }
    program.stage_device.resize(owner.size());
    for (const auto& [stage, origin] : owner) {
      program.stage_device[static_cast<std::size_t>(stage)] = static_cast<int>(origin.row);
    }
  }

  // Every (stage, micro-batch) needs at least a forward and a backward, so a valid program has at
  // least 2 S m actions. When S m exceeds the actions, more than half of the ops are missing: a typo
  // such as 0F80 for 0F8, refused here because validate_program sizes its tables by S m and would
  // first try to allocate them. Smaller shortfalls are left to validate_program, which names the op.
  const auto stages = static_cast<std::int64_t>(program.stage_device.size());
  const std::int64_t m =
      declared.num_microbatches ? std::int64_t{*declared.num_microbatches} : std::int64_t{max_mb} + 1;
  if (stages > 0 && m > 0 && m > static_cast<std::int64_t>(total) / stages) {
    const std::string need = std::to_string(stages) + " stages and " + std::to_string(m) +
                             " micro-batches need more than twice the " + std::to_string(total) +
                             " actions in the schedule (a forward and a backward each)";
    if (!declared.num_microbatches && !declared.stage_device && largest_mb) {
      const Origin& o = *largest_mb;
      result.problem = at(o.row, o.step,
                          cell_name(o.row, o.column) + ": " + to_string(program.actions[o.row][o.step]) + " implies " +
                              std::to_string(m) + " micro-batches, but " + need);
    } else {
      result.problem = ScheduleProblem{need, {}};
    }
    return result;
  }
  program.num_microbatches = static_cast<int>(m);
  program.num_pipelines = declared.num_pipelines.value_or(1);
  program.units_per_microbatch = declared.units_per_microbatch.value_or(1);
  if (m % program.units_per_microbatch != 0) {
    result.problem = ScheduleProblem{"the schedule's " + std::to_string(m) + " micro-batches are not whole micro-batches "
                                     "of " + std::to_string(program.units_per_microbatch) + " sequence slices", {}};
  }
  program.layerwise_pairs = declared.layerwise_pairs;
  return result;
}

}  // namespace

ScheduleFileParse program_from_cells(const ScheduleCells& cells, const DeclaredShape& declared) {
  return build_program(cells, declared, std::nullopt);
}

ScheduleFileParse parse_schedule_csv(std::string_view text) {
  const CsvCells split = split_csv(text);
  return build_program(split.cells, DeclaredShape{}, split.issue);
}

namespace {

// A device's list as cells: an overlapped pair is one cell, "(0F3;3B1)OVERLAP_F_B", as torch prints
// it; a lowered program's communication and FSDP actions go between them, where they stand.
std::vector<std::string> cells_of(const Program& program, std::size_t device) {
  const std::vector<Action>& list = program.actions[device];
  static const std::vector<CommAction> kNone;
  const std::vector<CommAction>& comms = device < program.comms.size() ? program.comms[device] : kNone;
  std::vector<std::string> cells;
  std::size_t next_comm = 0;
  auto comms_before = [&](std::size_t position) {
    for (; next_comm < comms.size() && comms[next_comm].before <= position; ++next_comm) {
      cells.push_back(to_string(comms[next_comm]));
    }
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    comms_before(i);
    const bool pair = list[i].fused_with_next && i + 1 < list.size();
    cells.push_back(cell_text(list[i], pair ? &list[i + 1] : nullptr));
    if (pair) ++i;
  }
  comms_before(list.size());
  return cells;
}

}  // namespace

std::string write_schedule_csv(const Program& program) {
  std::string text;
  for (std::size_t d = 0; d < program.actions.size(); ++d) {
    const auto cells = cells_of(program, d);
    for (std::size_t i = 0; i < cells.size(); ++i) text += (i == 0 ? "" : ",") + cells[i];
    text += "\r\n";  // csv.writer's line terminator, so the text is byte for byte what _dump_csv writes
  }
  return text;
}

std::string write_schedule_json(const Program& program) {
  // Written by hand: the schedules library does not link a JSON library, and the form is fixed.
  std::string text = "{\n  \"stage_device\": [";
  for (std::size_t s = 0; s < program.stage_device.size(); ++s) {
    text += (s == 0 ? "" : ", ") + std::to_string(program.stage_device[s]);
  }
  text += "],\n  \"microbatches\": " + std::to_string(program.num_microbatches) + ",\n";
  if (program.num_pipelines != 1) text += "  \"pipelines\": " + std::to_string(program.num_pipelines) + ",\n";
  if (program.layerwise_pairs) text += "  \"layerwise_pairs\": true,\n";
  if (program.units_per_microbatch != 1) {
    text += "  \"sequence-splits\": " + std::to_string(program.units_per_microbatch) + ",\n";
  }
  text += "  \"actions\": [";
  for (std::size_t d = 0; d < program.actions.size(); ++d) {
    text += d == 0 ? "\n    [" : ",\n    [";
    const auto cells = cells_of(program, d);
    for (std::size_t i = 0; i < cells.size(); ++i) text += (i == 0 ? "\"" : ", \"") + cells[i] + "\"";
    text += "]";
  }
  text += program.actions.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return text;
}

}  // namespace ppsim
