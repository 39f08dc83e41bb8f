// `cuset-train data show`: renders one tokenized sample with its roles, training targets and
// sensitivity marks, coloured on a terminal and with plain markers elsewhere.
#include "cuset/data/data_show.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "cuset/text/chat_format.h"
#include "cuset/data/data.h"
#include "cuset/data/dataset.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/tokenizer.h"

namespace cuset {

namespace {

namespace fs = std::filesystem;

// Foreground colour per role: template grey, system magenta, prompt blue, response green.
const char* role_colour(uint8_t r) {
    switch (static_cast<Role>(r)) {
        case Role::kTemplate: return "90";
        case Role::kSystem: return "35";
        case Role::kPrompt: return "34";
        case Role::kResponse: return "32";
    }
    return "0";
}

// Control characters made visible for the one-line-per-token table.
std::string escape_piece(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else if (c < 0x20 || c == 0x7F) out += strprintf("\\x%02X", c);
        else out += static_cast<char>(c);
    }
    return out;
}

}  // namespace

void data_show(const TextOptions& text, const DataShowOptions& o, std::ostream& out) {
    if (o.split != "train" && o.split != "eval")
        throw UsageError("--split must be train or eval, not '" + o.split + "'");
    const std::string& path = o.split == "train" ? o.train : o.eval;
    if (path.empty()) throw UsageError("data." + o.split + " is empty in the configuration: nothing to show");

    std::vector<Conversation> convs = data_load_jsonl(path, text.load);
    if (o.index < 0 || o.index >= static_cast<int64_t>(convs.size()))
        throw UsageError(strprintf("--index %lld is out of range: %s has %zu samples (0..%zu)",
                                   (long long)o.index, path.c_str(), convs.size(), convs.size() - 1));
    const Conversation& conv = convs[static_cast<size_t>(o.index)];

    const std::string& tok_path = text.tokenizer;
    TextPipeline pipe = text_pipeline_from(text);
    Tokenizer* tok = pipe.tokenizer.get();
    const ChatFormatter& formatter = *pipe.formatter;

    TokenizedSample s = data_tokenize(conv, formatter, pipe.tagger);
    FormattedSample f = formatter.format(conv);  // for each token's source text
    const size_t n = s.ids.size();
    if (f.ids != s.ids) throw RuntimeFailure("data show: formatting is not deterministic for " + conv.id);

    // The text of each token: its bytes in the message it covers, else the decoded token.
    std::vector<std::string> piece(n);
    for (size_t t = 0; t < n; ++t) {
        int32_t m = f.message[t];
        auto [b, e] = f.spans[t];
        if (m >= 0 && b >= 0 && e >= b && static_cast<size_t>(m) < conv.messages.size() &&
            static_cast<size_t>(e) <= conv.messages[m].content.size())
            piece[t] = conv.messages[m].content.substr(b, e - b);
        else if (tok->is_special(s.ids[t]))
            piece[t] = tok->id_to_token(s.ids[t]);
        else
            piece[t] = tok->decode({s.ids[t]});
    }

    bool colour = o.color == "always" ||
                  (o.color == "auto" && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
    const int64_t max_len = o.max_seq_len;

    out << "sample " << o.index << " of " << path << " (id " << conv.id << ") | chat format "
        << formatter.name() << " | tokenizer " << tok_path << "\n";
    if (formatter.name() == "template")
        out << "template " << formatter.template_source() << " | trainable mask from "
            << (formatter.mask_source() == "markers" ? "its {% generation %} markers"
                                                       : "the assistant messages' spans (through the end-of-turn token)")
            << "\n";
    if (colour)
        out << "legend: \033[90mtemplate\033[0m \033[35msystem\033[0m \033[34mprompt\033[0m "
               "\033[32mresponse\033[0m | \033[1mbold\033[0m = trainable, \033[2mdim\033[0m = not "
               "trainable | \033[4munderlined\033[0m = sensitive\n";
    else
        out << "legend: a marker [[role T S]] opens each run of tokens; T = trainable, "
               "S = sensitive (kernel or launch code)\n";
    out << "----\n";
    std::string state;
    for (size_t t = 0; t < n; ++t) {
        if (static_cast<int64_t>(t) == max_len) {
            out << (colour ? "\033[0m\033[7m" : "")
                << strprintf("[[cut: the trainer sees only the first data.max_seq_len = %lld tokens]]",
                             (long long)max_len)
                << (colour ? "\033[0m" : "");
            state.clear();  // the next token restates its style or marker
        }
        bool train = s.trainable[t] != 0, sens = s.tag_bits[t] != 0;
        std::string now = colour ? std::string("\033[0;") + role_colour(s.roles[t]) + (train ? ";1" : ";2") +
                                       (sens ? ";4" : "") + "m"
                                 : "[[" + std::string(role_name(static_cast<Role>(s.roles[t]))) +
                                       (train ? " T" : "") + (sens ? " S" : "") + "]]";
        if (now != state) out << now;  // style or marker only where it changes
        state = now;
        out << piece[t];
    }
    out << (colour ? "\033[0m" : "") << "\n----\n";

    std::map<uint8_t, int64_t> by_role, trainable_by_role;
    int64_t n_train = 0, n_sens = 0, n_kernel = 0, n_launch = 0, n_sens_untrained = 0;
    for (size_t t = 0; t < n; ++t) {
        ++by_role[s.roles[t]];
        if (s.trainable[t]) {
            ++n_train;
            ++trainable_by_role[s.roles[t]];
        }
        if (s.tag_bits[t]) {
            ++n_sens;
            n_sens_untrained += !s.trainable[t];
        }
        n_kernel += (s.tag_bits[t] & kTagKernel) != 0;
        n_launch += (s.tag_bits[t] & kTagLaunch) != 0;
    }
    auto per_role = [&](std::map<uint8_t, int64_t>& m) {
        std::string r;
        for (uint8_t role = 0; role < 4; ++role)
            r += strprintf("%s%s %lld", role ? ", " : "", role_name(static_cast<Role>(role)), (long long)m[role]);
        return r;
    };
    out << strprintf("tokens %zu: %s\n", n, per_role(by_role).c_str());
    out << strprintf("trainable %lld: %s\n", (long long)n_train, per_role(trainable_by_role).c_str());
    out << strprintf("sensitive %lld (kernel %lld, launch %lld); sensitive but not trainable %lld\n",
                     (long long)n_sens, (long long)n_kernel, (long long)n_launch, (long long)n_sens_untrained);
    if (static_cast<int64_t>(n) > max_len)
        out << strprintf("longer than data.max_seq_len %lld: the trainer %s it\n", (long long)max_len,
                         o.drop_too_long ? "drops" : "truncates");

    if (o.tokens) {
        out << "----\n" << strprintf("%6s %8s %-8s %-2s %-2s %-28s %s\n", "index", "id", "role", "T", "S", "tags", "piece");
        for (size_t t = 0; t < n; ++t)
            out << strprintf("%6zu %8d %-8s %-2s %-2s %-28s %s\n", t, s.ids[t], role_name(static_cast<Role>(s.roles[t])),
                             s.trainable[t] ? "T" : ".", s.tag_bits[t] ? "S" : ".",
                             s.tag_bits[t] ? tag_bits_names(s.tag_bits[t]).c_str() : "-",
                             escape_piece(piece[t]).c_str());
    }
}

}  // namespace cuset
