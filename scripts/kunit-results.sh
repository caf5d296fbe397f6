#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn the KUnit report in a guest's console log into a flat KTAP report
# with one result per test case, "ok N suite.case[.param]" (a skipped one
# "ok N ... # SKIP", a failed one "not ok N ..."), which scripts/ktap.sh
# reads as it reads every other test program's.  The nested KTAP between
# the "shca-kunit: begin" and "shca-kunit: end" markers is parsed by the
# kernel's own tools/testing/kunit/kunit.py; its summary goes to stderr.
#
#   kunit-results.sh [--suite GLOB] [--sources DIR] LOG
#
# Nothing may drop out of the count silently, and each suite has a file of
# its own: the suite NAME lives in NAME_test.c, alone.  The report is checked
# against what it declares (the plan of suites, each suite's plan of
# cases) and against what the module is known to hold: the suites that
# DIR/Kbuild (default: tests/kunit/) builds into shca_kunit.ko from DIR (an
# object built from another directory holds none), with their cases
# as the sources list them, narrowed by GLOB (KUnit's filter_glob, default
# $SUITE or "*").  Each disagreement is a failed "kunit-plan: ..." result: a
# suite that never ran or did not finish, a suite that failed before its
# first case, a case missing from a suite's results, a run cut short.
# Exits non-zero, with no KTAP, if there is no report to parse.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

glob=${SUITE:-*}
sources=$SHCA_TOP/tests/kunit
while [ $# -gt 1 ]; do
	case "$1" in
	--suite) glob=$2; shift 2 ;;
	--sources) sources=$2; shift 2 ;;
	*) shca_die "kunit-results.sh: unknown option $1" ;;
	esac
