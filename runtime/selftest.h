/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Boot-time self-tests of the runtime, chosen with `selftest=NAME` on the
 * hypervisor's command line (tests/boot/test_boot_basic.py runs them):
 * format, modules, smp, alloc, pagefault, ud, panic, doublefree.  The VMM does not run.
 */
#ifndef EXITPLAN_SELFTEST_H
#define EXITPLAN_SELFTEST_H

struct boot_info;

/* Returns 0 when the test passed, 1 when it failed, 2 for an unknown name. */
int selftest_run(const char *name, const struct boot_info *bi);

#endif /* EXITPLAN_SELFTEST_H */
