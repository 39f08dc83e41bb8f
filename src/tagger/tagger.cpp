// The CUDA-sensitivity tagger: Markdown code regions, then per region the lexer's tokens, bracket
// matching, kernel definitions with their finer categories, and launches with the host
// statements that configure them. Heuristic by design (no preprocessor, no type checking); every
// index is bounds-checked so broken code degrades to fewer or longer spans, never to a crash.
#include "cuset/tagger/tagger.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "cuset/tagger/cuda_lexer.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {
namespace {

// ---------------------------------------------------------------- token classes

enum Punct : uint8_t {
    P_NONE, P_LPAREN, P_RPAREN, P_LBRACK, P_RBRACK, P_LBRACE, P_RBRACE, P_SEMI, P_COMMA,
    P_LT, P_GT, P_SHR, P_LAUNCH_CLOSE, P_LAUNCH_OPEN, P_LE, P_GE, P_COLON, P_SCOPE, P_DOT,
    P_ARROW, P_STAR, P_AMP, P_ANDAND, P_ASSIGN, P_OP_ASSIGN, P_TILDE, P_QUESTION, P_OTHER,
};

// Identifiers the structure pass cares about; everything else is K_NONE (a name).
enum Kw : uint8_t {
    K_NONE,
    K_GLOBAL, K_DEVICE, K_HOST, K_SHARED,
    K_SPEC,        // decl-specifiers that may precede or follow __global__: static, inline, ...
    K_TYPE,        // builtin types and cv/restrict qualifiers
    K_EXTERN, K_TEMPLATE, K_OPERATOR, K_NAMESPACE,
    K_ATTR_FN,     // __launch_bounds__(...), __attribute__((...)), alignas(...), ...
    K_TRAILING,    // noexcept, override, final, mutable, throw (after a parameter list)
    K_IF, K_FOR, K_WHILE, K_SWITCH, K_CATCH, K_ELSE, K_DO, K_TRY, K_RETURN,
    K_STMT,        // other keywords and literals that are never a declared name or a type
    K_BUILTIN_IDX, // threadIdx, blockIdx, blockDim, gridDim
    K_INDEX_MEMBER,// cooperative groups: g.thread_rank(), block.group_index(), ...
    K_SYNC_FN,     // __syncthreads, __shfl_*_sync, atomicAdd, ...
    K_SYNC_MEMBER, // cooperative groups: g.sync(), cg::sync(g), bar.arrive_and_wait()
    K_LAUNCH_API,  // cudaLaunchKernel & co.
    K_ATTR_API,    // cudaFuncSet*, cudaOccupancy*
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// Open-addressing table of the keywords above, hashed on the length and three bytes: every
// identifier of the input is looked up once, so this is on the hot path.
class KeywordTable {
public:
    Kw& operator[](std::string_view key) {
        uint32_t i = hash(key) & kMask;
        while (!slots_[i].key.empty() && slots_[i].key != key) i = (i + 1) & kMask;
        slots_[i].key = key;
        return slots_[i].kw;
    }
    Kw find(std::string_view w) const {
        for (uint32_t i = hash(w) & kMask;; i = (i + 1) & kMask) {
            const Slot& s = slots_[i];
            if (s.key.empty()) return K_NONE;
            if (s.key.size() == w.size() && std::memcmp(s.key.data(), w.data(), w.size()) == 0) return s.kw;
        }
    }

private:
    static constexpr uint32_t kMask = 1023;  // about 140 keys: short probe chains
    static uint32_t hash(std::string_view w) {
        uint32_t h = static_cast<uint32_t>(w.size()) * 0x9E3779B1u;
        h ^= static_cast<uint8_t>(w[0]) * 0x85EBCA77u;
        h ^= static_cast<uint8_t>(w[w.size() / 2]) * 0x27D4EB2Fu;
        h ^= static_cast<uint8_t>(w[w.size() - 1]) * 0xC2B2AE3Du;
        return h ^ (h >> 15);
    }
    struct Slot {
        std::string_view key;
        Kw kw = K_NONE;
    };
    std::array<Slot, kMask + 1> slots_{};
};

const KeywordTable& keyword_table() {
    static const KeywordTable table = [] {
        KeywordTable m;
        m["__global__"] = K_GLOBAL;
        m["__device__"] = K_DEVICE;
        m["__host__"] = K_HOST;
        m["__shared__"] = K_SHARED;
        for (const char* w : {"static", "inline", "__inline__", "__inline", "__forceinline__",
                              "__noinline__", "constexpr", "consteval", "virtual", "explicit",
                              "friend", "__constant__", "__managed__", "typename", "class", "struct"})
            m[w] = K_SPEC;
        for (const char* w : {"void", "int", "float", "double", "char", "short", "long", "unsigned",
                              "signed", "bool", "auto", "const", "volatile", "__restrict__",
                              "__restrict", "restrict", "size_t", "half", "__half",
                              "__nv_bfloat16", "int8_t", "int16_t", "int32_t", "int64_t",
                              "uint8_t", "uint16_t", "uint32_t", "uint64_t", "float2", "float4",
                              "int2", "int4", "double2"})
            m[w] = K_TYPE;
        m["extern"] = K_EXTERN;
        m["template"] = K_TEMPLATE;
        m["operator"] = K_OPERATOR;
        m["namespace"] = K_NAMESPACE;
        for (const char* w : {"__launch_bounds__", "__attribute__", "__declspec", "alignas",
                              "__align__", "__cluster_dims__", "__maxnreg__"})
            m[w] = K_ATTR_FN;
        for (const char* w : {"noexcept", "override", "final", "mutable", "throw"}) m[w] = K_TRAILING;
        m["if"] = K_IF;
        m["for"] = K_FOR;
        m["while"] = K_WHILE;
        m["switch"] = K_SWITCH;
        m["catch"] = K_CATCH;
        m["else"] = K_ELSE;
        m["do"] = K_DO;
        m["try"] = K_TRY;
        m["return"] = K_RETURN;
        for (const char* w : {"case", "default", "goto", "break", "continue", "new", "delete",
                              "sizeof", "alignof", "decltype", "typeid", "typedef", "using",
                              "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast",
                              "true", "false", "nullptr", "NULL", "this", "public", "private",
                              "protected", "co_return", "co_yield", "co_await", "static_assert"})
            m[w] = K_STMT;
        for (const char* w : {"threadIdx", "blockIdx", "blockDim", "gridDim"}) m[w] = K_BUILTIN_IDX;
        for (const char* w : {"thread_rank", "thread_index", "group_index", "block_index", "block_rank",
                              "meta_group_rank"})
            m[w] = K_INDEX_MEMBER;
        for (const char* w : {"__syncwarp", "__activemask"}) m[w] = K_SYNC_FN;
        for (const char* w : {"sync", "arrive_and_wait"}) m[w] = K_SYNC_MEMBER;
        for (const char* w : {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaLaunchKernelEx",
                              "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
                              "cuLaunchCooperativeKernel"})
            m[w] = K_LAUNCH_API;
        return m;
    }();
    return table;
}

Kw classify_identifier(std::string_view w) {
    if (w.size() < 2) return K_NONE;
    Kw known = keyword_table().find(w);
    if (known != K_NONE) return known;
    switch (w[0]) {
        case '_':
            if (w[1] != '_') return K_NONE;
            if (starts_with(w, "__syncthreads") || starts_with(w, "__threadfence") ||
                starts_with(w, "__shfl") || ends_with(w, "_sync"))
                return K_SYNC_FN;
            return K_NONE;
        case 'a':
            return (w.size() > 6 && starts_with(w, "atomic") && w[6] >= 'A' && w[6] <= 'Z') ? K_SYNC_FN : K_NONE;
        case 'c':
            if (starts_with(w, "cudaOccupancy") || starts_with(w, "cudaFuncSet") ||
                starts_with(w, "cuOccupancy") || starts_with(w, "cuFuncSet"))
                return K_ATTR_API;
            return K_NONE;
        default:
            return K_NONE;
    }
}

Punct classify_punct(std::string_view p) {
    if (p.size() == 1) {
        switch (p[0]) {
            case '(': return P_LPAREN;
            case ')': return P_RPAREN;
            case '[': return P_LBRACK;
            case ']': return P_RBRACK;
            case '{': return P_LBRACE;
            case '}': return P_RBRACE;
            case ';': return P_SEMI;
            case ',': return P_COMMA;
            case '<': return P_LT;
            case '>': return P_GT;
            case ':': return P_COLON;
            case '.': return P_DOT;
            case '*': return P_STAR;
            case '&': return P_AMP;
            case '=': return P_ASSIGN;
            case '~': return P_TILDE;
            case '?': return P_QUESTION;
            default: return P_OTHER;
        }
    }
    if (p == "<<<") return P_LAUNCH_OPEN;
    if (p == ">>>") return P_LAUNCH_CLOSE;
    if (p == ">>") return P_SHR;
    if (p == "<=") return P_LE;
    if (p == ">=") return P_GE;
    if (p == "::") return P_SCOPE;
    if (p == "->") return P_ARROW;
    if (p == "&&") return P_ANDAND;
    if (p == "+=" || p == "-=" || p == "*=" || p == "/=" || p == "%=" || p == "&=" || p == "|=" ||
        p == "^=" || p == "<<=" || p == ">>=")
        return P_OP_ASSIGN;
    return P_OTHER;
}

// Which arguments of a launch API call are launch configuration (bit i = argument i).
uint32_t launch_api_config_args(std::string_view name) {
    if (name == "cudaLaunchKernel" || name == "cudaLaunchCooperativeKernel")
        return 0b110110;  // func, gridDim, blockDim, args, sharedMem, stream: all but func and args
    if (name == "cuLaunchKernel" || name == "cuLaunchCooperativeKernel")
        return 0b111111110;  // f, gx, gy, gz, bx, by, bz, smem, stream, params, extra
    return 0b1;  // cudaLaunchKernelEx(&config, ...), cuLaunchKernelEx(&config, ...)
}

struct Tok {
    uint32_t b, e;
    CudaTokenKind kind;
    Punct punct;
    Kw kw;
    bool after_pp;  // a preprocessor line lies between this token and the previous one
};

enum ClauseKind : uint8_t { C_PLAIN, C_COND, C_FOR_INIT, C_FOR_COND, C_FOR_INCR };

// A statement or a piece of one: [first, last] tokens. For C_PLAIN `last` is the ';' when there
// is one; for conditions, `kw` is the if/while/switch keyword and `close` its ')' (or -1).
struct Clause {
    int first, last;
    ClauseKind kind;
    int kw, close;
};

struct KernelDef {
    int begin = -1;         // first token of the declaration (template header, qualifiers)
    int params_open = -1;   // '(' of the parameter list, or -1
    int params_close = -1;  // its ')', or -1
    int body_open = -1;     // '{', or -1 when the code ends inside the signature
    int body_close = -1;    // its '}', or -1 when unclosed (runs to the end of the region)
};

using NameSet = std::unordered_set<std::string_view>;

// What the finer pass has learnt about the names in one kernel.
struct KernelNames {
    NameSet pointers;    // pointer parameters and local pointers computed from them
    NameSet index_vars;  // locals assigned from index builtins (transitively)
    NameSet value_vars;  // locals declared float/double/bool/...: never indices
    NameSet shared_vars; // __shared__ arrays
};

constexpr int kMaxAngleTokens = 256;  // template argument lists longer than this are not followed
constexpr int kMaxMismatchSearch = 32;

class RegionTagger {
public:
    RegionTagger(std::string_view text, CodeRegion region, const TaggerOptions& opts,
                 std::vector<TagSpan>& out)
        : text_(text), opts_(opts), out_(out) {
        std::vector<CudaToken> raw = cuda_lex(text, region.begin, region.end);
        if (raw.empty()) return;
        region_end_ = raw.back().end;
        t_.reserve(raw.size());
        bool pp = false;
        for (const CudaToken& r : raw) {
            if (cuda_token_is_trivia(r.kind)) {
                pp = pp || r.kind == CudaTokenKind::kPreprocessor;
                continue;
            }
            Tok x{r.begin, r.end, r.kind, P_NONE, K_NONE, pp};
            std::string_view w = text.substr(r.begin, r.end - r.begin);
            if (r.kind == CudaTokenKind::kIdentifier) x.kw = classify_identifier(w);
            else if (r.kind == CudaTokenKind::kPunct) x.punct = classify_punct(w);
            t_.push_back(x);
            pp = false;
        }
        n_ = static_cast<int>(t_.size());
    }

