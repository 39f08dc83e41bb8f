// KernelBench's static check (judge/kernel_static_check.h): the rule set of its
// validate_kernel_static for backend cuda, reimplemented over PCRE2. The patterns are written in
// Python's re syntax, as KernelBench states its rules, and translated to PCRE2 with Python's
// Unicode classes. The messages are KernelBench's verdict strings, kept here as data so that a
// finding reads as KernelBench's does; tests/judge/test_kernel_static_check.cpp holds the whole
// to KernelBench's own checker (tests/fixtures/kernelbench/static_check_golden.jsonl).
#include "cuset/judge/kernel_static_check.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cuset/core/error.h"
#include "cuset/core/utf8_text.h"

namespace cuset::judge {

namespace {

// Python's re on str: \w is str.isalnum() or '_', \s is str.isspace(), \b the edge between a \w
// and anything else. PCRE2's \p{L}\p{N} are exactly str.isalnum()'s characters (compared over
// every code point: Python 3.11 and PCRE2 10.42, both Unicode 14). Without PCRE2_UCP, PCRE2's own
// \w, \s and \b are ASCII, and with it \s lacks U+001C..U+001F and holds U+180E: so all three
// are spelled out.
constexpr const char* kWordChars = "\\p{L}\\p{N}_";
constexpr const char* kSpaceChars =
    "\\t\\n\\x{0b}\\f\\r\\x{1c}-\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}"
    "\\x{202f}\\x{205f}\\x{3000}";

// A pattern in Python's re syntax as PCRE2 (UTF, newline LF: '.' and '$' as in Python) matches it
// in Python's way. The rule set uses only \w, \s, \b and escaped punctuation: another escape is a
// mistake in the table below.
std::string pcre2_of_python(const std::string& p) {
    const std::string word = kWordChars;
    const std::string space = kSpaceChars;
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < p.size(); ++i) {
        const char c = p[i];
        if (c != '\\') {
            if (c == '[' && !in_class) in_class = true;
            else if (c == ']' && in_class) in_class = false;
            out += c;
            continue;
        }
        if (i + 1 == p.size()) throw std::logic_error("kernel static check: pattern ends in '\\': " + p);
        const char n = p[++i];
        if (n == 'w' || n == 's') {
            const std::string& chars = n == 'w' ? word : space;
            if (in_class) {
                out += chars;
            } else {
                out += '[';
                out += chars;
                out += ']';
            }
        } else if (n == 'b' && !in_class) {
            const std::string w = "[" + word + "]";
            out += "(?:(?<=" + w + ")(?!" + w + ")|(?<!" + w + ")(?=" + w + "))";
        } else if (std::isalnum(static_cast<unsigned char>(n))) {
            throw std::logic_error(std::string("kernel static check: unsupported escape \\") + n + " in " + p);
        } else {
            out += '\\';
            out += n;
        }
    }
    return out;
}

enum class Search { kNone, kFound, kGaveUp };

class Pattern {
public:
    explicit Pattern(const std::string& python_re) {
        const std::string pcre = pcre2_of_python(python_re);
        pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
        pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
        int err = 0;
        PCRE2_SIZE err_off = 0;
        code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pcre.data()), pcre.size(), PCRE2_UTF, &err, &err_off, cc);
        pcre2_compile_context_free(cc);
        if (!code_) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(err, msg, sizeof(msg));
            throw std::logic_error("kernel static check: cannot compile /" + pcre + "/: " +
                                   reinterpret_cast<const char*>(msg));
        }
    }
    ~Pattern() { pcre2_code_free(code_); }
    Pattern(const Pattern&) = delete;
    Pattern& operator=(const Pattern&) = delete;

    // The first match in `text` (valid UTF-8), as Python's re.search finds it; its text in *match.
    Search search(const std::string& text, std::string* match) const {
        pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_, nullptr);
        const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0,
                                   PCRE2_NO_UTF_CHECK, md, nullptr);
        Search result = Search::kGaveUp;  // a limit of the matcher (match, heap, depth)
        if (rc == PCRE2_ERROR_NOMATCH) {
            result = Search::kNone;
        } else if (rc >= 0) {
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
            match->assign(text, ov[0], ov[1] - ov[0]);
            result = Search::kFound;
        }
        pcre2_match_data_free(md);
        return result;
    }

