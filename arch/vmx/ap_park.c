// SPDX-License-Identifier: GPL-2.0-only
/*
 * Parking the APs in VMX root operation, so that the guest's INIT-SIPI
 * cannot take one over (ap_park.h).
 */
#include "ap_park.h"
#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "cpu.h"
#include "layout.h"
#include "msr_index.h"
#include "page_alloc.h"
#include "percpu.h"
#include "smp.h"
#include "panic.h"
#include "timer.h"
#include "traps.h"
#include "vmx_ops.h"

enum ap_park_state {
	AP_PARK_PENDING = 0,
	AP_PARK_PARKED,		/* in VMX root operation, halted */
	AP_PARK_NO_FEATURE_CONTROL,	/* IA32_FEATURE_CONTROL forbids VMXON */
	AP_PARK_VMXON_FAILED,
};

struct ap_park_req {
	const struct vmx_caps *caps;
	uint64_t vmxon_pa;
	uint32_t state;		/* enum ap_park_state, written by the AP */
};

/* The CPUs parked below, by CPU id; an NMI there is the guest's doing. */
static bool cpu_parked[HV_MAX_CPUS];

/*
 * The guest can send an NMI to a parked CPU too (the APIC is its): the
 * NMI ends the HLT and arrives through the IDT, which would otherwise
 * panic the whole hypervisor.  On a parked CPU it is dropped; anywhere
 * else (no guest on the CPU) it goes to nmi_host(), which reports it.
 */
static void ap_park_nmi(struct interrupt_frame *f)
{
	unsigned int cpu = this_cpu_id();

	if (cpu < HV_MAX_CPUS && READ_ONCE(cpu_parked[cpu]))
		return;
	nmi_host(f);
}

/* How long the boot CPU waits for each AP to report (it takes microseconds). */
#define AP_PARK_WAIT_US		100000
#define AP_PARK_POLL_US		100

static void ap_park_report(struct ap_park_req *req, enum ap_park_state s)
{
	__atomic_store_n(&req->state, s, __ATOMIC_RELEASE);
}

/* Runs on the AP through smp_call_async(), interrupts off; returns only on failure. */
static void ap_park(void *arg)
{
	struct ap_park_req *req = arg;
	const struct vmx_caps *caps = req->caps;
	uint64_t fc = rdmsr(MSR_IA32_FEATURE_CONTROL);

	/* Each logical processor has its own IA32_FEATURE_CONTROL (SDM Vol. 3C 24.7). */
	if (!(fc & FEAT_CTL_LOCKED)) {
		wrmsr(MSR_IA32_FEATURE_CONTROL, fc | FEAT_CTL_LOCKED | FEAT_CTL_VMXON_OUTSIDE_SMX);
		fc = rdmsr(MSR_IA32_FEATURE_CONTROL);
	}
	if (!(fc & FEAT_CTL_LOCKED) || !(fc & FEAT_CTL_VMXON_OUTSIDE_SMX)) {
		ap_park_report(req, AP_PARK_NO_FEATURE_CONTROL);
		return;
	}
	/* CR0 and CR4 must satisfy the fixed bits in VMX operation (SDM Vol. 3C 24.8). */
	write_cr4((read_cr4() | caps->cr4_fixed0 | X86_CR4_VMXE) & caps->cr4_fixed1);
	write_cr0((read_cr0() | caps->cr0_fixed0) & caps->cr0_fixed1);
	if (!vmxon(req->vmxon_pa)) {
		write_cr4(read_cr4() & ~(uint64_t)X86_CR4_VMXE);
		ap_park_report(req, AP_PARK_VMXON_FAILED);
		return;
	}
	WRITE_ONCE(cpu_parked[this_cpu_id()], true);
	ap_park_report(req, AP_PARK_PARKED);
	/*
	 * INIT is now blocked and STARTUP ignored (not in wait-for-SIPI).
	 * Interrupts stay off; an NMI (dropped by ap_park_nmi()) or an SMI
	 * ends a HLT, so halt again.
	 * The CPU never leaves: its smp_call() slot stays busy for good.
	 */
	for (;;)
		asm volatile("cli; hlt" : : : "memory");
}

bool vmx_park_aps(const struct vmx_caps *caps)
{
	static struct ap_park_req req[HV_MAX_CPUS];
	unsigned int n = smp_start_aps(), parked = 0;
	bool ok = true;

	if (n > 1)
		idt_set_handler(X86_EXC_NMI, ap_park_nmi);
	for (unsigned int cpu = 1; cpu < n && cpu < HV_MAX_CPUS; cpu++) {
		uint32_t *region = page_alloc();
		unsigned int waited = 0;
		uint32_t st;

		if (!region) {
			printk("exitplan: CPU %u: no page for its VMXON region: not parked\n", cpu);
			ok = false;
			continue;
		}
		/* The VMXON region starts with the VMCS revision identifier (SDM Vol. 3C 25.11.5). */
		region[0] = (uint32_t)(caps->basic & VMX_BASIC_REVISION_ID_MASK);
		req[cpu] = (struct ap_park_req){ .caps = caps, .vmxon_pa = virt_to_phys(region) };
		if (!smp_call_async(cpu, ap_park, &req[cpu])) {
			printk("exitplan: CPU %u is busy: not parked\n", cpu);
			ok = false;
			continue;
		}
		while ((st = __atomic_load_n(&req[cpu].state, __ATOMIC_ACQUIRE)) == AP_PARK_PENDING &&
		       waited < AP_PARK_WAIT_US) {
			pit_delay_us(AP_PARK_POLL_US);
			waited += AP_PARK_POLL_US;
		}
		switch (st) {
		case AP_PARK_PARKED:
			parked++;
			break;
		case AP_PARK_NO_FEATURE_CONTROL:
			printk("exitplan: CPU %u: IA32_FEATURE_CONTROL forbids VMXON: not parked\n", cpu);
			ok = false;
			break;
		case AP_PARK_VMXON_FAILED:
			printk("exitplan: CPU %u: VMXON failed: not parked\n", cpu);
			ok = false;
			break;
		default:
			printk("exitplan: CPU %u did not answer: not parked\n", cpu);
			ok = false;
			break;
		}
	}
	if (n > 1)
		printk("exitplan: %u of %u other CPU%s parked in VMX root operation (INIT blocked)\n",
		       parked, n - 1, n == 2 ? "" : "s");
	if (smp_cpus_left_out()) {
		/* Halted outside VMX, or never started: INIT-SIPI would give them to the guest. */
		printk("exitplan: %u CPU%s not online, hence not parked\n", smp_cpus_left_out(),
		       smp_cpus_left_out() == 1 ? "" : "s");
		ok = false;
	}
	return ok;
}