    void run() {
        if (n_ == 0) return;
        match_brackets();
        index_template_headers();
        find_kernels();
        find_launches();
    }

private:
    // ------------------------------------------------------------ helpers
    std::string_view str(int k) const { return text_.substr(t_[k].b, t_[k].e - t_[k].b); }
    Punct punct(int k) const { return k >= 0 && k < n_ ? t_[k].punct : P_NONE; }
    Kw kw(int k) const { return k >= 0 && k < n_ ? t_[k].kw : K_NONE; }
    bool is_ident(int k) const { return k >= 0 && k < n_ && t_[k].kind == CudaTokenKind::kIdentifier; }
    bool is_name(int k) const { return is_ident(k) && t_[k].kw == K_NONE; }
    bool is_member_or_scoped(int k) const {  // preceded by '.', '->' or '::'
        Punct p = punct(k - 1);
        return p == P_DOT || p == P_ARROW || p == P_SCOPE;
    }
    static bool is_closing_angle(Punct p) { return p == P_GT || p == P_SHR || p == P_LAUNCH_CLOSE; }

    void add(int first, int last, uint32_t bits) {
        if (first < 0 || last < first || last >= n_) return;
        out_.push_back({t_[first].b, t_[last].e, bits});
    }
    void add_to_end(int first, uint32_t bits) {  // from a token to the end of the region's code
        if (first < 0 || first >= n_) return;
        out_.push_back({t_[first].b, region_end_, bits});
    }

