/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * eptp.c: the VM's EPT pointers (vmx.c sets them once, before any vCPU
 * runs) -- the whole map, and the same map without the xAPIC page -- and
 * the switch of a vCPU between them.
 */
#ifndef EXITPLAN_VMX_EPTP_H
#define EXITPLAN_VMX_EPTP_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

extern uint64_t vmx_vm_eptp, vmx_vm_eptp_apic_trap;

/* Map the current vCPU's xAPIC page read-only (false) or not at all (true). */
void vmx_xapic_page_trap(struct vcpu *vcpu, bool trap);

#endif /* EXITPLAN_VMX_EPTP_H */
