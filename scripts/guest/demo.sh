#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo, run in the guest: what a shca device is and does.
. "$SHCA_TOP/scripts/guest/lib.sh"
set -eu
exec > >(tee "$SHCA_OUT/demo.log") 2>&1

step() {
	printf '\n== %s\n' "$*"
}

run() {
	printf '$ %s\n' "$*"
	"$@" 2>&1 | sed 's/^/  /'
}

shca_guest_load
step "shca on $(uname -r)"
run bash -c "grep '^shca ' /proc/modules"

step "Two netdevs, and a shca device on each"
ip link add demo0 type dummy
ip link add demo1 type dummy
ip link set demo0 up
ip link set demo1 up
ip addr add 192.0.2.10/24 dev demo0
ip addr add 198.51.100.10/24 dev demo1
run rdma link add shca0 type shca netdev demo0
run rdma link add shca1 type shca netdev demo1
run rdma dev
run rdma link

step "Bad input gets a clear error and harms nothing"
run rdma link add shca2 type shca netdev nosuchdev || true
run rdma link add shca0 type shca netdev demo1 || true
run rdma link add shca2 type shca netdev demo0 || true
run rdma link add shca2 type shca netdev lo || true

step "What the device reports, from its one capability table"
s=/sys/class/infiniband/shca0
for f in node_type node_guid sys_image_guid fw_ver node_desc; do
	printf '  %-16s %s\n' "$f" "$(cat $s/$f)"
done
for f in state phys_state link_layer rate; do
	printf '  port 1 %-9s %s\n' "$f" "$(cat $s/ports/1/$f)"
done
printf '  port 1 pkey 0    %s\n' "$(cat $s/ports/1/pkeys/0)"
run head -n 8 /sys/kernel/debug/shca/shca0/caps

step "The GID table, programmed into the device by ib_core (add_gid)"
sleep 1
for i in 0 1 2 3; do
	printf '  gid %d %s  %s\n' "$i" "$(cat $s/ports/1/gids/$i)" \
		"$(cat $s/ports/1/gid_attrs/types/$i 2>/dev/null)"
done

step "Traffic: an in-kernel consumer runs RC, UC and UD between shca0 and shca1"
printf '  (shca_kconsumer uses ib_core only: every opcode each QP type takes,\n'
printf '   every byte and completion checked; CQs polled in softirq)\n'
run insmod "$SHCA_BUILD/tests/kmod/kconsumer/shca_kconsumer.ko" dev_a=shca0 \
	dev_b=shca1 iters=8
run cat /sys/kernel/debug/shca_kconsumer/result

step "rdma res: the consumer's objects, with what the device holds for them"
run rdma res show qp link shca0 -dd
run rdma res show cq dev shca1 -dd
run rdma res show mr dev shca1 -dd

step "rdma statistic: the device's counters"
run rdma statistic show link shca0/1
run rdma statistic show link shca1/1
run rmmod shca_kconsumer

step "Teardown: a shared CQ, a QP destroyed (or reset) mid-traffic"
printf '  (shca_kconsumer, teardown=4: one CQ from ib_alloc_cq() shared by two\n'
printf '   neighbour QPs and a victim; the poller is parked while the victim is\n'
printf '   torn down with its traffic in flight, then let go)\n'
counter() {
	rdma statistic show link shca0/1 | tr ' ' '\n' |
		awk -v n="$1" 'p { print; exit } $0 == n { p = 1 }'
}
printf '  swept_cqes %s, stray_cqes %s\n' "$(counter swept_cqes)" \
	"$(counter stray_cqes)"
run insmod "$SHCA_BUILD/tests/kmod/kconsumer/shca_kconsumer.ko" dev_a=shca0 iters=1 \
	teardown=4 poll=workqueue
run bash -c "dmesg | grep -o 'shca_kconsumer: \(round\|destroy_cq\|teardown\).*'"
run grep teardown /sys/kernel/debug/shca_kconsumer/result
printf '  swept_cqes %s, stray_cqes %s\n' "$(counter swept_cqes)" \
	"$(counter stray_cqes)"
