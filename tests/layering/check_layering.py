#!/usr/bin/env python3
"""The layering of cuset's libraries, held against the real include and link graph.

The map (tests/layering/libraries.txt) gives each library the libraries it is built on; a file of
library L may include L's headers, those of the libraries on L's line and, transitively, what they
may include. This check reads every #include of every C++/CUDA file (.h .hpp .cpp .cc .cu .cuh
.inl .in) under src/, include/, bench/ and tests/, in all three forms: "cuset/<lib>/x.h",
<cuset/<lib>/x.h> and relative ("../<lib>/x.h", "x.h", resolved as the compiler does to the file
they land in). Comments and string literals (raw ones too) are skipped. The rules:

  src/<lib>/, include/cuset/<lib>/   the library's own headers and what the map allows it
  src/<file> (outside the folders)   shared by the libraries (src/torch_pch.h, the LibTorch
                                     precompiled header): what every library may use, i.e. core
  tests/<lib>/                       a test of the library: what the library may use, plus the
                                     test helpers (tests/*.h), whose own includes count for it
  tests/*.cpp                        helpers linked into every test program: core
  bench/, other tests/<folder>/      any library
  tests/fixtures/                    inputs of the tests (programs under test): not read
  everywhere                         every included header exists; a file of src/ or include/
                                     includes no file of bench/ or tests/

Then the CMake files: in src/CMakeLists.txt each target belongs to the library whose folder holds
its sources (cuset_cuda to model, cuset-train to cli); every cuset library a target links must be
allowed by the map, and a library that includes another's header must link it, directly or through
PUBLIC links (through PUBLIC links only for an include in its public headers). A program of
tests/CMakeLists.txt or bench/CMakeLists.txt must link the libraries its sources include, and a
test of tests/<lib>/ links only what the library may use. Finally the Layout section of the docs
(docs/layout.md if it exists, else README.md) states the map's lines.

Usage: check_layering.py [--derive] SOURCE_DIR
  --derive  also print the smallest map that today's includes need, in the map's format."""
import os
import re
import sys

MAP_FILE = os.path.join("tests", "layering", "libraries.txt")
EXTENSIONS = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".inl", ".in")
TOPS = ("src", "include", "bench", "tests")
NOT_READ = (os.path.join("tests", "fixtures"),)


# --- the map ---------------------------------------------------------------------------------

def read_map(root, errors):
    """{library: [direct dependencies]} in the file's order."""
    deps = {}
    path = os.path.join(root, MAP_FILE)
    if not os.path.isfile(path):
        errors.append(f"{MAP_FILE}: no such file (the map of the libraries)")
        return deps
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"([a-z_]+)\s*:\s*([a-z_ \t]*)", line)
            if not m:
                errors.append(f"{MAP_FILE}:{n}: not `<library>: <libraries>`: {line}")
                continue
            lib, listed = m.group(1), m.group(2).split()
            if lib in deps:
                errors.append(f"{MAP_FILE}:{n}: {lib} has a second line")
                continue
            for d in listed:
                if d not in deps:
                    errors.append(f"{MAP_FILE}:{n}: {lib} is built on {d}, which has no line above it"
                                  " (a library names only libraries above it: the map has no cycle)")
            deps[lib] = [d for d in listed if d in deps]
    return deps


def closure(deps):
    """{library: set of the other libraries it may include}."""
    allowed = {}
    for lib, direct in deps.items():  # the file's order: dependencies come first
        allowed[lib] = set(direct).union(*(allowed[d] for d in direct))
    return allowed


def reduction(uses, order):
    """The smallest map whose closure covers `uses` ({library: set of libraries it includes})."""
    reach = {}
    for lib in order:
        reach[lib] = set()
        for d in uses.get(lib, ()):
            if d in reach and d != lib:
                reach[lib] |= {d} | reach[d]
    return {lib: sorted((d for d in reach[lib] if not any(d in reach[e] for e in reach[lib] if e != d)),
                        key=order.index) for lib in order}


# --- includes --------------------------------------------------------------------------------

