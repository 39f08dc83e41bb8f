// The Jinja evaluator's core: values, the rendering of statements and expressions with Jinja2's
// scoping, lookup and call rules (the sandbox's getattr/getitem, macros with varargs, kwargs and
// caller, call blocks, loops with `loop`), and the bounds of a render (steps, bytes, string size,
// nesting, 64-bit integer overflow, the stop request). Filters, tests and methods are in
// jinja_builtins.cpp; Python's formatting of values in jinja_format.cpp.
#include "cuset/text/jinja.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <utf8proc.h>

#include "cuset/core/error.h"
#include "cuset/core/signals.h"
#include "jinja_eval.h"
#include "unicode.h"

namespace cuset::jinja {

using detail::K;

// ---------------------------------------------------------------- values

namespace detail {
// Releases a list or dict without recursing: the values it holds that own something are moved to
// a per-thread queue first, and the outermost release empties the queue one by one. So a list
// nested 100,000 deep (a template can build one in a loop) is freed in constant stack.
struct Release {
    static void take(Value& v, std::vector<std::shared_ptr<void>>& out) {
        if (v.p_ && v.kind_ != Value::Kind::kString && v.kind_ != Value::Kind::kUndefined) out.push_back(std::move(v.p_));
    }
    template <class T>
    static void destroy(T* p) {
        std::vector<std::shared_ptr<void>>& pending = state().pending;
        if constexpr (std::is_same_v<T, List>) {
            for (Value& v : *p) take(v, pending);
        } else {
            for (auto& [k, v] : p->items_) {
                take(k, pending);
                take(v, pending);
            }
        }
        delete p;
        bool& draining = state().draining;
        if (draining) return;
        draining = true;
        while (!pending.empty()) {
            std::shared_ptr<void> x = std::move(pending.back());
            pending.pop_back();
            x.reset();  // a list or dict here queues what it holds and returns
        }
        draining = false;
    }
    // The lists and dicts one render made (weakly held), so that the render can empty them when
    // it ends: a template can make a cycle (`{% set ns.me = ns %}`, `l.append(l)`), which Python's
    // collector frees and shared ownership alone never would.
    struct Arena {
        std::vector<std::pair<std::weak_ptr<void>, bool>> made;  // (container, is a list)
        size_t compact_at = 1024;
    };
    struct State {
        std::vector<std::shared_ptr<void>> pending;
        bool draining = false;
        Arena* arena = nullptr;  // the current render's, if any
    };
    static State& state() {  // one per thread, shared by lists and dicts
        static thread_local State s;
        return s;
    }
    static void made(const std::shared_ptr<void>& p, bool is_list) {
        Arena* a = state().arena;
        if (!a) return;
        if (a->made.size() >= a->compact_at) {  // drop the freed ones: amortised O(1) per container
            a->made.erase(std::remove_if(a->made.begin(), a->made.end(), [](const auto& m) { return m.first.expired(); }),
                          a->made.end());
            a->compact_at = std::max<size_t>(1024, 2 * a->made.size());
        }
        a->made.emplace_back(p, is_list);
    }
    // Empties every container of `a` still alive (what it held is released as above).
    static void empty(Arena& a) {
        for (auto& [w, is_list] : a.made) {
            const std::shared_ptr<void> p = w.lock();
            if (!p) continue;
            if (is_list) {
                List gone;
                gone.swap(*static_cast<List*>(p.get()));
            } else {
                Dict& d = *static_cast<Dict*>(p.get());
                std::vector<Dict::Item> gone;
                gone.swap(d.items_);
                d.by_string_.clear();
                d.other_keys_.clear();
            }
        }
        a.made.clear();
    }
};

// While it lives, the lists and dicts made on this thread belong to one render, and are emptied
// when it ends (the render's output holds none of them).
class RenderArena {
public:
    RenderArena() : outer_(Release::state().arena) { Release::state().arena = &arena_; }
    ~RenderArena() {
        Release::state().arena = outer_;
        Release::empty(arena_);
    }
    RenderArena(const RenderArena&) = delete;
    RenderArena& operator=(const RenderArena&) = delete;

private:
    Release::Arena arena_;
    Release::Arena* outer_;
};
}  // namespace detail

namespace {
struct UndefInfo {
    std::string name, hint;
};
const std::string kEmpty;
}  // namespace

Value Value::undefined(std::string name, std::string hint) {
    Value v;
    if (!name.empty() || !hint.empty()) v.p_ = std::make_shared<UndefInfo>(UndefInfo{std::move(name), std::move(hint)});
    return v;
}
Value Value::none() {
    Value v;
    v.kind_ = Kind::kNone;
    return v;
}
Value Value::boolean(bool b) {
    Value v;
    v.kind_ = Kind::kBool;
    v.i_ = b ? 1 : 0;
    return v;
}
Value Value::integer(int64_t i) {
    Value v;
    v.kind_ = Kind::kInt;
    v.i_ = i;
    return v;
}
Value Value::number(double f) {
    Value v;
    v.kind_ = Kind::kFloat;
    v.f_ = f;
    return v;
}
Value Value::string(std::string s) {
    Str st;
    st.text = std::move(s);
    return string(std::move(st));
}
Value Value::string(Str s) {
    Value v;
    v.kind_ = Kind::kString;
    v.p_ = std::make_shared<Str>(std::move(s));
    return v;
}
Value Value::markup(Str s) {
    Value v = string(std::move(s));
    v.flags_ = kMarkup;
    return v;
}
Value Value::tagged(std::string s, int32_t source, size_t offset) {
    Str st;
    st.text = std::move(s);
    if (!st.text.empty()) st.spans.push_back({0, st.text.size(), source, offset});
    return string(std::move(st));
}
Value Value::list(List l) {
    Value v;
    v.kind_ = Kind::kList;
    v.p_ = std::shared_ptr<List>(new List(std::move(l)), &detail::Release::destroy<List>);
    detail::Release::made(v.p_, true);
    return v;
}
Value Value::tuple(List l) {
    Value v = list(std::move(l));
    v.flags_ = kTuple;
    return v;
}
Value Value::group(Value grouper, Value list) {
    Value v = tuple({std::move(grouper), std::move(list)});
    v.flags_ = kTuple | kGroup;
    return v;
}
Value Value::dict() { return dict(Dict()); }
Value Value::dict(Dict d) {
    Value v;
    v.kind_ = Kind::kDict;
    v.p_ = std::shared_ptr<Dict>(new Dict(std::move(d)), &detail::Release::destroy<Dict>);
    detail::Release::made(v.p_, false);
    return v;
}
Value Value::namespace_(Dict d) {
    Value v = dict(std::move(d));
    v.flags_ = kNamespace;
    return v;
}
Value Value::callable(std::shared_ptr<Callable> c) {
    Value v;
    v.kind_ = Kind::kCallable;
    v.p_ = std::move(c);
    return v;
}
Value Value::iterator(std::shared_ptr<Iterator> it) {
    Value v;
    v.kind_ = Kind::kIterator;
    v.p_ = std::move(it);
    return v;
}

const Str& Value::str() const { return *static_cast<const Str*>(p_.get()); }
const List& Value::list_ref() const { return *static_cast<const List*>(p_.get()); }
Dict& Value::dict_ref() const { return *static_cast<Dict*>(p_.get()); }
std::shared_ptr<Callable> Value::fn() const { return std::static_pointer_cast<Callable>(p_); }
Iterator& Value::iter() const { return *static_cast<Iterator*>(p_.get()); }
const std::string& Value::undefined_name() const {
    return kind_ == Kind::kUndefined && p_ ? static_cast<const UndefInfo*>(p_.get())->name : kEmpty;
}
const std::string& Value::undefined_hint() const {
    return kind_ == Kind::kUndefined && p_ ? static_cast<const UndefInfo*>(p_.get())->hint : kEmpty;
}
const Value* Value::find(const std::string& key) const {
    if (kind_ != Kind::kDict) return nullptr;
    return dict_ref().find(std::string_view(key));
}
void Value::set(const std::string& key, Value v) const { dict_ref().set(Value::string(key), std::move(v)); }

const Value* Dict::find(std::string_view key) const {
    auto it = by_string_.find(std::string(key));
    return it == by_string_.end() ? nullptr : &items_[it->second].second;
}
const Value* Dict::find(const Value& key) const {
    if (key.is_string()) return find(std::string_view(key.text()));
    for (size_t k : other_keys_)
        if (detail::equal(items_[k].first, key)) return &items_[k].second;
    return nullptr;
}
void Dict::set(Value key, Value v) {
    if (Value* x = const_cast<Value*>(find(key))) {
        *x = std::move(v);
        return;
    }
    if (key.is_string()) by_string_.emplace(key.text(), items_.size());
    else other_keys_.push_back(items_.size());
    items_.emplace_back(std::move(key), std::move(v));
}

Value value_from_json(const nlohmann::ordered_json& j) {
    switch (j.type()) {
        case nlohmann::ordered_json::value_t::null: return Value::none();
        case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_unsigned: {
            const auto u = j.get<uint64_t>();
            return u > static_cast<uint64_t>(INT64_MAX) ? Value::number(static_cast<double>(u)) : Value::integer(static_cast<int64_t>(u));
        }
        case nlohmann::ordered_json::value_t::number_float: return Value::number(j.get<double>());
        case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            List l;
            l.reserve(j.size());
            for (const auto& x : j) l.push_back(value_from_json(x));
            return Value::list(std::move(l));
        }
        case nlohmann::ordered_json::value_t::object: {
            Dict d;
            for (auto it = j.begin(); it != j.end(); ++it) d.set(Value::string(it.key()), value_from_json(it.value()));
            return Value::dict(std::move(d));
        }
        default: return Value::none();
    }
}

