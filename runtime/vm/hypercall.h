/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hypercall ABI (docs/HYPERCALLS.md; numbers in spec/hypercalls.yaml,
 * generated/common/hypercalls.h): number in RAX, arguments in RBX, RCX,
 * RDX, RSI, result in RAX.  Architecture-neutral: the VMCALL exit
 * handler (arch/vmx/handlers.c) decodes the registers, reads the guest
 * memory the call names and calls hypercall_dispatch(); it does what
 * the result asks of the vCPU.
 */
#ifndef EXITPLAN_HYPERCALL_H
#define EXITPLAN_HYPERCALL_H

#include <stdbool.h>
#include <stdint.h>

#include "hypercalls.h"		/* generated: HYPERCALL_* */

/* PUTS prints at most this much per call; the guest loops for more. */
#define HYPERCALL_PUTS_MAX	256

/*
 * One hypercall as the VMM hands it over: the registers, and what the
 * call needs of its vCPU as data, so that the hypercalls see no VMCS
 * and no struct vcpu and call nothing of the VMM:
 * - @guest: the guest memory hypercall_guest_read() named, read by the
 *   VMM through the guest's paging; NULL when that read failed;
 * - @exit_counts: the vCPU's exit counts by exit reason (the statistics);
 *   NULL where the profile keeps none (STATS_READ, STATS_RESET: ENOSYS).
 */
struct hypercall_call {
	uint64_t nr;			/* RAX */
	uint64_t arg[4];		/* RBX, RCX, RDX, RSI */
	const char *guest;
	const uint64_t *exit_counts;
	unsigned int nr_exit_counts;
};

struct hypercall_result {
	int64_t value;		/* returned in RAX */
	bool stop;		/* SHUTDOWN: stop the guest with `status` */
	int status;
	bool stats_reset;	/* STATS_RESET: the VMM zeroes the vCPU's statistics */
};

/*
 * The guest linear memory @call reads, [*gla, *gla + n): n, 0 for none
 * (*gla then untouched).  At most HYPERCALL_PUTS_MAX bytes.
 */
unsigned int hypercall_guest_read(const struct hypercall_call *call, uint64_t *gla);

struct hypercall_result hypercall_dispatch(const struct hypercall_call *call);

#endif /* EXITPLAN_HYPERCALL_H */
