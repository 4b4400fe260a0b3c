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
 * An NMI in root operation on a vCPU's CPU wakes it from the HLT it
 * waits in (vmx_wait_in_root()); there is nothing to do but return, the
 * waiter re-checks its condition.  Anywhere else it is reported as the
 * default handler does, and fatal.
 */
static void ap_park_nmi(struct interrupt_frame *f)
{
	unsigned int cpu = this_cpu_id();

	if (cpu < HV_MAX_CPUS && READ_ONCE(cpu_kickable[cpu]))
		return;
	printk("exitplan: EXCEPTION NMI (vector %u) on CPU %u\n", X86_EXC_NMI, cpu);
	interrupt_frame_dump(f);
	panic("unhandled exception NMI at RIP %016llx", (unsigned long long)f->rip);
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
