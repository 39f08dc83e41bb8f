#!/usr/bin/env python3
"""Prints the slowest cases of a ctest run from its JUnit file (ctest --output-junit FILE).

usage: slowest_tests.py JUNIT_FILE [N]   (N: how many, 20 by default)

scripts/test.sh calls it after every run, passed or failed, so that a case that grew slow is
seen where it is run. Prints nothing but a note when the file is missing or unreadable.
"""
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    n = int(sys.argv[2]) if len(sys.argv) == 3 else 20
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"slowest tests: no timings ({e})")
        return 0
    cases = []
    for case in root.iter("testcase"):
        try:
            cases.append((float(case.get("time", "0")), case.get("name", "?"), case.get("status", "")))
        except ValueError:
            continue
    cases.sort(reverse=True)
    total = sum(t for t, _, _ in cases)
    print(f"slowest {min(n, len(cases))} of {len(cases)} test cases ({total:.0f} s of test time in all):")
    for t, name, status in cases[:n]:
        print(f"  {t:8.1f} s  {name}{'' if status in ('', 'run') else '  [' + status + ']'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