private:
    pcre2_code* code_ = nullptr;
};

// One pattern of a check and the verdict it gives.
enum class Fires {
    kWhenFound,           // the message
    kWhenFoundWithMatch,  // the message followed by the matched text
    kWhenAbsent,          // the message when the pattern is nowhere (a required feature)
};
struct Rule {
    std::unique_ptr<Pattern> pattern;
    std::string message;
    Fires fires = Fires::kWhenFound;
};
struct Check {
    std::string name;
    std::vector<Rule> rules;  // tried in order: the first that fires is the finding
    bool fp32_only = false;   // precision_downgrade: only when the precision is fp32
};

const char* const kGaveUpMessage =
    "Not checked: the text is beyond the pattern matcher's backtracking limit (flagged, to be safe)";

Rule rule(const std::string& python_re, const std::string& message, Fires fires = Fires::kWhenFound) {
    return Rule{std::make_unique<Pattern>(python_re), message, fires};
}

// torch's computing operators (KernelBench's TORCH_COMPUTATION_OPS, without "torch."), in its order.
const char* const kTorchComputationOps[] = {
    // matrix products
    "mm", "bmm", "matmul", "einsum",
    // convolutions
    "conv1d", "conv2d", "conv3d", "conv", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    // pooling
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    // activations
    "relu", "hardtanh", "elu", "selu", "leaky_relu", "gelu", "softsign", "softplus",
    "softmax", "log_softmax", "tanh", "sigmoid", "hardsigmoid", "silu", "mish",
    // normalisations
    "batch_norm", "group_norm", "layer_norm", "instance_norm", "rms_norm", "normalize",
    // linear layers and losses
    "linear", "cross_entropy", "kl_div", "mse_loss", "huber_loss", "triplet_margin_loss", "cosine_similarity",
    // others
    "logsumexp", "clamp", "dropout",
};

// One of the names, at a word start, followed by '(', a space or the end.
std::string torch_ops_pattern() {
    std::string alternatives;
    for (const char* op : kTorchComputationOps) {
        if (!alternatives.empty()) alternatives += '|';
        alternatives += "torch\\.";
        alternatives += op;
    }
    return "\\b(" + alternatives + ")(?=\\s*\\(|\\s|$)";
}

