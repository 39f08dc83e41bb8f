#!/usr/bin/env python3
"""The ctest `function_length_planted`: check_function_length.py finds the functions a reader
would, with their lengths, on planted C++ (free and member functions, constructors with
initialiser lists, multi-line headers, lambdas, control blocks, braces in strings and comments)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_function_length import functions  # noqa: E402

SOURCE = r'''
namespace a {
int free_fn(int x,
            int y) {
    auto f = [&](int z) {  // a lambda: part of free_fn
        return z;
    };
    if (x) {
        return f(y);
    }
    const char* s = "}}}{";
    return 0;
}
/* } not a brace */
struct S {
    S(int v) : v_(v), w_{v} {
        v_ += 1;
    }
    int get() const override { return v_; }
    int v_, w_;
};
Value Interp::method(const Value& v) const {
    std::string r = R"x(
    }
    )x";
    return v;
}
bool operator==(const S& x, const S& y) { return x.v_ == y.v_; }
}  // namespace a
'''

EXPECTED = [("free_fn", 3, 13), ("S", 16, 18), ("get", 19, 19), ("Interp::method", 22, 27), ("operator==", 28, 28)]


def main() -> int:
    got = sorted(functions(SOURCE), key=lambda f: f[1])
    if got != EXPECTED:
        print(f"functions found: {got}\nexpected:        {EXPECTED}")
        return 1
    print(f"function length planted: {len(EXPECTED)} functions found with their lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
