/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A hypervisor region in the middle of RAM, where it sat before issue 9
 * moved it to the top of RAM: the loaders and EPT must cut out whatever
 * boot_info records, and a hole in the middle is the harder case.
 */
#ifndef EXITPLAN_TEST_LAYOUT_H
#define EXITPLAN_TEST_LAYOUT_H

#define TEST_HV_START	0x4000000ull	/* 64 MiB */
#define TEST_HV_END	0x6000000ull	/* 96 MiB */

#endif /* EXITPLAN_TEST_LAYOUT_H */
