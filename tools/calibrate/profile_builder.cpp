// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/profile_builder.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "schedules/action.hpp"
#include "schedules/excerpt.hpp"
#include "tools/calibrate/measure.hpp"

namespace ppsim::calibrate {
namespace {

using Json = nlohmann::ordered_json;

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

double median_of(std::vector<double> values) { return summarize(std::move(values)).median; }

// A table from points efficiency_points made; none (nothing measured) is the empty table.
EfficiencyTable table_from(std::vector<EfficiencyPoint> points) {
  if (points.empty()) return {};
  auto table = EfficiencyTable::create(std::move(points));
  // efficiency_points sorts, merges and clamps, so a refusal here is a bug in this file.
  if (!table.ok) throw std::logic_error("calibrated efficiency table: " + table.error);
  return std::move(table.value);
}

Json spread_json(const Spread& s) {
  return Json{{"min", round_significant(s.min, 4)},
              {"median", round_significant(s.median, 4)},
              {"max", round_significant(s.max, 4)},
              {"stdev", round_significant(s.stdev, 4)},
              {"runs", s.runs}};
}

Json info_json(const InfoValue& value) {
  return std::visit([](const auto& v) { return Json(v); }, value);
}

// Rate of one measurement (FLOP/s or bytes/s) from its median; 0 when the median is not positive.
double rate(double amount, const Spread& s) { return s.median > 0 ? amount / s.median : 0.0; }

// (bytes, median seconds) per message size over `links`, the median across links at each size.
std::vector<std::pair<double, double>> link_curve(const std::vector<LinkMeasurement>& measured,
                                                  const std::vector<std::string>& labels) {
  std::map<std::int64_t, std::vector<double>> by_size;
  for (const LinkMeasurement& m : measured) {
    if (std::find(labels.begin(), labels.end(), m.link.label) == labels.end()) continue;
    by_size[m.bytes].push_back(m.seconds.median);
  }
  std::vector<std::pair<double, double>> curve;
  for (auto& [bytes, seconds] : by_size) curve.emplace_back(static_cast<double>(bytes), median_of(seconds));
  return curve;
}

struct LinkChoice {
  std::string from;                 // what was measured, in words
  std::vector<std::string> labels;  // LinkSpec labels whose curves are combined
};

Json link_model_json(const LinkChoice& choice, const LinkModel& model) {
  Json labels = Json::array();
  for (const std::string& label : choice.labels) labels.push_back(label);
  return Json{{"from", choice.from}, {"links", labels}, {"latency", model.latency}, {"bandwidth", model.bandwidth}};
}

// One table per (operation, group size): bus bandwidth bytes * bus_factor / median seconds, by
// bytes, equal sizes merged at their median, 4 significant digits. Groups larger than a node (a
// CPU's hardware threads, a node's GPUs) are not kept: the profile's tables are intra-node ones.
std::vector<CollectiveTable> collective_tables(const std::vector<CollectiveMeasurement>& measured, int devices) {
  std::map<std::pair<int, int>, std::map<std::int64_t, std::vector<double>>> by_group;
  for (const CollectiveMeasurement& c : measured) {
    if (c.ranks < 2 || c.ranks > devices || !(c.seconds.median > 0)) continue;
    const double bandwidth = static_cast<double>(c.bytes) * bus_factor(c.op, c.ranks) / c.seconds.median;
    by_group[{static_cast<int>(c.op), c.ranks}][c.bytes].push_back(bandwidth);
  }
  std::vector<CollectiveTable> tables;
  for (const auto& [group, sizes] : by_group) {
    std::vector<BusBandwidthPoint> points;
    for (const auto& [bytes, bandwidths] : sizes) {
      points.push_back({static_cast<double>(bytes), round_significant(median_of(bandwidths), 4)});
    }
    auto table = CollectiveTable::create(static_cast<Collective>(group.first), group.second, std::move(points));
    // Sizes come sorted and unique from the map, bandwidths positive: a refusal is a bug here.
    if (!table.ok) throw std::logic_error("calibrated collective table: " + table.error);
    tables.push_back(std::move(table.value));
  }
  return tables;
}

}  // namespace

double round_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value;
  const int exponent = digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(value))));
  // Multiply or divide by an exact power of ten (10^k is exact up to k = 22), never by 10^-k, so
  // the result is the double nearest the decimal and prints as it: 2.074e9, not 2074000000.0000002.
  const double power = std::pow(10.0, std::abs(exponent));
  const double rounded = exponent >= 0 ? std::round(value * power) / power : std::round(value / power) * power;
  return rounded != 0 ? rounded : value;
}

