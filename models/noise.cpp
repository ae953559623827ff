// SPDX-License-Identifier: Apache-2.0
#include "models/noise.hpp"

#include <cmath>
#include <numbers>

namespace ppsim {

std::string_view noise_distribution_name(NoiseDistribution distribution) {
  switch (distribution) {
    case NoiseDistribution::kLognormal:
      return "lognormal";
    case NoiseDistribution::kGamma:
      return "gamma";
    case NoiseDistribution::kNormal:
      return "normal";
  }
  return "lognormal";
}

std::optional<NoiseDistribution> parse_noise_distribution(std::string_view name) {
  for (const NoiseDistribution d : {NoiseDistribution::kLognormal, NoiseDistribution::kGamma, NoiseDistribution::kNormal}) {
    if (name == noise_distribution_name(d)) return d;
  }
  return std::nullopt;
}

double SplitMix64::standard_normal() {
  const double u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

SplitMix64 noise_stream(std::uint64_t seed, std::uint64_t sample, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  // Each key goes through a generator step of its own, so nearby keys give unrelated streams.
  SplitMix64 mix{seed};
  std::uint64_t state = mix.next();
  for (const std::uint64_t key : {sample, a, b, c}) {
    SplitMix64 step{state ^ key};
    state = step.next();
  }
  return SplitMix64{state};
}

NoiseDraw::NoiseDraw(NoiseDistribution distribution, double cv) : distribution_(distribution), cv_(cv) {
  if (distribution == NoiseDistribution::kLognormal && cv > 0) {
    // As noise_factor computes them, so that exp(shift + scale * z) is its value exactly.
    const double variance = std::log1p(cv * cv);
    shift_ = -variance / 2;
    scale_ = std::sqrt(variance);
  }
}

double NoiseDraw::operator()(SplitMix64& stream) const {
  if (distribution_ == NoiseDistribution::kLognormal) return std::exp(shift_ + scale_ * stream.standard_normal());
  return noise_factor(stream, distribution_, cv_);
}

double noise_factor(SplitMix64& stream, NoiseDistribution distribution, double cv) {
  switch (distribution) {
    case NoiseDistribution::kLognormal: {
      const double variance = std::log1p(cv * cv);
      return std::exp(-variance / 2 + std::sqrt(variance) * stream.standard_normal());
    }
    case NoiseDistribution::kGamma: {
      // Marsaglia and Tsang for shape k >= 1; below 1, Gamma(k) = Gamma(k + 1) * U^(1/k).
      const double shape = 1 / (cv * cv);
      const double k = shape < 1 ? shape + 1 : shape;
      const double d = k - 1.0 / 3;
      const double c = 1 / std::sqrt(9 * d);
      double draw = 0;
      while (true) {
        const double z = stream.standard_normal();
        const double v0 = 1 + c * z;
        if (v0 <= 0) continue;
        const double v = v0 * v0 * v0;
        const double u = stream.uniform();
        if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v)) {
          draw = d * v;
          break;
        }
      }
      if (shape < 1) draw *= std::pow(stream.uniform(), 1 / shape);
      return draw / shape;  // scale cv^2 = 1 / shape: mean 1
    }
    case NoiseDistribution::kNormal:
      while (true) {
        const double draw = 1 + cv * stream.standard_normal();
        if (draw > 0) return draw;
      }
  }
  return 1;
}

}  // namespace ppsim
