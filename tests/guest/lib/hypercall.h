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

#if __has_include("hypercalls.h")
#include "hypercalls.h"
#endif

/*
 * ---- FALLBACK until generated/common/hypercalls.h lands ----
 * The one place these numbers are typed; each is guarded so the generated
 * header wins.  Remove this block once the header exists.
 */
#ifndef HYPERCALL_VERSION
#define HYPERCALL_VERSION	0
#endif
#ifndef HYPERCALL_PUTS
#define HYPERCALL_PUTS		1
#endif
#ifndef HYPERCALL_STATS_READ
#define HYPERCALL_STATS_READ	2
#endif
#ifndef HYPERCALL_STATS_RESET
#define HYPERCALL_STATS_RESET	3
#endif
#ifndef HYPERCALL_SHUTDOWN
#define HYPERCALL_SHUTDOWN	4
#endif
#ifndef HYPERCALL_NOP
#define HYPERCALL_NOP		5
#endif
#ifndef HYPERCALL_ENOSYS
#define HYPERCALL_ENOSYS	(-1000)
#endif
/* ---- end of FALLBACK ---- */

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
