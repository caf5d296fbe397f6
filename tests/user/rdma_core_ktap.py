#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's own python test suite and report it in KTAP.

    rdma_core_ktap.py SRC_TESTS DEV GID [PATTERN...]

SRC_TESTS is the tests/ directory of the rdma-core source tree whose
pyverbs is on PYTHONPATH; DEV and GID are the device and GID index the
suite runs on (loopback, one device).  With PATTERNs, only the test cases
whose id contains one of them run; a PATTERN that begins with "!" leaves
out the cases whose id contains the rest of it (with only such PATTERNs,
every other case runs).

Each test case is one KTAP result: "ok" for a pass, "ok ... # SKIP why"
for a skip, "not ok" for a failure or an error, followed by the traceback
as comments.  An expected failure is a failure: the suite marks none, and
shca must not lean on one.  A case that leaves a process or a (non-daemon)
thread of its own running five seconds after it ended fails too, naming
it and where it waits: that process is killed, and the run ends without
waiting for any thread or exit hook, so that nothing a case left behind
can hang the suite.
The exit status is 0 when nothing failed.
"""

import importlib.machinery
import io
import os
import signal
import sys
import threading
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


def children():
    """The pids of this process's children, from /proc."""
    me = str(os.getpid())
    pids = set()
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % pid) as f:
                stat = f.read()
        except OSError:
            continue
        # The fourth field, after the parenthesised command.
        if stat[stat.rindex(')') + 2:].split()[1] == me:
            pids.add(int(pid))
    return pids


def where(pid):
    """What a process is and where it waits, for a comment."""
    out = []
    for f in ('comm', 'wchan'):
        try:
            with open('/proc/%d/%s' % (pid, f)) as fd:
                out.append(fd.read().strip() or '-')
        except OSError:
            out.append('?')
    return '%s in %s' % tuple(out)


def strays(procs, threads, grace=5.0):
    """What a case left running: its processes (killed) and threads."""
    deadline = time.monotonic() + grace
    left = []
    while time.monotonic() < deadline:
        # Reap what has ended: multiprocessing's and subprocess's own.
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        new_p = children() - procs
        # A daemon thread (multiprocessing's queue feeders) ends with
        # the process; another would hold its exit.
        new_t = [t for t in threading.enumerate()
                 if t.ident not in threads and t.is_alive() and
                 not t.daemon]
        if not new_p and not new_t:
            return left
        time.sleep(0.2)
    for pid in sorted(new_p):
        left.append('process %d (%s)' % (pid, where(pid)))
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
    for t in new_t:
        left.append('thread %s' % t.name)
    return left


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
    wanted = [p for p in patterns if not p.startswith('!')]
    unwanted = [p[1:] for p in patterns if p.startswith('!')]
    if wanted:
        cases = [c for c in cases if any(p in c.id() for p in wanted)]
    cases = [c for c in cases if not any(p in c.id() for p in unwanted)]

    sys.stdout.reconfigure(line_buffering=True)
    print('KTAP version 1')
    print('1..%d' % len(cases))
    failed = 0
    counts = {'PASS': 0, 'SKIP': 0, 'FAIL': 0}
    for n, case in enumerate(cases, 1):
        res = Result()
        start = time.monotonic()
        procs = children()
        threads = {t.ident for t in threading.enumerate()}
        # The suite prints to stderr as it goes; keep that out of KTAP.
        saved, sys.stderr = sys.stderr, io.StringIO()
        try:
            case.run(res)
        finally:
            noise, sys.stderr = sys.stderr.getvalue(), saved
        left = strays(procs, threads)
        if left:
            res.outcome = 'FAIL'
            res.why = (res.why + '; ' if res.why else '') + \
                'left running: ' + ', '.join(left)
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
    rc = main()
    sys.stdout.flush()
    # Not sys.exit(): no thread a case left may hold the exit.
    os._exit(rc)