std::vector<EfficiencyPoint> efficiency_points(std::vector<EfficiencyPoint> raw, int* clamped) {
  std::sort(raw.begin(), raw.end(), [](const EfficiencyPoint& a, const EfficiencyPoint& b) { return a.size < b.size; });
  std::vector<EfficiencyPoint> points;
  int above_one = 0;
  for (std::size_t i = 0; i < raw.size();) {
    std::size_t j = i;
    std::vector<double> fractions;
    for (; j < raw.size() && raw[j].size == raw[i].size; ++j) {
      // A zero time gives an infinite rate: above the peak, like any rate beyond it.
      const double f = std::isnan(raw[j].fraction) ? 0.0 : raw[j].fraction;
      if (f > 0) fractions.push_back(f);
    }
    if (!fractions.empty() && std::isfinite(raw[i].size) && raw[i].size > 0) {
      double f = median_of(fractions);
      // Peaks are kept to 4 significant digits, so the best point may sit a hair above 1 without
      // being beyond the peak; only more than that counts.
      if (f > 1 + 1e-3) ++above_one;
      f = std::min(f, 1.0);
      points.push_back({raw[i].size, std::min(1.0, round_significant(f, 4))});
    }
    i = j;
  }
  if (clamped != nullptr) *clamped = above_one;
  return points;
}

LinkModel fit_link(const std::vector<std::pair<double, double>>& bytes_seconds) {
  LinkModel model;
  if (bytes_seconds.empty()) return model;
  // The lines below every point form a convex region of (latency, 1 / bandwidth); the line nearest
  // the points (largest sum of modelled / measured) lies on a corner of it: through two measured
  // points, or through one point and the origin. Ten sizes give 45 corners to try.
  double best_latency = 0, best_inverse = 0, best_gap = std::numeric_limits<double>::infinity();
  double min_t = std::numeric_limits<double>::infinity();
  for (const auto& point : bytes_seconds) min_t = std::min(min_t, point.second);
  auto consider = [&](double latency, double inverse_bandwidth) {
    // A line through two points of a zero-latency link may cross zero a rounding error below it.
    if (latency < 0 && latency > -1e-9 * min_t) latency = 0;
    if (!(latency >= 0) || !(inverse_bandwidth > 0) || !std::isfinite(inverse_bandwidth)) return;
    double gap = 0;
    for (const auto& [s, t] : bytes_seconds) {
      const double line = latency + inverse_bandwidth * s;
      if (line > t * (1 + 1e-12)) return;  // above a point: not a lower envelope
      gap += (t - line) / t;
    }
    if (gap < best_gap) {
      best_gap = gap;
      best_latency = latency;
      best_inverse = inverse_bandwidth;
    }
  };
  double origin_slope = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < bytes_seconds.size(); ++i) {
    const auto& [si, ti] = bytes_seconds[i];
    origin_slope = std::min(origin_slope, ti / si);
    for (std::size_t j = i + 1; j < bytes_seconds.size(); ++j) {
      const auto& [sj, tj] = bytes_seconds[j];
      if (sj == si) continue;
      const double slope = (tj - ti) / (sj - si);
      consider(ti - slope * si, slope);
    }
  }
  consider(0.0, origin_slope);  // always below every point
  model.latency = round_significant(best_latency, 4);
  model.bandwidth = round_significant(1.0 / best_inverse, 4);
  std::vector<EfficiencyPoint> raw;
  for (const auto& [s, t] : bytes_seconds) {
    // Rounding the line to 4 digits may lift it a hair above a point it touches: fraction 1 there.
    raw.push_back({s, t > model.latency ? s / ((t - model.latency) * model.bandwidth) : 1.0});
  }
  model.table = efficiency_points(std::move(raw), &model.clamped);
  return model;
}

const HardwareProfile* preset_for_device(std::string_view name) {
  // CUDA device names as cudaGetDeviceProperties reports them. GH200's GPU and the NVL and PCIe
  // parts have other clocks, power limits or memory, so they do not share the SXM datasheets.
  if (contains(name, "NVL") || contains(name, "PCIe") || contains(name, "GH200")) return nullptr;
  if (contains(name, "H200")) return find_hardware_preset("H200-SXM-141GB");
  if (contains(name, "H100") && (contains(name, "HBM3") || contains(name, "SXM"))) {
    return find_hardware_preset("H100-SXM5-80GB");
  }
  if (contains(name, "A100") && contains(name, "SXM") && contains(name, "80GB")) {
    return find_hardware_preset("A100-SXM4-80GB");
  }
  return nullptr;
}

