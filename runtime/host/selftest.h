/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Boot-time self-tests of the runtime, chosen with `selftest=NAME[,NAME]...`
 * on the hypervisor's command line (tests/boot/test_boot_*.py run them):
 * format, modules, alloc, smp return; pagefault, ud, panic, doublefree,
 * stackoverflow, writetext end in the panic they test.  The VMM does not
 * run.
 */
#ifndef EXITPLAN_SELFTEST_H
#define EXITPLAN_SELFTEST_H

struct boot_info;

/*
 * Runs the comma-separated tests in order, stopping at the first that
 * fails.  Returns 0 when all passed, 1 when one failed, 2 for an unknown
 * name.
 */
int selftest_run(const char *names, const struct boot_info *bi);

#endif /* EXITPLAN_SELFTEST_H */
