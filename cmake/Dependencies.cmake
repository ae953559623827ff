# SPDX-License-Identifier: Apache-2.0
# Every dependency comes from a Debian package (see tools/install-deps.sh); nothing is downloaded.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
# ppsim sweep runs its points on std::thread workers.
find_package(Threads REQUIRED)
# zlib's crc32: ppsim-calibrate measures the host's checksum rate with it (zlib1g-dev).
find_package(ZLIB REQUIRED)
if(PPSIM_BUILD_TESTS)
  find_package(Catch2 2.13 REQUIRED)
  include(Catch)
  # The tests check that SVG and HTML are well-formed XML with libxml2, and the browser test reads
  # its screenshot with libpng (Debian's libxml2-dev and libpng-dev, tools/install-deps.sh --test).
  find_package(LibXml2 REQUIRED)
  find_package(PNG REQUIRED)
endif()
if(PPSIM_BUILD_BENCHMARKS)
  find_package(benchmark 1.6 REQUIRED)
endif()
# The Python module: Debian's pybind11-dev and python3-dev. Without them everything else builds.
if(PPSIM_BUILD_PYTHON)
  # Debian's interpreter, which python3-pybind11 and python3-pytest install for, before any other
  # python3 on the PATH (pyenv's, a virtualenv's); -DPython3_EXECUTABLE=... picks another.
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_FOUND)
    find_package(pybind11 2.6 CONFIG QUIET)
  endif()
  if(pybind11_FOUND)
    # The libraries go into the module's shared object too, so they are compiled position
    # independent; -fno-semantic-interposition keeps the optimiser free to inline across their
    # functions as it would in an executable (no one interposes them).
    set(CMAKE_POSITION_INDEPENDENT_CODE ON)
    add_compile_options(-fno-semantic-interposition)
  else()
    message(STATUS "ppsim: pybind11 or Python headers not found; the Python module is not built "
                   "(tools/install-deps.sh installs pybind11-dev and python3-dev)")
  endif()
endif()
