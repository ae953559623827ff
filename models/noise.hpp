// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernel-time and message-time noise for Monte-Carlo steps: each compute op's time is multiplied
// by an independent draw of mean 1 and a coefficient of variation per op kind, each message's
// time on the link and latency by one of its own. Draws are a pure function of (seed, sample,
// what is drawn for), not of the order the engine visits ops in, so a sample's figures are the
// same whatever runs before it or beside it.

#include <array>
#include <cstdint>
#include <string_view>
#include <optional>

#include "schedules/action.hpp"

namespace ppsim {

enum class NoiseDistribution : std::uint8_t {
  kLognormal,  // exp(N(mu, sigma^2)) with sigma^2 = ln(1 + cv^2), mu = -sigma^2 / 2
  kGamma,      // shape 1/cv^2, scale cv^2 (Marsaglia and Tsang, ACM TOMS 26(3), 2000)
  kNormal,     // N(1, cv^2), redrawn below zero (truncated; its mean rises above 1 once cv > 0.3)
};

std::string_view noise_distribution_name(NoiseDistribution distribution);
std::optional<NoiseDistribution> parse_noise_distribution(std::string_view name);

// Coefficients of variation beyond 10 are typos: a kernel ten times its mean is a failure, not
// noise. --jitter and a hardware profile's `variability` table share the bound.
inline constexpr double kMaxVariation = 10;

struct NoiseModel {
  std::array<double, kNumOps> op_cv{};  // by Op: F, B, I, W
  double link_cv = 0;
  NoiseDistribution distribution = NoiseDistribution::kLognormal;
  std::uint64_t seed = 0;
  std::uint64_t sample = 0;

  bool any() const {
    for (const double cv : op_cv) {
      if (cv > 0) return true;
    }
    return link_cv > 0;
  }
};

// splitmix64 (Steele, Lea and Flood, OOPSLA 2014): one step of the generator and the stream it
// seeds. Good enough for noise, and cheap to seed once per op.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1): 53 random bits, never 0 (a logarithm takes it).
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  double standard_normal();  // Box-Muller, one of the pair
};

// The stream for one thing drawn in one sample: the mix of the seed, the sample and three keys.
SplitMix64 noise_stream(std::uint64_t seed, std::uint64_t sample, std::uint64_t a, std::uint64_t b, std::uint64_t c);

// One draw of mean 1 (mean 1 before truncation for kNormal) and coefficient of variation `cv` > 0.
double noise_factor(SplitMix64& stream, NoiseDistribution distribution, double cv);

// noise_factor for one kind of draw with what depends only on cv worked out once: the same values,
// bit for bit, without a logarithm and a square root per lognormal draw (a third of a draw's cost).
class NoiseDraw {
 public:
  NoiseDraw() = default;
  NoiseDraw(NoiseDistribution distribution, double cv);
  bool any() const { return cv_ > 0; }
  double operator()(SplitMix64& stream) const;

 private:
  NoiseDistribution distribution_ = NoiseDistribution::kLognormal;
  double cv_ = 0;
  double shift_ = 0;  // lognormal: -sigma^2 / 2
  double scale_ = 0;  // lognormal: sigma
};

}  // namespace ppsim
