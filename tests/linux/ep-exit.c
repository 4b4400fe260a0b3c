// SPDX-License-Identifier: GPL-2.0-only
/*
 * ep-exit [CODE]: end the run with isa-debug-exit code CODE (default 0,
 * success).  exitplan emulates QEMU's isa-debug-exit at port 0xf4
 * (runtime/devices/platform.h): the write stops the guest with exit status
 * (CODE << 1) | 1, which the hypervisor reports on its own channel.
 * /init uses it for a failed workload's status; success ends with
 * Linux's own `poweroff -f` (ACPI S5, docs/LINUX.md), and ep-exit 0 only
 * where that returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

#define ISA_DEBUG_EXIT_PORT	0xf4

int main(int argc, char **argv)
{
	unsigned long code = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;

	if (ioperm(ISA_DEBUG_EXIT_PORT, 4, 1)) {
		perror("ep-exit: ioperm");
		return 1;
	}
	fflush(stdout);
	outl((unsigned int)code, ISA_DEBUG_EXIT_PORT);
	/* Not reached under exitplan; on other machines the port is unclaimed. */
	fprintf(stderr, "ep-exit: isa-debug-exit did not end the machine\n");
	return 1;
}
