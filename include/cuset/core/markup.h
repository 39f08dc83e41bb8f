// Escaping text for the HTML pages and SVG figures cuset writes (tag views, run reports, the
// analysis figure, the evaluation page). Nothing else about markup lives here.
#pragma once

#include <string>
#include <string_view>

namespace cuset {

// & < > " as entities, NUL (not allowed in HTML) as U+FFFD; bytes that are not UTF-8 as U+FFFD
// (utf8_sanitize), so a page never carries what its charset=utf-8 does not hold; everything else
// as is.
std::string html_escape(std::string_view s);

// As html_escape, and control characters other than tab and newline (not allowed in XML 1.0),
// NUL included, become spaces.
std::string xml_escape(std::string_view s);

}  // namespace cuset