namespace detail {

// ---------------------------------------------------------------- strings with provenance

void str_append(Str& dst, const Str& src) {
    const size_t base = dst.text.size();
    dst.text += src.text;
    for (Span sp : src.spans) {
        sp.begin += base;
        sp.end += base;
        // Merge with the previous span when it continues the same source contiguously.
        if (!dst.spans.empty()) {
            Span& last = dst.spans.back();
            if (last.end == sp.begin && last.source == sp.source && last.offset + (last.end - last.begin) == sp.offset) {
                last.end = sp.end;
                continue;
            }
        }
        dst.spans.push_back(sp);
    }
}
void str_append(Str& dst, std::string_view s) { dst.text += s; }

Str str_sub(const Str& s, size_t b, size_t e) {
    Str out;
    out.text = s.text.substr(b, e - b);
    for (const Span& sp : s.spans) {
        size_t ob = std::max(sp.begin, b), oe = std::min(sp.end, e);
        if (oe <= ob) continue;
        out.spans.push_back({ob - b, oe - b, sp.source, sp.offset + (ob - sp.begin)});
    }
    return out;
}

std::vector<size_t> cp_bounds(const std::string& s) {
    std::vector<size_t> b;
    b.reserve(s.size() + 1);
    for (size_t k = 0; k < s.size(); ++k)
        if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) b.push_back(k);
    b.push_back(s.size());
    return b;
}
size_t cp_count(const std::string& s) {
    size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

uint32_t cp_at(const std::string& s, size_t b, size_t* len) {
    utf8proc_int32_t cp = 0;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + b), static_cast<utf8proc_ssize_t>(s.size() - b), &cp);
    *len = n > 0 ? static_cast<size_t>(n) : 1;
    return n > 0 ? static_cast<uint32_t>(cp) : 0xFFFD;
}

bool py_space(uint32_t c) { return ::cuset::detail::py_is_space(c); }

std::vector<uint32_t> cps_of(const std::string& s) {
    std::vector<uint32_t> out;
    for (size_t k = 0; k < s.size();) {
        size_t n;
        out.push_back(cp_at(s, k, &n));
        k += n;
    }
    return out;
}

std::string utf8_of(uint32_t cp) {
    utf8proc_uint8_t buf[4];
    auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
    return std::string(reinterpret_cast<char*>(buf), static_cast<size_t>(n));
}

const Value* arg(const Args& a, size_t pos, const char* kw) {
    if (pos < a.pos.size()) return &a.pos[pos];
    for (const auto& [k, v] : a.kw)
        if (k == kw) return &v;
    return nullptr;
}

// ---------------------------------------------------------------- errors and bounds

Interp::Interp(const std::string& name, const Value& context, const RenderLimits& limits) : name_(name), limits_(limits) {
    frames_.emplace_back();
    install_globals();
    if (context.kind() == K::kDict)
        for (const auto& [k, v] : context.dict_ref())
            if (k.is_string()) frames_[0].vars[k.text()] = v;
    bufs_.emplace_back();
    scope_base_ = 0;
}

