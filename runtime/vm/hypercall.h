/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hypercall ABI (docs/HYPERCALLS.md; numbers in spec/hypercalls.yaml,
 * generated/common/hypercalls.h): number in RAX, arguments in RBX, RCX,
 * RDX, RSI, result in RAX.  Architecture-neutral: the VMCALL exit
 * handler decodes the registers and calls hypercall_dispatch().
 */
#ifndef EXITPLAN_HYPERCALL_H
#define EXITPLAN_HYPERCALL_H

#include <stdbool.h>
#include <stdint.h>

#include "hypercalls.h"		/* generated: HYPERCALL_* */

struct vcpu;

struct hypercall_result {
	int64_t value;		/* returned in RAX */
	bool stop;		/* SHUTDOWN: stop the guest with `status` */
	int status;
};

struct hypercall_result hypercall_dispatch(struct vcpu *vcpu, uint64_t nr, uint64_t a0,
					   uint64_t a1, uint64_t a2, uint64_t a3);

#endif /* EXITPLAN_HYPERCALL_H */
