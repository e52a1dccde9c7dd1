#!/usr/bin/env bash
# The slowest tests of the last `make test`, from the test runner's own report (cargo-nextest's
# JUnit file, which it keeps under the checkout's target/nextest): seconds and name, slowest first.
#   scripts/slowest-tests.sh [how many, default 20]
set -euo pipefail
report="$(cd "$(dirname "$0")/.." && pwd)/target/nextest/default/junit.xml"
[ -f "$report" ] || { echo "no report at $report: run make test first" >&2; exit 2; }
python3 - "$report" "${1:-20}" <<'PY'
import sys, xml.etree.ElementTree as ET
cases = [(float(c.get("time", 0)), c.get("classname", ""), c.get("name", ""))
         for c in ET.parse(sys.argv[1]).iter("testcase")]
for seconds, binary, name in sorted(cases, reverse=True)[: int(sys.argv[2])]:
    print(f"{seconds:8.1f} s  {binary} {name}")
total = sum(c[0] for c in cases)
print(f"{len(cases)} tests, {total:.0f} s of test time in all")
PY