done
[ $# -eq 1 ] || shca_die "usage: kunit-results.sh [--suite GLOB] [--sources DIR] LOG"
log=$1
dir=$(dirname "$log")
kunit_py=$(shca_srcdir)/tools/testing/kunit/kunit.py

python3 - "$log" "$dir/kunit.ktap" "$dir/kunit.plan" "$sources" "$glob" <<'PY'
import fnmatch, os, re, sys

log, ktap_out, plan_out, sources, glob = sys.argv[1:6]
problems = []

# What the module holds: the objects Kbuild links into shca_kunit.ko, the
# suites their kunit_test_suite[s]() register, and each suite's cases.
def known_suites():
    kbuild = open(os.path.join(sources, "Kbuild")).read().replace("\\\n", " ")
    objs = []
    for m in re.finditer(r"^shca_kunit-y\s*:?\+?=\s*(.*)$", kbuild, re.M):
        objs += m.group(1).split()
    suites = {}
    for obj in objs:
        src = os.path.join(sources, re.sub(r"\.o$", ".c", obj))
        if not os.path.exists(src):
            continue    # built from elsewhere (tests/kmod/common/), with no suite
        text = open(src).read()
        regs = []
        for m in re.finditer(r"\bkunit_test_suites?\s*\(([^;]*)\)\s*;", text):
            regs += [a.strip().lstrip("&") for a in m.group(1).split(",")]
        # One suite per file, and the file named after it: the suite
        # shca_x lives in shca_x_test.c; other files hold none.
        regs = [r for r in regs if r]
        stem = os.path.basename(src)[:-2]
        if not stem.endswith("_test") and regs:
            problems.append("%s: holds a suite, but is not named <suite>_test.c"
                            % src)
        elif stem.endswith("_test") and len(regs) != 1:
            problems.append("%s: holds %d suites, one per file wanted" %
                            (src, len(regs)))
        for var in regs:
            m = re.search(r"struct\s+kunit_suite\s+" + re.escape(var) +
                          r"\s*=\s*\{(.*?)\n\};", text, re.S)
            if not m:
                problems.append("%s: suite %s has no definition" % (src, var))
                continue
            name = re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
            cases = re.search(r"\.test_cases\s*=\s*(\w+)", m.group(1))
            body = cases and re.search(r"struct\s+kunit_case\s+" +
                                       re.escape(cases.group(1)) +
                                       r"\s*\[\]\s*=\s*\{(.*?)\n\};",
                                       text, re.S)
            if not name or not body:
                problems.append("%s: suite %s has no name or no cases" %
                                (src, var))
                continue
            suites[name.group(1)] = re.findall(r"\bKUNIT_CASE\w*\(\s*(\w+)",
                                               body.group(1))
            if stem.endswith("_test") and name.group(1) != stem[:-5]:
                problems.append("%s: holds suite %s, the file's name wants %s"
                                % (src, name.group(1), stem[:-5]))
    return suites

suite_glob, _, case_glob = glob.partition(".")
expected = {}
for name, cases in known_suites().items():
    if fnmatch.fnmatchcase(name, suite_glob):
        expected[name] = [c for c in cases
                          if not case_glob or fnmatch.fnmatchcase(c, case_glob)]

# The KTAP between the markers; the last run if there are several.
stamp = re.compile(r"^\[ *\d+\.\d+\] ?")
body, inside, ended = [], False, False
for line in open(log, errors="replace").read().splitlines():
    line = stamp.sub("", line.rstrip("\r"))
    if "shca-kunit: begin" in line:
        inside, ended, body = True, False, []
        continue
    if "shca-kunit: end" in line:
        inside, ended = False, True
        continue
    if inside:
        body.append(line)
# Keep KTAP only: the suites' lines are indented, their results are not.
ktap = [l for l in body if re.match(r"^(\s+|ok |not ok |# |1\.\.\d+$)", l)
        and not re.match(r"^\s*KTAP version", l)]
top = [l for l in ktap if re.match(r"^(ok|not ok) ", l)]
if not top:
    sys.exit("kunit-results: no KUnit report in " + log)

# Walk the report: the top-level plan, each suite's header, plan, case
# results and result line.
declared = None
suite = None          # the suite whose header was seen last
seen = {}             # suite -> {"plan": n, "cases": [...], "result": s}
order = []
for l in ktap:
    m = re.match(r"^1\.\.(\d+)$", l)
    if m:
        declared = int(m.group(1))
        continue
    m = re.match(r"^ {4}# Subtest: (\S+)$", l)
    if m:
        suite = m.group(1)
        seen.setdefault(suite, {"plan": None, "cases": [], "result": None})
        continue
    m = re.match(r"^ {4}1\.\.(\d+)$", l)
    if m and suite:
        seen[suite]["plan"] = int(m.group(1))
        continue
    m = re.match(r"^ {4}(ok|not ok) \d+ (\S+)", l)
    if m and suite:
        seen[suite]["cases"].append(m.group(2))
        continue
    m = re.match(r"^(ok|not ok) \d+ (\S+)", l)
    if m:
        name = m.group(2)
        s = seen.setdefault(name, {"plan": None, "cases": [], "result": None})
        s["result"] = m.group(1)
        order.append(name)
        suite = None

if not ended:
    problems.append("the run did not finish: no end marker after the report")
if declared is None:
    problems.append("no plan of suites in the report")
elif declared != len(order):
    problems.append("%d suites declared, %d reported" % (declared, len(order)))
for name in expected:
    if name not in seen:
        problems.append("%s: in the module's sources, never ran" % name)
for name, s in seen.items():
    if name not in expected:
        problems.append("%s: ran, but is not in the sources for '%s'" %
                        (name, glob))
    if s["result"] is None:
        problems.append("%s: no result; the suite did not finish" % name)
    if s["plan"] is None:
        problems.append("%s: no plan; the suite failed before its first case"
                        % name)
        continue
    if len(s["cases"]) != s["plan"]:
        problems.append("%s: %d cases declared, %d reported" %
                        (name, s["plan"], len(s["cases"])))
    if name in expected and s["plan"] != len(expected[name]):
        problems.append("%s: the sources have %d cases, the module %d" %
                        (name, len(expected[name]), s["plan"]))
with open(plan_out, "w") as f:
    for p in problems:
        f.write("kunit-plan: %s\n" % p)

# Number the suites in order, as one run does, for kunit.py.
n, out = 0, []
for l in ktap:
    if re.match(r"^1\.\.\d+$", l):
        continue
    m = re.match(r"^(ok|not ok) \d+(.*)$", l)
    if m:
        n += 1
        l = "%s %d%s" % (m.group(1), n, m.group(2))
    out.append(l)
with open(ktap_out, "w") as f:
    f.write("KTAP version 1\n1..%d\n" % (declared or len(top)))
    f.write("\n".join(out) + "\n")
PY

python3 "$kunit_py" parse --json="$dir/kunit.json" "$dir/kunit.ktap" >&2 || true
python3 - "$dir/kunit.json" "$dir/kunit.plan" <<'PY'
import json, sys
results = []
def walk(group, prefix):
    for case in group.get("test_cases", []):
        results.append((case["status"], prefix + case["name"]))
    for sub in group.get("sub_groups", []):
        walk(sub, prefix + sub["name"] + ".")
walk(json.load(open(sys.argv[1])), "")
results += [("FAIL", l.rstrip("\n")) for l in open(sys.argv[2]) if l.strip()]
print("KTAP version 1")
print("1..%d" % len(results))
for n, (status, name) in enumerate(results, 1):
    if status == "PASS":
        print("ok %d %s" % (n, name))
    elif status == "SKIP":
        print("ok %d %s # SKIP" % (n, name))
    else:
        print("not ok %d %s" % (n, name))
PY
