// SPDX-License-Identifier: Apache-2.0
#pragma once
// Driving the command line in-process, and scratch directories for the files it writes: shared by
// the CLI, picture, transformer and sweep tests.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tools/ppsim/cli.hpp"

namespace ppsim::test {

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
};

// `ppsim args...`, with both streams captured.
inline CliRun cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  CliRun run;
  run.status = run_cli(args, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// A fresh directory under the system's temporary directory, removed at the end of the test. The
// process id keeps two test runs on one machine (ctest -j, a second checkout) out of each other's files.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("ppsim-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// The bytes of a file the CLI wrote ("" when it does not exist).
inline std::string read_whole(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

}  // namespace ppsim::test
