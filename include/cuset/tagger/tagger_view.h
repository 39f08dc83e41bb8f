// Views of the tagger's spans for people and scripts: ANSI colours for a terminal, plain
// brackets, JSON, and a self-contained HTML page with a legend (`cuset-train tag`). Rendering
// only: what is tagged is decided in tagger.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cuset/tagger/tagger.h"

namespace cuset {

enum class TagFormat {
    kPlain,  // the text with [[ ]] around every sensitive run
    kAnsi,   // the text with ANSI colours per category
    kJson,   // {"bytes", "regions", "spans": [{begin, end, bits, categories, text}], "summary"}
    kHtml,   // a self-contained page: coloured text, a legend with counts
};

// "plain", "ansi", "json", "html", or "auto" (ansi when `tty`, else plain). Throws UsageError.
TagFormat tag_format_parse(const std::string& name, bool tty);

// `text` with `spans` (sorted, disjoint, as tag_text returns them) rendered in `format`;
// `title` names the input (file name) in the JSON and HTML.
std::string tag_render(std::string_view text, const std::vector<TagSpan>& spans, TagFormat format,
                       const std::string& title);

// The `cuset-train tag` command: reads `path` ("-" = stdin), tags it, renders it in `format`
// (a tag_format_parse name; "auto" looks at whether stdout is a terminal) to `out_path`
// (empty = stdout). Throws UsageError for an unknown format, InputError for an unreadable
// input, RuntimeFailure for an unwritable output.
void tag_file(const std::string& path, const std::string& format, const std::string& out_path,
              const TaggerOptions& opts);

}  // namespace cuset
