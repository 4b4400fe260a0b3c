/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exitplan hypercall ABI as the guests use it: VMCALL with the
 * hypercall number in EAX and up to four arguments in EBX, ECX, EDX, ESI;
 * the result comes back in EAX.  An unknown number returns -1000
 * (KVM's -KVM_ENOSYS).  Only meaningful under exitplan: elsewhere VMCALL
 * raises #UD (callers check exitplan_detected() first).
 *
 * The numbers come from generated/common/hypercalls.h (spec/hypercalls.yaml).
 */
#ifndef GUEST_HYPERCALL_H
#define GUEST_HYPERCALL_H

#include <stdint.h>

#include "hypercalls.h"	/* generated from spec/hypercalls.yaml */

static inline int32_t hypercall4(uint32_t nr, uint32_t a0, uint32_t a1,
				 uint32_t a2, uint32_t a3)
{
	uint32_t ret;

	asm volatile("vmcall"
		     : "=a"(ret)
		     : "a"(nr), "b"(a0), "c"(a1), "d"(a2), "S"(a3)
		     : "memory");
	return (int32_t)ret;
}

static inline int32_t hypercall0(uint32_t nr)
{
	return hypercall4(nr, 0, 0, 0, 0);
}

#endif /* GUEST_HYPERCALL_H */