Output Interp::run(const Body& body) {
    exec(body);
    Output o;
    o.text = std::move(bufs_[0].text);
    o.spans = std::move(bufs_[0].spans);
    o.generation = std::move(generation_);
    return o;
}

void Interp::fail(int line, const std::string& what) const {
    throw InputError(name_ + ":" + std::to_string(line) + ": " + error_text(what));
}

void Interp::undefined_error(const Value& v, int line) const {
    if (!v.undefined_hint().empty()) fail(line, v.undefined_hint());
    fail(line, v.undefined_name().empty() ? std::string("a value is undefined") : "'" + v.undefined_name() + "' is undefined");
}

Interp::DepthGuard::DepthGuard(Interp& interp, int line) : in(interp) {
    if (++in.depth_ > in.limits_.max_depth) {
        --in.depth_;
        in.fail(line, "rendering nests deeper than " + std::to_string(in.limits_.max_depth) +
                          " levels (cuset's bound for a chat template)");
    }
}

void Interp::step(int64_t n) {
    steps_ += n;
    if (steps_ > limits_.max_steps)
        fail(line_, "rendering takes more than " + std::to_string(limits_.max_steps) +
                        " steps (cuset's bound for a chat template)");
    if ((steps_ & 0xFFF) < n && signals_stop_requested())
        throw StoppedBySignal(name_ + ":" + std::to_string(line_) + ": rendering stopped by a signal");
}

void Interp::check_size(size_t n, int line) {
    if (n > limits_.max_string)
        fail(line, "a string of " + std::to_string(n) + " bytes is longer than " + std::to_string(limits_.max_string) +
                       " (cuset's bound for a chat template)");
}

void Interp::use_bytes(size_t n, int line) {
    bytes_ += static_cast<int64_t>(n);
    if (bytes_ > limits_.max_bytes)
        fail(line, "rendering makes more than " + std::to_string(limits_.max_bytes) +
                       " bytes of values (cuset's bound for a chat template)");
    step(static_cast<int64_t>(n >> 8));  // copying a byte is cheap, not free
}

Value Interp::str_value(Str s, int line, bool markup) {
    check_size(s.text.size(), line);
    use_bytes(s.text.size(), line);
    return markup ? Value::markup(std::move(s)) : Value::string(std::move(s));
}

Value Interp::make_list(List l, int line, bool tuple) {
    use_bytes(l.size() * sizeof(Value), line);
    return tuple ? Value::tuple(std::move(l)) : Value::list(std::move(l));
}

Value Interp::make_iterator(std::vector<Value> items, int line) {
    use_bytes(items.size() * sizeof(Value), line);
    auto it = std::make_shared<Iterator>();
    it->type_name = "generator";
    auto state = std::make_shared<std::pair<std::vector<Value>, size_t>>(std::move(items), 0);
    it->next = [state](Value* out) {
        if (state->second >= state->first.size()) return false;
        *out = std::move(state->first[state->second++]);
        return true;
    };
    return Value::iterator(std::move(it));
}

std::shared_ptr<Callable> Interp::fn(std::string name, std::function<Value(const Args&)> f) {
    auto c = std::make_shared<Callable>();
    c->name = std::move(name);
    c->call = std::move(f);
    return c;
}

// ---------------------------------------------------------------- statements

void Interp::emit(const Str& s, int line) {
    Str& b = bufs_.back();
    check_size(b.text.size() + s.text.size(), line);
    use_bytes(s.text.size(), line);
    str_append(b, s);
}

Str Interp::render_body(const Body& b, int line) {
    bufs_.emplace_back();
    struct Pop {
        std::vector<Str>& bufs;
        ~Pop() { bufs.pop_back(); }
    } pop{bufs_};
    exec(b);
    (void)line;
    return std::move(bufs_.back());
}

Flow Interp::exec(const Body& body) {
    for (const auto& s : body) {
        Flow f = exec(*s);
        if (f != Flow::kNormal) return f;
    }
    return Flow::kNormal;
}

Value Interp::lookup(const std::string& n) const {
    for (size_t k = frames_.size(); k-- > scope_base_;) {
        auto it = frames_[k].vars.find(n);
        if (it != frames_[k].vars.end()) return it->second;
    }
    if (scope_base_ > 0) {
        auto it = frames_[0].vars.find(n);
        if (it != frames_[0].vars.end()) return it->second;
    }
    return Value::undefined(n);
}

void Interp::assign(const Target& t, const Value& v, int line) {
    if (t.is_tuple()) {
        std::vector<Value> items = iterate(v, line);
        if (items.size() != t.items.size())
            fail(line, items.size() > t.items.size()
                           ? "too many values to unpack (expected " + std::to_string(t.items.size()) + ")"
                           : "not enough values to unpack (expected " + std::to_string(t.items.size()) + ", got " +
                                 std::to_string(items.size()) + ")");
        for (size_t k = 0; k < items.size(); ++k) assign(t.items[k], items[k], line);
        return;
    }
    if (!t.attr.empty()) {
        Value ns = lookup(t.name);
        if (!ns.is_namespace()) fail(line, "cannot assign attribute on non-namespace object");
        if (t.attr[0] == '_')
            fail(line, "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '" + t.attr + "'");
        ns.set(t.attr, v);
        return;
    }
    set_var(t.name, v);
}

