/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The controls cache: the pin-based, primary and secondary
 * processor-based VM-execution, VM-exit and VM-entry control fields of a
 * vCPU's VMCS, kept in struct vcpu (vcpu->ctls) so that exit handlers
 * test a bit in memory instead of issuing a VMREAD (as KVM's controls
 * shadow, vmx->controls_shadow, does).
 *
 * These functions are the cache's only owner: every write of one of the
 * five fields goes through them and writes the VMCS and the cache
 * together, so the two never differ.  Reading a field is reading
 * vcpu->ctls[]; no code reads them back with VMREAD on a hot path.
 * They act on the current VMCS, which must be this vCPU's.
 */
#ifndef EXITPLAN_VMX_CTLS_H
#define EXITPLAN_VMX_CTLS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/vcpu.h"
#include "vmcs_fields.h"
#include "arch/vmx/vmx_controls.h"
#include "arch/vmx/vmx_ops.h"

/* The VMCS encoding of each cached field (enum vmx_ctl_field order). */
static inline enum vmcs_field vmx_ctl_encoding(enum vmx_ctl_field f)
{
	static const enum vmcs_field enc[VMX_CTL_FIELDS] = {
		[VMX_PIN_BASED]		= PIN_BASED_VM_EXEC_CONTROL,
		[VMX_PROC_BASED]	= CPU_BASED_VM_EXEC_CONTROL,
		[VMX_PROC_BASED2]	= SECONDARY_VM_EXEC_CONTROL,
		[VMX_EXIT]		= VM_EXIT_CONTROLS,
		[VMX_ENTRY]		= VM_ENTRY_CONTROLS,
	};

	return enc[f];
}

static inline uint32_t vcpu_ctls(const struct vcpu *vcpu, enum vmx_ctl_field f)
{
	return vcpu->ctls[f];
}

/* Write @f, in the VMCS and the cache; nothing when it already holds @value. */
static inline void vcpu_ctls_write(struct vcpu *vcpu, enum vmx_ctl_field f, uint32_t value)
{
	if (vcpu->ctls[f] == value)
		return;
	vcpu->ctls[f] = value;
	vmcs_write(vmx_ctl_encoding(f), value);
}

static inline void vcpu_ctls_setbit(struct vcpu *vcpu, enum vmx_ctl_field f, uint32_t bits)
{
	vcpu_ctls_write(vcpu, f, vcpu->ctls[f] | bits);
}

static inline void vcpu_ctls_clearbit(struct vcpu *vcpu, enum vmx_ctl_field f, uint32_t bits)
{
	vcpu_ctls_write(vcpu, f, vcpu->ctls[f] & ~bits);
}

/*
 * VMCS setup: write one field unconditionally, checked (the secondary
 * controls exist only when the CPU has them).  The cache takes the value
 * only when the VMWRITE succeeded; on failure the field reads as 0 here,
 * as it does for a CPU without it.
 */
static inline bool vcpu_ctls_init(struct vcpu *vcpu, enum vmx_ctl_field f, uint32_t value)
{
	if (!vmcs_write_checked(vmx_ctl_encoding(f), value)) {
		vcpu->ctls[f] = 0;
		return false;
	}
	vcpu->ctls[f] = value;
	return true;
}

#endif /* EXITPLAN_VMX_CTLS_H */