    // Index after a bracket group starting at k (or k + 1 for other tokens); an unclosed group
    // runs to `hi`.
    int skip_group(int k, int hi) const {
        Punct p = t_[k].punct;
        if (p == P_LPAREN || p == P_LBRACK || p == P_LBRACE) {
            int m = match_[k];
            return (m < 0 || m >= hi) ? hi : m + 1;
        }
        return k + 1;
    }

    // ------------------------------------------------------------ brackets
    // (), [] and {} pairs. A closer that does not fit the innermost opener closes the nearest
    // fitting one within kMaxMismatchSearch levels (the openers above it stay unmatched); a
    // closer with no fitting opener is ignored. Unmatched: -1.
    void match_brackets() {
        match_.assign(n_, -1);
        std::vector<int> stack;
        for (int k = 0; k < n_; ++k) {
            Punct p = t_[k].punct;
            if (p == P_LPAREN || p == P_LBRACK || p == P_LBRACE) {
                stack.push_back(k);
                continue;
            }
            Punct want = p == P_RPAREN ? P_LPAREN : p == P_RBRACK ? P_LBRACK : p == P_RBRACE ? P_LBRACE : P_NONE;
            if (want == P_NONE) continue;
            int depth = static_cast<int>(stack.size());
            for (int s = depth - 1; s >= 0 && s >= depth - kMaxMismatchSearch; --s) {
                if (t_[stack[s]].punct != want) continue;
                match_[stack[s]] = k;
                match_[k] = stack[s];
                stack.resize(s);
                break;
            }
        }
    }

    // Index of the token closing the angle bracket at lt ('>', '>>' or '>>>'), or -1.
    int skip_angles(int lt) const {
        int depth = 0;
        for (int k = lt; k < n_ && k < lt + kMaxAngleTokens; ++k) {
            switch (t_[k].punct) {
                case P_LT: ++depth; break;
                case P_GT: depth -= 1; break;
                case P_SHR: depth -= 2; break;
                case P_LAUNCH_CLOSE: depth -= 3; break;
                case P_LPAREN:
                case P_LBRACK:
                    if (match_[k] < 0) return -1;
                    k = match_[k];
                    continue;
                case P_SEMI: case P_LBRACE: case P_RBRACE: case P_RPAREN: case P_RBRACK:
                case P_LAUNCH_OPEN:
                    return -1;
                default: break;
            }
            if (depth <= 0) return k;
        }
        return -1;
    }

    // Index of the '<' opening the angle bracket that closes at gt, or -1.
    int angle_open_before(int gt) const {
        int depth = 0;
        for (int k = gt; k >= 0 && k > gt - kMaxAngleTokens; --k) {
            switch (t_[k].punct) {
                case P_GT: depth += 1; break;
                case P_SHR: depth += 2; break;
                case P_LAUNCH_CLOSE: depth += 3; break;
                case P_LT:
                    if (--depth <= 0) return k;
                    break;
                case P_RPAREN:
                case P_RBRACK:
                    if (match_[k] < 0) return -1;
                    k = match_[k];
                    break;
                case P_SEMI: case P_LBRACE: case P_RBRACE: case P_LPAREN: case P_LBRACK:
                case P_LAUNCH_OPEN:
                    return -1;
                default: break;
            }
        }
        return -1;
    }

    // template_of_[c] = k when the `template <...>` header starting at k closes at token c.
    void index_template_headers() {
        template_of_.assign(n_, -1);
        for (int k = 0; k + 1 < n_; ++k) {
            if (t_[k].kw != K_TEMPLATE || t_[k + 1].punct != P_LT) continue;
            int c = skip_angles(k + 1);
            if (c >= 0) template_of_[c] = k;
        }
    }

    // ------------------------------------------------------------ statements
    // Calls fn(Clause) for every statement in tokens [lo, hi), nested blocks included, in order.
    // Control headers give their condition (if/while/switch/catch) or their three for-clauses
    // as separate clauses; initializer braces stay inside their statement.
    template <class F>
    void for_each_clause(int lo, int hi, F&& fn) const {
        int start = lo;
        int k = lo;
        auto flush = [&](int last) {
            if (last >= start) fn(Clause{start, last, C_PLAIN, -1, -1});
        };
        while (k < hi) {
            const Tok& x = t_[k];
            if (k == start && x.kind == CudaTokenKind::kIdentifier) {
                Kw w = x.kw;
                if ((w == K_IF || w == K_WHILE || w == K_SWITCH || w == K_FOR || w == K_CATCH) &&
                    k + 1 < hi && t_[k + 1].punct == P_LPAREN) {
                    int m = match_[k + 1];
                    int close = (m < 0 || m >= hi) ? -1 : m;
                    int inner_end = close < 0 ? hi : close;  // exclusive
                    if (w == K_FOR) {
                        for_header(k + 2, inner_end, fn);
                    } else if (inner_end > k + 2) {
                        fn(Clause{k + 2, inner_end - 1, C_COND, k, close});
                    }
                    k = inner_end + 1;
                    start = k;
                    continue;
                }
                if (w == K_ELSE || w == K_DO || w == K_TRY) {
                    start = ++k;
                    continue;
                }
            }
            switch (x.punct) {
                case P_LPAREN:
                case P_LBRACK:
                    k = skip_group(k, hi);
                    continue;
                case P_LBRACE:
                    if (k == start || is_block_brace(k)) {
                        flush(k - 1);
                        start = ++k;
                    } else {
                        k = skip_group(k, hi);
                    }
                    continue;
                case P_RBRACE:
                    flush(k - 1);
                    start = ++k;
                    continue;
                case P_SEMI:
                    flush(k);
                    start = ++k;
                    continue;
                default:
                    ++k;
            }
        }
        flush(hi - 1);
    }

    template <class F>
    void for_header(int lo, int hi, F&& fn) const {
        int part = 0;
        int start = lo;
        for (int k = lo; k <= hi;) {
            if (k == hi || t_[k].punct == P_SEMI) {
                if (k > start) {
                    ClauseKind kind = part == 0 ? C_FOR_INIT : part == 1 ? C_FOR_COND : part == 2 ? C_FOR_INCR : C_PLAIN;
                    fn(Clause{start, k - 1, kind, -1, -1});
                }
                ++part;
                start = ++k;
                continue;
            }
            k = skip_group(k, hi);
        }
    }

    // A '{' that opens a block (function, control statement, namespace, extern "C") rather
    // than a braced initializer.
    bool is_block_brace(int k) const {
        if (k == 0) return true;
        const Tok& p = t_[k - 1];
        if (p.punct == P_RPAREN || p.punct == P_COLON || p.punct == P_SEMI || p.punct == P_LBRACE ||
            p.punct == P_RBRACE)
            return true;
        if (p.kind == CudaTokenKind::kString) return true;  // extern "C" {
        if (p.kind == CudaTokenKind::kIdentifier) {
            if (p.kw == K_ELSE || p.kw == K_DO || p.kw == K_TRY || p.kw == K_TRAILING ||
                p.kw == K_NAMESPACE || p.kw == K_TYPE)
                return true;
            if (kw(k - 2) == K_NAMESPACE) return true;
        }
        return false;
    }

