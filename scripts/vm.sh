#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a test kernel under QEMU and run one guest script in it.
#
#   vm.sh [--kernel debug|stock|stock61|system:RELEASE] [--root ROOT]
#         [--timeout SECONDS] [--interactive] [--out DIR] [--cpus N]
#         [--mem MIB] [SCRIPT [ARGS...]]
#
# The guest has N vCPUs (default 2, at most 8) and MIB MiB of memory
# (default 3072, at least 512).
# The guest's root is ROOT (default: the host's root), shared read-only
# over 9p; DIR (the scratch area) is shared writable at the same path.
# "system:RELEASE" boots ROOT's own kernel, /boot/vmlinuz-RELEASE, with
# ROOT's /lib/modules/RELEASE: a Debian system in a directory
# (scripts/pkg-test.sh), which must hold the project's checkout at its
# path on the host.  /tmp, /run, /dev/shm
# and /var/tmp are tmpfs in the guest, and /lib/modules holds the booted
# kernel's modules.  SCRIPT runs as root in that root, under bash, from
# the project's top directory.
#
# When the guest is done, DIR holds console.log (everything the kernel and
# the script printed) and whatever the script wrote there.  The run fails
# if the script fails, if the guest does not finish in time, or if the
# kernel log shows a BUG, WARNING, KASAN, UBSAN, lockdep, kmemleak, hung
# task or panic report; the report is printed.  On the debug kernel it
# also fails if kmemleak was not active to the end (scripts/guest/init.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel=debug
timeout=900
interactive=0
out=
cpus=2
mem=3072
sysroot=/
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--out) out=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--root) sysroot=$2; shift 2 ;;
	--) shift; break ;;
	-*) shca_die "vm.sh: unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || [ $interactive -eq 1 ] || shca_die "vm.sh: no guest script"
[[ $cpus =~ ^[1-8]$ ]] || shca_die "vm.sh: --cpus must be 1 to 8, not '$cpus'"
[[ $mem =~ ^[1-9][0-9]{2,5}$ ]] && [ "$mem" -ge 512 ] ||
	shca_die "vm.sh: --mem must be a number of MiB, at least 512, not '$mem'"

shca_need_pkgs qemu-system-x86 busybox-static cpio kmod xz-utils

case "$kernel" in
debug)
	kb=$("$SHCA_TOP/scripts/build-kernel.sh")
	bzimage=$kb/arch/x86/boot/bzImage
	rel=$(cat "$kb/include/config/kernel.release")
	moddir=$kb/modroot/lib/modules/$rel
	;;
stock|stock61)
	root=$("$SHCA_TOP/scripts/fetch-stock.sh" "$kernel")
	rel=$(shca_stock_release "$kernel")
	bzimage=$root/boot/vmlinuz-$rel
	moddir=$root/lib/modules/$rel
	;;
system:*)
	rel=${kernel#system:}
	root=$sysroot
	[ "$root" != / ] || shca_die "vm.sh: --kernel system:REL needs --root"
	bzimage=$root/boot/vmlinuz-$rel
	# A path in the guest's root, which is ROOT.
	moddir=/lib/modules/$rel
	[ -f "$bzimage" ] && [ -d "$root$moddir" ] ||
		shca_die "vm.sh: $root has no kernel $rel"
	;;
*)
	shca_die "vm.sh: --kernel must be debug, stock, stock61 or system:RELEASE"
	;;
esac

# The guest mounts the booted kernel's modules on /lib/modules, which must
# exist in the (read-only) host root it boots from.
[ -d /lib/modules ] || mkdir -p /lib/modules

[ -n "$out" ] || out=$SHCA_TOP/out/vm-$kernel
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The initramfs: busybox, and for a stock kernel the virtio and 9p modules that
# the debug kernel has built in.
ird=$out/.initramfs
mkdir -p "$ird"/{bin,dev,proc,sys,newroot,modules}
cp /bin/busybox "$ird/bin/busybox"
cp "$SHCA_TOP/scripts/guest/initramfs-init" "$ird/init"
chmod +x "$ird/init"
: > "$ird/modules/order"
if [ "$kernel" != debug ]; then
	for m in virtio_pci 9p 9pnet_virtio; do
		modprobe --show-depends -d "$root" -S "$rel" "$m"
	done | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' |
		while read -r ko; do
			name=$(basename "${ko%.xz}")
			# 6.12's modules are xz-compressed, 6.1's are not.
			case "$ko" in
			*.xz) xz -dc "$ko" > "$ird/modules/$name" ;;
			*) cp "$ko" "$ird/modules/$name" ;;
			esac
			echo "$name" >> "$ird/modules/order"
		done
fi
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs.gz"
rm -rf "$ird"

