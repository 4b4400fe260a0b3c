// SPDX-License-Identifier: GPL-2.0-only
/*
 * ep-pingpong [N]: two processes pinned to CPUs 0 and 1 bounce one byte
 * through two pipes N times (default 200); prints the round-trip
 * distribution in TSC ticks.  On one CPU both run on CPU 0.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "ep-workload.h"

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 0) : 200;
	int ping[2], pong[2], two = sysconf(_SC_NPROCESSORS_ONLN) > 1;
	uint64_t *rt = calloc(n ? n : 1, sizeof(*rt));
	char b = 0;
	pid_t child;

	if (!rt || pipe(ping) || pipe(pong)) {
		perror("ep-pingpong");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("ep-pingpong: fork");
		return 1;
	}
	if (child == 0) {
		ep_pin(two ? 1 : 0);
		for (unsigned int i = 0; i < n; i++)
			if (read(ping[0], &b, 1) != 1 || write(pong[1], &b, 1) != 1)
				_exit(1);
		_exit(0);
	}
	ep_pin(0);
	for (unsigned int i = 0; i < n; i++) {
		uint64_t t = ep_rdtsc();

		if (write(ping[1], &b, 1) != 1 || read(pong[0], &b, 1) != 1) {
			perror("ep-pingpong: pipe");
			return 1;
		}
		rt[i] = ep_rdtsc() - t;
	}
	waitpid(child, NULL, 0);
	ep_report("pingpong", rt, n);
	return 0;
}