    // The '{' at k opens a function (or lambda) body: its ')' belongs to a declarator, not to
    // if/for/while/switch/catch.
    bool is_function_body(int k) const {
        int j = k - 1;
        while (j >= 0 && (t_[j].kw == K_TRAILING || t_[j].kw == K_TYPE)) --j;
        if (punct(j) != P_RPAREN) return false;
        int o = match_[j];
        if (o < 1) return false;
        // noexcept(...) / throw(...) after the parameter list
        if (t_[o - 1].kw == K_TRAILING) {
            j = o - 2;
            while (j >= 0 && (t_[j].kw == K_TRAILING || t_[j].kw == K_TYPE)) --j;
            if (punct(j) != P_RPAREN || match_[j] < 1) return false;
            o = match_[j];
        }
        const Tok& before = t_[o - 1];
        if (before.kind == CudaTokenKind::kIdentifier) {
            Kw w = before.kw;
            return !(w == K_IF || w == K_FOR || w == K_WHILE || w == K_SWITCH || w == K_CATCH ||
                     w == K_RETURN || w == K_STMT || w == K_ATTR_FN);
        }
        if (before.punct == P_RBRACK || is_closing_angle(before.punct) || before.punct == P_RPAREN)
            return true;
        return kw(o - 2) == K_OPERATOR;
    }

    // Top-level assignment operator in [a, b], or -1.
    int find_assignment(int a, int b) const {
        for (int k = a; k <= b;) {
            Punct p = t_[k].punct;
            if (p == P_ASSIGN || p == P_OP_ASSIGN) return k;
            k = skip_group(k, b + 1);
        }
        return -1;
    }

    // Splits [a, b] at top-level commas into parts [first, last].
    std::vector<std::pair<int, int>> split_commas(int a, int b) const {
        std::vector<std::pair<int, int>> parts;
        int start = a;
        for (int k = a; k <= b + 1;) {
            if (k == b + 1 || t_[k].punct == P_COMMA) {
                if (k > start) parts.emplace_back(start, k - 1);
                start = ++k;
                continue;
            }
            k = skip_group(k, b + 1);
        }
        return parts;
    }

    // ------------------------------------------------------------ kernels
    void find_kernels() {
        int lower = 0;  // backward walks never go below where the previous scan ended
        for (int i = 0; i < n_;) {
            Kw w = t_[i].kw;
            bool qualifier = w == K_GLOBAL || (w == K_DEVICE && opts_.device_functions);
            if (!qualifier) {
                ++i;
                continue;
            }
            KernelDef kd;
            int stop = i + 1;
            if (!scan_definition(i, kd, stop)) {
                lower = std::max(lower, stop);
                i = std::max(i + 1, stop);
                continue;
            }
            if (kd.begin < 0) kd.begin = declaration_begin(i, lower);
            tag_kernel(kd);
            int resume = kd.body_open < 0 || kd.body_close < 0 ? n_ : kd.body_close + 1;
            lower = resume;
            i = resume;
        }
    }

    static bool is_cuda_qualifier(Kw w) { return w == K_GLOBAL || w == K_DEVICE || w == K_HOST; }

    // From the qualifier at q: the parameter list and the body of a function definition (or of
    // an extended lambda `[...] __device__ (...) {...}`). False for declarations, variables and
    // prose; `stop` is where the scan gave up.
    bool scan_definition(int q, KernelDef& kd, int& stop) const {
        int j = q + 1;
        while (j < n_ && is_cuda_qualifier(t_[j].kw)) ++j;
        int qs = q;
        while (qs > 0 && is_cuda_qualifier(t_[qs - 1].kw)) --qs;
        if (punct(j) == P_LPAREN && punct(qs - 1) == P_RBRACK && match_[qs - 1] >= 0) {
            kd.begin = match_[qs - 1];  // extended lambda: from its capture list
            return finish_definition(j, kd, stop);
        }
        for (; j < n_; ++j) {
            const Tok& x = t_[j];
            if (x.kind == CudaTokenKind::kIdentifier) {
                Kw w = x.kw;
                if (w == K_OPERATOR) {
                    int k = j + 1;
                    if (punct(k) == P_LPAREN && punct(k + 1) == P_RPAREN) k += 2;  // operator()
                    for (int lim = k + 4; k < n_ && k < lim && t_[k].punct != P_LPAREN; ++k) {}
                    if (punct(k) != P_LPAREN) break;
                    return finish_definition(k, kd, stop);
                }
                if (w == K_IF || w == K_FOR || w == K_WHILE || w == K_SWITCH || w == K_RETURN ||
                    w == K_STMT || w == K_ELSE || w == K_DO || w == K_NAMESPACE || w == K_SHARED)
                    break;
                if (punct(j + 1) == P_LPAREN) {
                    if (w == K_ATTR_FN) {
                        if (match_[j + 1] < 0) break;
                        j = match_[j + 1];
                        continue;
                    }
                    if (w == K_TYPE || w == K_SPEC) break;  // `void (*fp)(...)`: not a definition
                    return finish_definition(j + 1, kd, stop);
                }
                continue;
            }
            Punct p = x.punct;
            if (p == P_SCOPE || p == P_STAR || p == P_AMP || p == P_ANDAND || p == P_TILDE) continue;
            if (p == P_LT) {
                int c = skip_angles(j);
                if (c < 0) break;
                if (punct(c + 1) == P_LPAREN) return finish_definition(c + 1, kd, stop);
                j = c;
                continue;
            }
            if (p == P_LBRACK && punct(j + 1) == P_LBRACK && match_[j] >= 0) {  // [[attribute]]
                j = match_[j];
                continue;
            }
            break;
        }
        stop = j;
        return false;
    }

    // The parameter list opens at po: find the body after it.
    bool finish_definition(int po, KernelDef& kd, int& stop) const {
        kd.params_open = po;
        int pc = match_[po];
        if (pc < 0) {
            // Broken or truncated parameter list: the next '{' before a ';' or '}' is the body.
            for (int k = po + 1; k < n_; ++k) {
                Punct p = t_[k].punct;
                if (p == P_LBRACE) {
                    kd.body_open = k;
                    kd.body_close = match_[k];
                    return true;
                }
                if (p == P_SEMI || p == P_RBRACE) {
                    stop = k;
                    return false;
                }
            }
            return true;  // the code ends inside the signature
        }
        kd.params_close = pc;
        int k = skip_trailing(pc + 1);
        if (k >= n_) return true;  // truncated right after the signature
        if (t_[k].punct != P_LBRACE) {
            stop = k;
            return false;
        }
        kd.body_open = k;
        kd.body_close = match_[k];
        return true;
    }

