// SPDX-License-Identifier: Apache-2.0
// The `0F1` action notation: printing and parsing are exact inverses, and everything else is refused
// with a reason (schedules are exchanged with torch.distributed.pipelining through it).
#include "schedules/action.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

using Catch::Matchers::Contains;
using ppsim::Action;
using ppsim::Op;

TEST_CASE("An action prints as stage, op letter, micro-batch and parses back to itself") {
  const std::int32_t stage = GENERATE(0, 1, 2, 9, 10, 63, 100, 12345, std::numeric_limits<std::int32_t>::max());
  const Op op = GENERATE(Op::kForward, Op::kBackward, Op::kBackwardInput, Op::kBackwardWeight);
  const std::int32_t mb = GENERATE(0, 1, 7, 10, 99, 511, 100000, std::numeric_limits<std::int32_t>::max());
  const Action action{stage, op, mb};

  const std::string text = ppsim::to_string(action);
  // Printed independently of to_string: decimal stage, the op's letter, decimal micro-batch.
  REQUIRE(text == std::to_string(stage) + ppsim::op_letter(op) + std::to_string(mb));

  const ppsim::ActionParse parsed = ppsim::parse_action(text);
  INFO(parsed.error);
  REQUIRE(parsed.ok);
  CHECK(parsed.action == action);
  CHECK(ppsim::to_string(parsed.action) == text);
}

TEST_CASE("The op letters are torch.distributed.pipelining's F, B, I and W") {
  CHECK(ppsim::op_letter(Op::kForward) == 'F');
  CHECK(ppsim::op_letter(Op::kBackward) == 'B');
  CHECK(ppsim::op_letter(Op::kBackwardInput) == 'I');
  CHECK(ppsim::op_letter(Op::kBackwardWeight) == 'W');
  CHECK(ppsim::to_string({2, Op::kForward, 0}) == "2F0");
  CHECK(ppsim::to_string({0, Op::kBackward, 3}) == "0B3");
  CHECK(ppsim::to_string({1, Op::kBackwardWeight, 7}) == "1W7");
  // Only B and I send a gradient to the previous stage.
  CHECK(ppsim::is_backward_input(Op::kBackward));
  CHECK(ppsim::is_backward_input(Op::kBackwardInput));
  CHECK_FALSE(ppsim::is_backward_input(Op::kForward));
  CHECK_FALSE(ppsim::is_backward_input(Op::kBackwardWeight));
}

TEST_CASE("A malformed action is refused with a message that says what is wrong") {
  struct Bad {
    const char* text;
    const char* reason;
  };
  const Bad bad = GENERATE(values<Bad>({
      {"", "missing stage number"},
      {"F1", "missing stage number"},
      {"0F", "missing micro-batch number"},
      {"0", "missing op letter"},
      {"0X1", "unknown op 'X'"},
      {"0f1", "unknown op 'f'"},
      {"01F1", "stage number has a leading zero"},
      {"0F01", "micro-batch number has a leading zero"},
      {"0F1x", "unexpected 'x' in the micro-batch number"},
      {"0F-1", "unexpected '-' in the micro-batch number"},
      {"0F1 ", "unexpected ' ' in the micro-batch number"},
      {"-1F1", "missing stage number"},
      {"+1F1", "missing stage number"},
      {" 0F1", "missing stage number"},
      {"0SEND_F1", "'SEND_F' is a communication op"},
      {"1RECV_B0", "'RECV_B' is a communication op"},
      {"99999999999F0", "stage number is too large"},
      {"2147483648F0", "stage number is too large"},
      {"0F2147483648", "micro-batch number is too large"},
      {"0F123456789012345678901234567890", "micro-batch number is too large"},
  }));
  const ppsim::ActionParse parsed = ppsim::parse_action(bad.text);
  INFO("text: '" << bad.text << "'");
  CHECK_FALSE(parsed.ok);
  CHECK_THAT(parsed.error, Contains(bad.reason));
  // Every message quotes the text and shows the expected form.
  CHECK_THAT(parsed.error, Contains(std::string("'") + bad.text + "' is not an action"));
  CHECK_THAT(parsed.error, Contains("e.g. 0F1"));
}

TEST_CASE("A refused action's message is one complete sentence") {
  CHECK(ppsim::parse_action("01F1").error ==
        "'01F1' is not an action (stage number has a leading zero; expected [stage][F|B|I|W][micro-batch], e.g. 0F1)");
  CHECK(ppsim::parse_action("0SEND_F1").error ==
        "'0SEND_F1' is not an action ('SEND_F' is a communication op; ppsim derives communication from the "
        "compute ops; expected [stage][F|B|I|W][micro-batch], e.g. 0F1)");
}

TEST_CASE("The largest 32-bit stage and micro-batch are still actions") {
  const ppsim::ActionParse parsed = ppsim::parse_action("2147483647W2147483647");
  REQUIRE(parsed.ok);
  CHECK(parsed.action.stage == std::numeric_limits<std::int32_t>::max());
  CHECK(parsed.action.op == Op::kBackwardWeight);
  CHECK(parsed.action.microbatch == std::numeric_limits<std::int32_t>::max());
}
