# SPDX-License-Identifier: Apache-2.0
# Language level, build type and warnings shared by every target.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

option(PPSIM_BUILD_TESTS "Build the Catch2 test suite" ON)
option(PPSIM_BUILD_BENCHMARKS "Build the Google Benchmark targets" ON)
# The Python module (tools/python), built whenever pybind11 and Python's headers are found.
option(PPSIM_BUILD_PYTHON "Build the Python module when pybind11 is found" ON)
# libFuzzer targets (tests/fuzz): clang only; the asan preset turns them on.
option(PPSIM_BUILD_FUZZERS "Build the libFuzzer targets of every parser (needs clang)" OFF)
if(PPSIM_BUILD_FUZZERS AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PPSIM_BUILD_FUZZERS needs clang (libFuzzer); use the asan preset")
endif()

# Applied per target so that third-party headers are not affected.
add_library(ppsim_warnings INTERFACE)
target_compile_options(ppsim_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                                -Wno-sign-conversion
                                                # GCC 12 false positive on std::string concatenation (GCC PR 105651)
                                                $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>
                                                # aggregates such as Action{stage, op, mb} and designated
                                                # initializers leave trailing members at their defaults
                                                -Wno-missing-field-initializers)
