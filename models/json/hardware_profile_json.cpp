// SPDX-License-Identifier: Apache-2.0
#include "models/json/hardware_profile_json.hpp"

#include <string>
#include <utility>
#include <vector>

#include "models/input_limits.hpp"
#include "models/json/json_fields.hpp"
#include "models/noise.hpp"
#include "schedules/action.hpp"

namespace ppsim {
namespace {

// "assumed" or "measured": whether the tables (or latencies) are guesses or measurements.
bool assumed_marker(const JsonFields& fields, std::string_view key) {
  const std::string marker = fields.string(key);
  if (marker == "assumed") return true;
  if (marker == "measured") return false;
  fields.fail(key, "must be \"assumed\" or \"measured\", got \"" + marker + "\"");
}

// The efficiency marker also takes "published": measured by others, each source cited in `sources`.
struct EfficiencyOrigin {
  bool assumed = false;
  bool published = false;
};
EfficiencyOrigin efficiency_origin(const JsonFields& fields) {
  const std::string marker = fields.string("efficiency");
  if (marker == "assumed") return {true, false};
  if (marker == "measured") return {false, false};
  if (marker == "published") return {false, true};
  fields.fail("efficiency", "must be \"assumed\", \"measured\" or \"published\", got " + quoted_excerpt(marker));
}

// "sources": a non-empty list of citations (strings).
std::vector<std::string> sources_from_json(const JsonFields& fields) {
  const nlohmann::json& list = fields.at("sources");
  if (!list.is_array() || list.empty()) fields.fail("sources", "must be a non-empty list of citations (strings)");
  std::vector<std::string> sources;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || list[i].get<std::string>().empty()) {
      throw JsonInputError(fields.origin() + ": " + fields.path_of("sources") + "[" + std::to_string(i) +
                           "]: must be a citation (a non-empty string), got " + json_excerpt(list[i]));
    }
    sources.push_back(list[i].get<std::string>());
  }
  return sources;
}

// "gemm_model": {"sm_count": 132, "tile": [128, 256], "min_split_k": 2048, "kernel_overhead": 3e-6,
//                "peak_fraction": {"bf16": 0.85, ...}} (models/hardware/gemm_model.hpp).
GemmModel gemm_model_from_json(const JsonFields& fields, const HardwareProfile& profile) {
  const JsonFields model = fields.object("gemm_model");
  model.refuse_unknown({"sm_count", "tile", "min_split_k", "kernel_overhead", "peak_fraction"});
  GemmModel gemm;
  gemm.sm_count = static_cast<int>(model.integer("sm_count", 1, 1 << 16));
  const nlohmann::json& tile = model.at("tile");
  const auto whole = [](const nlohmann::json& v) {
    return v.is_number_integer() && v.get<std::int64_t>() >= 1 && v.get<std::int64_t>() <= 4096;
  };
  if (!tile.is_array() || tile.size() != 2 || !whole(tile[0]) || !whole(tile[1])) {
    model.fail("tile", "must be [rows, cols], two whole numbers from 1 to 4096, got " + json_excerpt(tile));
  }
  gemm.tile_rows = static_cast<double>(tile[0].get<std::int64_t>());
  gemm.tile_cols = static_cast<double>(tile[1].get<std::int64_t>());
  gemm.min_split_k = model.number_in("min_split_k", 1, 1e9);
  gemm.kernel_overhead = model.number_in("kernel_overhead", 0, 1);
  const JsonFields fractions = model.object("peak_fraction");
  for (const auto& item : model.at("peak_fraction").items()) {
    const std::string& precision = item.key();
    if (!profile.peak_flops(precision)) fractions.fail(precision, "has no peak in dense_peak_flops");
    gemm.peak_fraction[precision] = fractions.number_in(precision, 1e-3, 1);
  }
  if (gemm.peak_fraction.empty()) model.fail("peak_fraction", "needs at least one precision");
  return gemm;
}

