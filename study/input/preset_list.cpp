// SPDX-License-Identifier: Apache-2.0
#include "study/input/preset_list.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ostream>
#include <string>

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"
#include "sim/report/format.hpp"
#include "study/input/preset_family.hpp"

namespace ppsim {
namespace {

std::string scaled(double value, double unit, const char* suffix) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g%s", value / unit, suffix);
  return buffer;
}

}  // namespace

void write_preset_list(std::ostream& out) {
  out << "models (--model NAME, or a JSON file like configs/models/NAME.json)\n";
  TextTable models({Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                    Align::kRight, Align::kRight, Align::kRight, Align::kLeft, Align::kLeft});
  models.add_row(
      {"name", "parameters", "active", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "mlp", "experts"});
  for (const Architecture& arch : architecture_presets()) {
    // "8 top-2": routed experts per MoE layer and how many a token meets; "-" for a dense model.
    const std::string experts =
        has_experts(arch) ? std::to_string(arch.moe.experts) + " top-" + std::to_string(arch.moe.top_k) : "-";
    models.add_row({arch.name, scaled(static_cast<double>(parameter_count(arch)), 1e9, "B"),
                    scaled(static_cast<double>(active_parameter_count(arch)), 1e9, "B"), std::to_string(arch.layers),
                    std::to_string(arch.hidden), std::to_string(arch.heads), std::to_string(arch.kv_heads),
                    std::to_string(arch.ffn_hidden), std::to_string(arch.vocab), arch.gated_mlp ? "SwiGLU" : "GeLU",
                    experts});
  }
  out << models.render();

  out << "\nhardware (--hardware NAME, or a JSON file like configs/hardware/NAME.json)\n";
  TextTable hardware({Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                      Align::kRight, Align::kLeft});
  hardware.add_row({"name", "bf16_dense", "hbm", "memory", "intra_node", "inter_node", "per_node", "efficiency"});
  for (const HardwareProfile& profile : hardware_presets()) {
    hardware.add_row({lower_case(profile.name), scaled(*profile.peak_flops("bf16"), 1e12, " TFLOP/s"),
                      scaled(profile.memory_bandwidth, 1e12, " TB/s"), format_bytes(profile.memory_capacity),
                      scaled(profile.intra_node_bandwidth, 1e9, " GB/s"), scaled(profile.inter_node_bandwidth, 1e9, " GB/s"),
                      std::to_string(profile.devices_per_node), profile.efficiency_marker()});
  }
  out << hardware.render();
  out << "Bandwidths are per GPU and direction. Sources: `source` in each configs/ file.\n";
}

nlohmann::ordered_json preset_list_json() {
  nlohmann::ordered_json list;
  nlohmann::ordered_json& models = list["models"] = nlohmann::ordered_json::array();
  for (const Architecture& arch : architecture_presets()) {
    nlohmann::ordered_json row;
    row["name"] = arch.name;
    row["parameters"] = parameter_count(arch);
    row["active_parameters"] = active_parameter_count(arch);
    row["layers"] = arch.layers;
    row["hidden"] = arch.hidden;
    row["heads"] = arch.heads;
    row["kv_heads"] = arch.kv_heads;
    row["ffn"] = arch.ffn_hidden;
    row["vocab"] = arch.vocab;
    row["mlp"] = arch.gated_mlp ? "SwiGLU" : "GeLU";
    if (has_experts(arch)) {
      row["experts"] = arch.moe.experts;
      row["top_k"] = arch.moe.top_k;
      row["expert_ffn"] = arch.moe.expert_ffn_hidden;
    }
    models.push_back(row);
  }
  nlohmann::ordered_json& hardware = list["hardware"] = nlohmann::ordered_json::array();
  for (const HardwareProfile& profile : hardware_presets()) {
    nlohmann::ordered_json row;
    row["name"] = lower_case(profile.name);
    row["bf16_flops"] = *profile.peak_flops("bf16");
    row["memory_bandwidth"] = profile.memory_bandwidth;
    row["memory_capacity"] = profile.memory_capacity;
    row["intra_node_bandwidth"] = profile.intra_node_bandwidth;
    row["inter_node_bandwidth"] = profile.inter_node_bandwidth;
    row["devices_per_node"] = profile.devices_per_node;
    row["efficiency"] = profile.efficiency_marker();
    hardware.push_back(row);
  }
  return list;
}

}  // namespace ppsim
