// SPDX-License-Identifier: GPL-2.0-only
#include "runtime/host/cpu.h"
#include "runtime/host/timer.h"

#define PIT_HZ			1193182u
#define PIT_CH2_DATA		0x42
#define PIT_MODE_CMD		0x43
/* Channel 2, lobyte/hibyte access, mode 0 (interrupt on terminal count). */
#define PIT_CMD_CH2_ONESHOT	0xb0

#define SYS_CTRL_PORT_B		0x61
#define PORT_B_CH2_GATE		0x01
#define PORT_B_SPEAKER		0x02
#define PORT_B_CH2_OUT		0x20	/* OUT2: high once the count ran out */

#define PIT_MAX_COUNT		0xffff
#define PIT_SPIN_LIMIT		10000000u	/* polls per one-shot, if OUT2 never rises */

static void pit_oneshot(unsigned int ticks)
{
	uint8_t b = inb(SYS_CTRL_PORT_B) & ~(PORT_B_CH2_GATE | PORT_B_SPEAKER);

	outb(SYS_CTRL_PORT_B, b);			/* gate low: stop */
	outb(PIT_MODE_CMD, PIT_CMD_CH2_ONESHOT);	/* OUT2 goes low */
	outb(PIT_CH2_DATA, ticks & 0xff);
	outb(PIT_CH2_DATA, ticks >> 8);
	outb(SYS_CTRL_PORT_B, b | PORT_B_CH2_GATE);	/* gate high: count */
	for (unsigned int i = 0; i < PIT_SPIN_LIMIT; i++) {
		if (inb(SYS_CTRL_PORT_B) & PORT_B_CH2_OUT)
			break;
		cpu_relax();
	}
	outb(SYS_CTRL_PORT_B, b);
}

void pit_delay_us(unsigned int us)
{
	uint64_t ticks = ((uint64_t)us * PIT_HZ + 999999) / 1000000;

	while (ticks) {
		unsigned int n = ticks > PIT_MAX_COUNT ? PIT_MAX_COUNT : (unsigned int)ticks;

		/* Mode 0 counts n + 1 ticks at least; 1 would be too short to see. */
		pit_oneshot(n < 2 ? 2 : n);
		ticks -= n;
	}
}

uint64_t tsc_measure_hz(void)
{
	uint64_t t0 = rdtsc();

	pit_delay_us(TSC_MEASURE_US);
	return (rdtsc() - t0) * (1000000 / TSC_MEASURE_US);
}
