# Every dependency comes from a Debian package (see tools/install-deps.sh); nothing is downloaded.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
# ppsim sweep runs its points on std::thread workers.
find_package(Threads REQUIRED)
if(PPSIM_BUILD_TESTS)
  find_package(Catch2 2.13 REQUIRED)
  include(Catch)
  # Only the browser test reads PNG screenshots; without zlib it is skipped.
  find_package(ZLIB QUIET)
endif()
if(PPSIM_BUILD_BENCHMARKS)
  find_package(benchmark 1.6 REQUIRED)
endif()
