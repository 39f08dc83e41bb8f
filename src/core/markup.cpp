// HTML and XML escaping.
#include "cuset/core/markup.h"

#include "cuset/core/utf8_text.h"

namespace cuset {

namespace {

std::string escape(std::string_view raw, bool drop_controls) {
    const std::string s = utf8_sanitize(raw);
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\0': out += drop_controls ? " " : "\xEF\xBF\xBD"; break;  // HTML does not allow NUL
            default:
                if (drop_controls && static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
                else out += c;
        }
    }
    return out;
}

}  // namespace

std::string html_escape(std::string_view s) { return escape(s, /*drop_controls=*/false); }

std::string xml_escape(std::string_view s) { return escape(s, /*drop_controls=*/true); }

}  // namespace cuset
