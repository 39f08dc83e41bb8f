// The syntax tree of a parsed Jinja template (jinja_parse.cpp builds it, jinja.cpp evaluates it).
// Internal to the text library.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuset/text/jinja.h"

namespace cuset::jinja::detail {

struct Expr;
using ExprP = std::shared_ptr<Expr>;

struct Expr {
    enum class K {
        kLit, kName, kList, kTuple, kDict, kAttr, kIndex, kSlice, kCall, kFilter, kTest,
        kNeg, kPos, kNot, kAnd, kOr, kBin, kCompare, kCond
    };
    K k = K::kLit;
    int line = 0;
    Value lit;                      // kLit
    std::string s;                  // name, attribute, filter/test name, binary operator
    std::vector<ExprP> a;           // children (kSlice: object, start, stop, step; null = absent)
    std::vector<std::string> kw;    // keyword names of the last kw.size() entries of `a` (calls, filters, tests)
    std::vector<std::string> ops;   // kCompare: the operators between a[0], a[1], ...
    bool negated = false;           // kTest: `is not`
};

struct Stmt;
using StmtP = std::shared_ptr<Stmt>;
using Body = std::vector<StmtP>;

struct Stmt {
    enum class K { kText, kOutput, kIf, kFor, kSet, kSetBlock, kMacro, kGeneration, kBreak, kContinue };
    K k = K::kText;
    int line = 0;
    std::string text;                    // kText
    ExprP expr;                          // kOutput, kFor (iterable), kSet (value)
    std::vector<ExprP> conds;            // kIf: one per branch
    std::vector<Body> bodies;            // kIf: one per branch (+ else); kFor: body (+ else); kSetBlock/kMacro/kGeneration: body
    bool has_else = false;
    std::vector<std::string> targets;    // kFor / kSet: names (kSet with ns: {ns, attr} and attr_target)
    bool attr_target = false;            // kSet: `set ns.attr = ...`
    ExprP filter;                        // kFor: `for x in y if cond`
    std::string name;                    // kMacro / kSetBlock
    std::vector<std::string> params;     // kMacro
    std::vector<ExprP> defaults;         // kMacro: per param, null = none
};

struct Program {
    Body body;
    bool has_generation = false;
};

// The names the evaluator implements (jinja.cpp); the parser refuses any other.
bool supported_filter(const std::string& name);
bool supported_test(const std::string& name);
bool supported_global(const std::string& name);   // functions callable by name: range, namespace, ...
bool supported_method(const std::string& name);   // str/dict methods and loop.cycle

// Parses the whole template source; InputError "<name>:<line>: ..." on errors.
Program parse(const std::string& source, const std::string& name);

}  // namespace cuset::jinja::detail
