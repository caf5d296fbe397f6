#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A one-shot command failure from debugfs makes exactly one verb fail with
# -EIO; the next call succeeds and the knob has disarmed itself.
. "$(dirname "$0")/../lib.sh"

mkdummy shca_d0
rdma link add shca0 type shca netdev shca_d0
knob=/sys/kernel/debug/shca/shca0/fail_cmd_once
counts=/sys/kernel/debug/shca/shca0/cmd_counts
state=$(sysfs_of shca0)/ports/1/state

[ "$(cat $knob)" = -1 ] || fail "knob armed at start: $(cat $knob)"
op=$(awk '$2 == "QUERY_PORT" { print $1 }' $counts)
[ -n "$op" ] || fail "no QUERY_PORT in $counts"
before=$(awk '$2 == "QUERY_PORT" { print $3 }' $counts)

echo "$op" > $knob
[ "$(cat $knob)" = "$op" ] || fail "knob did not arm"
cat $state 2>/dev/null && fail "query_port succeeded with a failure armed"
[ "$(cat $knob)" = -1 ] || fail "knob did not disarm after firing"
grep -q ACTIVE $state || fail "query_port still failing"
after=$(awk '$2 == "QUERY_PORT" { print $3 }' $counts)
[ "$after" -ge $((before + 2)) ] || fail "command count $before -> $after"

# Releasing commands cannot be armed; nonsense is refused.
dealloc=$(awk '$2 == "DEALLOC_PD" { print $1 }' $counts)
echo "$dealloc" > $knob 2>/dev/null && fail "DEALLOC_PD armed"
echo 999 > $knob 2>/dev/null && fail "opcode 999 armed"
[ "$(cat $knob)" = -1 ] || fail "knob armed by a refused write"
echo ok