_NEXT = re.compile(r'[\n/"\'#]')
_DIRECTIVE = re.compile(r'#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)')
_RAW_PREFIX = re.compile(r'(?:^|[^A-Za-z0-9_])(?:u8|[uUL])?R$')
_RAW_OPEN = re.compile(r'"([^()\\\s"]{0,16})\(')


def includes_of(text):
    """[(line, target, angle)] of the #include directives outside comments and string literals."""
    out = []
    i, n, line, at_start = 0, len(text), 1, True
    while i < n:
        m = _NEXT.search(text, i)
        j = m.start() if m else n
        if text[i:j].strip():
            at_start = False
        if not m:
            break
        i, c = j, text[j]
        if c == "\n":
            line, at_start, i = line + 1, True, i + 1
        elif c == "/" and text.startswith("//", i):
            e = text.find("\n", i)
            i = n if e < 0 else e
        elif c == "/" and text.startswith("/*", i):
            e = text.find("*/", i + 2)
            e = n if e < 0 else e + 2
            line += text.count("\n", i, e)
            i = e
        elif c == "#" and at_start:
            e = text.find("\n", i)
            e = n if e < 0 else e
            d = _DIRECTIVE.match(text, i, e)
            if d:
                out.append((line, d.group(1) or d.group(2), d.group(2) is not None))
            i = e
        elif c == '"':
            at_start = False
            raw = _RAW_OPEN.match(text, i) if _RAW_PREFIX.search(text, max(0, i - 4), i) else None
            if raw:
                close = ")" + raw.group(1) + '"'
                e = text.find(close, raw.end())
                e = n if e < 0 else e + len(close)
            else:
                e = i + 1
                while e < n and text[e] not in '"\n':
                    e += 2 if text[e] == "\\" else 1
                e = e + 1 if e < n and text[e] == '"' else e
            line += text.count("\n", i, e)
            i = e
        elif c == "'":
            at_start = False
            if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
                i += 1  # a digit separator (1'000) or a prefix (L'x', whose quote comes next)
                continue
            e = i + 1
            while e < n and text[e] not in "'\n":
                e += 2 if text[e] == "\\" else 1
            i = e + 1 if e < n and text[e] == "'" else e
        else:
            at_start = False
            i += 1
    return out


def place_of(rel, libs):
    """(kind, library) of a file: kind is src, include, shared, test, test_helper, test_other, bench
    or outside; library is set for src, include and test (and names an unknown folder otherwise)."""
    p = rel.split(os.sep)
    if p[0] == "src":
        if len(p) == 2:
            return "shared", None
        return ("src", p[1]) if p[1] in libs else ("outside", p[1])
    if p[0] == "include":
        if len(p) > 3 and p[1] == "cuset":
            return ("include", p[2]) if p[2] in libs else ("outside", p[2])
        return "outside", None
    if p[0] == "tests":
        if len(p) == 2:
            return "test_helper", None
        return ("test", p[1]) if p[1] in libs else ("test_other", p[1])
    if p[0] == "bench":
        return "bench", None
    return "outside", None


def library_of_header(rel, libs):
    kind, lib = place_of(rel, libs)
    return lib if kind in ("src", "include", "test") else None


