// SPDX-License-Identifier: Apache-2.0
#include "support/xml_check.hpp"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <climits>
#include <memory>

namespace ppsim::test {

// Debian's libxml2 as the strict parser: the document must be well-formed XML, with nothing read
// from the network or from files (no external DTD: an HTML DOCTYPE declares no entities, so
// &nbsp; is refused as XML refuses it).
std::optional<std::string> xml_error(std::string_view text) {
  if (text.size() > static_cast<std::size_t>(INT_MAX)) return "document larger than libxml2 reads at once";
  xmlInitParser();
  const std::unique_ptr<xmlParserCtxt, void (*)(xmlParserCtxtPtr)> context(xmlNewParserCtxt(), xmlFreeParserCtxt);
  if (!context) return "libxml2: out of memory";
  const std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)> document(
      xmlCtxtReadMemory(context.get(), text.data(), static_cast<int>(text.size()), "document.xml", nullptr,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE),
      xmlFreeDoc);
  if (document && context->wellFormed) return std::nullopt;
  const xmlError* error = xmlCtxtGetLastError(context.get());
  if (error == nullptr || error->message == nullptr) return "not well-formed";
  std::string message = error->message;
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return "line " + std::to_string(error->line) + ": " + message;
}

std::size_t count_of(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

}  // namespace ppsim::test
