// SPDX-License-Identifier: GPL-2.0-only
/*
 * EPT violations and misconfigurations (SDM Vol. 3C 29.3.3).
 *
 * EPT maps only the guest's RAM, its firmware and the device pages the
 * runtime grants (ept.h).  What is not mapped exits here:
 *   - the MMIO test page, whose aligned 32-bit loads and stores are
 *     emulated;
 *   - the xAPIC page, mapped read-only (or not at all while apic.c
 *     emulates its reads too), answered by apic.c (vlapic_exits.c under
 *     apic: virtual);
 *   - the I/O APIC and HPET pages, answered by ioapic_exits.c;
 *   - the hypervisor region: every access is an attack or a guest bug,
 *     and the guest is stopped with a report;
 *   - every other address: nothing the guest's machine has claims it, and
 *     it is answered as a PC answers one, reads all ones, writes dropped.
 * The instruction that touched an emulated page is emulated by mmio.c
 * (vmx_mmio_emulate(): MOV, MOVZX/MOVSX, the ALU and LOCK forms, XCHG,
 * CMPXCHG, XADD, string instructions).  A fetch there, an event delivered
 * through the page, or an instruction not emulated stops the guest with a
 * report; the hypervisor carries on.
 */
#include "runtime/host/boot_info.h"
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "exit_handlers.h"
#include "runtime/host/layout.h"
#include "arch/vmx/mmio.h"
#include "runtime/devices/platform.h"
#include "lib/string.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/events.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/vlapic_exits.h"
#include "runtime/vm/vmm.h"
#include "vmx_controls_bits.h"

static bool in_hv_region(uint64_t gpa)
{
	const struct boot_info *bi = boot_info();

	return gpa >= bi->hv_start && gpa < bi->hv_end;
}

/*
 * An EPT violation with valid IDT-vectoring information happened while
 * the CPU delivered an event (SDM Vol. 3C 28.2.4): the access was the
 * delivery's -- an IDT entry, a stack push -- not the instruction at RIP.
 * Emulating that instruction would perform a store it never made and
 * skip it.  An emulated page (the xAPIC page, where such a push is a
 * write) takes no event delivery: the guest is stopped with a report.
 */
static enum vmx_exit_action emulated_page_event_delivery(struct vcpu *vcpu, uint64_t gpa,
							 const char *what)
{
	return vcpu_stop(vcpu, "delivery of event %#x touched %s at GPA %#llx (RIP %#llx)",
			 vmcs_read32(IDT_VECTORING_INFO_FIELD), what, (unsigned long long)gpa,
			 (unsigned long long)vmcs_read(GUEST_RIP));
}

/*
 * The pages whose loads and stores are emulated, by name for reports;
 * NULL for the hypervisor region (every access there stops the guest).
 */
static const char *emulated_page(uint64_t gpa)
{
	/* The local APIC first: its EOI is the most frequent of these exits. */
	if ((gpa & ~(uint64_t)(PAGE_SIZE - 1)) == vmx_xapic_page())
		return "the local APIC page";
	if (platform_mmio_test_page(gpa))
		return "the MMIO test page";
	if (vmx_device_page(gpa))
		return vmx_device_page_name(gpa);
	if (!in_hv_region(gpa))
		return "an unclaimed address";
	return NULL;
}

static const char *ept_access_name(uint64_t q)
{
	if (q & EXIT_QUAL_EPT_FETCH)
		return "fetch";
	if (q & EXIT_QUAL_EPT_WRITE)
		return "write";
	return "read";
}

enum vmx_exit_action handle_ept_violation(struct vcpu *vcpu)
{
	uint64_t q = vmcs_read(EXIT_QUALIFICATION);
	uint64_t gpa = vmcs_read(GUEST_PHYSICAL_ADDRESS);
	enum vmx_exit_action act;
	const char *what;
	uint64_t rip;

	/* An xAPIC register write, an EOI per interrupt, first and short (mmio.c). */
	if ((q & EXIT_QUAL_EPT_WRITE) && (gpa & ~(uint64_t)(PAGE_SIZE - 1)) == vmx_xapic_page() &&
	    !(vmcs_read32(IDT_VECTORING_INFO_FIELD) & INTR_INFO_VALID) &&
	    vmx_xapic_store_fast(vcpu, gpa, &act))
		return act;
	what = emulated_page(gpa);

	if (what && !(q & EXIT_QUAL_EPT_FETCH)) {
		if (vmcs_read32(IDT_VECTORING_INFO_FIELD) & INTR_INFO_VALID)
			return emulated_page_event_delivery(vcpu, gpa, what);
		return vmx_mmio_emulate(vcpu, gpa, q, what);	/* mmio.c */
	}
	rip = vmcs_read(GUEST_RIP);

	printk("exitplan: EPT violation: guest %s of GPA %#llx at RIP %#llx, qualification %#llx",
	       ept_access_name(q), (unsigned long long)gpa, (unsigned long long)rip,
	       (unsigned long long)q);
	if (q & EXIT_QUAL_EPT_GLA_VALID)
		printk(", linear address %#llx", (unsigned long long)vmcs_read(GUEST_LINEAR_ADDRESS));
	printk("\n");
	if (in_hv_region(gpa))
		return vcpu_stop(vcpu, "EPT violation: %s of hypervisor memory at GPA %#llx (RIP %#llx)",
				 ept_access_name(q), (unsigned long long)gpa,
				 (unsigned long long)rip);
	/*
	 * A fetch outside RAM and the ROMs: the guest jumped into a device
	 * window (the local APIC page, mapped without execute permission) or
	 * an address nothing claims (VGA memory).  There is no instruction
	 * stream there to emulate.
	 */
	if (vmx_device_page(gpa))
		return vcpu_stop(vcpu, "EPT violation: instruction fetch from %s at GPA %#llx "
				 "(RIP %#llx): device memory is not executable",
				 vmx_device_page_name(gpa), (unsigned long long)gpa,
				 (unsigned long long)rip);
	return vcpu_stop(vcpu, "EPT violation: instruction fetch from MMIO at GPA %#llx "
			 "(RIP %#llx): device memory is not executable",
			 (unsigned long long)gpa, (unsigned long long)rip);
}

enum vmx_exit_action handle_ept_misconfig(struct vcpu *vcpu)
{
	uint64_t gpa = vmcs_read(GUEST_PHYSICAL_ADDRESS);
	unsigned int level = 0;
	uint64_t e = ept_lookup(&vcpu->arch->ept, gpa, &level);

	printk("exitplan: EPT misconfiguration at GPA %#llx: leaf entry %#llx at level %u\n",
	       (unsigned long long)gpa, (unsigned long long)e, level);
	return vcpu_stop(vcpu, "EPT misconfiguration at GPA %#llx (RIP %#llx)",
			 (unsigned long long)gpa, (unsigned long long)vmcs_read(GUEST_RIP));
}
