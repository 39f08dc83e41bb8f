// The syntax tree of a parsed Jinja template (jinja_parse.cpp builds it, jinja.cpp evaluates it).
// Internal to the text library.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/text/jinja.h"

namespace cuset::jinja::detail {

// Nesting the parser accepts: of blocks, and the depth of an expression's tree (Jinja2 itself stops
// near 80 nested parentheses and 100 nested blocks, on Python's recursion and indentation limits).
inline constexpr int kMaxParseDepth = 256;

struct Expr;
using ExprP = std::shared_ptr<Expr>;

struct Expr {
    enum class K {
        kLit, kName, kList, kTuple, kDict, kAttr, kIndex, kSlice, kCall, kFilter, kTest,
        kNeg, kPos, kNot, kAnd, kOr, kBin, kConcat, kCompare, kCond,
        kBlockValue,  // the rendered body of a {% filter %} block or a filtered {% set %} block
    };
    K k = K::kLit;
    int line = 0;
    int depth = 1;                  // of the subtree (the parser bounds it)
    Value lit;                      // kLit
    std::string s;                  // name, attribute, filter/test name, binary operator
    std::vector<ExprP> a;           // children (kSlice: object, start, stop, step; null = absent; kDict: key, value, ...)
    std::vector<std::string> kw;    // keyword names of the last kw.size() entries of `a` (calls, filters, tests)
    ExprP dyn_args, dyn_kwargs;     // calls, filters, tests: *args and **kwargs
    std::vector<std::string> ops;   // kCompare: the operators between a[0], a[1], ...
    bool negated = false;           // kTest: `is not`
};

struct Stmt;
using StmtP = std::shared_ptr<Stmt>;
using Body = std::vector<StmtP>;

// An assignment target: a name, `ns.attr`, or a tuple of targets.
struct Target {
    std::string name, attr;        // attr: `name.attr` (a namespace's attribute)
    std::vector<Target> items;     // a tuple when non-empty
    bool is_tuple() const { return !items.empty(); }
};

struct Stmt {
    enum class K {
        kText, kOutput, kIf, kFor, kSet, kSetBlock, kMacro, kCallBlock, kFilterBlock, kWith, kScope,
        kGeneration, kBreak, kContinue,
        kNoLoader,  // include, import, from, extends: Jinja2 fails when it reaches one (no loader)
    };
    K k = K::kText;
    int line = 0;
    std::string text;                    // kText; kNoLoader: the tag
    ExprP expr;                          // kOutput, kFor (iterable), kSet (value), kCallBlock (the call),
                                         // kSetBlock/kFilterBlock: the filters (over a kBlockValue; may be null)
    std::vector<ExprP> conds;            // kIf: one per branch
    std::vector<Body> bodies;            // kIf: one per branch (+ else); kFor: body (+ else); others: body
    bool has_else = false;
    Target target;                       // kFor, kSet, kSetBlock
    ExprP filter;                        // kFor: `for x in y if cond`
    bool recursive = false;              // kFor
    bool uses_loop = false;              // kFor: its body or filter reads `loop` (Jinja2 makes it only then)
    std::string name;                    // kMacro
    std::vector<std::string> params;     // kMacro, kCallBlock (the caller's parameters), kWith (names)
    std::vector<ExprP> defaults;         // kMacro, kCallBlock: per param, null = none; kWith: the values
    bool uses_varargs = false, uses_kwargs = false, uses_caller = false;  // kMacro, kCallBlock
};

struct Program {
    Body body;
    bool has_generation = false;
};

// Whether Jinja2 (with transformers' tojson) has a filter / test of this name: the parser refuses
// another outside a conditional, as Jinja2's compiler does.
bool jinja2_filter(const std::string& name);
bool jinja2_test(const std::string& name);
std::vector<std::string> jinja2_filters();  // Jinja2's filters (and transformers' tojson), by name
std::vector<std::string> filter_names();    // the filters cuset implements: kFilters in jinja_builtins.cpp

// An error message as one line: controls escaped, valid UTF-8, at most a few hundred bytes.
std::string error_text(std::string_view what);

// Parses the whole template source; InputError "<name>:<line>: ..." on errors.
Program parse(const std::string& source, const std::string& name);

}  // namespace cuset::jinja::detail