class Tree:
    """Every source file with its resolved includes."""

    def __init__(self, root, libs):
        self.root, self.libs = root, libs
        self.files = {}  # rel -> [(line, target, resolved rel or None)]
        for top in TOPS:
            for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
                dirnames.sort()
                rel_dir = os.path.relpath(dirpath, root)
                if any(rel_dir == x or rel_dir.startswith(x + os.sep) for x in NOT_READ):
                    dirnames[:] = []
                    continue
                for name in sorted(names):
                    if name.endswith(EXTENSIONS):
                        rel = os.path.join(rel_dir, name)
                        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                            self.files[rel] = includes_of(f.read())
        self.resolved = {rel: [(ln, t, self.resolve(rel, t, angle)) for ln, t, angle in incs]
                         for rel, incs in self.files.items()}

    def exists(self, rel):
        path = os.path.join(self.root, rel)
        return os.path.isfile(path) or os.path.isfile(path + ".in")  # configure_file() templates

    def resolve(self, rel, target, angle):
        """The file an include lands in, relative to the root; None where none is found; "" for a
        header outside the tree (<...> not naming cuset/)."""
        if angle and not target.startswith("cuset/"):
            return ""
        dirs = []
        if not angle:
            d = os.path.dirname(rel)
            dirs.append(d)
            kind, lib = place_of(rel, self.libs)
            if kind == "src" and lib:  # folders of a library's own: their parents up to src/<lib>
                while d != os.path.join("src", lib):
                    d = os.path.dirname(d)
                    dirs.append(d)
            if rel.split(os.sep)[0] == "tests":
                dirs.append("tests")  # the test programs' include folder (tests/CMakeLists.txt)
        dirs.append("include")
        for d in dirs:
            cand = os.path.normpath(os.path.join(d, target))
            if cand.startswith(".."):
                continue
            if self.exists(cand):
                return cand + ("" if os.path.isfile(os.path.join(self.root, cand)) else ".in")
        return None

    def local_libs(self, rel, seen=None):
        """{library: (chain of files)} that a file includes itself or through the helper headers it
        includes (files outside the libraries: tests/*.h, bench/*.h, src/torch_pch.h)."""
        seen = set() if seen is None else seen
        seen.add(rel)
        found = {}
        for line, target, res in self.resolved.get(rel, ()):
            if not res:
                continue
            lib = library_of_header(res, self.libs)
            if lib:
                found.setdefault(lib, [(rel, line, target)])
            elif res in self.resolved and res not in seen:
                for l, chain in self.local_libs(res, seen).items():
                    found.setdefault(l, [(rel, line, target)] + chain)
        return found


# --- CMake -----------------------------------------------------------------------------------

_CMAKE_TOKEN = re.compile(r'#\[(=*)\[.*?\]\1\]|#[^\n]*|"(?:[^"\\]|\\.)*"|\[(=*)\[.*?\]\2\]|[()]|[^\s()"#]+'
                          r'|\n', re.S)


def cmake_commands(text):
    """[(line, name, [arguments])] of a CMake file; comments dropped, quotes removed, arguments
    of nested parentheses flattened."""
    out, line, depth, cur = [], 1, 0, None
    pending = None  # (line, name) of an identifier that may open a command
    for m in _CMAKE_TOKEN.finditer(text):
        tok = m.group(0)
        newlines = tok.count("\n")
        if tok.startswith("#"):
            line += newlines
            continue
        if tok == "\n":
            line += 1
            continue
        if depth == 0:
            if tok == "(" and pending:
                cur, depth = (pending[0], pending[1].lower(), []), 1
            else:
                pending = (line, tok) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok) else None
        elif tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
            if depth == 0:
                out.append(cur)
                cur, pending = None, None
        else:
            if tok.startswith('"'):
                tok = tok[1:-1]
            cur[2].append(tok)
        line += newlines
    return out


def expand_foreach(commands):
    """Commands with each foreach(<var> <items>) ... endforeach() over literal items unrolled."""
    out, i = [], 0
    while i < len(commands):
        line, name, args = commands[i]
        if name != "foreach":
            out.append(commands[i])
            i += 1
            continue
        depth, j = 1, i + 1
        while j < len(commands) and depth:
            depth += {"foreach": 1, "endforeach": -1}.get(commands[j][1], 0)
            j += 1
        body = expand_foreach(commands[i + 1:j - 1])
        items = args[1:]
        if items[:2] == ["IN", "ITEMS"]:
            items = items[2:]
        if not args or "IN" in items or "RANGE" in items or any("${" in a for a in items):
            out += body  # not literal: left as written
        else:
            for item in items:
                out += [(l, n, [a.replace("${" + args[0] + "}", item) for a in b]) for l, n, b in body]
        i = j
    return out