Flow Interp::exec(const Stmt& s) {
    DepthGuard g(*this, s.line);
    line_ = s.line;
    step();
    switch (s.k) {
        case Stmt::K::kText: {
            Str t;
            t.text = s.text;
            emit(t, s.line);
            return Flow::kNormal;
        }
        case Stmt::K::kOutput: emit(to_str(eval(*s.expr), s.line), s.line); return Flow::kNormal;
        case Stmt::K::kIf:
            for (size_t b = 0; b < s.conds.size(); ++b)
                if (truthy(eval(*s.conds[b]))) return exec(s.bodies[b]);
            if (s.has_else) return exec(s.bodies.back());
            return Flow::kNormal;
        case Stmt::K::kFor: return exec_for(s);
        case Stmt::K::kSet: assign(s.target, eval(*s.expr), s.line); return Flow::kNormal;
        case Stmt::K::kSetBlock:
        case Stmt::K::kFilterBlock: {
            Value v = str_value(render_body(s.bodies[0], s.line), s.line);
            if (s.expr) {
                block_values_.push_back(v);
                struct Pop {
                    std::vector<Value>& v;
                    ~Pop() { v.pop_back(); }
                } pop{block_values_};
                v = eval(*s.expr);
            }
            if (s.k == Stmt::K::kSetBlock) assign(s.target, v, s.line);
            else emit(to_str(v, s.line), s.line);
            return Flow::kNormal;
        }
        case Stmt::K::kMacro: set_var(s.name, define_macro(s, false)); return Flow::kNormal;
        case Stmt::K::kCallBlock: {
            const Expr& c = *s.expr;
            Value callee = eval(*c.a[0]);
            Args a = eval_args(c, 1);
            a.kw.push_back({"caller", define_macro(s, true)});
            emit(to_str(call_value(callee, a, s.line), s.line), s.line);
            return Flow::kNormal;
        }
        case Stmt::K::kWith: {
            std::vector<Value> vals;
            for (const ExprP& e : s.defaults) vals.push_back(eval(*e));
            frames_.emplace_back();
            for (size_t k = 0; k < vals.size(); ++k) set_var(s.params[k], vals[k]);
            Flow f = exec(s.bodies[0]);
            frames_.pop_back();
            return f;
        }
        case Stmt::K::kScope: {
            frames_.emplace_back();
            Flow f = exec(s.bodies[0]);
            frames_.pop_back();
            return f;
        }
        case Stmt::K::kGeneration: {
            if (bufs_.size() != 1) fail(s.line, "{% generation %} inside captured output is not supported");
            size_t start = bufs_[0].text.size();
            Flow f = exec(s.bodies[0]);
            generation_.push_back({start, bufs_[0].text.size()});
            return f;
        }
        case Stmt::K::kBreak: return Flow::kBreak;
        case Stmt::K::kContinue: return Flow::kContinue;
        case Stmt::K::kNoLoader: fail(s.line, "{% " + s.text + " %}: no loader for this environment specified");
    }
    return Flow::kNormal;
}

Flow Interp::exec_for(const Stmt& s) {
    if (s.recursive) fail(s.line, "unsupported construct: recursive for loop");
    Value seq = eval(*s.expr);
    std::vector<Value> items;
    if (seq.kind() == K::kList) {
        step(static_cast<int64_t>(seq.list_ref().size()));
        items = seq.list_ref();
    } else {
        items = iterate(seq, s.line);
    }
    if (s.filter) {
        std::vector<Value> kept;
        for (const Value& it : items) {
            frames_.emplace_back();
            assign(s.target, it, s.line);
            const bool keep = truthy(eval(*s.filter));
            frames_.pop_back();
            if (keep) kept.push_back(it);
        }
        items.swap(kept);
    }
    const size_t n = items.size();
    std::shared_ptr<Value> last_changed;  // loop.changed()'s memory
    for (size_t k = 0; k < n; ++k) {
        line_ = s.line;
        step();
        frames_.emplace_back();  // a fresh scope each iteration, as Jinja2's loop body
        assign(s.target, items[k], s.line);
        if (s.uses_loop) {
            step(16);
            Value loop = Value::dict();
            loop.set("index", Value::integer(static_cast<int64_t>(k + 1)));
            loop.set("index0", Value::integer(static_cast<int64_t>(k)));
            loop.set("revindex", Value::integer(static_cast<int64_t>(n - k)));
            loop.set("revindex0", Value::integer(static_cast<int64_t>(n - k - 1)));
            loop.set("first", Value::boolean(k == 0));
            loop.set("last", Value::boolean(k + 1 == n));
            loop.set("length", Value::integer(static_cast<int64_t>(n)));
            loop.set("depth", Value::integer(1));
            loop.set("depth0", Value::integer(0));
            loop.set("previtem", k > 0 ? items[k - 1] : Value::undefined("previtem", "there is no previous item"));
            loop.set("nextitem", k + 1 < n ? items[k + 1] : Value::undefined("nextitem", "there is no next item"));
            loop.set("cycle", Value::callable(fn("cycle", [this, k](const Args& a) {
                         if (a.pos.empty()) fail(line_, "no items for cycling given");
                         return a.pos[k % a.pos.size()];
                     })));
            if (!last_changed) last_changed = std::make_shared<Value>();
            loop.set("changed", Value::callable(fn("changed", [this, last_changed](const Args& a) {
                         Value now = Value::tuple(a.pos);
                         const bool changed = last_changed->is_undefined() || !equal(*last_changed, now);
                         *last_changed = now;
                         return Value::boolean(changed);
                     })));
            set_var("loop", loop);
        }
        Flow f = exec(s.bodies[0]);
        frames_.pop_back();
        if (f == Flow::kBreak) break;
    }
    if (n == 0 && s.has_else) return exec(s.bodies[1]);
    return Flow::kNormal;
}

// ---------------------------------------------------------------- macros

Value Interp::define_macro(const Stmt& m, bool is_caller) {
    // A macro sees the template's top level and, when it is defined inside a scope (a loop, a
    // macro, a call block's caller), that scope's variables as they are now.
    std::shared_ptr<std::vector<Frame>> closure;
    if (frames_.size() > 1 && frames_.size() > scope_base_) {
        closure = std::make_shared<std::vector<Frame>>();
        for (size_t k = std::max<size_t>(scope_base_, 1); k < frames_.size(); ++k) closure->push_back(frames_[k]);
        step(static_cast<int64_t>(closure->size()) * 8);
    }
    const Stmt* mp = &m;
    return Value::callable(fn(is_caller ? "caller" : m.name, [this, mp, closure](const Args& a) {
        return call_macro(*mp, a, closure.get(), line_);
    }));
}