// A non-empty list of [size, value] pairs of numbers with strictly increasing sizes, at `path`.
std::vector<std::pair<double, double>> pairs_from_json(const nlohmann::json& rows, const std::string& origin,
                                                       const std::string& path, std::string_view pair) {
  auto fail = [&](const std::string& where, const std::string& what) {
    throw JsonInputError(origin + ": " + where + ": " + what);
  };
  if (!rows.is_array() || rows.empty()) fail(path, "must be a non-empty list of " + std::string(pair) + " pairs");
  std::vector<std::pair<double, double>> points;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string row_path = path + "[" + std::to_string(i) + "]";
    const nlohmann::json& row = rows[i];
    if (!row.is_array() || row.size() != 2 || !row[0].is_number() || !row[1].is_number()) {
      fail(row_path, "must be a " + std::string(pair) + " pair of numbers, got " + json_excerpt(row));
    }
    points.emplace_back(row[0].get<double>(), row[1].get<double>());
    // Checked here, one row at a time, so the message names the row at fault.
    if (i > 0 && !(points[i].first > points[i - 1].first)) {
      fail(row_path, "sizes must increase strictly, got " + row[0].dump() + " after " + rows[i - 1][0].dump());
    }
  }
  return points;
}

EfficiencyTable table_from_json(const JsonFields& tables, std::string_view name) {
  const std::string path = tables.path_of(name);
  std::vector<EfficiencyPoint> points;
  for (const auto& [size, fraction] : pairs_from_json(tables.at(name), tables.origin(), path, "[size, fraction]")) {
    points.push_back({size, fraction});
  }
  auto table = EfficiencyTable::create(std::move(points));
  if (!table.ok) throw JsonInputError(tables.origin() + ": " + path + ": " + table.error);
  return std::move(table.value);
}

// "collectives": [{"op": "all_reduce", "ranks": 8, "bus_bandwidth": [[bytes, bytes/s], ...]}, ...]
std::vector<CollectiveTable> collectives_from_json(const JsonFields& fields) {
  const nlohmann::json& list = fields.at("collectives");
  const std::string path = fields.path_of("collectives");
  if (!list.is_array()) throw JsonInputError(fields.origin() + ": " + path + ": must be a list of tables");
  std::vector<CollectiveTable> tables;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string entry_path = path + "[" + std::to_string(i) + "]";
    if (!list[i].is_object()) {
      throw JsonInputError(fields.origin() + ": " + entry_path + ": must be an object, got " + json_excerpt(list[i]));
    }
    const JsonFields entry(list[i], fields.origin(), entry_path);
    entry.refuse_unknown({"op", "ranks", "bus_bandwidth"});
    const std::string name = entry.string("op");
    const auto op = parse_collective(name);
    if (!op) entry.fail("op", "must be all_reduce, reduce_scatter, all_gather or all_to_all, got " + quoted_excerpt(name));
    const int ranks = static_cast<int>(entry.integer("ranks", 2, 1 << 20));
    std::vector<BusBandwidthPoint> points;
    for (const auto& [bytes, bandwidth] : pairs_from_json(entry.at("bus_bandwidth"), fields.origin(),
                                                          entry.path_of("bus_bandwidth"), "[bytes, bus bandwidth]")) {
      points.push_back({bytes, bandwidth});
    }
    auto table = CollectiveTable::create(*op, ranks, std::move(points));
    if (!table.ok) entry.fail("bus_bandwidth", table.error);
    tables.push_back(std::move(table.value));
  }
  return tables;
}

nlohmann::ordered_json table_to_json(const EfficiencyTable& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const EfficiencyPoint& point : table.points()) rows.push_back({point.size, point.fraction});
  return rows;
}

}  // namespace