LINK_KEYWORDS = {"PUBLIC": "PUBLIC", "INTERFACE": "PUBLIC", "LINK_PUBLIC": "PUBLIC",
                 "PRIVATE": "PRIVATE", "LINK_PRIVATE": "PRIVATE", "LINK_INTERFACE_LIBRARIES": "PUBLIC"}
LIBRARY_KINDS = {"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "UNKNOWN", "IMPORTED", "ALIAS",
                 "EXCLUDE_FROM_ALL", "GLOBAL", "WIN32", "MACOSX_BUNDLE"}


class Target:
    def __init__(self, name, cmake, line):
        self.name, self.cmake, self.line = name, cmake, line
        self.sources = []  # (rel, line)
        self.links = []    # (visibility, item, line)
        self.library = None


def read_cmake(root, rel_cmake, targets, errors):
    """Targets defined in one CMakeLists.txt into `targets` ({name: Target}); sources relative to
    the root. Function and macro bodies are skipped (they use their arguments' names)."""
    path = os.path.join(root, rel_cmake)
    if not os.path.isfile(path):
        return
    base = os.path.dirname(rel_cmake)
    with open(path, encoding="utf-8") as f:
        commands = expand_foreach(cmake_commands(f.read()))

    def source(arg):
        """A file named by an argument, relative to the root; None for a computed one."""
        at = base
        for var, to in (("${CMAKE_CURRENT_SOURCE_DIR}/", base), ("${CMAKE_CURRENT_LIST_DIR}/", base),
                        ("${PROJECT_SOURCE_DIR}/", ""), ("${CMAKE_SOURCE_DIR}/", "")):
            if arg.startswith(var):
                at, arg = to, arg[len(var):]
                break
        if "${" in arg or "$<" in arg or os.path.isabs(arg):
            return None  # generated (the binary folder) or computed
        return os.path.normpath(os.path.join(at, arg))

    def add_sources(t, args, line):
        for a in args:
            if a in LIBRARY_KINDS or a in LINK_KEYWORDS:
                continue
            s = source(a)
            if s:
                t.sources.append((s, line))

    skip = 0
    for line, name, args in commands:
        if name in ("function", "macro"):
            skip += 1
        elif name in ("endfunction", "endmacro"):
            skip -= 1
        if not args or (skip and name not in ("target_sources", "target_precompile_headers")):
            continue  # in a function body only the files named outright are checked
        if name in ("cuset_library", "add_library", "add_executable"):
            t = targets.setdefault(args[0], Target(args[0], rel_cmake, line))
            if "ALIAS" not in args and "IMPORTED" not in args:
                add_sources(t, args[1:], line)
        elif name == "cuset_add_test":  # tests/CMakeLists.txt: tests/<DIR>/<name>.cpp, test_util.cpp
            t = targets.setdefault(args[0], Target(args[0], rel_cmake, line))
            key, values = None, {"DIR": [], "LIBS": [], "SOURCES": [], "GOLDEN": []}
            for a in args[1:]:
                if a in values:
                    key = a
                elif a == "SANITIZE":  # an option: ends the list before it
                    key = None
                elif key:
                    values[key].append(a)
            folder = values["DIR"][0] if values["DIR"] else "."
            add_sources(t, [os.path.join(folder, args[0] + ".cpp"), "test_util.cpp"] + values["SOURCES"], line)
            t.links += [("PRIVATE", lib, line) for lib in values["LIBS"]]
        elif name in ("target_sources", "target_precompile_headers"):
            t = None if skip else targets.get(args[0])
            for a in args[1:]:
                s = source(a) if a not in LINK_KEYWORDS and a != "REUSE_FROM" else None
                if s and not os.path.exists(os.path.join(root, s)):
                    errors.append(f"{rel_cmake}:{line}: {name}({args[0]} ...) names {s}, which does not exist")
                if s and t and name == "target_sources":
                    t.sources.append((s, line))
        elif name == "target_link_libraries":
            t = targets.get(args[0])
            if t is None:
                continue
            vis = "PUBLIC"
            for a in args[1:]:
                if a in LINK_KEYWORDS:
                    vis = LINK_KEYWORDS[a]
                elif a.startswith("cuset"):
                    t.links.append((vis, a, line))