# KVM only when a probe boot has worked on this machine; nested KVM here
# tends to fail with an internal emulation error.
accel=tcg
if [ -w /dev/kvm ] && [ "${SHCA_NO_KVM:-0}" != 1 ]; then
	probe=$SHCA_CACHE/kvm-probe-$(uname -r)-$(qemu-system-x86_64 --version | awk 'NR == 1' | tr -cd '0-9.')
	if [ ! -f "$probe" ]; then
		shca_log "probing KVM with one boot"
		if grep -q 'shca-probe-ok' <<<"$(timeout 60 qemu-system-x86_64 -nic none \
			-accel kvm -cpu host -m 512 -display none -no-reboot \
			-serial stdio -monitor none -kernel "$bzimage" \
			-initrd "$out/initramfs.gz" \
			-append "console=ttyS0 panic=-1 SHCA_PROBE=1" 2>&1)"; then
			echo kvm > "$probe"
		else
			echo tcg > "$probe"
		fi
	fi
	accel=$(cat "$probe")
fi
cpu=max
[ "$accel" = kvm ] && cpu=host
echo "$accel" > "$out/accel"

cmdline="console=ttyS0 panic=-1 loglevel=7"
# The debug kernel finds its CPUs through ACPI.  On the q35 machine the
# PCI interrupt routing table is a plain package: the pc machine's _PRT
# builds it in an AML loop that KASAN under TCG cannot finish before
# ACPI's loop timeout (30 s per PCI device).
machine=pc
[ "$kernel" = debug ] && machine=q35
cmdline+=" SHCA_TOP=$SHCA_TOP SHCA_OUT=$out SHCA_MODDIR=$moddir"
cmdline+=" SHCA_KERNEL=${kernel#system:}"
# Part of rdma-core's suite, for tests/integration/rdma_core_suite.sh: a
# comma-separated list of test ids (or parts of them) to run.
if [ -n "${SHCA_RDMA_CORE_CASES:-}" ]; then
	[[ $SHCA_RDMA_CORE_CASES =~ ^[A-Za-z0-9_.,]+$ ]] ||
		shca_die "vm.sh: SHCA_RDMA_CORE_CASES must be test ids, comma-separated"
	cmdline+=" SHCA_RDMA_CORE_CASES=$SHCA_RDMA_CORE_CASES"
fi
# shca's module parameters for every load in the guest
# (scripts/guest/lib.sh), e.g. SHCA_MODPARAMS=poll_us=50.
if [ -n "${SHCA_MODPARAMS:-}" ]; then
	[[ $SHCA_MODPARAMS =~ ^[a-z_]+=[0-9]+(,[a-z_]+=[0-9]+)*$ ]] ||
		shca_die "vm.sh: SHCA_MODPARAMS must be name=number pairs, comma-separated"
	cmdline+=" SHCA_MODPARAMS=$SHCA_MODPARAMS"
fi
# make check-long's tier (scripts/guest/run-tests.sh).
if [ "${SHCA_LONG:-0}" = 1 ]; then
	cmdline+=" SHCA_LONG=1"
fi
if [ $interactive -eq 1 ]; then
	cmdline+=" SHCA_INTERACTIVE=1"
else
	printf '%q ' "$@" > "$out/.cmd"
fi

qemu=(qemu-system-x86_64 -nic none -machine "$machine" -accel "$accel"
	-cpu "$cpu" -smp "$cpus" -m "${mem}M"
	-no-reboot -kernel "$bzimage" -initrd "$out/initramfs.gz"
	-append "$cmdline"
	-fsdev "local,id=hostroot,path=$sysroot,security_model=none,readonly=on,multidevs=remap"
	-device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot"
	-fsdev "local,id=scratch,path=$out,security_model=none,multidevs=remap"
	-device "virtio-9p-pci,fsdev=scratch,mount_tag=scratch")

shca_log "booting $kernel kernel $rel ($accel)"
if [ $interactive -eq 1 ]; then
	exec "${qemu[@]}" -nographic
fi

start=$(date +%s)
set +e
timeout --foreground -k 10 "$timeout" "${qemu[@]}" -display none \
	-monitor none -serial "file:$out/console.log" </dev/null
qrc=$?
set -e
shca_log "guest ran for $(( $(date +%s) - start ))s"

rc=0
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	shca_log "guest timed out after ${timeout}s; console tail:"
	tail -n 40 "$out/console.log" >&2
	rc=1
elif [ ! -f "$out/exit-status" ]; then
	shca_log "guest died before finishing (qemu status $qrc); console tail:"
	tail -n 60 "$out/console.log" >&2
	rc=1
elif [ "$(cat "$out/exit-status")" != 0 ]; then
	rc=$(cat "$out/exit-status")
fi

# The debug kernel has kmemleak: a run in which it was off checked no leak.
if [ "$kernel" = debug ] && [ -f "$out/exit-status" ]; then
	state=$(cat "$out/kmemleak-state" 2>/dev/null || echo "not recorded")
	if [ "$state" != active ] ||
	   grep -q 'kmemleak: Kernel memory leak detector disabled' \
		"$out/console.log"; then
		shca_log "kmemleak was not active ($state); no leak was checked"
		grep 'kmemleak:' "$out/console.log" | tail -n 5 >&2 || true
		rc=1
	fi
fi
if [ -s "$out/kmemleak" ]; then
	shca_log "kmemleak found leaks:"
	head -n 60 "$out/kmemleak" >&2
	rc=1
	: > "$out/splat"
fi
if ! "$SHCA_TOP/scripts/splat-scan.sh" "$out/console.log"; then
	rc=1
	: > "$out/splat"
fi
exit $rc