LoadedProfile hardware_profile_from_json(const nlohmann::json& json, const std::string& origin) {
  const JsonFields fields(json, origin, "$");
  fields.refuse_unknown({"name", "source", "units", "datasheet", "dense_peak_flops", "memory_bandwidth",
                         "memory_capacity", "devices_per_node", "intra_node", "inter_node", "latency", "efficiency",
                         "efficiency_note", "efficiency_tables", "collectives", "calibration", "host_link", "crc32_rate", "variability",
                         "sources", "gemm_model", "sustained_clock"});
  LoadedProfile loaded;
  HardwareProfile& p = loaded.profile;
  p.name = fields.string("name");
  if (p.name.empty()) fields.fail("name", "must not be empty");
  p.source = fields.string("source");

  const JsonFields peaks = fields.object("dense_peak_flops");
  for (const auto& [precision, flops] : fields.at("dense_peak_flops").items()) {
    p.dense_peak_flops[precision] = peaks.positive(precision);
  }
  if (!peaks.has("bf16")) peaks.fail("bf16", "is missing (the training precision every profile needs)");
  p.memory_bandwidth = fields.positive("memory_bandwidth");
  p.memory_capacity = fields.integer("memory_capacity", 1, std::int64_t{1} << 50);
  p.devices_per_node = static_cast<int>(fields.integer("devices_per_node", 1, 1 << 20));
  for (const bool inter : {false, true}) {
    const JsonFields link = fields.object(inter ? "inter_node" : "intra_node");
    if (inter) {
      link.refuse_unknown({"bandwidth", "latency"});
    } else {
      link.refuse_unknown({"bandwidth", "latency", "nvls"});
    }
    (inter ? p.inter_node_bandwidth : p.intra_node_bandwidth) = link.positive("bandwidth");
    (inter ? p.inter_node_latency : p.intra_node_latency) = link.positive("latency", /*allow_zero=*/true);
    if (!inter && link.has("nvls")) {
      const JsonFields nvls = link.object("nvls");
      nvls.refuse_unknown({"all_reduce_bus_bandwidth", "min_ranks"});
      p.nvls_bus_bandwidth = nvls.number_in("all_reduce_bus_bandwidth", kMinRateBytesPerSecond, kMaxRateBytesPerSecond);
      p.nvls_min_ranks = static_cast<int>(nvls.integer("min_ranks", 2, 1 << 20));
    }
  }
  if (fields.has("host_link")) {
    const JsonFields host = fields.object("host_link");
    host.refuse_unknown({"bandwidth"});
    p.host_bandwidth = host.number_in("bandwidth", kMinRateBytesPerSecond, kMaxRateBytesPerSecond);
  }
  if (fields.has("crc32_rate")) p.crc32_rate = fields.number_in("crc32_rate", kMinRateBytesPerSecond, kMaxRateBytesPerSecond);
  if (fields.has("variability")) {
    const JsonFields variability = fields.object("variability");
    variability.refuse_unknown({"F", "B", "I", "W", "link"});
    for (const auto& [name, op] : {std::pair{"F", Op::kForward}, std::pair{"B", Op::kBackward},
                                   std::pair{"I", Op::kBackwardInput}, std::pair{"W", Op::kBackwardWeight}}) {
      if (variability.has(name)) p.op_variability[static_cast<std::size_t>(op)] = variability.number_in(name, 0, kMaxVariation);
    }
    if (variability.has("link")) p.link_variability = variability.number_in("link", 0, kMaxVariation);
  }
  p.latency_assumed = assumed_marker(fields, "latency");
  const EfficiencyOrigin origin_of_efficiency = efficiency_origin(fields);
  p.efficiency_assumed = origin_of_efficiency.assumed;
  p.efficiency_published = origin_of_efficiency.published;
  if (p.efficiency_published) {
    p.sources = sources_from_json(fields);
  } else if (fields.has("sources")) {
    fields.fail("sources", "is for \"efficiency\": \"published\" profiles (their citations)");
  }
  if (fields.has("gemm_model")) p.gemm_model = gemm_model_from_json(fields, p);
  if (fields.has("sustained_clock")) p.sustained_clock = fields.number_in("sustained_clock", 1e-3, 1);
  const JsonFields tables = fields.object("efficiency_tables");
  tables.refuse_unknown(
      {"gemm", "gemm_fp8", "memory", "intra_link", "inter_link", "attention_forward", "attention_backward"});
  p.gemm = table_from_json(tables, "gemm");
  if (tables.has("gemm_fp8")) {
    if (!p.peak_flops("fp8")) tables.fail("gemm_fp8", "needs an fp8 peak in dense_peak_flops");
    p.gemm_fp8 = table_from_json(tables, "gemm_fp8");
  }
  p.memory = table_from_json(tables, "memory");
  if (tables.has("attention_forward") != tables.has("attention_backward")) {
    tables.fail(tables.has("attention_forward") ? "attention_backward" : "attention_forward",
                "is missing: the fused-attention tables come as a pair");
  }
  if (tables.has("attention_forward")) {
    p.attention_forward = table_from_json(tables, "attention_forward");
    p.attention_backward = table_from_json(tables, "attention_backward");
  }
  p.intra_link = table_from_json(tables, "intra_link");
  p.inter_link = table_from_json(tables, "inter_link");
  if (fields.has("collectives")) p.collectives = collectives_from_json(fields);
  if (fields.has("calibration")) {
    if (!fields.at("calibration").is_object()) fields.fail("calibration", "must be a JSON object");
    loaded.calibration = fields.at("calibration");
    const auto date = loaded.calibration.find("date");
    if (date != loaded.calibration.end() && date->is_string()) p.calibrated_on = excerpt(date->get<std::string>());
  }
  if (const std::string problem = validate_hardware_profile(p); !problem.empty()) fields.fail_here(problem);
  return loaded;
}

