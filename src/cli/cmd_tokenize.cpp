// `cuset-train tokenize --tokenizer PATH [--chat-format F] [--format json] FILE|-`: the ids,
// pieces and byte offsets of a text, or of JSONL conversations with roles and trainable flags,
// as a table or as JSON, to check tokenization against other tools; with --render, only the text
// a chat format renders (what apply_chat_template(tokenize=False) returns), with or without the
// generation prompt, to diff with any other renderer.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/log.h"
#include "cuset/data/data.h"
#include "cuset/text/chat_format.h"
#include "cuset/text/tokenizer.h"

namespace cuset::cli {

namespace {

using nlohmann::json;

struct TokenizeRequest {
    std::string tokenizer;     // folder or file
    std::string input = "-";   // file, or "-" for stdin
    std::string chat_format;   // "" = raw text; else the input is JSONL, one conversation per line
    std::string system_prompt;
    std::string chat_template;         // a template file instead of the tokenizer folder's
    std::string chat_template_kwargs;  // a JSON object of extra template variables
    std::string output = "text";  // text | json
    bool add_special_tokens = false;
    bool add_generation_prompt = false;  // conversations are prompts: they end with a user turn
    bool render = false;                 // print the rendered text only
};

std::string read_input(const std::string& input) {
    if (input == "-") {
        std::stringstream ss;
        ss << std::cin.rdbuf();
        return ss.str();
    }
    return read_input_file(input, "tokenize input");
}

// One JSONL record, by the rules of training data (data_parse_record): what the trainer would
// see of the line. InputError "<where>: <problem>" when it is malformed; the id is `where` when the
// record has none.
Conversation parse_conversation(const std::string& line, const std::string& where, RecordUse use) {
    Record rec;
    RecordProblem problem;
    if (!data_parse_record(line, {use, /*replace_invalid_utf8=*/false}, &rec, &problem))
        throw InputError(where + ": " + problem.message);
    Conversation& c = rec.conversation;
    if (c.id.empty()) c.id = where;
    return c;
}

std::string printable(std::string s) {
    std::string out;
    for (char c : s) {
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else out += c;
    }
    return out;
}

int tokenize_command(const TokenizeRequest& req, std::ostream& out) {
    std::unique_ptr<Tokenizer> tok = tokenizer_load(req.tokenizer);
    const bool as_json = req.output == "json";
    if (req.output != "json" && req.output != "text")
        throw UsageError("--format must be text or json (got '" + req.output + "')");
    std::string input = read_input(req.input);

    if (req.chat_format.empty() && (req.render || req.add_generation_prompt || !req.chat_template.empty() ||
                                    !req.chat_template_kwargs.empty()))
        throw UsageError("--render, --add-generation-prompt, --chat-template and --chat-template-kwargs need --chat-format");
    if (req.chat_format.empty()) {
        input = utf8_sanitize(input, false, req.input == "-" ? "<stdin>" : req.input);
        Encoding e = tok->encode(input, req.add_special_tokens);
        if (as_json) {
            json j;
            j["tokenizer"] = tok->source();
            j["ids"] = e.ids;
            json toks = json::array(), offs = json::array(), pieces = json::array();
            for (size_t t = 0; t < e.ids.size(); ++t) {
                toks.push_back(tok->id_to_token(e.ids[t]));
                offs.push_back({e.offsets[t].first, e.offsets[t].second});
                pieces.push_back(input.substr(e.offsets[t].first, e.offsets[t].second - e.offsets[t].first));
            }
            j["tokens"] = toks;
            j["offsets"] = offs;
            j["pieces"] = pieces;
            out << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
        } else {
            out << "# " << tok->source() << ": " << e.ids.size() << " tokens\n";
            for (size_t t = 0; t < e.ids.size(); ++t) {
                const auto& o = e.offsets[t];
                out << strprintf("%6zu %8d [%u, %u) ", t, e.ids[t], o.first, o.second) << printable(tok->id_to_token(e.ids[t]))
                    << "  \"" << printable(input.substr(o.first, o.second - o.first)) << "\"\n";
            }
        }
        return 0;
    }

    ChatFormatOptions fo;
    fo.format = req.chat_format;
    fo.system_prompt = req.system_prompt;
    fo.chat_template = req.chat_template;
    if (!req.chat_template_kwargs.empty()) {
        try {
            fo.template_kwargs = nlohmann::ordered_json::parse(req.chat_template_kwargs);
        } catch (const nlohmann::json::exception&) {
            throw UsageError("--chat-template-kwargs: not JSON: " + quote_bounded(req.chat_template_kwargs));
        }
        if (!fo.template_kwargs.is_object()) throw UsageError("--chat-template-kwargs must be a JSON object");
    }
    ChatFormatter fmt(*tok, fo, tokenizer_dir(req.tokenizer));
    std::istringstream lines(input);
    std::string line;
    int64_t n = 0;
    while (std::getline(lines, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (data_line_blank(line)) continue;
        std::string where = (req.input == "-" ? std::string("<stdin>") : req.input) + ":" + std::to_string(n);
        Conversation c = parse_conversation(line, where, req.add_generation_prompt ? RecordUse::kPrompt : RecordUse::kTraining);
        if (req.render) {
            const std::string text = fmt.render_text(c, req.add_generation_prompt);
            if (as_json) {
                json j;
                j["id"] = c.id;
                j["format"] = fmt.name();
                j["text"] = text;
                out << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
            } else {
                out << text;
            }
            continue;
        }
        if (req.add_generation_prompt) {  // the prompt `generate` feeds the model
            const std::vector<int32_t> ids = fmt.generation_prompt(c);
            if (as_json) {
                json j;
                j["id"] = c.id;
                j["format"] = fmt.name();
                j["text"] = fmt.render_text(c, true);
                j["ids"] = ids;
                json toks = json::array();
                for (int32_t id : ids) toks.push_back(tok->id_to_token(id));
                j["tokens"] = toks;
                out << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
            } else {
                out << "# " << c.id << " (" << fmt.name() << ", generation prompt): " << ids.size() << " tokens\n";
                for (size_t t = 0; t < ids.size(); ++t)
                    out << strprintf("%6zu %8d ", t, ids[t]) << printable(tok->id_to_token(ids[t])) << "\n";
            }
            continue;
        }
        ChatFormatter::Rendered r;
        std::vector<std::pair<uint32_t, uint32_t>> offs;
        FormattedSample f = fmt.format(c, &r, &offs);
        if (as_json) {
            json j;
            j["id"] = c.id;
            j["format"] = fmt.name();
            j["text"] = r.text;
            j["ids"] = f.ids;
            json toks = json::array(), roles = json::array(), jo = json::array(), spans = json::array(), pieces = json::array();
            for (size_t t = 0; t < f.ids.size(); ++t) {
                toks.push_back(tok->id_to_token(f.ids[t]));
                roles.push_back(role_name(f.roles[t]));
                jo.push_back({offs[t].first, offs[t].second});
                spans.push_back({f.spans[t].first, f.spans[t].second});
                pieces.push_back(r.text.substr(offs[t].first, offs[t].second - offs[t].first));
            }
            j["tokens"] = toks;
            j["offsets"] = jo;
            j["pieces"] = pieces;
            j["roles"] = roles;
            j["trainable"] = f.trainable;
            j["message"] = f.message;
            j["spans"] = spans;
            out << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
        } else {
            out << "# " << c.id << " (" << fmt.name() << "): " << f.ids.size() << " tokens\n";
            for (size_t t = 0; t < f.ids.size(); ++t) {
                out << strprintf("%6zu %8d %-8s %s msg %2d [%d, %d) ", t, f.ids[t], role_name(f.roles[t]),
                                 f.trainable[t] ? "T" : ".", f.message[t], f.spans[t].first, f.spans[t].second)
                    << printable(tok->id_to_token(f.ids[t])) << "  \""
                    << printable(r.text.substr(offs[t].first, offs[t].second - offs[t].first)) << "\"\n";
            }
        }
    }
    return 0;
}

}  // namespace

Command add_tokenize_command(CLI::App& root) {
    auto o = std::make_shared<TokenizeRequest>();
    CLI::App* sub = root.add_subcommand(
        "tokenize", "print the ids, pieces and byte offsets of a text (or, with --chat-format, of JSONL "
                    "conversations with roles and trainable flags) to check tokenization against other tools");
    sub->add_option("input", o->input, "text file, or JSONL with --chat-format; - reads stdin")->required();
    sub->add_option("--tokenizer", o->tokenizer, "tokenizer folder or file (tokenizer.json / tokenizer.model)")->required();
    std::string formats = "auto";
    for (const std::string& f : chat_format_names()) formats += ", " + f;
    sub->add_option("--chat-format", o->chat_format, "format the input lines as conversations: " + formats);
    sub->add_option("--system-prompt", o->system_prompt, "system prompt for conversations without one");
    sub->add_option("--chat-template", o->chat_template,
                    "with --chat-format template: a .jinja file (or a JSON file with chat_template) instead of the folder's");
    sub->add_option("--chat-template-kwargs", o->chat_template_kwargs,
                    "extra template variables as a JSON object, e.g. '{\"enable_thinking\": false}'");
    sub->add_flag("--add-generation-prompt", o->add_generation_prompt,
                  "the conversations are prompts (they end with a user turn): render them with the generation prompt");
    sub->add_flag("--render", o->render,
                  "print only the rendered text of each conversation (apply_chat_template(tokenize=False)), "
                  "or {\"id\", \"format\", \"text\"} lines with --format json");
    sub->add_option("--format", o->output, "text or json")->check(CLI::IsMember({"text", "json"}));
    sub->add_flag("--add-special-tokens", o->add_special_tokens, "apply the post-processor (e.g. BOS) to raw text");
    return {sub, [o] {
                log_init("warn");
                return tokenize_command(*o, std::cout);
            }};
}

}  // namespace cuset::cli
