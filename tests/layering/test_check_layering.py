#!/usr/bin/env python3
"""The layering check fails on planted violations. The files the check reads (the C/C++ files of
src/, include/, bench/ and tests/, the CMakeLists.txt files, the map, the docs) are copied to a
temporary folder; each case plants one violation in a fresh copy, runs check_layering.py on it and
expects it to fail with a new message naming the file, the line and the rule. Whatever the tree
itself violates is subtracted, so a case tests its plant only.

Usage: test_check_layering.py SOURCE_DIR [unittest options]"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # nothing written into the source tree
import check_layering  # noqa: E402  (EXTENSIONS, TOPS, NOT_READ, MAP_FILE)

SOURCE = None


def copy_tree(src, dst):
    def ignore(d, names):
        rel = os.path.relpath(d, src)
        if any(rel == x or rel.startswith(x + os.sep) for x in check_layering.NOT_READ):
            return names
        return [n for n in names if os.path.isfile(os.path.join(d, n))
                and not n.endswith(check_layering.EXTENSIONS) and n not in ("CMakeLists.txt", "libraries.txt")]

    os.makedirs(dst)
    for top in check_layering.TOPS:
        shutil.copytree(os.path.join(src, top), os.path.join(dst, top), ignore=ignore)
    for f in ("CMakeLists.txt", "README.md", os.path.join("docs", "layout.md")):
        if os.path.isfile(os.path.join(src, f)):
            os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
            shutil.copy(os.path.join(src, f), os.path.join(dst, f))


def run_check(root):
    """(exit status, the violation lines of the output)."""
    r = subprocess.run([sys.executable, os.path.join(HERE, "check_layering.py"), root],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = [l for l in r.stdout.splitlines() if not l.startswith(("layering:", " "))]
    return r.returncode, lines, r.stdout


def doc_of(root):
    return os.path.join("docs", "layout.md") if os.path.isfile(os.path.join(root, "docs", "layout.md")) \
        else "README.md"


class Planted(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="cuset-layering-")
        cls.clean = os.path.join(cls.tmp, "clean")
        copy_tree(SOURCE, cls.clean)
        _, cls.before, _ = run_check(cls.clean)
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        Planted.n += 1
        self.root = os.path.join(self.tmp, f"case{self.n}")
        shutil.copytree(self.clean, self.root)

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            return f.read()

    def write(self, rel, text):
        os.makedirs(os.path.dirname(os.path.join(self.root, rel)), exist_ok=True)
        with open(os.path.join(self.root, rel), "w", encoding="utf-8") as f:
            f.write(text)

    def plant_include(self, rel, directive):
        """Put `directive` after the last #include of a file; its line number."""
        lines = self.read(rel).splitlines(keepends=True)
        last = max(i for i, l in enumerate(lines) if re.match(r"\s*#\s*include", l))
        lines.insert(last + 1, directive + "\n")
        self.write(rel, "".join(lines))
        return last + 2

    def replace(self, rel, pattern, repl):
        """Replace the one match of a pattern; the line it starts on."""
        text = self.read(rel)
        matches = list(re.finditer(pattern, text, re.M))
        self.assertEqual(len(matches), 1, f"{rel}: {pattern!r} matches {len(matches)} times")
        m = matches[0]
        self.write(rel, text[:m.start()] + m.expand(repl) + text[m.end():])
        return text.count("\n", 0, m.start()) + 1

    def expect_failure(self, *prefixes, contains=()):
        """The check fails, each prefix starts a violation that the clean copy does not have, and
        one of those holds all the strings of `contains`."""
        rc, lines, out = run_check(self.root)
        new = [l for l in lines if l not in self.before]
        self.assertEqual(rc, 1, out)
        listing = "\nnew ones:\n  " + "\n  ".join(new)
        for p in prefixes:
            self.assertTrue(any(l.startswith(p) for l in new), f"no new violation starts with\n  {p}{listing}")
        if contains:
            self.assertTrue(any(all(c in l for c in contains) for l in new),
                            f"no new violation holds {contains}{listing}")
        return new

    def expect_no_new(self):
        rc, lines, out = run_check(self.root)
        self.assertEqual([l for l in lines if l not in self.before], [], out)

    # The acceptance case: a model header includes data.
    def test_model_header_includes_data(self):
        n = self.plant_include("include/cuset/model/model.h", '#include "cuset/data/data.h"')
        self.expect_failure(f"include/cuset/model/model.h:{n}: model includes cuset/data/data.h (data), against "
                            "the map: model may include only its own headers and core "
                            f"({check_layering.MAP_FILE}: `model: core`)")

    def test_angle_include(self):
        n = self.plant_include("src/model/model.cpp", "#include <cuset/data/batching.h>")
        self.expect_failure(f"src/model/model.cpp:{n}: model includes cuset/data/batching.h (data), against the map")

    def test_relative_include_into_a_public_header(self):
        n = self.plant_include("src/model/model.cpp", '#include "../../include/cuset/data/data.h"')
        self.expect_failure(f"src/model/model.cpp:{n}: model includes ../../include/cuset/data/data.h (data), "
                            "against the map")

    def test_relative_include_into_a_private_header(self):
        self.write("src/data/data_private.h", "#pragma once\n")
        n = self.plant_include("src/model/lora.cpp", '#include "../data/data_private.h"')
        self.expect_failure(f"src/model/lora.cpp:{n}: model includes ../data/data_private.h (data), against the map")

    def test_include_in_a_comment_or_string_is_no_include(self):
        text = self.read("src/model/model.cpp")
        self.write("src/model/model.cpp", text + '// #include "cuset/data/data.h"\n/*\n#include "cuset/data/data.h"\n*/\n'
                   'static const char* k = R"(\n#include "cuset/data/data.h"\n)";\n')
        self.expect_no_new()

    def test_missing_header(self):
        n = self.plant_include("bench/bench_tagger.cpp", '#include "cuset/tagger/no_such.h"')
        m = self.plant_include("tests/core/test_config.cpp", '#include "no_such_helper.h"')
        self.expect_failure(f"bench/bench_tagger.cpp:{n}: includes \"cuset/tagger/no_such.h\", which exists nowhere",
                            f"tests/core/test_config.cpp:{m}: includes \"no_such_helper.h\", which exists nowhere")

    # The configuration's schema is the application's: of the libraries, only app and cli (and
    # their tests) include it; every other library takes its typed options.
    def test_schema_header_below_the_application(self):
        n = self.plant_include("src/train/trainer.cpp", '#include "cuset/app/config_schema.h"')
        m = self.plant_include("include/cuset/core/log.h", '#include "cuset/app/config_schema.h"')
        k = self.plant_include("tests/train/test_objective.cpp", '#include "cuset/app/config_schema.h"')
        self.expect_failure(f"src/train/trainer.cpp:{n}: train includes cuset/app/config_schema.h (app), against "
                            "the map",
                            f"include/cuset/core/log.h:{m}: core includes cuset/app/config_schema.h (app), against "
                            "the map",
                            f"tests/train/test_objective.cpp:{k}: a test of train includes cuset/app/config_schema.h "
                            "(app)")

    def test_schema_header_in_the_application_and_the_commands(self):
        self.plant_include("src/app/options.cpp", '#include "cuset/app/config_schema.h"')
        self.plant_include("src/cli/cmd_train.cpp", '#include "cuset/app/config_schema.h"')
        self.expect_no_new()

    def test_folder_that_is_no_library(self):
        self.write("include/cuset/nolib/x.h", "#pragma once\n")
        self.expect_failure("include/cuset/nolib/x.h: folder 'nolib' is no library")

    def test_shared_file_includes_a_library(self):
        n = self.plant_include("src/torch_pch.h", '#include "cuset/text/tokenizer.h"')
        self.expect_failure(f"src/torch_pch.h:{n}: includes cuset/text/tokenizer.h (text); a file of src/ outside "
                            "the library folders is shared by the libraries and may include only core")

    def test_test_of_a_library_needs_more(self):
        n = self.plant_include("tests/text/test_tokenizer.cpp", '#include "cuset/model/model.h"')
        self.expect_failure(f"tests/text/test_tokenizer.cpp:{n}: a test of text includes cuset/model/model.h (model)",
                            f"tests/text/test_tokenizer.cpp:{n}: test_tokenizer includes cuset/model/model.h (model) "
                            "but does not link cuset_model")

    def test_cmake_link_against_the_map(self):
        n = self.replace("src/CMakeLists.txt", r"^target_link_libraries\(cuset_model PUBLIC cuset_core",
                         r"\g<0> cuset_data")
        self.expect_failure(f"src/CMakeLists.txt:{n}: cuset_model (model) links cuset_data (data), against the map")

    def test_include_without_link(self):
        n = self.replace("src/CMakeLists.txt", r"^(target_link_libraries\(cuset_data PUBLIC [^)\n]*?) cuset_tagger",
                         r"\1")
        self.assertGreater(n, 0)
        self.expect_failure(contains=(": data includes cuset/tagger/", "but cuset_data does not link cuset_tagger"))

    def test_public_header_include_linked_private(self):
        self.replace("src/CMakeLists.txt", r"^(target_link_libraries\(cuset_data PUBLIC [^)\n]*?) cuset_tagger",
                     r"\1 PRIVATE cuset_tagger")
        self.expect_failure(contains=("include/cuset/data/data.h:", "public header includes cuset/tagger/",
                                      "but cuset_data links cuset_tagger only PRIVATE"))

    def test_docs_disagree_with_the_map(self):
        doc = doc_of(self.root)
        if not re.search(r"^\s*model: core\s*$", self.read(doc), re.M):
            self.skipTest(f"{doc} does not state the map (the ctest layering fails on that)")
        self.replace(doc, r"^(\s*)model: core\s*$", r"\1model: core text")
        self.expect_failure(f"{doc}: the Layout section does not state the map")

    def test_a_mapped_library_without_folders_is_allowed(self):
        self.write(check_layering.MAP_FILE, self.read(check_layering.MAP_FILE) + "later: core\n")
        doc = doc_of(self.root)
        if re.search(r"^\s*cli: [a-z ]*$", self.read(doc), re.M):
            self.replace(doc, r"^(\s*)(cli: [a-z ]*)$", r"\1\2\n\1later: core")
        self.expect_no_new()


if __name__ == "__main__":
    SOURCE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", ".."))
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
