#!/usr/bin/env python3
"""The ctest `format_planted`: check_format.py finds each planted fault, naming file and line, and
passes the same files clean. Works in a scratch git repository (the files are untracked there)."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECK = Path(__file__).with_name("check_format.py")


def check(root: Path):
    r = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    return r.returncode, r.stdout


class Planted(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        subprocess.run(["git", "init", "-q", str(self.root)], check=True)
        (self.root / "src").mkdir()
        (self.root / "tests/fixtures").mkdir(parents=True)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data: bytes):
        (self.root / name).write_bytes(data)

    def test_clean_files_pass(self):
        self.write("src/a.cpp", b"int main() {\n    return 0;\n}\n")
        self.write("tests/fixtures/crlf.cpp", b"int x;\r\n\tint y; \n")  # fixtures are inputs as they are
        rc, out = check(self.root)
        self.assertEqual(rc, 0, out)
        self.assertIn("1 source files, 0 finding(s)", out)

    def test_each_fault_is_named(self):
        self.write("src/a.cpp", b"int main() {\n\treturn 0;\n}  \n")
        self.write("src/b.h", b"#pragma once\r\nint f();")
        self.write("src/c.py", b"x = '\xff'\n")
        rc, out = check(self.root)
        self.assertEqual(rc, 1, out)
        for line in ("src/a.cpp:2: a tab", "src/a.cpp:3: trailing white space", "src/b.h:1: CRLF line ending",
                     "src/b.h: no newline at the end", "src/c.py: not UTF-8 (byte 5)"):
            self.assertIn(line, out)


if __name__ == "__main__":
    unittest.main()
