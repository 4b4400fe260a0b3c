/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parking the other CPUs in VMX root operation.
 *
 * The guest owns the local APIC (it is passed through), so it can send
 * INIT and STARTUP IPIs to any other CPU of the machine and run its own
 * code there, outside VMX and outside EPT.  INIT is blocked while a
 * logical processor is in VMX root operation (SDM Vol. 3C 24.8 "Restrictions
 * on VMX Operation"), and STARTUP is ignored unless the CPU is in
 * wait-for-SIPI, which only INIT puts it in.  So every AP is started and
 * left in VMX root operation, halted with interrupts off, before the
 * guest runs.  An NMI the guest sends there is dropped.
 */
#ifndef EXITPLAN_AP_PARK_H
#define EXITPLAN_AP_PARK_H

#include "vmx_controls.h"

/*
 * Start the APs (smp_start_aps()) and park each one in VMX root
 * operation with @caps (the boot CPU's: the fixed CR0/CR4 bits and the
 * VMCS revision).  Call once, on the boot CPU, before the guest runs.
 * Returns false, after saying which, if a CPU could not be parked (one
 * not even online included): the guest could take it over with INIT-SIPI.
 */
bool vmx_park_aps(const struct vmx_caps *caps);

#endif /* EXITPLAN_AP_PARK_H */
