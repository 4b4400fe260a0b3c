// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which of the VM's two EPTs a vCPU runs on (eptp.h).  vmx.c builds both
 * maps once and sets the pointers; apic.c switches a vCPU between them
 * when its guest APIC changes mode.  Its own file: apic.c must not call
 * the VMCS setup, whose bring-up reaches apic.c.
 */
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/eptp.h"
#include "arch/vmx/vmx_ops.h"

uint64_t vmx_vm_eptp, vmx_vm_eptp_apic_trap;

/*
 * The current vCPU's xAPIC page: mapped read-only (reads go to the
 * physical APIC, writes exit) or not at all (every access exits, apic.c
 * emulates it).  Both maps are built once and never change, so the
 * switch needs no INVEPT: translations are tagged with the EPTP.
 */
void vmx_xapic_page_trap(struct vcpu *vcpu, bool trap)
{
	uint64_t eptp = trap ? vmx_vm_eptp_apic_trap : vmx_vm_eptp;

	if (vcpu->arch->eptp == eptp)
		return;
	vmcs_write(EPT_POINTER, eptp);
	vcpu->arch->eptp = eptp;
}