// KernelBench's rule set for backend cuda, in the order of its registry. The patterns and the
// order in which a check tries them decide which message a finding carries.
std::vector<Check> make_checks() {
    std::vector<Check> checks;
    auto add = [&checks](const char* name, bool fp32_only = false) -> std::vector<Rule>& {
        checks.push_back(Check{name, {}, fp32_only});
        return checks.back().rules;
    };

    {
        std::vector<Rule>& r = add("code_bypass");
        const std::string fallback = "Contains try-except block (potential fallback bypass)";
        r.push_back(rule(R"re(\btry\s*:)re", fallback));
        r.push_back(rule(R"re(\bexcept\s*:)re", fallback));
        r.push_back(rule(R"re(\bexcept\s+\w+)re", fallback));
        r.push_back(rule(R"re(\bpass\b)re", "Contains 'pass' statement (inheritance bypass)"));
    }
    add("pytorch_wrap")
        .push_back(rule(R"re(torch\.nn\.(?!(Module|parameter|Parameter|ParameterList|ParameterDict|ModuleList|ModuleDict|init)\b))re",
                        "Uses torch.nn compute layer (only containers, Parameter, init allowed)"));
    {
        std::vector<Rule>& r = add("timing_event_patch");
        for (const char* p : {R"re(torch\.cuda\.Event\.record\s*=)re", R"re(torch\.cuda\.Event\.elapsed_time\s*=)re",
                              R"re(torch\.cuda\.synchronize\s*=)re", R"re(torch\.cuda\.Event\s*=)re",
                              R"re(time\.perf_counter\s*=)re", R"re(time\.time\s*=)re"})
            r.push_back(rule(p, "Reassigns timing function (monkey patch detected)"));
    }
    {
        std::vector<Rule>& r = add("torch_computation_ops");
        r.push_back(rule(torch_ops_pattern(), "Uses torch computation op: ", Fires::kWhenFoundWithMatch));
        const std::string functional = "Uses torch.nn.functional op: ";
        r.push_back(rule(R"re(torch\.nn\.functional\.\w+)re", functional, Fires::kWhenFoundWithMatch));
        r.push_back(rule(R"re(\bnn\.functional\.\w+)re", functional, Fires::kWhenFoundWithMatch));
        r.push_back(rule(R"re(\bF\.(conv|linear|relu|gelu|softmax|batch_norm|layer_norm|dropout|max_pool|avg_pool))re",
                         functional, Fires::kWhenFoundWithMatch));
    }
    {
        std::vector<Rule>& r = add("stream_injection");
        const std::string streams = "Uses CUDA streams (potential timing manipulation)";
        const std::string sync = "Uses stream synchronization (potential timing manipulation)";
        r.push_back(rule(R"re(torch\.cuda\.Stream\s*\()re", streams));
        r.push_back(rule(R"re(cuda\.Stream\s*\()re", streams));
        r.push_back(rule(R"re(with\s+torch\.cuda\.stream)re", "Uses stream context manager (potential timing manipulation)"));
        r.push_back(rule(R"re(\.wait_stream\s*\()re", sync));
        r.push_back(rule(R"re(\.record_stream\s*\()re", sync));
    }
    {
        std::vector<Rule>& r = add("thread_injection");
        const std::string threading = "Uses threading (potential timing manipulation)";
        const std::string multiprocessing = "Uses multiprocessing (potential timing manipulation)";
        const std::string futures = "Uses concurrent futures (potential timing manipulation)";
        r.push_back(rule(R"re(threading\.Thread\s*\()re", threading));
        r.push_back(rule(R"re(import\s+threading)re", threading));
        r.push_back(rule(R"re(from\s+threading\s+import)re", threading));
        r.push_back(rule(R"re(multiprocessing\.(Process|Pool|Manager|Queue|Pipe))re", multiprocessing));
        r.push_back(rule(R"re(import\s+multiprocessing)re", multiprocessing));
        r.push_back(rule(R"re(concurrent\.futures)re", futures));
        r.push_back(rule(R"re(ThreadPoolExecutor)re", futures));
        r.push_back(rule(R"re(ProcessPoolExecutor)re", futures));
    }
    {
        std::vector<Rule>& r = add("lazy_eval");
        const std::string subclass = "Defines custom tensor subclass (potential lazy tensor hack)";
        r.push_back(rule(R"re(_make_subclass)re", "Uses _make_subclass (potential lazy tensor hack)"));
        r.push_back(rule(R"re(class\s+\w+.*\(torch\.Tensor\))re", subclass));
        r.push_back(rule(R"re(class\s+\w+.*\(Tensor\))re", subclass));
        r.push_back(rule(R"re(torch\.Tensor\.__new__)re", "Uses direct tensor construction (potential lazy tensor hack)"));
    }
    {
        std::vector<Rule>& r = add("precision_downgrade", /*fp32_only=*/true);
        for (const char* p : {
                 // CUDA C++: float -> half intrinsics, C-style and static casts to half
                 R"re(__float2half(_rn)?\s*\()re", R"re(\(\s*__half\s*\)\s*[\w\->\.]+)re",
                 R"re(static_cast\s*<\s*(__half|half)\s*>\s*\()re",
                 // Triton, CUTLASS, CuTe, ThunderKittens
                 R"re(tl\.astype\s*\(\s*[^,]+,\s*tl\.float16\s*\))re", R"re(NumericConverter\s*<\s*half_t\s*,\s*float\s*>)re",
                 R"re(LinearCombination\s*<\s*half_t)re", R"re(type_convert\s*<\s*half_t\s*>\s*\()re", R"re(tk::half\s*\()re",
                 // PyTorch casts
                 R"re(\.half\s*\()re", R"re(\.float16\s*\()re", R"re(\.to\s*\(\s*torch\.(float16|half)\b)re",
                 R"re(\.to\s*\(\s*dtype\s*=\s*torch\.(float16|half)\b)re"})
            r.push_back(rule(p, "Precision downgrade detected: required FP32 but code uses FP16"));
    }
    {
        std::vector<Rule>& r = add("cuda_impl");
        r.push_back(rule(R"re(__global__)re", "Missing __global__ kernel definition", Fires::kWhenAbsent));
        r.push_back(rule(R"re(load_inline|cpp_extension)re", "Missing load_inline or cpp_extension for compilation",
                         Fires::kWhenAbsent));
    }
    return checks;
}

