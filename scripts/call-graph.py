#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Which files of a layer call which, from their object files' symbols.
#
#   call-graph.py NAME OBJ... [-- ABOVE_OBJ...]
#
# An object calls another when a global symbol it needs (nm: U) is one
# the other defines (T, D, B, R...).  The layer NAME (the model, the
# verbs layer, libshca) must have no cycle: no two of its files call each
# other, directly or round a loop.  With "-- ABOVE_OBJ...", those are the
# layer above NAME, which no file of NAME may call (the model never calls
# the verbs layer: it reaches the driver only through the handlers the
# driver registered).  Prints the calls it found, one "caller -> callee:
# symbols" line each, then any cycle or upward call; exits 1 if it found
# one.
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f'call-graph: nm {obj}: {out.stderr.strip()}')
    defined, needed = set(), set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'U':
            needed.add(parts[1])
        elif len(parts) == 3 and parts[1].isupper() and parts[1] != 'U':
            defined.add(parts[2])
    return defined, needed


def name(obj):
    base = os.path.basename(obj)
    for ext in ('.c.o', '.o'):
        if base.endswith(ext):
            return base[:-len(ext)] + '.c'
    return base


def cycles(nodes, edges):
    # Tarjan's strongly connected components; those of two or more files
    # are the cycles.
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    if len(argv) < 2:
        sys.exit('usage: call-graph.py NAME OBJ... [-- ABOVE_OBJ...]')
    layer, rest = argv[0], argv[1:]
    above = []
    if '--' in rest:
        i = rest.index('--')
        rest, above = rest[:i], rest[i + 1:]
    syms = {name(o): symbols(o) for o in rest}
    up = {name(o): symbols(o) for o in above}
    edges, why = {}, {}
    for a, (_, need) in syms.items():
        for b, (defs, _) in syms.items():
            common = need & defs
            if a != b and common:
                edges.setdefault(a, set()).add(b)
                why[a, b] = sorted(common)
    for (a, b), s in sorted(why.items()):
        print(f'{a} -> {b}: {" ".join(s)}')
    bad = 0
    for comp in cycles(syms, edges):
        bad = 1
        print(f'{layer}: these files call each other, round a cycle: '
              f'{" ".join(comp)}')
    for a, (_, need) in sorted(syms.items()):
        for b, (defs, _) in sorted(up.items()):
            common = sorted(need & defs)
            if common:
                bad = 1
                print(f'{layer}: {a} calls up into {b}: {" ".join(common)}')
    return bad


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
