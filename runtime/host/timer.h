/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef EXITPLAN_TIMER_H
#define EXITPLAN_TIMER_H

/*
 * Busy-wait at least `us` microseconds, timed by the 8254 PIT (channel
 * 2, the speaker channel with the speaker off): its rate is the same on
 * every PC and every emulator, unlike the TSC's.  For start-up delays,
 * not for anything on the exit path.
 */
void pit_delay_us(unsigned int us);

/*
 * The TSC's rate in Hz, measured over TSC_MEASURE_US of the 8254: what
 * the guest's emulated 8254 counts from (platform.c).  Under Bochs the
 * TSC counts instructions and its 8254 follows `ips`, so the result is
 * the same on every run.
 */
#define TSC_MEASURE_US		20000
uint64_t tsc_measure_hz(void);

#endif /* EXITPLAN_TIMER_H */