const std::vector<Check>& checks() {
    static const std::vector<Check> kChecks = make_checks();
    return kChecks;
}

// KernelBench's comments: each line cut at its first '#', then at its first "//". Lines are
// Python's: a source line ends at "\r\n", "\r" or "\n" (KernelBench splits at "\n" only, so a
// line break that is a lone "\r" would hide the code after a comment from the check while Python
// runs it). Each ends in "\n" here, the newline Python's compiler sees; a form feed is
// whitespace to both (the rules' \s).
std::string strip_comments(const std::string& code) {
    std::string out;
    out.reserve(code.size());
    for (size_t b = 0;;) {
        const size_t e = code.find_first_of("\r\n", b);
        std::string_view line(code.data() + b, (e == std::string::npos ? code.size() : e) - b);
        line = line.substr(0, line.find('#'));
        line = line.substr(0, line.find("//"));
        out += line;
        if (e == std::string::npos) break;
        out += '\n';
        b = e + (code.compare(e, 2, "\r\n") == 0 ? 2 : 1);
    }
    return out;
}

// The finding of `check` on comment-free `text`, if any.
std::optional<std::string> run_check(const Check& check, const std::string& text) {
    std::string match;
    for (const Rule& r : check.rules) {
        const Search s = r.pattern->search(text, &match);
        if (s == Search::kGaveUp) return kGaveUpMessage;
        if (r.fires == Fires::kWhenAbsent) {
            if (s == Search::kNone) return r.message;
            continue;
        }
        if (s == Search::kFound) return r.fires == Fires::kWhenFoundWithMatch ? r.message + match : r.message;
    }
    return std::nullopt;
}

bool names_one(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// KernelBench lowers the precision and maps "float32" to "fp32"; Unicode's lowering of a
// non-ASCII character never gives a letter of "fp32" or "float32", so ASCII's is the same here.
bool is_fp32(const std::string& precision) {
    std::string p = precision;
    for (char& c : p) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return p == "fp32" || p == "float32";
}

}  // namespace

const std::vector<std::string>& kernel_static_check_names() {
    static const std::vector<std::string> kNames = [] {
        std::vector<std::string> names;
        for (const Check& c : checks()) names.push_back(c.name);
        return names;
    }();
    return kNames;
}

const std::vector<std::string>& kernel_static_default_errors() {
    static const std::vector<std::string> kErrors = {"code_bypass", "timing_event_patch", "thread_injection",
                                                     "lazy_eval"};
    return kErrors;
}

const std::vector<std::string>& kernel_static_default_warnings() {
    static const std::vector<std::string> kWarnings = {"pytorch_wrap", "torch_computation_ops", "stream_injection",
                                                       "precision_downgrade"};
    return kWarnings;
}

KernelStaticCheck kernel_static_check(std::string_view code, const KernelStaticCheckOptions& options) {
    for (const auto* list : {&options.errors, &options.warnings})
        for (const std::string& name : *list)
            if (!names_one(kernel_static_check_names(), name)) {
                std::string msg = "'";
                msg += name;
                msg += "' is not a check of KernelBench's static checker for cuda (the checks:";
                for (const std::string& n : kernel_static_check_names()) {
                    msg += ' ';
                    msg += n;
                }
                msg += ')';
                throw UsageError(msg);
            }
    const bool fp32 = is_fp32(options.precision);
    const std::string text = strip_comments(utf8_sanitize(code));
    KernelStaticCheck result;
    for (const Check& check : checks()) {
        // KernelBench adds the backend's implementation check to the errors.
        const bool error = check.name == "cuda_impl" || names_one(options.errors, check.name);
        if (!error && !names_one(options.warnings, check.name)) continue;
        if (check.fp32_only && !fp32) continue;
        std::optional<std::string> message = run_check(check, text);
        if (!message) continue;
        (error ? result.errors : result.warnings).push_back(KernelStaticFinding{check.name, std::move(*message)});
    }
    result.valid = result.errors.empty();
    return result;
}

}  // namespace cuset::judge