    // Past what may follow a parameter list before the body: cv/ref qualifiers, noexcept(...),
    // attributes, a trailing return type, a constructor's member initializers.
    int skip_trailing(int k) const {
        while (k < n_) {
            const Tok& x = t_[k];
            if (x.kw == K_TRAILING || x.kw == K_TYPE || x.kw == K_ATTR_FN) {
                if (punct(k + 1) == P_LPAREN) {
                    if (match_[k + 1] < 0) return n_;
                    k = match_[k + 1] + 1;
                } else {
                    ++k;
                }
                continue;
            }
            if (x.punct == P_AMP || x.punct == P_ANDAND) {
                ++k;
                continue;
            }
            if (x.punct == P_LBRACK && punct(k + 1) == P_LBRACK && match_[k] >= 0) {
                k = match_[k] + 1;
                continue;
            }
            if (x.punct == P_ARROW) {  // trailing return type
                ++k;
                while (k < n_) {
                    Punct p = t_[k].punct;
                    if (t_[k].kind == CudaTokenKind::kIdentifier) {
                        if (punct(k + 1) == P_LPAREN) {  // decltype(...)
                            if (match_[k + 1] < 0) return n_;
                            k = match_[k + 1] + 1;
                        } else {
                            ++k;
                        }
                    } else if (p == P_SCOPE || p == P_STAR || p == P_AMP || p == P_ANDAND) {
                        ++k;
                    } else if (p == P_LT) {
                        int c = skip_angles(k);
                        if (c < 0) return k;
                        k = c + 1;
                    } else {
                        break;
                    }
                }
                continue;
            }
            if (x.punct == P_COLON) {  // member initializers: `: a(x), b{y}`
                ++k;
                while (k < n_) {
                    while (k < n_ && (t_[k].kind == CudaTokenKind::kIdentifier || t_[k].punct == P_SCOPE)) ++k;
                    if (punct(k) == P_LT) {
                        int c = skip_angles(k);
                        if (c < 0) return k;
                        k = c + 1;
                    }
                    if (punct(k) != P_LPAREN && punct(k) != P_LBRACE) return k;
                    if (match_[k] < 0) return n_;
                    k = match_[k] + 1;
                    if (punct(k) != P_COMMA) return k;
                    ++k;
                }
                return k;
            }
            break;
        }
        return k;
    }

    // First token of the declaration whose CUDA qualifier is at q: walks back over
    // decl-specifiers, `extern "C"`, attributes and a template header, never below `lower` and
    // never across a preprocessor line.
    int declaration_begin(int q, int lower) const {
        int b = q;
        int k = q - 1;
        while (k >= lower && !t_[b].after_pp) {
            const Tok& x = t_[k];
            Kw w = x.kw;
            if (x.kind == CudaTokenKind::kIdentifier &&
                (w == K_SPEC || w == K_TYPE || w == K_EXTERN || is_cuda_qualifier(w))) {
                b = k--;
                continue;
            }
            if (x.kind == CudaTokenKind::kString && k - 1 >= lower && t_[k - 1].kw == K_EXTERN) {
                b = k - 1;
                k -= 2;
                continue;
            }
            if (x.punct == P_RPAREN && match_[k] >= 1 && match_[k] - 1 >= lower &&
                t_[match_[k] - 1].kw == K_ATTR_FN) {
                b = match_[k] - 1;
                k = b - 1;
                continue;
            }
            if (x.punct == P_RBRACK && match_[k] >= lower && match_[k] >= 0 &&
                punct(match_[k] + 1) == P_LBRACK) {
                b = match_[k];
                k = b - 1;
                continue;
            }
            if (is_closing_angle(x.punct) && template_of_[k] >= lower) {
                b = template_of_[k];
                k = b - 1;
                continue;
            }
            break;
        }
        return b;
    }

    // ------------------------------------------------------------ inside a kernel

    // Names of the pointer (or array) parameters in the parameter list (po, pc).
    NameSet pointer_params(int po, int pc) const {
        NameSet names;
        if (po < 0 || pc < 0) return names;
        for (auto [a, b] : split_commas(po + 1, pc - 1)) {
            int cut = b;
            bool pointer = false;
            int name = -1;
            int angle = 0;
            for (int k = a; k <= cut;) {
                Punct p = t_[k].punct;
                if (p == P_ASSIGN && angle == 0) break;  // default argument
                if (p == P_LT) ++angle;
                if (p == P_GT) --angle;
                if (p == P_STAR && angle == 0) pointer = true;
                if (p == P_LBRACK) pointer = true;
                if (is_name(k)) name = k;
                k = skip_group(k, cut + 1);
            }
            if (pointer && name >= 0) names.insert(str(name));
        }
        return names;
    }

    // An index builtin or an index variable, outside subscripts, in [a, b].
    bool has_index_source(int a, int b, const NameSet& index_vars) const {
        for (int k = a; k <= b;) {
            if (t_[k].punct == P_LBRACK) {
                k = skip_group(k, b + 1);
                continue;
            }
            if (t_[k].kw == K_BUILTIN_IDX && !is_member_or_scoped(k)) return true;
            if (is_index_member_call(k)) return true;
            if (is_name(k) && !is_member_or_scoped(k) && punct(k + 1) != P_LPAREN &&
                index_vars.count(str(k)))
                return true;
            ++k;
        }
        return false;
    }

    // `g.thread_rank()` and friends at the member name k.
    bool is_index_member_call(int k) const {
        return t_[k].kw == K_INDEX_MEMBER && (punct(k - 1) == P_DOT || punct(k - 1) == P_ARROW) &&
               punct(k + 1) == P_LPAREN;
    }

    bool mentions(int a, int b, const NameSet& names) const {
        if (names.empty()) return false;
        for (int k = a; k <= b; ++k)
            if (is_name(k) && !is_member_or_scoped(k) && names.count(str(k))) return true;
        return false;
    }

    static bool is_non_index_type(std::string_view w) {
        return w == "float" || w == "double" || w == "half" || w == "__half" || w == "bool" ||
               w == "__nv_bfloat16" || w == "float2" || w == "float4" || w == "double2";
    }

    // `int i = blockIdx.x * blockDim.x + threadIdx.x`, `i += stride`: an assignment to a plain
    // variable (not a float, not an array element) from an index builtin or index variable, or
    // a compound assignment to an index variable. Learns index variables, float locals and
    // pointers computed from pointer parameters on the way.
    bool is_index_statement(int a, int b, KernelNames& names) const {
        bool any = false;
        for (auto [pa, pb] : split_commas(a, b)) {
            int asg = find_assignment(pa, pb);
            if (asg <= pa || asg >= pb) continue;
            int lhs = asg - 1;
            if (!is_name(lhs) || is_member_or_scoped(lhs)) continue;
            const std::string_view name = str(lhs);
            const bool declaration = lhs > pa;
            bool pointer = false;
            bool float_type = false;
            for (int k = pa; k < lhs; ++k) {
                if (t_[k].punct == P_STAR) pointer = true;
                if (t_[k].kw == K_TYPE && is_non_index_type(str(k))) float_type = true;
            }
            if (declaration && pointer) {
                if (mentions(asg + 1, pb, names.pointers)) names.pointers.insert(name);
                if (has_index_source(asg + 1, pb, names.index_vars)) any = true;
                continue;
            }
            if (declaration && float_type) {
                names.value_vars.insert(name);
                continue;
            }
            if (!declaration && names.value_vars.count(name)) continue;
            bool compound_on_index = t_[asg].punct == P_OP_ASSIGN && names.index_vars.count(name);
            if (!compound_on_index && !has_index_source(asg + 1, pb, names.index_vars)) continue;
            names.index_vars.insert(name);
            any = true;
        }
        return any;
    }

