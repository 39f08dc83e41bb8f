// Renders tagger spans as plain brackets, ANSI colours, JSON or a self-contained HTML page, and
// runs `cuset-train tag`. Knows nothing about CUDA: it only walks sorted disjoint spans.
#include "cuset/tagger/tagger_view.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/log.h"
#include "cuset/core/markup.h"

namespace cuset {
namespace {

struct Category {
    uint32_t bit;
    const char* css;        // class name in the HTML page
    const char* ansi;       // SGR parameters
    const char* html_rule;  // CSS declarations
    const char* meaning;    // legend text
};

// Kernel and launch are backgrounds; the finer categories are text styles drawn over them.
// Later entries win where two text colours meet (sync over shared over memory over indexing).
const std::array<Category, kTagBitCount> kCategories = {{
    {kTagKernel, "k", "48;5;17", "background:#dce8fb",
     "__global__ / __device__ function: qualifiers through the closing brace"},
    {kTagLaunch, "l", "48;5;52", "background:#ffe1b8",
     "launch: <<<...>>> statement, launch API call, its configuration statements, attribute and occupancy calls"},
    {kTagIndexing, "i", "38;5;220", "color:#a34a00;font-weight:bold",
     "thread indexing: threadIdx / blockIdx / blockDim / gridDim and index statements"},
    {kTagMemoryAccess, "m", "38;5;83", "color:#127a12;font-weight:bold",
     "memory access: subscripts of pointer parameters"},
    {kTagSharedMemory, "s", "38;5;51", "color:#00737a;font-weight:bold;font-style:italic",
     "shared memory: __shared__ declarations and subscripts"},
    {kTagSync, "y", "1;38;5;201", "color:#c8007a;font-weight:bold",
     "synchronisation: __syncthreads, __syncwarp, fences, warp shuffles and votes, atomics, cg sync"},
    {kTagBoundsCheck, "b", "4", "text-decoration:underline wavy #6a3ab2",
     "bounds check: a condition comparing an index with a size"},
}};

// Calls plain(a, b) for untagged bytes and piece(a, b, bits) for each span, in order.
template <class Plain, class Piece>
void walk(std::string_view text, const std::vector<TagSpan>& spans, Plain&& plain, Piece&& piece) {
    size_t pos = 0;
    for (const TagSpan& s : spans) {
        size_t b = std::min<size_t>(s.begin, text.size());
        size_t e = std::min<size_t>(s.end, text.size());
        if (b < pos || e <= b) continue;  // not sorted/disjoint: skip rather than repeat bytes
        if (b > pos) plain(pos, b);
        piece(b, e, s.bits);
        pos = e;
    }
    if (pos < text.size()) plain(pos, text.size());
}

std::string render_plain(std::string_view text, const std::vector<TagSpan>& spans) {
    std::string out;
    size_t open_end = std::string::npos;  // end of the run currently inside [[ ]]
    walk(
        text, spans,
        [&](size_t a, size_t b) {
            if (open_end != std::string::npos) out += "]]";
            open_end = std::string::npos;
            out.append(text.substr(a, b - a));
        },
        [&](size_t a, size_t b, uint32_t) {
            if (open_end != a) {
                if (open_end != std::string::npos) out += "]]";
                out += "[[";
            }
            out.append(text.substr(a, b - a));
            open_end = b;
        });
    if (open_end != std::string::npos) out += "]]";
    return out;
}

std::string ansi_sgr(uint32_t bits) {
    std::string sgr;
    for (const Category& c : kCategories) {
        if (!(bits & c.bit)) continue;
        if (!sgr.empty()) sgr += ';';
        sgr += c.ansi;
    }
    return "\x1b[" + sgr + "m";
}

std::string render_ansi(std::string_view text, const std::vector<TagSpan>& spans) {
    std::string out;
    walk(
        text, spans, [&](size_t a, size_t b) { out.append(text.substr(a, b - a)); },
        [&](size_t a, size_t b, uint32_t bits) {
            // Reset before each newline so backgrounds do not run to the edge of the terminal.
            const std::string sgr = ansi_sgr(bits);
            size_t k = a;
            while (k < b) {
                size_t nl = text.find('\n', k);
                size_t stop = (nl == std::string_view::npos || nl >= b) ? b : nl;
                if (stop > k) out += sgr + std::string(text.substr(k, stop - k)) + "\x1b[0m";
                if (stop < b) out += '\n';
                k = stop + 1;
            }
        });
    out += "\n\x1b[0m";
    for (const Category& c : kCategories)
        out += "\x1b[" + std::string(c.ansi) + "m" + tag_bits_name(c.bit) + "\x1b[0m ";
    out += "\n";
    return out;
}

std::array<uint64_t, kTagBitCount> bytes_per_category(const std::vector<TagSpan>& spans) {
    std::array<uint64_t, kTagBitCount> bytes{};
    for (const TagSpan& s : spans)
        for (int b = 0; b < kTagBitCount; ++b)
            if (s.bits >> b & 1u) bytes[b] += s.end - s.begin;
    return bytes;
}

std::string render_json(std::string_view text, const std::vector<TagSpan>& spans, const std::string& title) {
    using nlohmann::json;
    json j;
    j["source"] = title;
    j["bytes"] = text.size();
    json regions = json::array();
    for (const CodeRegion& r : tag_code_regions(text)) regions.push_back({{"begin", r.begin}, {"end", r.end}});
    j["regions"] = regions;
    json arr = json::array();
    for (const TagSpan& s : spans) {
        json cats = json::array();
        for (int b = 0; b < kTagBitCount; ++b)
            if (s.bits >> b & 1u) cats.push_back(tag_bits_name(1u << b));
        size_t b = std::min<size_t>(s.begin, text.size());
        size_t e = std::min<size_t>(s.end, text.size());
        arr.push_back({{"begin", s.begin}, {"end", s.end}, {"bits", s.bits}, {"categories", cats},
                       {"text", std::string(text.substr(b, e - b))}});
    }
    j["spans"] = arr;
    json summary = json::object();
    auto bytes = bytes_per_category(spans);
    for (int b = 0; b < kTagBitCount; ++b) summary[tag_bits_name(1u << b)] = bytes[b];
    j["summary_bytes"] = summary;
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_html(std::string_view text, const std::vector<TagSpan>& spans, const std::string& title) {
    std::ostringstream o;
    auto bytes = bytes_per_category(spans);
    uint64_t sensitive = 0;
    for (const TagSpan& s : spans) sensitive += s.end - s.begin;
    o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>cuset tag: "
      << html_escape(title) << "</title>\n<style>\n"
      << "body{font-family:system-ui,sans-serif;margin:1.5em;background:#f6f6f6;color:#222}\n"
      << "h1{font-size:1.2em;margin:0 0 .4em}\n"
      << ".meta{color:#555;margin-bottom:.8em}\n"
      << "table.legend{border-collapse:collapse;margin-bottom:1em;background:#fff}\n"
      << "table.legend td{border:1px solid #ccc;padding:.25em .6em;font-size:.9em}\n"
      << "table.legend td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
      << "pre{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:13px;line-height:1.5;"
         "background:#fff;border:1px solid #bbb;padding:1em;white-space:pre-wrap;word-break:break-word}\n"
      << "code.sw{font-family:'DejaVu Sans Mono',monospace;padding:0 .3em;border:1px solid #ccc}\n";
    for (const Category& c : kCategories) o << "." << c.css << "{" << c.html_rule << "}\n";
    o << ".k.l{background:linear-gradient(180deg,#dce8fb 50%,#ffe1b8 50%)}\n";
    o << "</style></head><body>\n<h1>cuset tag: " << html_escape(title) << "</h1>\n"
      << "<div class=\"meta\">" << text.size() << " bytes, " << tag_code_regions(text).size()
      << " code region(s), " << spans.size() << " tagged piece(s), " << sensitive
      << " sensitive bytes. Hover a piece to see its categories.</div>\n"
      << "<table class=\"legend\"><tr><td>category</td><td>sample</td><td>bytes</td><td>meaning</td></tr>\n";
    for (int b = 0; b < kTagBitCount; ++b) {
        const Category* c = nullptr;
        for (const Category& x : kCategories)
            if (x.bit == (1u << b)) c = &x;
        o << "<tr><td>" << tag_bits_name(c->bit) << "</td><td><code class=\"sw " << c->css << "\">"
          << tag_bits_name(c->bit) << "</code></td><td class=\"n\">" << bytes[b] << "</td><td>"
          << html_escape(c->meaning) << "</td></tr>\n";
    }
    o << "</table>\n<pre>";
    walk(
        text, spans, [&](size_t a, size_t b) { o << html_escape(text.substr(a, b - a)); },
        [&](size_t a, size_t b, uint32_t bits) {
            o << "<span class=\"";
            bool first = true;
            for (const Category& c : kCategories) {
                if (!(bits & c.bit)) continue;
                o << (first ? "" : " ") << c.css;
                first = false;
            }
            o << "\" title=\"" << tag_bits_names(bits) << "\">" << html_escape(text.substr(a, b - a)) << "</span>";
        });
    o << "</pre>\n</body></html>\n";
    return o.str();
}

std::string read_input(const std::string& path) {
    if (path == "-") {
        std::ostringstream s;
        s << std::cin.rdbuf();
        if (std::cin.bad()) throw InputError("tag: cannot read standard input");
        return s.str();
    }
    return read_input_file(path, "tag input");  // a regular file: a FIFO or /dev/zero is refused
}

}  // namespace

TagFormat tag_format_parse(const std::string& name, bool tty) {
    if (name == "auto") return tty ? TagFormat::kAnsi : TagFormat::kPlain;
    if (name == "plain") return TagFormat::kPlain;
    if (name == "ansi") return TagFormat::kAnsi;
    if (name == "json") return TagFormat::kJson;
    if (name == "html") return TagFormat::kHtml;
    throw UsageError("tag: unknown --format '" + name + "' (expected auto, plain, ansi, json or html)");
}

std::string tag_render(std::string_view text, const std::vector<TagSpan>& spans, TagFormat format,
                       const std::string& title) {
    switch (format) {
        case TagFormat::kPlain: return render_plain(text, spans);
        case TagFormat::kAnsi: return render_ansi(text, spans);
        case TagFormat::kJson: return render_json(text, spans, title);
        case TagFormat::kHtml: return render_html(text, spans, title);
    }
    return {};
}

void tag_file(const std::string& path, const std::string& format_name, const std::string& out_path,
              const TaggerOptions& opts) {
    TagFormat format = tag_format_parse(format_name, out_path.empty() && isatty(STDOUT_FILENO) == 1);
    std::string text = read_input(path);
    std::vector<TagSpan> spans = tag_text(text, opts);
    std::string rendered = tag_render(text, spans, format, path == "-" ? "<stdin>" : path);
    if (out_path.empty()) {
        std::cout << rendered;
        std::cout.flush();
        return;
    }
    atomic_write(out_path, rendered, "tag output");
    log_info("tag: %zu tagged piece(s) of %s written to %s", spans.size(), path.c_str(), out_path.c_str());
}

}  // namespace cuset
