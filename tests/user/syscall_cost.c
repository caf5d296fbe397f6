// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * syscall_cost: what one system call costs in this boot.
 *
 *   syscall_cost MS
 *
 * Calls getppid() (the cheapest call there is: no argument, no lock)
 * over and over for MS milliseconds and prints "syscall_cost: getppid
 * NS ns": the mean time of one call, the floor under a doorbell's
 * write() to the device.  make bench reports it beside the device's
 * figures, as it reports the kernel's copy rate: under emulation a
 * system call costs a hundred times what it costs on the metal, and the
 * ratio of the two shows how much of a message's time is the trap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long calls = 0;
	double t0, t, end;
	long ms;
	int i;

	ms = argc == 2 ? strtol(argv[1], NULL, 0) : 0;
	if (ms <= 0 || ms > 60000) {
		fprintf(stderr, "usage: syscall_cost MS (1 to 60000)\n");
		return 2;
	}
	t0 = now();
	end = t0 + ms / 1e3;
	do {
		/* The raw call: a C library may cache what getppid() returns. */
		for (i = 0; i < 1000; i++)
			syscall(SYS_getppid);
		calls += 1000;
		t = now();
	} while (t < end);
	printf("syscall_cost: getppid %.1f ns\n", (t - t0) * 1e9 / calls);
	return 0;
}