# --- the check -------------------------------------------------------------------------------

def names(libs):
    return ", ".join(libs) if libs else "nothing"


def main(argv):
    derive = "--derive" in argv
    args = [a for a in argv if a != "--derive"]
    root = os.path.abspath(args[0] if args else ".")
    errors = []
    deps = read_map(root, errors)
    order = list(deps)
    allowed = closure(deps)
    if not deps:
        print("\n".join(errors) or f"{MAP_FILE}: maps no library")
        return 2
    may = {lib: {lib} | allowed[lib] for lib in order}  # what a file of lib may include
    everyone = set.intersection(*may.values()) if may else set()
    tree = Tree(root, deps)

    def rule_of(lib):
        others = sorted(allowed[lib], key=order.index)
        return (f"{lib} may include only its own headers" + (f" and {names(others)}" if others else "")
                + f" ({MAP_FILE}: `{lib}: {' '.join(deps[lib])}`".rstrip() + ")")

    # Includes: each file against its place.
    uses = {lib: set() for lib in order}   # library -> libraries its files include
    public_uses = {lib: {} for lib in order}  # library -> {included library: first (file, line)}
    any_uses = {lib: {} for lib in order}
    for rel, incs in tree.resolved.items():
        kind, lib = place_of(rel, deps)
        if kind == "outside":
            where = f"folder '{lib}' is no library of {MAP_FILE}" if lib else \
                "outside every library folder (src/<lib>/, include/cuset/<lib>/)"
            errors.append(f"{rel}: {where}")
            continue
        for line, target, res in incs:
            if res is None:
                errors.append(f"{rel}:{line}: includes \"{target}\", which exists nowhere (no such header)")
                continue
            dep = library_of_header(res, deps) if res else None
            if res and dep is None and place_of(res, deps)[0] == "outside":
                errors.append(f"{rel}:{line}: includes \"{target}\" ({res}), which is in no library")
                continue
            if res and kind in ("src", "include", "shared") \
                    and place_of(res, deps)[0] not in ("src", "include", "shared"):
                errors.append(f"{rel}:{line}: includes \"{target}\" ({res}); a library includes only the headers"
                              " of src/ and include/")
                continue
            if dep is None:
                continue
            if kind in ("src", "include"):
                uses[lib].add(dep)
                if dep != lib:
                    any_uses[lib].setdefault(dep, (rel, line, target))
                    if kind == "include":
                        public_uses[lib].setdefault(dep, (rel, line, target))
                if dep not in may[lib]:
                    errors.append(f"{rel}:{line}: {lib} includes {target} ({dep}), against the map: {rule_of(lib)}")
            elif kind == "shared" and dep not in everyone:
                errors.append(f"{rel}:{line}: includes {target} ({dep}); a file of src/ outside the library "
                              f"folders is shared by the libraries and may include only {names(sorted(everyone))}")
        if kind == "test":
            for dep, chain in tree.local_libs(rel).items():
                if dep not in may[lib]:
                    first = chain[0]
                    via = "" if len(chain) == 1 else \
                        " through " + " -> ".join(f"{c[0]}:{c[1]}" for c in chain[1:])
                    errors.append(f"{rel}:{first[1]}: a test of {lib} includes {chain[-1][2]} ({dep}){via}; "
                                  f"a test of a library includes only what the library may use: {rule_of(lib)}")
        elif kind == "test_helper" and rel.endswith((".cpp", ".cc")):
            for dep, chain in tree.local_libs(rel).items():
                if dep not in everyone:
                    errors.append(f"{rel}:{chain[0][1]}: includes {chain[-1][2]} ({dep}); tests/{os.path.basename(rel)}"
                                  f" is linked into every test program and may include only {names(sorted(everyone))}")

    # CMake: the targets of src/ belong to libraries; their links against the map and the includes.
    targets = {}
    for cm in ("CMakeLists.txt", os.path.join("src", "CMakeLists.txt")):
        read_cmake(root, cm, targets, errors)
    src_cmake = os.path.join("src", "CMakeLists.txt")
    for t in targets.values():
        owners = set()
        for s, line in t.sources:
            if not os.path.exists(os.path.join(root, s)):
                errors.append(f"{t.cmake}:{line}: {t.name} lists {s}, which does not exist")
            kind, lib = place_of(s, deps)
            if kind == "src":
                owners.add(lib)
        if len(owners) > 1:
            errors.append(f"{t.cmake}:{t.line}: {t.name} has sources of several libraries ({names(sorted(owners))})")
        t.library = owners.pop() if len(owners) == 1 else None
        m = re.fullmatch(r"cuset_([a-z_]+)", t.name)
        if m and m.group(1) in deps and t.library not in (None, m.group(1)):
            errors.append(f"{t.cmake}:{t.line}: {t.name} builds sources of {t.library}")
        elif m and m.group(1) in deps and t.library is None and t.sources:
            errors.append(f"{t.cmake}:{t.line}: {t.name} has no source under src/{m.group(1)}/")

    def libraries_of(item, line, cmake, seen=()):
        """The libraries a linked item stands for: its own, or an aggregate's (an INTERFACE
        target without sources, such as `cuset`, linked by the benchmarks)."""
        u = targets.get(item)
        if u is None:
            errors.append(f"{cmake}:{line}: links {item}, which no CMakeLists.txt of src/ defines")
            return set()
        if u.library:
            return {u.library}
        if item in seen:
            return set()
        return set().union(*(libraries_of(i, l, u.cmake, seen + (item,)) for _, i, l in u.links))

    public_links = {lib: set() for lib in order}
    all_links = {lib: set() for lib in order}
    for t in targets.values():
        if t.library is None or t.cmake != src_cmake:
            continue
        for vis, item, line in t.links:
            for m_lib in libraries_of(item, line, t.cmake):
                if m_lib == t.library:
                    continue
                all_links[t.library].add(m_lib)
                if vis == "PUBLIC":
                    public_links[t.library].add(m_lib)
                if m_lib not in allowed[t.library]:
                    errors.append(f"{t.cmake}:{line}: {t.name} ({t.library}) links {item} ({m_lib}), "
                                  f"against the map: {rule_of(t.library)}")

    def public_reach(lib, seen=None):
        seen = set() if seen is None else seen
        for d in public_links.get(lib, ()):
            if d not in seen:
                seen.add(d)
                public_reach(d, seen)
        return seen

    def reach(direct):
        """The libraries reached by linking `direct`: those and what they link PUBLIC."""
        out = set()
        for d in direct:
            out |= {d} | public_reach(d)
        return out

    target_of = {}
    for t in targets.values():
        if t.library and t.cmake == src_cmake:
            target_of.setdefault(t.library, t.name)
    for lib in order:
        compiled = [f for f in tree.files if place_of(f, deps) == ("src", lib) and f.endswith((".cpp", ".cc", ".cu"))]
        if compiled and lib not in target_of:
            errors.append(f"{compiled[0]}: library {lib} has sources but no target of {src_cmake} builds them")
        if lib not in target_of:
            continue
        linked = reach(all_links[lib])
        linked_public = reach(public_links[lib])
        for dep, (rel, line, target) in sorted(any_uses[lib].items()):
            if dep not in linked and dep in may[lib]:
                errors.append(f"{rel}:{line}: {lib} includes {target} ({dep}) but {target_of[lib]} does not link "
                              f"{target_of.get(dep, 'cuset_' + dep)}, directly or through PUBLIC links ({src_cmake})")
        for dep, (rel, line, target) in sorted(public_uses[lib].items()):
            if dep in linked and dep not in linked_public:
                errors.append(f"{rel}:{line}: the public header includes {target} ({dep}) but {target_of[lib]} links "
                              f"{target_of.get(dep, 'cuset_' + dep)} only PRIVATE; users of {lib} need it PUBLIC "
                              f"({src_cmake})")

    # The programs of tests/ and bench/: they link what their sources include; a test of a library
    # links only what the library may use.
    programs = {}
    for cm in (os.path.join("tests", "CMakeLists.txt"), os.path.join("bench", "CMakeLists.txt")):
        read_cmake(root, cm, programs, errors)
    for p in programs.values():
        folder = next((place_of(s, deps)[1] for s, _ in p.sources if place_of(s, deps)[0] == "test"), None)
        linked = set()
        for vis, item, line in p.links:
            libs_of = libraries_of(item, line, p.cmake)
            linked |= reach(libs_of)
            for m_lib in libs_of:
                if folder and m_lib not in may[folder]:
                    errors.append(f"{p.cmake}:{line}: {p.name}, a test of {folder}, links {item} ({m_lib}); "
                                  f"a test of a library links only what the library may use: {rule_of(folder)}")
        for s, line in p.sources:
            if not os.path.exists(os.path.join(root, s)):
                errors.append(f"{p.cmake}:{line}: {p.name} lists {s}, which does not exist")
                continue
            for dep, chain in tree.local_libs(s).items():
                if dep not in linked:
                    errors.append(f"{chain[0][0]}:{chain[0][1]}: {p.name} includes {chain[-1][2]} ({dep}) but does "
                                  f"not link {target_of.get(dep, 'cuset_' + dep)}, directly or through PUBLIC links "
                                  f"({p.cmake}:{p.line})")

    # The docs state the map.
    doc = os.path.join("docs", "layout.md")
    if not os.path.isfile(os.path.join(root, doc)):
        doc = "README.md"
    statement = [f"{lib}: {' '.join(deps[lib])}".strip() for lib in order]
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        doc_lines = [" ".join(l.split()) for l in f.read().splitlines()]
    k = len(statement)
    if not any(doc_lines[i:i + k] == statement for i in range(len(doc_lines) - k + 1)):
        errors.append(f"{doc}: the Layout section does not state the map; it should hold these lines, one "
                      f"after the other ({MAP_FILE}):\n    " + "\n    ".join(statement))

    # The report.
    width = max(map(len, order)) if order else 0
    print(f"layering: the map ({MAP_FILE}): each library, the libraries it is built on (a file of the library"
          " includes its own headers, theirs and, transitively, what they may include), what it includes today:")
    for lib in order:
        folders = [d for d in (os.path.join("src", lib), os.path.join("include", "cuset", lib))
                   if os.path.isdir(os.path.join(root, d))]
        today = sorted(uses[lib] - {lib}, key=order.index)
        state = f"includes {names(today)}" if folders else "no folder yet"
        print(f"  {lib:<{width}} : {' '.join(deps[lib]) or '-':<24} {state}")
    shared = sorted(f for f in tree.files if place_of(f, deps)[0] == "shared")
    other_tests = sorted({place_of(f, deps)[1] for f in tree.files if place_of(f, deps)[0] == "test_other"})
    print(f"layering: outside the library folders: src/ ({names(shared)}, shared by the libraries) and tests/*.cpp"
          f" (linked into every test) include {names(sorted(everyone))}; tests/<lib>/ what <lib> may use, plus the"
          f" test helpers (tests/*.h), whose includes count; bench/ and tests/"
          f"{{{','.join(other_tests)}}}/ any library; {' '.join(NOT_READ)}/ is not read; every included header"
          " exists")
    owned = ", ".join(f"{t.name}={t.library}" for t in targets.values() if t.library and t.cmake == src_cmake)
    print(f"layering: {src_cmake}: {owned}: each links only what the map allows, and every library it includes"
          f" (a public header's through PUBLIC links); {len(programs)} programs of tests/ and bench/ link what"
          " they include, a test of tests/<lib>/ only what <lib> may use")
    if derive:
        print(f"layering: the smallest map today's includes need ({len(tree.files)} files):")
        for lib, need in reduction(uses, order).items():
            print(f"  {lib}: {' '.join(need)}".rstrip())
    for e in errors:
        print(e)
    print(f"layering: {len(errors)} violation(s) in {len(tree.files)} files")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
