/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host unit tests: arch/vmx/vmx_ops.h with VMREAD and VMWRITE on a fake
 * current VMCS (fake_vmcs below), which records how often each was
 * issued, so a test can assert both the state a function left and
 * whether it read the VMCS to get there.
 */
#ifndef EXITPLAN_VMX_OPS_H
#define EXITPLAN_VMX_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "vmcs_fields.h"	/* generated: enum vmcs_field */

#define FAKE_VMCS_FIELDS 64

struct fake_vmcs {
	struct {
		enum vmcs_field field;
		uint64_t value;
	} f[FAKE_VMCS_FIELDS];
	unsigned int n;
	unsigned int vmreads, vmwrites;
	/* vmcs_write_checked() of this field fails (a CPU without it); 0: none. */
	enum vmcs_field missing;
};

extern struct fake_vmcs fake_vmcs;

/* Every field 0, counters 0, no field missing. */
void fake_vmcs_reset(void);
/* Set a field without counting a VMWRITE. */
void fake_vmcs_set(enum vmcs_field field, uint64_t value);
/* Read a field without counting a VMREAD (0 when never written). */
uint64_t fake_vmcs_get(enum vmcs_field field);

static inline uint64_t vmcs_read(enum vmcs_field field)
{
	fake_vmcs.vmreads++;
	return fake_vmcs_get(field);
}

static inline uint32_t vmcs_read32(enum vmcs_field field)
{
	return (uint32_t)vmcs_read(field);
}

static inline void vmcs_write(enum vmcs_field field, uint64_t value)
{
	fake_vmcs.vmwrites++;
	fake_vmcs_set(field, value);
}

static inline bool vmcs_write_checked(enum vmcs_field field, uint64_t value)
{
	if (fake_vmcs.missing && field == fake_vmcs.missing)
		return false;
	vmcs_write(field, value);
	return true;
}

#endif /* EXITPLAN_VMX_OPS_H */