Value Interp::call_macro(const Stmt& m, const Args& a, const std::vector<Frame>* closure, int line) {
    if (calls_ >= limits_.max_calls)
        fail(line, "macro calls nest deeper than " + std::to_string(limits_.max_calls) + " levels (cuset's bound for a chat template)");
    const std::string name = m.k == Stmt::K::kMacro ? m.name : "caller";
    const size_t n_params = m.params.size();
    // Jinja2's Macro.__call__: positional, then keywords by name, then caller, kwargs, varargs.
    std::vector<std::pair<std::string, Value>> kw = a.kw;
    auto take_kw = [&](const std::string& p, Value* out) {
        for (size_t k = 0; k < kw.size(); ++k)
            if (kw[k].first == p) {
                *out = kw[k].second;
                kw.erase(kw.begin() + static_cast<long>(k));
                return true;
            }
        return false;
    };
    std::vector<std::pair<bool, Value>> bound(n_params);  // given?, value
    for (size_t k = 0; k < n_params && k < a.pos.size(); ++k) bound[k] = {true, a.pos[k]};
    bool found_caller = false;
    if (a.pos.size() < n_params)
        for (size_t k = a.pos.size(); k < n_params; ++k) {
            bound[k].first = take_kw(m.params[k], &bound[k].second);
            if (m.params[k] == "caller") found_caller = true;
        }
    Value caller;
    const bool wants_caller = m.uses_caller && !found_caller;
    if (wants_caller && !take_kw("caller", &caller)) caller = Value::undefined("caller", "No caller defined");
    Value kwargs;
    if (m.uses_kwargs) {
        Dict d;
        for (auto& [k, v] : kw) d.set(Value::string(k), v);
        kwargs = Value::dict(std::move(d));
    } else if (!kw.empty()) {
        for (auto& [k, v] : kw)
            if (k == "caller")
                fail(line, "macro '" + name + "' was invoked with two values for the special caller argument");
        fail(line, "macro '" + name + "' takes no keyword argument '" + kw[0].first + "'");
    }
    Value varargs;
    if (m.uses_varargs) {
        List extra;
        for (size_t k = n_params; k < a.pos.size(); ++k) extra.push_back(a.pos[k]);
        varargs = Value::tuple(std::move(extra));
    } else if (a.pos.size() > n_params) {
        fail(line, "macro '" + name + "' takes not more than " + std::to_string(n_params) + " argument(s)");
    }

    ++calls_;
    const size_t saved_base = scope_base_, saved_size = frames_.size();
    struct Restore {
        Interp& in;
        size_t base, size;
        ~Restore() {
            in.frames_.resize(size);
            in.scope_base_ = base;
            --in.calls_;
        }
    } restore{*this, saved_base, saved_size};
    scope_base_ = frames_.size();
    if (closure)
        for (const Frame& f : *closure) frames_.push_back(f);
    frames_.emplace_back();
    for (size_t k = 0; k < n_params; ++k) {
        if (bound[k].first) set_var(m.params[k], bound[k].second);
        else if (m.defaults[k]) set_var(m.params[k], eval(*m.defaults[k]));  // may read the parameters before it
        else set_var(m.params[k], Value::undefined(m.params[k], "missing argument '" + m.params[k] + "' of macro '" + name + "'"));
    }
    if (wants_caller) set_var("caller", caller);
    if (m.uses_kwargs) set_var("kwargs", kwargs);
    if (m.uses_varargs) set_var("varargs", varargs);
    return str_value(render_body(m.bodies[0], line), line);
}

// ---------------------------------------------------------------- expressions

Args Interp::eval_args(const Expr& e, size_t first) {
    Args a;
    const size_t n_kw = e.kw.size();
    const size_t n_pos = e.a.size() - first - n_kw;
    for (size_t k = 0; k < n_pos; ++k) a.pos.push_back(eval(*e.a[first + k]));
    for (size_t k = 0; k < n_kw; ++k) a.kw.push_back({e.kw[k], eval(*e.a[first + n_pos + k])});
    if (e.dyn_args) {
        Value v = eval(*e.dyn_args);
        for (Value& x : iterate(v, e.line)) a.pos.push_back(std::move(x));
    }
    if (e.dyn_kwargs) {
        Value v = eval(*e.dyn_kwargs);
        if (v.kind() != K::kDict) fail(e.line, std::string("argument after ** must be a mapping, not ") + type_name(v));
        for (const auto& [k, x] : v.dict_ref()) {
            if (!k.is_string()) fail(e.line, "keywords must be strings");
            for (const auto& [name, _] : a.kw)
                if (name == k.text()) fail(e.line, "got multiple values for keyword argument '" + name + "'");
            a.kw.push_back({k.text(), x});
        }
    }
    return a;
}

Value Interp::call_value(const Value& f, const Args& a, int line) {
    if (f.kind() != K::kCallable) {
        if (f.is_undefined()) undefined_error(f, line);
        fail(line, std::string("'") + type_name(f) + "' object is not callable");
    }
    line_ = line;
    step();
    return f.fn()->call(a);
}

Value Interp::call(const Expr& e) {
    Value f = eval(*e.a[0]);
    Args a = eval_args(e, 1);
    return call_value(f, a, e.line);
}