run rmmod shca_kconsumer
printf '  (destroy_cq: ib_core refuses first, on its usecnt; the device keeps\n'
printf '   its own count, drv_assoc in rdma res above, and refuses as well; the\n'
printf '   KUnit case that calls the driver destroy_cq directly:)\n'
if [ -f "$SHCA_BUILD/tests/kunit/shca_kunit.ko" ] &&
   [ -w /sys/module/kunit/parameters/filter_glob ]; then
	printf %s 'shca_teardown.shca_test_destroy_cq_refused_while_a_qp_uses_it' \
		> /sys/module/kunit/parameters/filter_glob
	insmod "$SHCA_BUILD/tests/kunit/shca_kunit.ko"
	rmmod shca_kunit
	printf %s '*' > /sys/module/kunit/parameters/filter_glob
	run bash -c "dmesg | grep -o 'ok [0-9]* shca_test_destroy_cq_refused_while_a_qp_uses_it'"
fi

step "From userspace: rdma-core's tools over libshca"
b=$(cat "$SHCA_TOP/out/rdma-core-build")
export LD_LIBRARY_PATH=$b/lib PATH=$b/bin:$PATH
for d in shca0 shca1; do
	for i in $(seq 100); do
		grep -q ffff "/sys/class/infiniband/$d/ports/1/gids/3" && break
		sleep 0.1
	done
done
run ibv_devices
run bash -c "ibv_devinfo -d shca0 | head -n 22"
printf '  (the server on shca1, the client on shca0; GID 3 is the IPv4 one)\n'
ibv_rc_pingpong -d shca1 -g 3 -n 200 -e > "$SHCA_OUT/demo-pp.txt" 2>&1 &
srv=$!
for i in $(seq 100); do
	grep -q ':18515 ' <<<"$(ss -ltn)" && break
	sleep 0.1
done
run ibv_rc_pingpong -d shca0 -g 3 -n 200 -e 127.0.0.1
# Not a bare wait: that would wait for the tee behind stdout too.
wait $srv
printf '$ # the server said:\n'
sed 's/^/  /' "$SHCA_OUT/demo-pp.txt"
printf '  (a process, its QPs and CQs, as rdma res sees them mid-run:)\n'
ibv_rc_pingpong -d shca1 -g 3 -n 100000 > /dev/null 2>&1 &
srv=$!
for i in $(seq 100); do
	grep -q ':18515 ' <<<"$(ss -ltn)" && break
	sleep 0.1
done
ibv_rc_pingpong -d shca0 -g 3 -n 100000 127.0.0.1 > /dev/null 2>&1 &
cli=$!
for i in $(seq 100); do
	grep -q ibv_rc <<<"$(rdma res show qp link shca0)" && break
	sleep 0.1
done
run bash -c "rdma res show qp link shca0 | grep ibv_rc"
run bash -c "rdma res show cq dev shca0 | grep ibv_rc"
kill $srv $cli 2>/dev/null || true
wait $srv $cli 2>/dev/null || true
printf '  (userspace teardown on a full shared CQ, swept by libshca:)\n'
run "$SHCA_TOP/out/user/shca_uverbs_test" shca0 teardown

step "The race windows tests hold open, and the engine's pause and step"
run ls /sys/kernel/debug/shca/shca0 /sys/kernel/debug/shca/shca0/windows/fence_sweep

step "The port follows its netdev's link"
ip link set demo0 down
printf '  after link down: %s\n' "$(cat $s/ports/1/state)"
ip link set demo0 up
printf '  after link up:   %s\n' "$(cat $s/ports/1/state)"

step "Device commands the driver issued, and a one-shot injected failure"
run cat /sys/kernel/debug/shca/shca0/cmd_counts
echo 1 > /sys/kernel/debug/shca/shca0/fail_cmd_once
printf '$ cat %s/ports/1/state   # QUERY_PORT armed to fail once\n' "$s"
cat $s/ports/1/state 2>&1 | sed 's/^/  /' || true
printf '$ cat %s/ports/1/state   # and the next one works\n' "$s"
cat $s/ports/1/state | sed 's/^/  /'

step "Removal: by rdma link delete, by deleting the netdev, by rmmod"
run rdma link delete shca1
run rdma dev
run rdma link add shca1 type shca netdev demo1
run ip link del demo1
sleep 1
run rdma dev
ip link add demo2 type dummy
run rdma link add shca1 type shca netdev demo2
run rmmod shca
run rdma dev
echo
echo "demo done"
