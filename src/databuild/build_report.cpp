// build.html from build.json (databuild/build_report.h).
#include "cuset/databuild/build_report.h"

#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/core/markup.h"
#include "cuset/eval/repair.h"
#include "cuset/judge/runner.h"

namespace cuset::databuild {

namespace {

std::string text_of(const nlohmann::ordered_json& v) {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) return strprintf("%.3f", v.get<double>());
    return v.dump();
}

std::string pct(const nlohmann::ordered_json& v) { return strprintf("%.1f%%", 100.0 * v.get<double>()); }

}  // namespace

std::string build_html(const nlohmann::ordered_json& b) {
    std::string h;
    h += "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cuset data build</title>\n<style>\n"
         "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}.num{text-align:right}"
         ".pass{color:#176117}.fail{color:#a31515}.other{color:#777}code{font-size:90%}\n</style></head><body>\n";
    h += "<h1>data build [" + html_escape(text_of(b["judge"])) + "]</h1>\n";
    if (!b["notice"].get<std::string>().empty()) h += "<p><b>Notice:</b> " + html_escape(b["notice"].get<std::string>()) + "</p>\n";
    h += "<table>\n";
    for (const char* k : {"tasks_file", "source", "criterion", "samples", "rounds", "level", "keep", "train_format", "against",
                          "tasks", "attempts", "passing_samples", "kept", "contaminated", "tokens_per_kept_sample",
                          "attempt_tokens_per_kept_sample"})
        h += std::string("<tr><th>") + k + "</th><td>" + html_escape(text_of(b[k])) + "</td></tr>\n";
    h += "<tr><th>duplicates dropped</th><td>" + text_of(b["duplicates"]["exact"]) + " exact, " +
         text_of(b["duplicates"]["near"]) + " near</td></tr>\n</table>\n";
    h += "<h2>After each round</h2>\n<table><tr><th>round</th><th>attempts</th><th>passed</th><th>unjudged</th>"
         "<th>tasks passed</th><th>task pass rate</th><th>samples passed</th><th>sample pass rate</th></tr>\n";
    for (const auto& r : b["by_round"])
        h += "<tr><td class=num>" + text_of(r["round"]) + "</td><td class=num>" + text_of(r["attempts"]) +
             "</td><td class=num>" + text_of(r["passed"]) + "</td><td class=num>" + text_of(r["unjudged"]) +
             "</td><td class=num>" + text_of(r["tasks_passed"]) + "</td><td class=num>" + pct(r["task_pass_rate"]) +
             "</td><td class=num>" + text_of(r["samples_passed"]) + "</td><td class=num>" + pct(r["sample_pass_rate"]) +
             "</td></tr>\n";
    h += "</table>\n<h2>Tasks</h2>\n<table><tr><th>id</th><th>task</th><th>attempts</th><th>first pass</th><th>kept</th>"
         "<th>samples (status per round; the first error)</th></tr>\n";
    for (const auto& t : b["per_task"]) {
        h += "<tr><td>" + html_escape(text_of(t["id"])) + "</td><td>" + html_escape(text_of(t["task_name"])) +
             "</td><td class=num>" + text_of(t["attempts"]) + "</td><td class=num>" + text_of(t["first_pass_round"]) +
             "</td><td class=num>" + text_of(t["kept"]) + "</td><td>";
        int k = 0;
        for (const auto& chain : t["samples"]) {
            h += 's';
            h += std::to_string(++k);
            h += ':';
            for (const auto& a : chain) {
                const std::string st = a["status"].get<std::string>();
                judge::Status s = judge::Status::kNoCode;
                const bool known = eval::status_parse(st, &s);
                const char* cls = !known                   ? "fail"
                                  : judge::status_passed(s)   ? "pass"
                                  : judge::status_unjudged(s) ? "other"  // nothing said about the program
                                                              : "fail";
                h += std::string(" <span class=") + cls + " title=\"" + html_escape(a["error"].get<std::string>()) + "\">" +
                     html_escape(st) + "</span>";
            }
            const auto& last = chain.empty() ? nlohmann::ordered_json() : chain.back();
            if (!last.is_null() && !last["error"].get<std::string>().empty())
                h += " <code>" + html_escape(quote_bounded(last["error"].get<std::string>())) + "</code>";
            h += "<br>";
        }
        h += "</td></tr>\n";
    }
    h += "</table>\n</body></html>\n";
    return h;
}

}  // namespace cuset::databuild