Value Interp::eval(const Expr& e) {
    DepthGuard g(*this, e.line);
    step();
    switch (e.k) {
        case Expr::K::kLit: return e.lit;
        case Expr::K::kName: return lookup(e.s);
        case Expr::K::kList:
        case Expr::K::kTuple: {
            List l;
            l.reserve(e.a.size());
            for (const auto& x : e.a) l.push_back(eval(*x));
            return make_list(std::move(l), e.line, e.k == Expr::K::kTuple);
        }
        case Expr::K::kDict: {
            Dict d;
            for (size_t k = 0; k + 1 < e.a.size(); k += 2) {
                Value key = eval(*e.a[k]);
                if (!hashable(key)) fail(e.line, std::string("unhashable type: '") + type_name(key) + "'");
                d.set(std::move(key), eval(*e.a[k + 1]));
            }
            use_bytes(d.size() * 2 * sizeof(Value), e.line);
            return Value::dict(std::move(d));
        }
        case Expr::K::kAttr: return getattr(eval(*e.a[0]), e.s, e.line);
        case Expr::K::kIndex: {
            Value obj = eval(*e.a[0]);
            return getitem(obj, eval(*e.a[1]), e.line);
        }
        case Expr::K::kSlice: {
            Value obj = eval(*e.a[0]);
            auto opt = [&](size_t k) { return e.a[k] ? eval(*e.a[k]) : Value::none(); };
            Value start = opt(1), stop = opt(2), st = opt(3);
            return slice(obj, start, stop, st, e.line);
        }
        case Expr::K::kCall: return call(e);
        case Expr::K::kFilter: {
            Value v = eval(*e.a[0]);
            Args a = eval_args(e, 1);
            line_ = e.line;
            return filter(e.s, v, a, e.line);
        }
        case Expr::K::kTest: {
            Value v = eval(*e.a[0]);
            Args a = eval_args(e, 1);
            line_ = e.line;
            bool r = test(e.s, v, a, e.line);
            return Value::boolean(e.negated ? !r : r);
        }
        case Expr::K::kNeg:
        case Expr::K::kPos: {
            Value v = eval(*e.a[0]);
            if (v.is_undefined()) undefined_error(v, e.line);
            if (!v.is_number())
                fail(e.line, std::string("bad operand type for unary ") + (e.k == Expr::K::kNeg ? "-" : "+") + ": '" + type_name(v) + "'");
            if (v.kind() == K::kFloat) return Value::number(e.k == Expr::K::kNeg ? -v.as_float() : v.as_float());
            if (e.k == Expr::K::kPos) return Value::integer(v.as_int());
            if (v.as_int() == INT64_MIN) fail(e.line, "integer overflow (cuset's integers are 64-bit)");
            return Value::integer(-v.as_int());
        }
        case Expr::K::kNot: return Value::boolean(!truthy(eval(*e.a[0])));
        case Expr::K::kAnd: {
            Value a = eval(*e.a[0]);
            return truthy(a) ? eval(*e.a[1]) : a;
        }
        case Expr::K::kOr: {
            Value a = eval(*e.a[0]);
            return truthy(a) ? a : eval(*e.a[1]);
        }
        case Expr::K::kCond: {
            if (truthy(eval(*e.a[1]))) return eval(*e.a[0]);
            return e.a[2] ? eval(*e.a[2]) : Value::undefined("", "the inline if-expression evaluated to false and no else section was defined");
        }
        case Expr::K::kBin: {
            Value a = eval(*e.a[0]);
            Value b = eval(*e.a[1]);
            return binary(e.s, a, b, e.line);
        }
        case Expr::K::kConcat: {
            Str s;
            for (const ExprP& x : e.a) {
                Str part = to_str(eval(*x), e.line);
                check_size(s.text.size() + part.text.size(), e.line);
                str_append(s, part);
            }
            return str_value(std::move(s), e.line);
        }
        case Expr::K::kCompare: {
            Value left = eval(*e.a[0]);
            for (size_t k = 0; k < e.ops.size(); ++k) {
                Value right = eval(*e.a[k + 1]);
                if (!compare(e.ops[k], left, right, e.line)) return Value::boolean(false);
                left = right;
            }
            return Value::boolean(true);
        }
        case Expr::K::kBlockValue: return block_values_.back();
    }
    return Value::undefined();
}

// The sandbox's getattr: a type's attribute first (a method, refused when it modifies a list or
// dict, or any dunder), then the item of that name.
Value Interp::getattr(const Value& obj, const std::string& attr, int line) {
    if (obj.is_undefined()) undefined_error(obj, line);
    // Python's objects have these (and a dict finds any other name among its keys).
    static const char* const kDunders[] = {
        "__class__", "__dict__", "__doc__", "__init__", "__new__", "__repr__", "__str__", "__eq__", "__ne__", "__hash__",
        "__getattribute__", "__setattr__", "__delattr__", "__dir__", "__format__", "__reduce__", "__reduce_ex__",
        "__sizeof__", "__subclasshook__", "__init_subclass__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__",
        "__setitem__", "__delitem__", "__contains__", "__iter__", "__len__", "__reversed__", "__class_getitem__",
        "__or__", "__ror__", "__ior__", "__add__", "__mul__", "__mod__", "__rmul__", "__rmod__", "__call__",
        "__globals__", "__code__", "__builtins__", "__mro__", "__subclasses__", "__bases__", "__base__", "__name__",
        "__qualname__", "__module__", "__func__", "__self__", "__closure__", "__annotations__", "__defaults__",
        "__kwdefaults__", "__weakref__", "__slots__", "__getstate__"};
    const bool dunder = attr.size() > 4 && attr.compare(0, 2, "__") == 0 && attr.compare(attr.size() - 2, 2, "__") == 0 &&
                        (obj.kind() != K::kDict || std::any_of(std::begin(kDunders), std::end(kDunders),
                                                               [&](const char* d) { return attr == d; }));
    if (dunder || (obj.is_namespace() && !attr.empty() && attr[0] == '_'))
        return Value::undefined(attr, "access to attribute '" + attr + "' of '" + type_name(obj) + "' object is unsafe");
    if (obj.is_namespace()) {
        if (const Value* v = obj.find(attr)) return *v;
        return Value::undefined(attr, "'" + std::string(type_name(obj)) + "' object has no attribute '" + attr + "'");
    }
    Value m;
    if (method(obj, attr, line, &m)) return m;
    if (obj.kind() == K::kDict) {
        if (const Value* v = obj.find(attr)) return *v;
        return Value::undefined(attr, "'dict object' has no attribute '" + attr + "'");
    }
    return Value::undefined(attr, "'" + std::string(type_name(obj)) + " object' has no attribute '" + attr + "'");
}

// The sandbox's getitem: the item first, then (for a string key) the attribute; what fails
// either way is undefined.
Value Interp::getitem(const Value& obj, const Value& key, int line) {
    if (obj.is_undefined()) undefined_error(obj, line);
    if (obj.kind() == K::kDict && !obj.is_namespace()) {
        if (hashable(key))
            if (const Value* v = obj.dict_ref().find(key)) return *v;
    } else if ((obj.kind() == K::kList || obj.is_string()) && (key.kind() == K::kInt || key.kind() == K::kBool)) {
        int64_t i = key.as_int();
        if (obj.kind() == K::kList) {
            const auto n = static_cast<int64_t>(obj.list_ref().size());
            if (i < 0) i += n;
            if (i >= 0 && i < n) return obj.list_ref()[static_cast<size_t>(i)];
        } else {
            const std::string& t = obj.text();
            const auto n = static_cast<int64_t>(cp_count(t));
            if (i < 0) i += n;
            if (i >= 0 && i < n) {
                step(static_cast<int64_t>(t.size() >> 6));
                size_t b = 0, cp = 0;
                while (cp < static_cast<size_t>(i)) {
                    size_t len;
                    cp_at(t, b, &len);
                    b += len;
                    ++cp;
                }
                size_t len;
                cp_at(t, b, &len);
                Value r = Value::string(str_sub(obj.str(), b, b + len));
                return obj.is_markup() ? Value::markup(r.str()) : r;
            }
        }
        return Value::undefined("", "'" + std::string(type_name(obj)) + " object' has no element " + std::to_string(key.as_int()));
    }
    if (key.is_string() && !key.text().empty()) return getattr(obj, key.text(), line);
    return Value::undefined(key.is_string() ? key.text() : "",
                            "'" + std::string(type_name(obj)) + " object' has no element " + (key.is_string() ? key.text() : ""));
}

