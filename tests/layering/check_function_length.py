#!/usr/bin/env python3
"""The ctest `function_length`: no function of src/ is longer than 100 lines.

A function is counted from the line of its name to the line of its closing brace (comments and
blank lines included, as a reader scrolls them). Lambdas are part of the function that holds
them; member functions defined in a class body are functions. Two lists name the exceptions:
TABLES, declarative tables that are long because they have many rows (each row one setting),
and TO_SPLIT, functions that are still too long. A function over the limit in neither list fails
the check, and so does a listed one that is no longer over it (the list only shrinks). Prints one
line per finding (FILE:LINE: NAME is N lines) and exits 1 when there is any; with --list it
prints every function over the limit, longest first.
"""
import re
import subprocess
import sys
from pathlib import Path

LIMIT = 100
SUFFIXES = {".cpp", ".h", ".cu"}

# Declarative tables: one statement per row.
TABLES = {
    "src/app/config_schema.cpp": {"add_objective_keys"},
}

# Functions still over the limit, to be split.
TO_SPLIT = {
    "src/cli/cmd_tokenize.cpp": {"tokenize_command"},
    "src/cli/cmd_data.cpp": {"add_data_command", "run_tasks"},
    "src/core/process.cpp": {"Process::Process"},
    "src/data/data_show.cpp": {"data_show"},
    "src/analysis/score.cpp": {"score_run"},
    "src/model/safetensors.cpp": {"SafetensorsFile::SafetensorsFile"},
    "src/judge/sandbox.cpp": {"Sandbox::Sandbox"},
    "src/text/unicode.cpp": {"nfc_changes"},
    "src/analysis/run_report.cpp": {"chart_svg"},
    "src/rl/multi_turn.cpp": {"multi_turn_rollout"},
    "src/rl/grpo_step.cpp": {"grpo_step"},
    "src/train/zero.cpp": {"ZeroAdamW::ZeroAdamW"},
    "src/core/file_tree.cpp": {"walk"},
}

KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "constexpr", "alignof",
            "static_assert", "defined", "noexcept", "throw", "new", "delete", "co_return"}
QUALIFIERS = ("const", "override", "final", "noexcept", "mutable")


def blank_out(text: str) -> str:
    """The text with comments, string and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(c)
            i += 1
            continue
        out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
        i = j
    return "".join(out)


def header_name(s: str, brace: int):
    """The qualified name of the function whose body opens at s[brace], or None (a lambda, a
    control statement, a class, an initialiser)."""
    k = brace - 1
    while True:
        while k >= 0 and s[k].isspace():
            k -= 1
        word = re.search(r"(\w+)$", s[:k + 1])
        if word and word.group(1) in QUALIFIERS:
            k = word.start() - 1
            continue
        if k >= 0 and s[k] in ")}":
            break
        return None
    while True:  # k at ')' (parameters, or a member initialiser) or '}' (a member initialiser)
        close = s[k]
        opening = "(" if close == ")" else "{"
        depth = 0
        while k >= 0:
            if s[k] == close:
                depth += 1
            elif s[k] == opening:
                depth -= 1
                if depth == 0:
                    break
            k -= 1
        k -= 1
        while k >= 0 and s[k].isspace():
            k -= 1
        m = re.search(r"((?:\w+\s*::\s*)*~?\w+|operator\s*\S+)$", s[:k + 1])
        if not m or m.group(1) in KEYWORDS:
            return None
        name = re.sub(r"\s+", "", m.group(1))
        j = m.start() - 1
        while j >= 0 and s[j].isspace():
            j -= 1
        if j >= 0 and s[j] in ":," and not (j > 0 and s[j - 1] == ":"):  # a member initialiser: go on to the parameters
            k = j - 1
            while k >= 0 and s[k].isspace():
                k -= 1
            if k >= 0 and s[k] in ")}":
                continue
            return None
        if close == "}" or (j >= 0 and s[j] in "=.>["):  # a braced value, an assignment, a call on an object, a lambda
            return None
        return name, m.start()


def functions(text: str):
    """(name, first line, last line) of every function defined in the text."""
    s = blank_out(text)
    line_of = [0] * (len(s) + 1)
    ln = 1
    for i, ch in enumerate(s):
        line_of[i] = ln
        if ch == "\n":
            ln += 1
    stack = []
    for i, ch in enumerate(s):
        if ch == "{":
            stack.append((i, header_name(s, i) if not any(f for _, f in stack if f) else None))
        elif ch == "}" and stack:
            _, fn = stack.pop()
            if fn:
                yield fn[0], line_of[fn[1]], line_of[i]


def source_files(root: Path):
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "src"], cwd=root,
                         check=True, capture_output=True).stdout
    for name in sorted(set(out.decode("utf-8", "surrogateescape").split("\0"))):
        p = root / name
        if name and p.suffix in SUFFIXES and p.is_file():
            yield name, p


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else ".").resolve()
    long_ones = []
    for name, p in source_files(root):
        for fn, first, last in functions(p.read_text(encoding="utf-8", errors="replace")):
            if last - first + 1 > LIMIT:
                long_ones.append((last - first + 1, name, first, fn))
    if "--list" in sys.argv:
        for n, name, first, fn in sorted(long_ones, reverse=True):
            print(f"{name}:{first}: {fn} is {n} lines")
        return 0
    problems = []
    seen = set()
    for n, name, first, fn in sorted(long_ones, reverse=True):
        seen.add((name, fn))
        if fn in TABLES.get(name, ()) or fn in TO_SPLIT.get(name, ()):
            continue
        problems.append(f"{name}:{first}: {fn} is {n} lines (at most {LIMIT}): split it into named parts")
    for lists, what in ((TABLES, "TABLES"), (TO_SPLIT, "TO_SPLIT")):
        for name, fns in lists.items():
            for fn in sorted(fns):
                if (name, fn) not in seen:
                    problems.append(f"{name}: {fn} is listed in {what} of {Path(__file__).name} but is not over "
                                    f"{LIMIT} lines (or is gone): take it off the list")
    for line in problems:
        print(line)
    print(f"function length: {len(long_ones)} function(s) over {LIMIT} lines, {len(problems)} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
