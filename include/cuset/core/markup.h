// Escaping text for the HTML pages and SVG figures cuset writes (tag views, run reports, the
// analysis figure, the evaluation page). Nothing else about markup lives here.
#pragma once

#include <string>
#include <string_view>

namespace cuset {

// & < > " as entities, over utf8_visible(s): bytes that are not UTF-8 as U+FFFD, control
// characters other than tab and newline (NUL, ESC, BEL, a lone carriage return, the C1 controls)
// as visible characters, so a page shows every byte of a judged program's output as text, never
// acts on it, and never carries what its charset=utf-8 or XML 1.0 does not hold.
std::string html_escape(std::string_view s);

// The same escaping, for SVG: XML 1.0 allows no control character but tab, newline and carriage
// return, and html_escape leaves only the first two.
std::string xml_escape(std::string_view s);

}  // namespace cuset
