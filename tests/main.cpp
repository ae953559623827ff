// SPDX-License-Identifier: Apache-2.0
// Catch2's main; every other file in tests/ holds test cases only.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
