// SPDX-License-Identifier: Apache-2.0
// Text forms of durations, sizes and bandwidths, as configs and flags write them; errors say what is
// wrong (the caller adds the flag or JSON path).
#include "models/units.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

TEST_CASE("Durations parse with or without a space before the unit, and plain numbers are base units") {
  struct Case {
    const char* text;
    double seconds;
  };
  const Case c = GENERATE(values<Case>({
      {"1.5 ms", 1.5e-3},
      {"1.5ms", 1.5e-3},
      {"250us", 250e-6},
      {"250 µs", 250e-6},
      {"40 ns", 40e-9},
      {"2 s", 2.0},
      {"2 min", 120.0},
      {"1.5 h", 5400.0},
      {"54 d", 4665600.0},
      {"3e-3", 3e-3},
      {"1", 1.0},
      {"0", 0.0},
      {"  7.25  ", 7.25},
  }));
  INFO(c.text);
  const auto parsed = ppsim::parse_duration(c.text);
  INFO(parsed.error);
  REQUIRE(parsed.ok);
  CHECK_THAT(parsed.value.value, WithinRel(c.seconds, 1e-15));
}

TEST_CASE("Sizes use powers of 1000 for KB, MB, GB and powers of 1024 for KiB, MiB, GiB") {
  struct Case {
    const char* text;
    std::int64_t bytes;
  };
  const Case c = GENERATE(values<Case>({
      {"80 GiB", std::int64_t{80} << 30},
      {"1.5 GB", 1'500'000'000},
      {"512 KiB", 512 * 1024},
      {"2 MB", 2'000'000},
      {"3 MiB", 3 << 20},
      {"1 TB", 1'000'000'000'000},
      {"1 TiB", std::int64_t{1} << 40},
      {"4096", 4096},
      {"100 B", 100},
      {"1048576 TiB", std::int64_t{1} << 60},  // the largest size accepted
  }));
  INFO(c.text);
  const auto parsed = ppsim::parse_bytes(c.text);
  INFO(parsed.error);
  REQUIRE(parsed.ok);
  CHECK(parsed.value.value == c.bytes);
}

TEST_CASE("Bandwidths in bits per second are divided by 8, and unlimited means free links") {
  struct Case {
    const char* text;
    double bytes_per_second;
  };
  const Case c = GENERATE(values<Case>({
      {"400 Gb/s", 50e9},
      {"100 Mb/s", 12.5e6},
      {"50 GB/s", 50e9},
      {"100 MiB/s", 100.0 * 1024 * 1024},
      {"8 b/s", 1.0},
      {"1e9", 1e9},
  }));
  INFO(c.text);
  const auto parsed = ppsim::parse_bandwidth(c.text);
  INFO(parsed.error);
  REQUIRE(parsed.ok);
  CHECK_THAT(parsed.value.value, WithinRel(c.bytes_per_second, 1e-15));
}

TEST_CASE("Unlimited bandwidth is infinite, which makes every transfer free") {
  const char* text = GENERATE("unlimited", "inf", " unlimited ");
  const auto parsed = ppsim::parse_bandwidth(text);
  REQUIRE(parsed.ok);
  CHECK(std::isinf(parsed.value.value));
  CHECK(parsed.value.value > 0);
  // The default-constructed bandwidth is the same free link.
  CHECK(ppsim::Bandwidth{}.value == parsed.value.value);
}

TEST_CASE("Negative, NaN and infinite durations are refused") {
  struct Case {
    const char* text;
    const char* reason;
  };
  const Case c = GENERATE(values<Case>({
      {"-1 ms", "must not be negative"},
      {"-0.5", "must not be negative"},
      {"nan", "must be a finite time, got NaN"},
      {"NaN s", "must be a finite time, got NaN"},
      {"inf", "must be a finite time, got infinity"},
      {"infinity ms", "must be a finite time, got infinity"},
      {"", "is empty"},
      {"   ", "is empty"},
      {"ms", "does not start with a number"},
  }));
  INFO(c.text);
  const auto parsed = ppsim::parse_duration(c.text);
  CHECK_FALSE(parsed.ok);
  CHECK_THAT(parsed.error, Contains(c.reason));
}

TEST_CASE("An unknown unit is refused with the list of known units") {
  SECTION("durations") {
    const auto parsed = ppsim::parse_duration("3 parsecs");
    CHECK_FALSE(parsed.ok);
    CHECK(parsed.error == "'3 parsecs' has unknown unit 'parsecs' (known: ns, us, µs, ms, s, min, h, d)");
  }
  SECTION("sizes") {
    const auto parsed = ppsim::parse_bytes("2 EiB");
    CHECK_FALSE(parsed.ok);
    CHECK_THAT(parsed.error, Contains("unknown unit 'EiB'"));
    CHECK_THAT(parsed.error, Contains("known: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB"));
  }
  SECTION("bandwidths: a size is not a rate") {
    const auto parsed = ppsim::parse_bandwidth("400 Gb");
    CHECK_FALSE(parsed.ok);
    CHECK_THAT(parsed.error, Contains("unknown unit 'Gb'"));
    CHECK_THAT(parsed.error, Contains("Gb/s"));
  }
  SECTION("units are case-sensitive but for binary prefixes: a millisecond is not a megasecond") {
    CHECK_FALSE(ppsim::parse_duration("1 MS").ok);
    CHECK_FALSE(ppsim::parse_bytes("1 gb").ok);
    CHECK(ppsim::parse_bytes("1 gib").ok);  // the "i" says binary whatever the case
  }
}

TEST_CASE("Sizes above 2^60 bytes are refused as absurd, and negative sizes as negative") {
  const auto absurd = ppsim::parse_bytes("1048577 TiB");  // 2^60 + 2^40
  CHECK_FALSE(absurd.ok);
  CHECK_THAT(absurd.error, Contains("absurdly large"));
  CHECK_THAT(absurd.error, Contains("2^60"));

  const auto huge = ppsim::parse_bytes("1e30");
  CHECK_FALSE(huge.ok);
  CHECK_THAT(huge.error, Contains("absurdly large"));

  const auto negative = ppsim::parse_bytes("-1 GiB");
  CHECK_FALSE(negative.ok);
  CHECK_THAT(negative.error, Contains("must not be negative"));

  const auto not_a_number = ppsim::parse_bytes("nan");
  CHECK_FALSE(not_a_number.ok);
  CHECK_THAT(not_a_number.error, Contains("finite"));
}

TEST_CASE("A zero, negative or NaN bandwidth is refused") {
  struct Case {
    const char* text;
    const char* reason;
  };
  const Case c = GENERATE(values<Case>({
      {"0 Gb/s", "must be positive"},
      {"0", "must be positive"},
      {"-5 GB/s", "must be positive"},
      {"nan", "NaN"},
  }));
  INFO(c.text);
  const auto parsed = ppsim::parse_bandwidth(c.text);
  CHECK_FALSE(parsed.ok);
  CHECK_THAT(parsed.error, Contains(c.reason));
}

TEST_CASE("Plain JSON numbers get the same checks as text") {
  CHECK(ppsim::duration_from_number(0.25).ok);
  CHECK(ppsim::duration_from_number(0.25).value.value == 0.25);
  CHECK_FALSE(ppsim::duration_from_number(-1).ok);
  CHECK_FALSE(ppsim::duration_from_number(std::numeric_limits<double>::quiet_NaN()).ok);
  CHECK_FALSE(ppsim::duration_from_number(std::numeric_limits<double>::infinity()).ok);

  CHECK(ppsim::bytes_from_number(4096).value.value == 4096);
  CHECK_FALSE(ppsim::bytes_from_number(-1).ok);
  CHECK_FALSE(ppsim::bytes_from_number(std::ldexp(1.0, 61)).ok);
  CHECK(ppsim::bytes_from_number(std::ldexp(1.0, 60)).ok);

  CHECK(ppsim::bandwidth_from_number(1e9).value.value == 1e9);
  CHECK_FALSE(ppsim::bandwidth_from_number(0).ok);
  CHECK_FALSE(ppsim::bandwidth_from_number(-1).ok);
}

TEST_CASE("Common spellings of a unit read as the unit where they are unambiguous") {
  // "sec" for s, "ps" for /s, SI's lowercase k, and binary prefixes in any case.
  CHECK(ppsim::parse_duration("250 usec").value.value == ppsim::parse_duration("250 us").value.value);
  CHECK(ppsim::parse_duration("1.5msec").value.value == ppsim::parse_duration("1.5 ms").value.value);
  CHECK(ppsim::parse_duration("40 nsec").value.value == ppsim::parse_duration("40 ns").value.value);
  CHECK(ppsim::parse_duration("2 sec").value.value == 2.0);
  const auto bytes = GENERATE(values<std::pair<const char*, std::int64_t>>({
      {"4 kB", 4000},
      {"2 gib", std::int64_t{2} << 30},
      {"2 GIB", std::int64_t{2} << 30},
      {"3 mib", 3 << 20},
      {"1 Kib", 1024},
      {"1 tib", std::int64_t{1} << 40},
  }));
  INFO(bytes.first);
  const auto size = ppsim::parse_bytes(bytes.first);
  INFO(size.error);
  REQUIRE(size.ok);
  CHECK(size.value.value == bytes.second);
  const auto rate = GENERATE(values<std::pair<const char*, double>>({
      {"400 Gbps", 50e9},
      {"100 Mbps", 12.5e6},
      {"8 kbps", 1000.0},
      {"8 bps", 1.0},
      {"50 GBps", 50e9},
      {"3 kB/s", 3000.0},
      {"2 gib/s", 2147483648.0},
      {"1 MIB/s", 1048576.0},
  }));
  INFO(rate.first);
  const auto bandwidth = ppsim::parse_bandwidth(rate.first);
  INFO(bandwidth.error);
  REQUIRE(bandwidth.ok);
  CHECK(bandwidth.value.value == rate.second);
}

TEST_CASE("Spellings that could mean two units are refused, naming the units known") {
  for (const char* text : {"4 mb", "4 gb", "4 Mb", "1 msecs"}) {
    INFO(text);
    const auto size = ppsim::parse_bytes(text);
    CHECK_FALSE(size.ok);
    CHECK_THAT(size.error, Contains("has unknown unit") && Contains("known: B, KB, MB"));
  }
  CHECK_FALSE(ppsim::parse_bandwidth("4 mbps").ok);  // megabits or millibits: not guessed
  CHECK_FALSE(ppsim::parse_duration("3 Ms").ok);
}