    bool has_relational(int a, int b) const {
        for (int k = a; k <= b; ++k) {
            Punct p = t_[k].punct;
            if (p == P_LT || p == P_GT || p == P_LE || p == P_GE) return true;
        }
        return false;
    }

    // First token of the object a member call at k is made on: `block` in `block.sync()`,
    // `cg::this_grid` in `cg::this_grid().sync()`, `cg` in `cg::sync(g)`; k itself if none.
    int object_begin(int k) const {
        int j = k - 2;
        if (punct(j) == P_RPAREN && match_[j] >= 1) j = match_[j] - 1;
        if (!is_ident(j)) return k;
        while (punct(j - 1) == P_SCOPE && is_ident(j - 2)) j -= 2;
        return j;
    }

    // The condition of the `?` at q: the parenthesised group right before it, or the tokens
    // back to the start of the operand (an assignment, '(', ',', 'return', ...). Never below lo.
    std::pair<int, int> ternary_condition(int q, int lo) const {
        int last = q - 1;
        if (last < lo) return {q, q - 1};
        if (t_[last].punct == P_RPAREN && match_[last] >= lo) return {match_[last], last};
        int j = last;
        while (j >= lo) {
            const Tok& x = t_[j];
            if ((x.punct == P_RPAREN || x.punct == P_RBRACK) && match_[j] >= lo) {
                j = match_[j] - 1;
                continue;
            }
            Punct p = x.punct;
            if (p == P_ASSIGN || p == P_OP_ASSIGN || p == P_COMMA || p == P_SEMI || p == P_LBRACE ||
                p == P_RBRACE || p == P_LPAREN || p == P_LBRACK || p == P_RPAREN || p == P_RBRACK ||
                p == P_COLON || p == P_QUESTION || x.kw == K_RETURN)
                break;
            --j;
        }
        return {j + 1, last};
    }

    // Last token of `name[...][...]` starting at the name k.
    int subscript_end(int k) const {
        int e = k;
        while (punct(e + 1) == P_LBRACK) {
            int m = match_[e + 1];
            if (m < 0) return e + 1;
            e = m;
        }
        return e;
    }

    void tag_kernel(const KernelDef& kd) {
        if (kd.body_open < 0) {  // the code ends inside the signature
            add_to_end(kd.begin, kTagKernel);
            return;
        }
        if (kd.body_close >= 0) add(kd.begin, kd.body_close, kTagKernel);
        else add_to_end(kd.begin, kTagKernel);

        const uint32_t K = kTagKernel;
        int lo = kd.body_open + 1;
        int hi = kd.body_close >= 0 ? kd.body_close : n_;
        KernelNames names;
        names.pointers = pointer_params(kd.params_open, kd.params_close);

        for_each_clause(lo, hi, [&](const Clause& c) {
            if (c.kind == C_COND || c.kind == C_FOR_COND) {
                if (has_relational(c.first, c.last) && has_index_source(c.first, c.last, names.index_vars)) {
                    if (c.kind == C_COND && c.close >= 0) add(c.kw, c.close, K | kTagBoundsCheck);
                    else add(c.first, c.last, K | kTagBoundsCheck);
                }
                return;
            }
            int ce = (c.kind == C_PLAIN && t_[c.last].punct == P_SEMI) ? c.last - 1 : c.last;
            for (int k = c.first; k <= ce; ++k) {
                if (t_[k].kw != K_SHARED) continue;
                add(c.first, c.last, K | kTagSharedMemory);
                for (auto [pa, pb] : split_commas(k + 1, ce)) {
                    int asg = find_assignment(pa, pb);
                    int end = asg >= 0 ? asg - 1 : pb;
                    for (int q = pa; q <= end; ++q) {
                        Punct next = q + 1 <= end ? t_[q + 1].punct : P_NONE;
                        if (is_name(q) && (next == P_LBRACK || next == P_NONE)) names.shared_vars.insert(str(q));
                    }
                }
                return;
            }
            if (ce >= c.first && is_index_statement(c.first, ce, names)) add(c.first, c.last, K | kTagIndexing);
        });

        for (int k = lo; k < hi; ++k) {
            if (t_[k].punct == P_QUESTION) {  // `i < n ? in[i] : 0`
                auto [a, b] = ternary_condition(k, lo);
                if (a <= b && has_relational(a, b) && has_index_source(a, b, names.index_vars))
                    add(a, b, K | kTagBoundsCheck);
                continue;
            }
            if (t_[k].kind != CudaTokenKind::kIdentifier) continue;
            switch (t_[k].kw) {
                case K_BUILTIN_IDX:
                    if (is_member_or_scoped(k)) break;
                    add(k, (punct(k + 1) == P_DOT && is_ident(k + 2)) ? k + 2 : k, K | kTagIndexing);
                    break;
                case K_INDEX_MEMBER:
                    if (!is_index_member_call(k)) break;
                    add(object_begin(k), match_[k + 1] >= 0 ? match_[k + 1] : k, K | kTagIndexing);
                    break;
                case K_SYNC_FN:
                    if (is_member_or_scoped(k) && t_[k - 1].punct != P_SCOPE) break;
                    add(k, (punct(k + 1) == P_LPAREN && match_[k + 1] >= 0) ? match_[k + 1] : k, K | kTagSync);
                    break;
                case K_SYNC_MEMBER:
                    if (!is_member_or_scoped(k) || punct(k + 1) != P_LPAREN) break;
                    add(object_begin(k), match_[k + 1] >= 0 ? match_[k + 1] : k, K | kTagSync);
                    break;
                case K_NONE:
                    if (punct(k + 1) != P_LBRACK || is_member_or_scoped(k)) break;
                    if (names.pointers.count(str(k))) add(k, subscript_end(k), K | kTagMemoryAccess);
                    else if (names.shared_vars.count(str(k))) add(k, subscript_end(k), K | kTagSharedMemory);
                    break;
                default:
                    break;
            }
        }
    }

    // ------------------------------------------------------------ launches

    struct ConfigUse {
        int root;      // '{' of the outermost enclosing function body, or -1 (the whole region)
        int a, b;      // tokens [a, b) holding launch-configuration expressions
    };

