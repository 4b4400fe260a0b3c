// SPDX-License-Identifier: GPL-2.0-only
/*
 * NMIs in root operation on the CPUs that run vCPUs, and parking a CPU
 * for good (ap_park.h).
 */
#include <stdbool.h>

#include "ap_park.h"
#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "layout.h"
#include "panic.h"
#include "percpu.h"
#include "traps.h"

/* The CPUs whose NMIs in root operation are kicks (or stray): dropped. */
static bool cpu_kickable[HV_MAX_CPUS];

/*
 * An NMI in root operation on a vCPU's CPU while the vCPU waits there
 * (vmx_wait_in_root(), halted with interrupts off) is vmm_kick()'s: it
 * ends the HLT and the waiter re-checks its condition, so there is
 * nothing to do but return.  (While the vCPU runs, vmm_nmi_in_root()
 * has taken the NMI for the guest before this handler is asked.)
 * Anywhere else (no guest on the CPU) it goes to nmi_host(), which
 * reports it.
 */
static void ap_park_nmi(struct interrupt_frame *f)
{
	unsigned int cpu = this_cpu_id();

	if (cpu < HV_MAX_CPUS && READ_ONCE(cpu_kickable[cpu]))
		return;
	nmi_host(f);
}

void vmx_ap_park_init(unsigned int n)
{
	if (n < 2)
		return;
	for (unsigned int cpu = 0; cpu < n && cpu < HV_MAX_CPUS; cpu++)
		WRITE_ONCE(cpu_kickable[cpu], true);
	idt_set_handler(X86_EXC_NMI, ap_park_nmi);
}

void vmx_park_this_cpu(void)
{
	unsigned int cpu = this_cpu_id();

	if (cpu < HV_MAX_CPUS)
		WRITE_ONCE(cpu_kickable[cpu], true);
	/* An NMI (dropped above) or an SMI ends a HLT: halt again. */
	for (;;)
		asm volatile("cli; hlt" : : : "memory");
}