BuiltProfile build_profile(const Measurements& m, const BuildContext& context) {
  const bool gpu = m.backend != "cpu";
  const HardwareProfile* preset = gpu ? preset_for_device(m.device.name) : nullptr;
  HardwareProfile p;
  p.name = preset != nullptr ? preset->name + " (measured)" : m.device.name + " (" + m.backend + ", measured)";
  p.memory_capacity = m.device.memory_bytes;
  p.devices_per_node = std::max(1, m.device.devices);
  p.efficiency_assumed = false;
  p.calibrated_on = excerpt(context.date);  // as the reader takes it from the calibration record

  // Peaks.
  Json peaks;
  Json flops_peaks;
  if (preset != nullptr) {
    p.dense_peak_flops = preset->dense_peak_flops;
    for (const auto& [precision, flops] : p.dense_peak_flops) {
      flops_peaks[precision] = Json{{"value", flops}, {"from", "datasheet of " + preset->name}};
    }
  } else {
    for (const GemmMeasurement& g : m.gemms) {
      const std::string precision(precision_name(g.precision));
      double& best = p.dense_peak_flops[precision];
      best = std::max(best, rate(g.planned.shape.flops(), g.seconds));
    }
    for (auto& [precision, flops] : p.dense_peak_flops) {
      flops = round_significant(flops, 4);
      flops_peaks[precision] = Json{{"value", flops}, {"from", "best measured GEMM rate"}};
    }
  }
  double best_copy = 0;
  for (const MemoryMeasurement& k : m.memory) {
    if (k.planned.kernel == MemoryKernel::kCopy) best_copy = std::max(best_copy, rate(k.bytes, k.seconds));
  }
  p.memory_bandwidth = preset != nullptr ? preset->memory_bandwidth : round_significant(best_copy, 4);
  peaks["flops"] = flops_peaks;
  peaks["memory_bandwidth"] =
      Json{{"value", p.memory_bandwidth},
           {"from", preset != nullptr ? "datasheet of " + preset->name : std::string("best measured copy rate")},
           {"best_measured_copy", round_significant(best_copy, 4)}};

  // GEMM table: bf16, the precision every profile has and the cost model's default.
  Json clamped;
  {
    const double peak = p.dense_peak_flops.count("bf16") ? p.dense_peak_flops.at("bf16") : 0.0;
    std::vector<EfficiencyPoint> raw;
    for (const GemmMeasurement& g : m.gemms) {
      if (g.precision != Precision::kBf16 || peak <= 0) continue;
      raw.push_back({g.planned.shape.flops(), rate(g.planned.shape.flops(), g.seconds) / peak});
    }
    int above = 0;
    p.gemm = table_from(efficiency_points(std::move(raw), &above));
    clamped["gemm"] = above;
  }
  {
    std::vector<EfficiencyPoint> raw;
    for (const MemoryMeasurement& k : m.memory) {
      const double size = k.planned.group == "sweep" ? k.planned.target_bytes : k.bytes;
      raw.push_back({size, rate(k.bytes, k.seconds) / p.memory_bandwidth});
    }
    int above = 0;
    p.memory = table_from(efficiency_points(std::move(raw), &above));
    clamped["memory"] = above;
  }

  // Links. The intra-node link is the GPUs' peer-to-peer path when there are several; with one GPU
  // it cannot be measured, so a known GPU keeps its preset's NVLink figures (and says the latency
  // is assumed), an unknown one uses the on-device copy. The inter-node network needs two nodes;
  // the host-device copies stand in for it (the PCIe leg a GPUDirect RDMA send crosses).
  std::vector<std::string> peers, direct_peers, host, on_device, seen;
  for (const LinkMeasurement& measured : m.links) {
    const LinkSpec& link = measured.link;
    if (std::find(seen.begin(), seen.end(), link.label) != seen.end()) continue;
    seen.push_back(link.label);
    switch (link.kind) {
      case LinkSpec::kPeer:
        peers.push_back(link.label);
        if (link.direct) direct_peers.push_back(link.label);
        break;
      case LinkSpec::kHostToDevice:
      case LinkSpec::kDeviceToHost:
        host.push_back(link.label);
        break;
      case LinkSpec::kDeviceToDevice:
        on_device.push_back(link.label);
        break;
    }
  }
  Json link_fits;
  bool intra_from_preset = false;
  LinkChoice intra;
  if (!direct_peers.empty()) {
    intra = {"peer-to-peer copies between GPUs (median over " + std::to_string(direct_peers.size()) + " pairs)",
             direct_peers};
  } else if (!peers.empty()) {
    intra = {"peer-to-peer copies staged by the driver (no direct peer access)", peers};
  } else if (preset != nullptr) {
    intra_from_preset = true;
  } else {
    intra = {gpu ? "copies inside one GPU (one GPU: no peer to measure)" : "memcpy between two buffers, one thread",
             on_device};
  }
  const LinkChoice inter = !host.empty() ? LinkChoice{"host-device copies of pinned memory (the PCIe leg of a "
                                                      "network send; the network itself needs two nodes)",
                                                      host}
                                         : LinkChoice{intra.from, intra.labels};
  if (intra_from_preset) {
    p.intra_node_bandwidth = preset->intra_node_bandwidth;
    p.intra_node_latency = preset->intra_node_latency;
    p.intra_link = preset->intra_link;
    link_fits["intra_node"] = Json{{"from", "preset " + preset->name + " (one GPU: no peer to measure)"}};
  } else {
    const LinkModel model = fit_link(link_curve(m.links, intra.labels));
    p.intra_node_bandwidth = model.bandwidth;
    p.intra_node_latency = model.latency;
    p.intra_link = table_from(model.table);
    link_fits["intra_node"] = link_model_json(intra, model);
  }
  {
    const LinkModel model = fit_link(link_curve(m.links, inter.labels));
    p.inter_node_bandwidth = model.bandwidth;
    p.inter_node_latency = model.latency;
    p.inter_link = table_from(model.table);
    link_fits["inter_node"] = link_model_json(inter, model);
  }
  p.latency_assumed = intra_from_preset;
  p.collectives = collective_tables(m.collectives, p.devices_per_node);

  // An async checkpoint's snapshot runs at the device-to-host copy rate: measured where the backend
  // copies to the host, else the preset's datasheet figure, else (the CPU stand-in, whose memory is
  // the host's) the best copy rate.
  std::vector<std::string> to_host;
  for (const LinkMeasurement& measured : m.links) {
    if (measured.link.kind == LinkSpec::kDeviceToHost &&
        std::find(to_host.begin(), to_host.end(), measured.link.label) == to_host.end()) {
      to_host.push_back(measured.link.label);
    }
  }
  if (!to_host.empty()) {
    p.host_bandwidth = fit_link(link_curve(m.links, to_host)).bandwidth;
  } else {
    p.host_bandwidth = preset != nullptr ? preset->host_bandwidth : round_significant(best_copy, 4);
  }
  if (m.checksum_seconds.median > 0) {
    p.crc32_rate = round_significant(static_cast<double>(m.checksum_bytes) / m.checksum_seconds.median, 4);
  }
  // Variability, for --jitter measured: each op kind's GEMMs (bf16, the training precision), their
  // runs' standard deviations over their means, weighted by time (sum of sigmas over sum of means:
  // kernels of one op run one after the other); B is I and W together, a message the links' copies.
  {
    std::array<double, 3> sigma{};
    std::array<double, 3> mean{};
    for (const GemmMeasurement& g : m.gemms) {
      if (g.precision != Precision::kBf16) continue;
      const auto pass = static_cast<std::size_t>(g.planned.pass);
      sigma[pass] += g.seconds.stdev;
      mean[pass] += g.seconds.mean;
    }
    const auto cv = [](double s, double mu) { return mu > 0 ? round_significant(s / mu, 3) : 0.0; };
    p.op_variability[static_cast<std::size_t>(Op::kForward)] = cv(sigma[0], mean[0]);
    p.op_variability[static_cast<std::size_t>(Op::kBackwardInput)] = cv(sigma[1], mean[1]);
    p.op_variability[static_cast<std::size_t>(Op::kBackwardWeight)] = cv(sigma[2], mean[2]);
    p.op_variability[static_cast<std::size_t>(Op::kBackward)] = cv(sigma[1] + sigma[2], mean[1] + mean[2]);
    double link_sigma = 0;
    double link_mean = 0;
    for (const LinkMeasurement& l : m.links) {
      link_sigma += l.seconds.stdev;
      link_mean += l.seconds.mean;
    }
    p.link_variability = cv(link_sigma, link_mean);
  }

  // Source, in words.
  std::string source =
      "Measured by " + context.tool + " (" + m.backend + " backend) on " + m.device.name + ", " + context.date + ". ";
  if (preset != nullptr) {
    source +=
        "Peaks: the datasheet figures of " + preset->name + "; the efficiency tables are measured fractions of them. ";
  } else if (gpu) {
    source +=
        "Unknown GPU: peak FLOP/s is the best measured GEMM rate per precision and memory bandwidth the best "
        "measured copy rate; the efficiency tables are measured fractions of them. ";
  } else {
    source +=
        "Peak FLOP/s is the best measured GEMM rate (one thread, FP32 arithmetic, listed under every precision "
        "asked for) and memory bandwidth the best measured copy rate; the efficiency tables are measured "
        "fractions of them. ";
  }
  source += "Intra-node link: " +
            (intra_from_preset ? "the preset's NVLink figures (one GPU: no peer to measure)" : intra.from) +
            "; inter-node link: " + inter.from + "; both fitted to latency + bytes / bandwidth.";
  if (!p.collectives.empty()) {
    source += gpu ? " Collectives: NCCL among the GPUs of this node, bus bandwidth by message size."
                  : " Collectives: the CPU stand-in, ring algorithms among threads in shared memory, bus bandwidth by "
                    "message size.";
  }
  p.source = source;

  // The record of the run.
  Json cal;
  cal["tool"] = context.tool;
  cal["command_line"] = context.command_line;
  cal["date"] = context.date;
  cal["backend"] = m.backend;
  cal["method"] = m.method;
  Json device;
  device["name"] = m.device.name;
  device["memory_bytes"] = m.device.memory_bytes;
  device["devices"] = m.device.devices;
  for (const auto& [key, value] : m.device.details) device[key] = info_json(value);
  cal["device"] = device;
  cal["request"] = context.request;
  cal["peaks"] = peaks;
  cal["link_fits"] = link_fits;
  cal["clamped_to_peak"] = clamped;

  Json gemms = Json::array();
  for (const GemmMeasurement& g : m.gemms) {
    const double flops = g.planned.shape.flops();
    const double r = rate(flops, g.seconds);
    const auto peak = p.peak_flops(precision_name(g.precision));
    gemms.push_back(Json{{"label", g.planned.label},
                         {"pass", pass_name(g.planned.pass)},
                         {"precision", precision_name(g.precision)},
                         {"m", g.planned.shape.m},
                         {"n", g.planned.shape.n},
                         {"k", g.planned.shape.k},
                         {"batch", g.planned.shape.batch},
                         {"transpose_a", g.planned.shape.transpose_a},
                         {"transpose_b", g.planned.shape.transpose_b},
                         {"flops", flops},
                         {"seconds", spread_json(g.seconds)},
                         {"flop_rate", round_significant(r, 4)},
                         {"fraction_of_peak", peak ? Json(round_significant(r / *peak, 4)) : Json(nullptr)}});
  }
  cal["gemm"] = gemms;
  Json memory = Json::array();
  for (const MemoryMeasurement& k : m.memory) {
    const double r = rate(k.bytes, k.seconds);
    memory.push_back(Json{{"kernel", memory_kernel_name(k.planned.kernel)},
                          {"group", k.planned.group},
                          {"rows", k.planned.shape.rows},
                          {"width", k.planned.shape.width},
                          {"bytes", k.bytes},
                          {"seconds", spread_json(k.seconds)},
                          {"bandwidth", round_significant(r, 4)},
                          {"fraction_of_peak", round_significant(r / p.memory_bandwidth, 4)}});
  }
  cal["memory"] = memory;
  Json links = Json::array();
  for (const LinkMeasurement& l : m.links) {
    links.push_back(Json{{"link", l.link.label},
                         {"bytes", l.bytes},
                         {"seconds", spread_json(l.seconds)},
                         {"bandwidth", round_significant(rate(static_cast<double>(l.bytes), l.seconds), 4)}});
  }
  cal["links"] = links;
  Json collectives = Json::array();
  for (const CollectiveMeasurement& c : m.collectives) {
    collectives.push_back(
        Json{{"op", collective_name(c.op)},
             {"ranks", c.ranks},
             {"bytes", c.bytes},
             {"seconds", spread_json(c.seconds)},
             {"bus_bandwidth",
              round_significant(rate(static_cast<double>(c.bytes) * bus_factor(c.op, c.ranks), c.seconds), 4)}});
  }
  if (!collectives.empty()) cal["collectives"] = collectives;
  cal["checksum"] = Json{{"algorithm", "crc32 (zlib), on the host"},
                         {"bytes", m.checksum_bytes},
                         {"seconds", spread_json(m.checksum_seconds)}};
  return {std::move(p), std::move(cal)};
}

}  // namespace ppsim::calibrate
