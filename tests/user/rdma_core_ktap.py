#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's own python test suite and report it in KTAP.

    rdma_core_ktap.py SRC_TESTS DEV GID [PATTERN...]

SRC_TESTS is the tests/ directory of the rdma-core source tree whose
pyverbs is on PYTHONPATH; DEV and GID are the device and GID index the
suite runs on (loopback, one device).  With PATTERNs, only the test cases
whose id contains one of them run.

Each test case is one KTAP result: "ok" for a pass, "ok ... # SKIP why"
for a skip, "not ok" for a failure or an error, followed by the traceback
as comments.  An expected failure is a failure: the suite marks none, and
shca must not lean on one.  The exit status is 0 when nothing failed.
"""

import importlib.machinery
import io
import os
import sys
import time
import unittest


def flatten(suite):
    """Every test case of a (nested) suite, in order."""
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def name_of(test):
    """A KTAP-safe test name: the unittest id without the package."""
    tid = test.id()
    if tid.startswith('tests.'):
        tid = tid[len('tests.'):]
    return tid.replace(' ', '_').replace('#', '_')


class Result(unittest.TestResult):
    """Records one test case's outcome for KTAP."""

    def __init__(self):
        super().__init__()
        self.outcome = 'PASS'
        self.why = ''
        self.detail = ''

    def _bad(self, test, err, kind):
        self.outcome = 'FAIL'
        self.why = kind
        # The traceback cleaner needs the test (its failureException).
        self.detail += self._exc_info_to_string(err, test)

    def addFailure(self, test, err):
        self._bad(test, err, 'failure')

    def addError(self, test, err):
        self._bad(test, err, 'error')

    def addSubTest(self, test, subtest, err):
        if err is not None:
            kind = 'failure' if issubclass(err[0], test.failureException) \
                else 'error'
            self._bad(test, err, kind)

    def addSkip(self, test, reason):
        if self.outcome == 'PASS':
            self.outcome = 'SKIP'
            self.why = reason

    def addExpectedFailure(self, test, err):
        self._bad(test, err, 'expected failure')

    def addUnexpectedSuccess(self, test):
        self.outcome = 'FAIL'
        self.why = 'unexpected success'


def comment(text):
    for line in text.rstrip('\n').split('\n'):
        print('# ' + line)


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, dev, gid = sys.argv[1:4]
    patterns = sys.argv[4:]
    sys.path.insert(0, src)
    # The suite reads its device from its own argument parser.
    from args_parser import parser
    sys.argv = [sys.argv[0], '--dev', dev, '--gid', gid]
    parser.parse_args()
    init = os.path.join(src, '__init__.py')
    tests = importlib.machinery.SourceFileLoader('tests', init).load_module()
    cases = list(flatten(unittest.TestLoader().loadTestsFromModule(tests)))
    if patterns:
        cases = [c for c in cases if any(p in c.id() for p in patterns)]

    sys.stdout.reconfigure(line_buffering=True)
    print('KTAP version 1')
    print('1..%d' % len(cases))
    failed = 0
    counts = {'PASS': 0, 'SKIP': 0, 'FAIL': 0}
    for n, case in enumerate(cases, 1):
        res = Result()
        start = time.monotonic()
        # The suite prints to stderr as it goes; keep that out of KTAP.
        saved, sys.stderr = sys.stderr, io.StringIO()
        try:
            case.run(res)
        finally:
            noise, sys.stderr = sys.stderr.getvalue(), saved
        secs = time.monotonic() - start
        name = name_of(case)
        counts[res.outcome] += 1
        if res.outcome == 'PASS':
            print('ok %d %s' % (n, name))
        elif res.outcome == 'SKIP':
            why = ' '.join(res.why.split()) or 'no reason given'
            print('ok %d %s # SKIP %s' % (n, name, why))
        else:
            failed += 1
            comment('%s: %s (%.1f s)' % (name, res.why, secs))
            comment(res.detail)
            if noise:
                comment(noise)
            print('not ok %d %s' % (n, name))
    comment('rdma-core suite on %s: %d passed, %d failed, %d skipped' %
            (dev, counts['PASS'], counts['FAIL'], counts['SKIP']))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
