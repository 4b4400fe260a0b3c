/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Between the files that bring up and run the VM (vmx.c, vmx_caps.c,
 * vmx_report.c, vmx_run.c), and no one else: the steps vmm_run() takes.
 */
#ifndef EXITPLAN_VMX_SETUP_H
#define EXITPLAN_VMX_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/vmcs_init.h"	/* vmx_alloc_pages() */

struct boot_info;
struct vcpu;
struct vm;
struct vmx_caps;
struct vmx_controls;
struct vmx_cpu;

/* vmx_caps.c: the capability MSRs, and what the boot checks and prints of the controls. */
void vmx_read_caps(struct vmx_caps *c);
bool vmx_feature_control_ok(void);
void vmx_print_gates(const struct vmx_controls *ctl);
bool vmx_runtime_controls_ok(const struct vmx_controls *ctl);

/* vmx.c: VMXON and the VMCS. */
bool vmx_build_vm_ept(struct vmx_cpu *vc, const struct boot_info *bi);
struct vcpu *vmx_alloc_vcpu(struct vm *vm, unsigned int id, struct vmx_cpu *vc);
bool vmx_setup_cpu(struct vmx_cpu *vc);
bool vmx_setup_vcpu(struct vcpu *vcpu, struct vmx_cpu *vc);
bool vmx_setup_guest_state(struct vcpu *vcpu, struct vmx_cpu *vc, uint32_t entry, uint32_t mbi);
bool vmx_setup_guest_startup(struct vcpu *vcpu, uint8_t vector);

/* vmx_report.c: the report when the machine stopped. */
void vmx_print_summary(struct vcpu *const *vcpus, unsigned int n, int stopped_by,
		       uint64_t tsc_overhead);

#endif /* EXITPLAN_VMX_SETUP_H */