    void find_launches() {
        std::vector<int> braces;         // open '{' enclosing the current token
        std::vector<int> root(n_, -1);   // per '{': the outermost function body containing it
        std::vector<ConfigUse> uses;
        for (int k = 0; k < n_; ++k) {
            const Tok& x = t_[k];
            if (x.punct == P_LBRACE) {
                int parent = braces.empty() ? -1 : braces.back();
                root[k] = (parent >= 0 && root[parent] >= 0) ? root[parent] : (is_function_body(k) ? k : -1);
                braces.push_back(k);
                continue;
            }
            if (x.punct == P_RBRACE && match_[k] >= 0) {
                while (!braces.empty() && braces.back() != match_[k]) braces.pop_back();
                if (!braces.empty()) braces.pop_back();
                continue;
            }
            int scope = braces.empty() ? -1 : root[braces.back()];
            if (x.punct == P_LAUNCH_OPEN) {
                tag_launch(k, scope, uses);
            } else if (x.kw == K_LAUNCH_API || x.kw == K_ATTR_API) {
                tag_api_call(k, scope, uses);
            }
        }
        tag_config_statements(uses);
    }

    // First token of the kernel named before `<<<` at k: `ns::kernel<T, 4>`, `MACRO(x)`.
    int launch_name_begin(int k) const {
        int j = k - 1;
        if (j < 0) return k;
        if (is_closing_angle(t_[j].punct)) {
            int o = angle_open_before(j);
            if (o < 1) return k;
            j = o - 1;
        } else if (t_[j].punct == P_RPAREN) {
            int o = match_[j];
            if (o < 1 || !is_ident(o - 1)) return k;
            j = o - 1;
        }
        if (!is_ident(j)) return k;
        while (j >= 2 && t_[j - 1].punct == P_SCOPE && is_ident(j - 2)) j -= 2;
        return j;
    }

    // End of a call whose '(' is at po: its ')' plus a directly following ';'. An unclosed
    // argument list runs to the next ';', '}' or '<<<' (or the end of the region).
    int call_end(int po) const {
        int m = match_[po];
        if (m >= 0) return punct(m + 1) == P_SEMI ? m + 1 : m;
        int k = po + 1;
        for (; k < n_; ++k) {
            Punct p = t_[k].punct;
            if (p == P_SEMI) return k;
            if (p == P_RBRACE || p == P_LAUNCH_OPEN) return k - 1;
        }
        return n_ - 1;
    }

    void tag_launch(int k, int scope, std::vector<ConfigUse>& uses) {
        const int name = launch_name_begin(k);
        // `1 <<< 2` has no kernel name; `operator<<<T>(...)` is a friend declaration.
        if (name == k || t_[name].kw == K_OPERATOR) return;
        int close = -1;
        int stop = n_;
        for (int j = k + 1; j < n_; ++j) {
            Punct p = t_[j].punct;
            if (p == P_LAUNCH_CLOSE) {
                close = j;
                break;
            }
            if (p == P_LPAREN || p == P_LBRACK || p == P_LBRACE) {
                if (match_[j] < 0) {
                    stop = j;
                    break;
                }
                j = match_[j];
                continue;
            }
            if (p == P_SEMI || p == P_RBRACE || p == P_RPAREN || p == P_RBRACK || p == P_LAUNCH_OPEN) {
                stop = j;
                break;
            }
        }
        int end;
        if (close >= 0) {
            end = punct(close + 1) == P_LPAREN ? call_end(close + 1) : close;
            uses.push_back({scope, k + 1, close});
        } else {
            end = (stop < n_ && t_[stop].punct == P_SEMI) ? stop : stop - 1;
            uses.push_back({scope, k + 1, stop});
        }
        add(name, end, kTagLaunch);
    }

    void tag_api_call(int k, int scope, std::vector<ConfigUse>& uses) {
        int po = k + 1;
        if (punct(po) == P_LT) {  // explicit template arguments
            int c = skip_angles(po);
            if (c < 0) return;
            po = c + 1;
        }
        if (punct(po) != P_LPAREN) return;
        add(k, call_end(po), kTagLaunch);
        if (t_[k].kw != K_LAUNCH_API) return;
        int pc = match_[po] >= 0 ? match_[po] : n_;
        uint32_t mask = launch_api_config_args(str(k));
        int arg = 0;
        for (auto [a, b] : split_commas(po + 1, pc - 1)) {
            if (arg < 32 && (mask >> arg & 1u)) uses.push_back({scope, a, b + 1});
            ++arg;
        }
    }

    // Names a launch configuration reads in [a, b): not called, not members, not namespaces.
    void collect_config_names(int a, int b, NameSet& names) const {
        for (int q = a; q < b && q < n_; ++q) {
            if (!is_name(q) || is_member_or_scoped(q)) continue;
            Punct next = punct(q + 1);
            if (next == P_LPAREN || next == P_SCOPE || next == P_LBRACE) continue;
            names.insert(str(q));
        }
    }

    // A statement declaring or assigning one of `names`: `dim3 block(256);`,
    // `int blocks = (n + 255) / 256;`, `grid.x = 4;`, `cudaStream_t stream;`.
    bool declares_or_assigns(int a, int b, const NameSet& names) const {
        bool first_is_declaration = false;
        int part = 0;
        for (auto [pa, pb] : split_commas(a, b)) {
            int asg = find_assignment(pa, pb);
            if (asg >= 0) {
                for (int q = pa; q < asg;) {
                    if (is_name(q) && !is_member_or_scoped(q) && punct(q + 1) != P_SCOPE && names.count(str(q)))
                        return true;
                    q = skip_group(q, asg);
                }
                if (part == 0) first_is_declaration = asg - pa >= 2 && is_ident(pa);
            } else {
                for (int q = pa; q <= pb;) {
                    if (is_name(q) && names.count(str(q))) {
                        Punct next = q + 1 <= pb ? t_[q + 1].punct : P_NONE;
                        bool declarator_end = next == P_LPAREN || next == P_LBRACE || next == P_LBRACK || next == P_NONE;
                        if (declarator_end) {
                            if (q == pa) {
                                if (part > 0 && first_is_declaration) return true;
                            } else {
                                const Tok& prev = t_[q - 1];
                                bool type_before =
                                    (prev.kind == CudaTokenKind::kIdentifier &&
                                     (prev.kw == K_NONE || prev.kw == K_TYPE || prev.kw == K_SPEC)) ||
                                    is_closing_angle(prev.punct) || prev.punct == P_STAR || prev.punct == P_AMP;
                                if (type_before) return true;
                            }
                        }
                    }
                    q = skip_group(q, pb + 1);
                }
                if (part == 0)
                    first_is_declaration = pb > pa && is_ident(pa) &&
                                           (t_[pa].kw == K_NONE || t_[pa].kw == K_TYPE || t_[pa].kw == K_SPEC);
            }
            ++part;
        }
        return false;
    }

    void tag_config_statements(const std::vector<ConfigUse>& uses) {
        std::unordered_map<int, NameSet> by_scope;
        for (const ConfigUse& u : uses) collect_config_names(u.a, u.b, by_scope[u.root]);
        for (auto& [root, names] : by_scope) {
            if (names.empty()) continue;
            int lo = root >= 0 ? root + 1 : 0;
            int hi = root >= 0 ? (match_[root] >= 0 ? match_[root] : n_) : n_;
            for_each_clause(lo, hi, [&](const Clause& c) {
                if (c.kind == C_COND || c.kind == C_FOR_COND) return;
                int ce = (c.kind == C_PLAIN && t_[c.last].punct == P_SEMI) ? c.last - 1 : c.last;
                if (ce >= c.first && declares_or_assigns(c.first, ce, names)) add(c.first, c.last, kTagLaunch);
            });
        }
    }

