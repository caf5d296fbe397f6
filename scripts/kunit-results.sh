#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn the KUnit report in a guest's console log into one line per test
# case: "PASS|FAIL|SKIP suite.case[.param]".  The KTAP between the
# "shca-kunit: begin" and "shca-kunit: end" markers is parsed by the
# kernel's own tools/testing/kunit/kunit.py; its summary goes to stderr.
# Exits non-zero if there is no report to parse.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

log=$1
dir=$(dirname "$log")
kunit_py=$(shca_srcdir)/tools/testing/kunit/kunit.py

python3 - "$log" "$dir/kunit.ktap" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read().splitlines()
stamp = re.compile(r"^\[ *\d+\.\d+\] ?")
body, inside = [], False
for line in text:
    line = stamp.sub("", line.rstrip("\r"))
    if "shca-kunit: begin" in line:
        inside, body = True, []
        continue
    if "shca-kunit: end" in line:
        inside = False
        continue
    if inside:
        body.append(line)
# Keep KTAP only: the suites' lines are indented, their results are not.
ktap = [l for l in body if re.match(r"^(\s+|ok |not ok |# )", l)
        and not re.match(r"^\s*KTAP version", l)]
top = [l for l in ktap if re.match(r"^(ok|not ok) ", l)]
if not top:
    sys.exit("kunit-results: no KUnit report in " + sys.argv[1])
# Number the suites in order: each module load numbers its own from 1.
n, out = 0, []
for l in ktap:
    m = re.match(r"^(ok|not ok) \d+(.*)$", l)
    if m:
        n += 1
        l = "%s %d%s" % (m.group(1), n, m.group(2))
    out.append(l)
with open(sys.argv[2], "w") as f:
    f.write("KTAP version 1\n1..%d\n" % len(top))
    f.write("\n".join(out) + "\n")
PY

python3 "$kunit_py" parse --json="$dir/kunit.json" "$dir/kunit.ktap" >&2 || true
python3 - "$dir/kunit.json" <<'PY'
import json, sys
def walk(group, prefix):
    for case in group.get("test_cases", []):
        print(case["status"] if case["status"] in ("PASS", "SKIP") else "FAIL",
              prefix + case["name"])
    for sub in group.get("sub_groups", []):
        walk(sub, prefix + sub["name"] + ".")
walk(json.load(open(sys.argv[1])), "")
PY
