// HTML and XML escaping.
#include "cuset/core/markup.h"

#include "cuset/core/utf8_text.h"

namespace cuset {

std::string html_escape(std::string_view raw) {
    const std::string s = utf8_visible(raw);
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string xml_escape(std::string_view s) { return html_escape(s); }

}  // namespace cuset
