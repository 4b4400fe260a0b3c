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

#endif /* EXITPLAN_TIMER_H */