    std::string_view text_;
    const TaggerOptions& opts_;
    std::vector<TagSpan>& out_;
    std::vector<Tok> t_;
    int n_ = 0;
    uint32_t region_end_ = 0;
    std::vector<int> match_;
    std::vector<int> template_of_;
};

// ---------------------------------------------------------------- Markdown

// A fence line: optional indentation, then >= 3 backticks or tildes. Returns the fence length
// and sets `ch`; 0 when the line is not a fence. An opening backtick fence may not have a
// backtick in its info string; a closing fence has nothing but spaces after it.
size_t fence_length(std::string_view line, char& ch, bool closing) {
    size_t k = 0;
    while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
    if (k >= line.size() || (line[k] != '`' && line[k] != '~')) return 0;
    char c = line[k];
    size_t run = 0;
    while (k + run < line.size() && line[k + run] == c) ++run;
    if (run < 3) return 0;
    std::string_view rest = line.substr(k + run);
    if (closing) {
        for (char r : rest)
            if (r != ' ' && r != '\t' && r != '\r') return 0;
    } else if (c == '`' && rest.find('`') != std::string_view::npos) {
        return 0;
    }
    ch = c;
    return run;
}

bool has_cuda_marker(std::string_view text) {
    static const char* const kMarkers[] = {"__global__", "__device__", "__shared__", "<<<", "threadIdx",
                                           "blockIdx", "cudaLaunch", "__syncthreads"};
    for (const char* m : kMarkers)
        if (text.find(m) != std::string_view::npos) return true;
    return false;
}

}  // namespace

std::vector<CodeRegion> tag_code_regions(std::string_view text) {
    std::vector<CodeRegion> regions;
    bool any_fence = false;
    bool in_fence = false;
    char fence_char = 0;
    size_t fence_len = 0;
    size_t code_begin = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        size_t line_end = nl == std::string_view::npos ? text.size() : nl;
        std::string_view line = text.substr(pos, line_end - pos);
        char c = 0;
        if (!in_fence) {
            size_t len = fence_length(line, c, /*closing=*/false);
            if (len > 0) {
                any_fence = in_fence = true;
                fence_char = c;
                fence_len = len;
                code_begin = std::min(line_end + 1, text.size());
            }
        } else {
            size_t len = fence_length(line, c, /*closing=*/true);
            if (len >= fence_len && c == fence_char) {
                if (pos > code_begin)
                    regions.push_back({static_cast<uint32_t>(code_begin), static_cast<uint32_t>(pos)});
                in_fence = false;
            }
        }
        pos = line_end + 1;
    }
    if (in_fence && text.size() > code_begin)
        regions.push_back({static_cast<uint32_t>(code_begin), static_cast<uint32_t>(text.size())});
    if (!any_fence && has_cuda_marker(text)) regions.push_back({0, static_cast<uint32_t>(text.size())});
    return regions;
}

std::vector<TagSpan> tag_code(std::string_view response, CodeRegion region, const TaggerOptions& opts) {
    std::vector<TagSpan> out;
    RegionTagger(response, region, opts, out).run();
    return out;
}

std::vector<TagSpan> tag_spans_normalize(std::vector<TagSpan> spans) {
    // One event per span end, packed as position << 32 | bits << 1 | is_close, sorted.
    std::vector<uint64_t> events;
    events.reserve(spans.size() * 2);
    for (const TagSpan& s : spans) {
        uint32_t bits = s.bits & kTagAll;
        if (s.begin >= s.end || bits == 0) continue;
        events.push_back(uint64_t{s.begin} << 32 | bits << 1);
        events.push_back(uint64_t{s.end} << 32 | bits << 1 | 1u);
    }
    std::sort(events.begin(), events.end());
    std::array<int, kTagBitCount> depth{};
    std::vector<TagSpan> out;
    uint32_t cur_bits = 0;
    uint32_t cur_pos = 0;
    for (size_t i = 0; i < events.size();) {
        const uint32_t pos = static_cast<uint32_t>(events[i] >> 32);
        if (cur_bits != 0 && pos > cur_pos) {
            if (!out.empty() && out.back().end == cur_pos && out.back().bits == cur_bits) out.back().end = pos;
            else out.push_back({cur_pos, pos, cur_bits});
        }
        for (; i < events.size() && static_cast<uint32_t>(events[i] >> 32) == pos; ++i) {
            const uint32_t bits = static_cast<uint32_t>(events[i]) >> 1;
            const int step = (events[i] & 1u) ? -1 : 1;
            for (int b = 0; b < kTagBitCount; ++b)
                if (bits >> b & 1u) depth[b] += step;
        }
        cur_bits = 0;
        for (int b = 0; b < kTagBitCount; ++b)
            if (depth[b] > 0) cur_bits |= 1u << b;
        cur_pos = pos;
    }
    return out;
}

std::vector<TagSpan> tag_text(std::string_view response, const TaggerOptions& opts) {
    if (response.size() >= (size_t{1} << 32))
        throw InputError(strprintf("tagger: response of %zu bytes is too long (4 GiB at most)", response.size()));
    std::vector<TagSpan> spans;
    for (const CodeRegion& r : tag_code_regions(response)) {
        std::vector<TagSpan> part = tag_code(response, r, opts);
        spans.insert(spans.end(), part.begin(), part.end());
    }
    return tag_spans_normalize(std::move(spans));
}

std::vector<uint32_t> tag_tokens(const std::vector<TagSpan>& spans,
                                 const std::vector<std::pair<int32_t, int32_t>>& token_spans) {
    std::vector<uint32_t> bits(token_spans.size(), 0);
    for (size_t i = 0; i < token_spans.size(); ++i) {
        auto [b, e] = token_spans[i];
        if (b < 0 || e <= b) continue;
        auto it = std::partition_point(spans.begin(), spans.end(),
                                       [b = b](const TagSpan& s) { return s.end <= static_cast<uint32_t>(b); });
        for (; it != spans.end() && it->begin < static_cast<uint32_t>(e); ++it) bits[i] |= it->bits;
    }
    return bits;
}

std::string tag_bits_name(uint32_t bit) {
    switch (bit) {
        case kTagKernel: return "kernel";
        case kTagLaunch: return "launch";
        case kTagIndexing: return "indexing";
        case kTagSharedMemory: return "shared_memory";
        case kTagSync: return "sync";
        case kTagMemoryAccess: return "memory_access";
        case kTagBoundsCheck: return "bounds_check";
        default: return "";
    }
}

std::string tag_bits_names(uint32_t bits) {
    std::string out;
    for (int b = 0; b < kTagBitCount; ++b) {
        if (!(bits >> b & 1u)) continue;
        if (!out.empty()) out += ',';
        out += tag_bits_name(1u << b);
    }
    return out;
}

}  // namespace cuset
