// SPDX-License-Identifier: GPL-2.0-only
/*
 * ep-hrtimer [N] [PERIOD_US]: a timerfd with a period of PERIOD_US
 * (default 1000: at 50 us a period is shorter than the loop in Bochs),
 * N expirations (default 50); prints the TSC ticks between wake-ups.
 */
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "ep-workload.h"

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 0) : 50;
	long us = argc > 2 ? strtol(argv[2], NULL, 0) : 1000;
	struct itimerspec its = {
		.it_interval = { us / 1000000, (us % 1000000) * 1000 },
		.it_value = { us / 1000000, (us % 1000000) * 1000 },
	};
	uint64_t *dt = calloc(n ? n : 1, sizeof(*dt)), exp, last;
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);

	if (!dt || fd < 0 || timerfd_settime(fd, 0, &its, NULL)) {
		perror("ep-hrtimer");
		return 1;
	}
	last = ep_rdtsc();
	for (unsigned int i = 0; i < n; i++) {
		uint64_t t;

		if (read(fd, &exp, sizeof(exp)) != sizeof(exp)) {
			perror("ep-hrtimer: read");
			return 1;
		}
		t = ep_rdtsc();
		dt[i] = t - last;
		last = t;
	}
	ep_report("hrtimer", dt, n);
	return 0;
}