Value Interp::slice(const Value& obj, const Value& start, const Value& stop, const Value& step_v, int line) {
    if (obj.is_undefined()) undefined_error(obj, line);
    auto index = [&](const Value& v) {
        if (v.kind() != K::kInt && v.kind() != K::kBool && !v.is_none())
            fail(line, "slice indices must be integers or None or have an __index__ method");
        return v.as_int();
    };
    const int64_t st = step_v.is_none() ? 1 : index(step_v);
    if (st == 0) fail(line, "slice step cannot be zero");
    int64_t n;
    std::vector<size_t> b;
    if (obj.kind() == K::kList) n = static_cast<int64_t>(obj.list_ref().size());
    else if (obj.is_string()) {
        b = cp_bounds(obj.text());
        step(static_cast<int64_t>(b.size() >> 6));
        n = static_cast<int64_t>(b.size() - 1);
    } else {
        fail(line, std::string("'") + type_name(obj) + "' object is not subscriptable");
    }
    // Python's slice.indices().
    auto norm = [&](const Value& v, bool is_start) -> int64_t {
        if (v.is_none()) return st > 0 ? (is_start ? 0 : n) : (is_start ? n - 1 : -1);
        int64_t i = index(v);
        if (i < 0) {
            i = i < -n ? (st > 0 ? 0 : -1) : i + n;
            return i;
        }
        return st > 0 ? std::min(i, n) : std::min(i, n - 1);
    };
    const int64_t lo = norm(start, true), hi = norm(stop, false);
    if (obj.kind() == K::kList) {
        List out;
        for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
            out.push_back(obj.list_ref()[static_cast<size_t>(i)]);
            if (st > 0 ? i > INT64_MAX - st : i < INT64_MIN - st) break;
        }
        step(static_cast<int64_t>(out.size()));
        return make_list(std::move(out), line, obj.is_tuple());
    }
    Str out;
    if (st == 1) {
        out = lo < hi ? str_sub(obj.str(), b[static_cast<size_t>(lo)], b[static_cast<size_t>(hi)]) : Str{};
    } else {
        for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
            str_append(out, str_sub(obj.str(), b[static_cast<size_t>(i)], b[static_cast<size_t>(i) + 1]));
            step();
            if (st > 0 ? i > INT64_MAX - st : i < INT64_MIN - st) break;
        }
    }
    return str_value(std::move(out), line, obj.is_markup());
}

std::vector<Value> Interp::iterate(const Value& v, int line) {
    switch (v.kind()) {
        case K::kUndefined: return {};
        case K::kList:
            step(static_cast<int64_t>(v.list_ref().size()));
            use_bytes(v.list_ref().size() * sizeof(Value), line);
            return v.list_ref();
        case K::kDict: {
            if (v.is_namespace()) break;
            std::vector<Value> out;
            for (const auto& kv : v.dict_ref()) out.push_back(kv.first);
            step(static_cast<int64_t>(out.size()));
            return out;
        }
        case K::kString: {
            std::vector<Value> out;
            std::vector<size_t> b = cp_bounds(v.text());
            step(static_cast<int64_t>(b.size()));
            use_bytes(b.size() * sizeof(Value), line);
            for (size_t k = 0; k + 1 < b.size(); ++k) out.push_back(Value::string(str_sub(v.str(), b[k], b[k + 1])));
            return out;
        }
        case K::kIterator: {
            std::vector<Value> out;
            Value x;
            while (v.iter().next(&x)) {
                step();
                out.push_back(std::move(x));
            }
            return out;
        }
        default: break;
    }
    fail(line, std::string("'") + type_name(v) + "' object is not iterable");
}

bool Interp::contains(const Value& hay, const Value& needle, int line) {
    switch (hay.kind()) {
        case K::kString:
            if (!needle.is_string()) fail(line, std::string("'in <string>' requires string as left operand, not ") + type_name(needle));
            step(static_cast<int64_t>(hay.text().size() >> 6));
            return hay.text().find(needle.text()) != std::string::npos;
        case K::kList:
            for (const Value& x : hay.list_ref()) {
                step();
                if (equal(x, needle)) return true;
            }
            return false;
        case K::kDict:
            if (hay.is_namespace()) break;
            if (!hashable(needle)) fail(line, std::string("unhashable type: '") + type_name(needle) + "'");
            return hay.dict_ref().find(needle) != nullptr;
        case K::kUndefined: return false;
        case K::kIterator: {
            Value x;
            while (hay.iter().next(&x)) {
                step();
                if (equal(x, needle)) return true;
            }
            return false;
        }
        default: break;
    }
    fail(line, std::string("argument of type '") + type_name(hay) + "' is not iterable");
}

