// SPDX-License-Identifier: Apache-2.0
#pragma once
// The error every JSON reader in models/json throws: "origin: $.path: what", one line, so the CLI
// prints it as is (exit status 2) and a user sees which file and which key to fix.

#include <stdexcept>
#include <string>

namespace ppsim {

class JsonInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ppsim