LoadedProfile load_hardware_profile(const std::string& path) {
  return hardware_profile_from_json(read_json_file(path), path);
}

nlohmann::ordered_json hardware_profile_to_json(const HardwareProfile& profile,
                                                const nlohmann::ordered_json& calibration) {
  nlohmann::ordered_json out;
  out["name"] = profile.name;
  out["source"] = profile.source;
  out["units"] =
      "FLOP/s, bytes/s, bytes, seconds; bandwidths are per GPU and per direction; efficiency tables are [size, "
      "achieved fraction of peak] with size in FLOPs of one GEMM (gemm), bytes moved by one kernel (memory), bytes "
      "of one message (links) or tokens per sequence (attention_forward and attention_backward, of the bf16 peak)";
  nlohmann::ordered_json peaks = nlohmann::ordered_json::object();
  for (const auto& [precision, flops] : profile.dense_peak_flops) peaks[precision] = flops;
  out["dense_peak_flops"] = peaks;
  out["memory_bandwidth"] = profile.memory_bandwidth;
  out["memory_capacity"] = profile.memory_capacity;
  out["devices_per_node"] = profile.devices_per_node;
  out["intra_node"] = {{"bandwidth", profile.intra_node_bandwidth}, {"latency", profile.intra_node_latency}};
  if (profile.nvls_bus_bandwidth > 0) {
    out["intra_node"]["nvls"] = {{"all_reduce_bus_bandwidth", profile.nvls_bus_bandwidth},
                                 {"min_ranks", profile.nvls_min_ranks}};
  }
  out["inter_node"] = {{"bandwidth", profile.inter_node_bandwidth}, {"latency", profile.inter_node_latency}};
  if (profile.host_bandwidth > 0) out["host_link"] = {{"bandwidth", profile.host_bandwidth}};
  if (profile.crc32_rate > 0) out["crc32_rate"] = profile.crc32_rate;
  if (profile.has_variability()) {
    const auto& cv = profile.op_variability;
    out["variability"] = {{"F", cv[static_cast<std::size_t>(Op::kForward)]},
                          {"B", cv[static_cast<std::size_t>(Op::kBackward)]},
                          {"I", cv[static_cast<std::size_t>(Op::kBackwardInput)]},
                          {"W", cv[static_cast<std::size_t>(Op::kBackwardWeight)]},
                          {"link", profile.link_variability}};
  }
  out["latency"] = profile.latency_assumed ? "assumed" : "measured";
  out["efficiency"] = profile.efficiency_marker();
  if (profile.efficiency_published) out["sources"] = profile.sources;
  if (profile.sustained_clock != 1.0) out["sustained_clock"] = profile.sustained_clock;
  if (!profile.gemm_model.empty()) {
    const GemmModel& g = profile.gemm_model;
    nlohmann::ordered_json fractions = nlohmann::ordered_json::object();
    for (const auto& [precision, fraction] : g.peak_fraction) fractions[precision] = fraction;
    out["gemm_model"] = {{"sm_count", g.sm_count},
                         {"tile", {static_cast<std::int64_t>(g.tile_rows), static_cast<std::int64_t>(g.tile_cols)}},
                         {"min_split_k", g.min_split_k},
                         {"kernel_overhead", g.kernel_overhead},
                         {"peak_fraction", fractions}};
  }
  nlohmann::ordered_json tables;
  tables["gemm"] = table_to_json(profile.gemm);
  if (!profile.gemm_fp8.empty()) tables["gemm_fp8"] = table_to_json(profile.gemm_fp8);
  tables["memory"] = table_to_json(profile.memory);
  if (!profile.attention_forward.empty()) {
    tables["attention_forward"] = table_to_json(profile.attention_forward);
    tables["attention_backward"] = table_to_json(profile.attention_backward);
  }
  tables["intra_link"] = table_to_json(profile.intra_link);
  tables["inter_link"] = table_to_json(profile.inter_link);
  out["efficiency_tables"] = tables;
  if (!profile.collectives.empty()) {
    nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
    for (const CollectiveTable& table : profile.collectives) {
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const BusBandwidthPoint& point : table.points()) rows.push_back({point.bytes, point.bandwidth});
      collectives.push_back({{"op", collective_name(table.op())}, {"ranks", table.ranks()}, {"bus_bandwidth", rows}});
    }
    out["collectives"] = collectives;
  }
  if (!calibration.is_null()) out["calibration"] = calibration;
  return out;
}

}  // namespace ppsim
