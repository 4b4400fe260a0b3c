// SPDX-License-Identifier: GPL-2.0-only
/*
 * ep-drain: wait until the console (standard output) has sent all that
 * was written to it (tcdrain()).  /init runs it before it powers off:
 * the 8250 driver sends from a buffer, a FIFO-full per interrupt, and
 * `poweroff -f` does not wait for it, so a workload's last lines were
 * lost when the interrupts came slowly (4 vCPUs on 2 CPUs).
 */
#include <stdio.h>
#include <termios.h>
#include <unistd.h>

int main(void)
{
	fflush(stdout);
	if (isatty(STDOUT_FILENO) && tcdrain(STDOUT_FILENO)) {
		perror("ep-drain: tcdrain");
		return 1;
	}
	return 0;
}
