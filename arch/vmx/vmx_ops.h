/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VMX instructions (SDM Vol. 3C chapter 31) as inline functions.
 *
 * VMX instructions report failure in RFLAGS: CF=1 is VMfailInvalid (no
 * current VMCS, or a bad operand), ZF=1 is VMfailValid (the reason is in
 * the VM-instruction error field).  Every wrapper that can fail returns
 * true on success.
 */
#ifndef EXITPLAN_VMX_OPS_H
#define EXITPLAN_VMX_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "vmcs_fields.h"	/* generated: enum vmcs_field */

static inline bool vmxon(uint64_t pa)
{
	bool ok;

	asm volatile("vmxon %1; seta %0" : "=qm"(ok) : "m"(pa) : "cc", "memory");
	return ok;
}

static inline void vmxoff(void)
{
	asm volatile("vmxoff" : : : "cc", "memory");
}

static inline bool vmclear(uint64_t pa)
{
	bool ok;

	asm volatile("vmclear %1; seta %0" : "=qm"(ok) : "m"(pa) : "cc", "memory");
	return ok;
}

static inline bool vmptrld(uint64_t pa)
{
	bool ok;

	asm volatile("vmptrld %1; seta %0" : "=qm"(ok) : "m"(pa) : "cc", "memory");
	return ok;
}

/*
 * VMREAD/VMWRITE on the hot path: no failure check.  Every field this
 * code reads exists on every CPU the profile was accepted on (the
 * control computation refused the others), and a VMWRITE to a field the
 * CPU lacks is caught once at setup by vmcs_write_checked().
 */
static inline uint64_t vmcs_read(enum vmcs_field field)
{
	uint64_t v;

	asm volatile("vmread %1, %0" : "=r"(v) : "r"((uint64_t)field) : "cc");
	return v;
}

static inline uint32_t vmcs_read32(enum vmcs_field field)
{
	return (uint32_t)vmcs_read(field);
}

static inline void vmcs_write(enum vmcs_field field, uint64_t value)
{
	asm volatile("vmwrite %1, %0" : : "r"((uint64_t)field), "rm"(value) : "cc");
}

static inline bool vmcs_write_checked(enum vmcs_field field, uint64_t value)
{
	bool ok;

	asm volatile("vmwrite %2, %1; seta %0"
		     : "=qm"(ok) : "r"((uint64_t)field), "rm"(value) : "cc");
	return ok;
}

/* INVEPT/INVVPID descriptors (SDM Vol. 3C 31.3, "INVEPT" and "INVVPID"). */
struct invept_desc {
	uint64_t eptp;
	uint64_t reserved;
};

struct invvpid_desc {
	uint64_t vpid;		/* bits 15:0; the rest must be zero */
	uint64_t linear_address;
};

static inline bool invept(uint64_t type, uint64_t eptp)
{
	struct invept_desc d = { .eptp = eptp, .reserved = 0 };
	bool ok;

	asm volatile("invept %1, %2; seta %0"
		     : "=qm"(ok) : "m"(d), "r"(type) : "cc", "memory");
	return ok;
}

static inline bool invvpid(uint64_t type, uint16_t vpid, uint64_t gva)
{
	struct invvpid_desc d = { .vpid = vpid, .linear_address = gva };
	bool ok;

	asm volatile("invvpid %1, %2; seta %0"
		     : "=qm"(ok) : "m"(d), "r"(type) : "cc", "memory");
	return ok;
}

#endif /* EXITPLAN_VMX_OPS_H */
