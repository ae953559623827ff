// SPDX-License-Identifier: Apache-2.0
// The tests' XML checker: it must refuse what a strict XML parser refuses, or the SVG and HTML
// tests prove nothing.
#include "support/xml_check.hpp"

#include <catch2/catch.hpp>
#include <string>

TEST_CASE("the XML checker accepts well-formed documents with a prolog, comments and entities", "[xml]") {
  using ppsim::test::xml_error;
  CHECK_FALSE(
      xml_error("<?xml version=\"1.0\"?>\n<svg a=\"1\" b='x &amp; y'><g/><!-- c --><t>&lt;&#39;&#x41;</t></svg>\n"));
  CHECK_FALSE(xml_error("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/></head><body/></html>"));
}

TEST_CASE("the XML checker refuses unbalanced tags, bad attributes, unknown entities and stray text", "[xml]") {
  using ppsim::test::xml_error;
  const char* broken[] = {
      "<a><b></a></b>",          // crossed tags
      "<a><b></a>",              // unclosed
      "<a>",                     // never closed
      "<a x=1/>",                // unquoted attribute
      "<a x=\"1\" x=\"2\"/>",    // duplicate attribute
      "<a x=\"1\"y=\"2\"/>",     // no space between attributes
      "<a>&nbsp;</a>",           // an HTML entity XML does not know
      "<a>fish & chips</a>",     // bare ampersand
      "<a x=\"<\"/>",            // < inside an attribute
      "<a/><b/>",                // two roots
      "text<a/>",                // text before the root
      "<a><!-- x -- y --></a>",  // -- inside a comment
      "",                        // nothing at all
  };
  for (const char* text : broken) {
    INFO(text);
    CHECK(xml_error(text));
  }
}