bool Interp::compare(const std::string& op, const Value& a, const Value& b, int line) {
    if (op == "==") return equal(a, b);
    if (op == "!=") return !equal(a, b);
    if (op == "in") return contains(b, a, line);
    if (op == "notin") return !contains(b, a, line);
    if (a.is_undefined()) undefined_error(a, line);
    if (b.is_undefined()) undefined_error(b, line);
    const int c = order(a, b, line);
    if (c == 2) fail(line, "'" + op + "' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
    if (op == "<") return c < 0;
    if (op == ">") return c > 0;
    if (op == "<=") return c <= 0;
    return c >= 0;
}

Value Interp::int_op(const std::string& op, int64_t i, int64_t j, int line) {
    int64_t r = 0;
    auto overflow = [&]() { fail(line, "integer overflow (cuset's integers are 64-bit)"); };
    if (op == "+") {
        if (__builtin_add_overflow(i, j, &r)) overflow();
    } else if (op == "-") {
        if (__builtin_sub_overflow(i, j, &r)) overflow();
    } else if (op == "*") {
        if (__builtin_mul_overflow(i, j, &r)) overflow();
    } else if (op == "//" || op == "%") {
        if (j == 0) fail(line, op == "//" ? "integer division or modulo by zero" : "integer modulo by zero");
        if (i == INT64_MIN && j == -1) {
            if (op == "//") overflow();
            return Value::integer(0);
        }
        int64_t q = i / j, m = i % j;
        if (m != 0 && ((m < 0) != (j < 0))) {
            --q;
            m += j;
        }
        r = op == "//" ? q : m;
    } else if (op == "**") {
        if (j < 0) return Value::number(std::pow(static_cast<double>(i), static_cast<double>(j)));
        int64_t base = i, e = j;
        r = 1;
        while (e > 0) {  // square and multiply: at most 63 rounds
            if (e & 1)
                if (__builtin_mul_overflow(r, base, &r)) overflow();
            e >>= 1;
            if (e > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
        }
    } else {
        fail(line, "unknown operator " + op);
    }
    return Value::integer(r);
}

Value Interp::binary(const std::string& op, const Value& a, const Value& b, int line) {
    if (a.is_undefined()) undefined_error(a, line);
    // str % Undefined formats it as one argument (str() of it is empty, repr() "Undefined").
    if (b.is_undefined() && !(op == "%" && a.is_string())) undefined_error(b, line);
    auto unsupported = [&]() {
        fail(line, "unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
    };
    if (op == "+") {
        if (a.is_string() && b.is_string()) {
            // Markup + str escapes the str (and str + Markup, through Markup.__radd__).
            const bool markup = a.is_markup() || b.is_markup();
            Str l = markup && !a.is_markup() ? html_escape(a, line) : a.str();
            Str r = markup && !b.is_markup() ? html_escape(b, line) : b.str();
            check_size(l.text.size() + r.text.size(), line);
            str_append(l, r);
            return str_value(std::move(l), line, markup);
        }
        if (a.kind() == K::kList && b.kind() == K::kList) {
            if (a.is_tuple() != b.is_tuple())
                fail(line, std::string("can only concatenate ") + type_name(a) + " (not \"" + type_name(b) + "\") to " + type_name(a));
            const size_t n = a.list_ref().size() + b.list_ref().size();
            step(static_cast<int64_t>(n));
            use_bytes(n * sizeof(Value), line);
            List l;
            l.reserve(n);
            l.insert(l.end(), a.list_ref().begin(), a.list_ref().end());
            l.insert(l.end(), b.list_ref().begin(), b.list_ref().end());
            return Value(a.is_tuple() ? Value::tuple(std::move(l)) : Value::list(std::move(l)));
        }
    }
    if (op == "*") {
        const bool a_int = a.kind() == K::kInt || a.kind() == K::kBool, b_int = b.kind() == K::kInt || b.kind() == K::kBool;
        if ((a.is_string() && b_int) || (b.is_string() && a_int) || (a.kind() == K::kList && b_int) || (b.kind() == K::kList && a_int)) {
            const Value& s = a_int ? b : a;
            const int64_t n = std::max<int64_t>(0, a_int ? a.as_int() : b.as_int());
            if (s.is_string()) {
                const size_t len = s.text().size();
                size_t total;
                if (__builtin_mul_overflow(len, static_cast<size_t>(n), &total)) total = SIZE_MAX;
                check_size(total, line);
                use_bytes(len * static_cast<size_t>(n), line);
                Str out;
                out.text.reserve(len * static_cast<size_t>(n));
                for (int64_t k = 0; k < n; ++k) str_append(out, s.str());
                return s.is_markup() ? Value::markup(std::move(out)) : Value::string(std::move(out));
            }
            const size_t len = s.list_ref().size();
            if (len > 0 && static_cast<uint64_t>(n) > static_cast<uint64_t>(limits_.max_bytes) / (len * sizeof(Value)))
                use_bytes(static_cast<size_t>(limits_.max_bytes) + 1, line);
            step(static_cast<int64_t>(len) * n);
            use_bytes(len * static_cast<size_t>(n) * sizeof(Value), line);
            List out;
            out.reserve(len * static_cast<size_t>(n));
            for (int64_t k = 0; k < n; ++k) out.insert(out.end(), s.list_ref().begin(), s.list_ref().end());
            return s.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
        }
    }
    if (op == "%" && a.is_string()) return percent_format(a, b, line);
    if (!a.is_number() || !b.is_number()) unsupported();
    const bool fl = a.kind() == K::kFloat || b.kind() == K::kFloat;
    if (!fl && op != "/") return int_op(op, a.as_int(), b.as_int(), line);
    const double x = a.as_float(), y = b.as_float();
    if (op == "+") return Value::number(x + y);
    if (op == "-") return Value::number(x - y);
    if (op == "*") return Value::number(x * y);
    if (op == "/") {
        if (y == 0) fail(line, "division by zero");
        return Value::number(x / y);
    }
    if (op == "//" || op == "%") {
        if (y == 0) fail(line, "float floor division by zero");
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        if (op == "%") return Value::number(m == 0 ? std::copysign(0.0, y) : m);
        double q = std::floor((x - m) / y);
        return Value::number(q);
    }
    if (op == "**") {
        if (x == 0 && y < 0) fail(line, "0.0 cannot be raised to a negative power");
        if (x < 0 && y != std::floor(y)) fail(line, "unsupported construct: a complex result of **");
        double r = std::pow(x, y);
        if (std::isinf(r) && !std::isinf(x) && !std::isinf(y)) fail(line, "(34, 'Numerical result out of range')");
        return Value::number(r);
    }
    fail(line, "unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

}  // namespace detail

// ---------------------------------------------------------------- the template

Template::Template(const std::string& source, std::string name) : name_(std::move(name)) {
    prog_ = std::make_shared<const detail::Program>(detail::parse(source, name_));
}

Output Template::render(const Value& context, const RenderLimits& limits) const {
    const detail::RenderArena arena;  // declared first: emptied after the interpreter is gone
    detail::Interp in(name_, context, limits);
    return in.run(prog_->body);
}

bool Template::has_generation() const { return prog_->has_generation; }

std::vector<std::string> filter_names() { return detail::filter_names(); }

std::vector<std::string> unimplemented_jinja2_filters() {
    const std::vector<std::string> ours = detail::filter_names();
    std::vector<std::string> out;
    for (const std::string& f : detail::jinja2_filters())
        if (std::find(ours.begin(), ours.end(), f) == ours.end()) out.push_back(f);
    return out;
}

}  // namespace cuset::jinja
