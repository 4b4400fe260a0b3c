// SPDX-License-Identifier: GPL-2.0-only
/*
 * EPT violations and misconfigurations (SDM Vol. 3C 29.3.3).
 *
 * EPT maps only the guest's RAM, its firmware and the device pages the
 * runtime grants (ept.h).  What is not mapped exits here:
 *   - the MMIO test page, whose 32-bit MOV loads and stores are emulated;
 *   - the xAPIC page, mapped read-only (or not at all while apic.c
 *     emulates its reads too): its accesses are decoded here and
 *     emulated by apic.c;
 *   - the I/O APIC and HPET pages: their loads and stores are decoded
 *     here too (vmx_mmio_decode()) and answered by ioapic_exits.c;
 *   - the hypervisor region: every access is an attack or a guest bug,
 *     and the guest is stopped with a report;
 *   - every other address: nothing the guest's machine has claims it, and
 *     it is answered as a PC answers one, reads all ones, writes dropped
 *     (unclaimed_access()).
 * What cannot be answered stops the guest with a report; the hypervisor
 * carries on.
 */
#include "boot_info.h"
#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "exit_handlers.h"
#include "layout.h"
#include "mmio.h"
#include "platform.h"
#include "string.h"
#include "vmcs_fields.h"
#include "vcpu_arch.h"
#include "vcpu_stop.h"
#include "events.h"
#include "vcpu_regs.h"
#include "apic.h"
#include "vlapic_exits.h"
#include "vmm.h"
#include "vmx_controls_bits.h"

/*
 * Decode the MOV that touched the test page: 8B /r (MOV r32, r/m32) or
 * 89 /r (MOV r/m32, r32), 32-bit operand and address size, a memory
 * operand of any ModRM/SIB form.  The address itself comes from the exit
 * (GUEST_PHYSICAL_ADDRESS); the decode is for the register and the
 * instruction length, which EPT violations do not report.
 */
/* Opcode, ModRM, SIB, disp32: the longest form decode_mov32() accepts. */
#define MMIO_INSN_MAX	7

struct mmio_insn {
	bool store;
	unsigned int reg;	/* ModRM.reg: 0 EAX .. 7 EDI */
	unsigned int len;
};

static bool decode_mov32(const uint8_t *b, unsigned int avail, struct mmio_insn *insn)
{
	unsigned int mod, rm, len = 2;

	if (avail < 2 || (b[0] != X86_OPCODE_MOV_LOAD && b[0] != X86_OPCODE_MOV_STORE))
		return false;
	insn->store = b[0] == X86_OPCODE_MOV_STORE;
	mod = b[1] >> 6;
	insn->reg = (b[1] >> 3) & 7;
	rm = b[1] & 7;
	if (mod == 3)
		return false;		/* register operand: not a memory access */
	if (rm == 4) {			/* SIB byte */
		if (avail < 3)
			return false;
		if (mod == 0 && (b[2] & 7) == 5)
			len += 4;	/* [index*scale + disp32] */
		len += 1;
	} else if (mod == 0 && rm == 5) {
		len += 4;		/* [disp32] */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	insn->len = len;
	return len <= avail;
}

static enum vmx_exit_action mmio_test_page(struct vcpu *vcpu, uint64_t gpa, uint64_t q)
{
	uint8_t code[MMIO_INSN_MAX];
	struct mmio_insn insn;
	unsigned int avail;
	uint64_t rip;

	/* A fetch from the page cannot be emulated: there is no code there. */
	if (q & EXIT_QUAL_EPT_FETCH)
		return vcpu_stop(vcpu, "instruction fetch from the MMIO test page at %#llx",
				 (unsigned long long)gpa);
	/*
	 * The access was the delivery of an event (its IDT or stack on the
	 * page), not the instruction at RIP: nothing to emulate, and
	 * re-injecting it would only fault again.  Reported, never dropped.
	 */
	if (vmcs_read32(IDT_VECTORING_INFO_FIELD) & INTR_INFO_VALID)
		return vcpu_stop(vcpu, "delivery of event %#x touched the MMIO test page at %#llx "
				 "(RIP %#llx)", vmcs_read32(IDT_VECTORING_INFO_FIELD),
				 (unsigned long long)gpa, (unsigned long long)vmcs_read(GUEST_RIP));
	if ((vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE) ||
	    !(vmcs_read32(GUEST_CS_AR_BYTES) & VMX_AR_DB))
		return vcpu_stop(vcpu, "MMIO test page access outside 32-bit code at RIP %#llx",
				 (unsigned long long)vmcs_read(GUEST_RIP));
	/* The instruction may end just before an unmapped page: fetch no further. */
	rip = vmx_guest_rip_linear();
	avail = PAGE_SIZE - (rip & (PAGE_SIZE - 1));
	if (avail > sizeof(code))
		avail = sizeof(code);
	memset(code, 0, sizeof(code));
	if (!guest_read_linear(rip, code, avail) || !decode_mov32(code, avail, &insn) ||
	    (gpa & 3))
		return vcpu_stop(vcpu, "MMIO test page access at %#llx by an instruction that is not "
				 "an aligned 32-bit MOV (RIP %#llx, bytes %02x %02x %02x)",
				 (unsigned long long)gpa, (unsigned long long)vmcs_read(GUEST_RIP),
				 code[0], code[1], code[2]);
	if (!insn.store)
		vcpu_gpr_write(vcpu, insn.reg, PLATFORM_MMIO_TEST_VALUE);
	/* Stores are ignored, like a write to a ROM register. */
	vmx_advance_rip(insn.len);
	return VMX_EXIT_RESUME;
}

/*
 * An access to the xAPIC page: a write (ICR, EOI, TPR, LVTs, timer...),
 * or a read while the page is not mapped (vmx_xapic_page_trap(): the
 * guest's APIC is disabled, or emulated in xAPIC mode on the physical
 * x2APIC).  Emulated by apic.c; the guest resumes after the instruction.
 * A fetch from it is refused like any MMIO page's; an instruction that
 * is not a MOV load or store stops the vCPU with a report (Bochs itself
 * would die on some, and hardware leaves them undefined).
 */
static enum vmx_exit_action xapic_page_access(struct vcpu *vcpu, uint64_t gpa, uint64_t q)
{
	unsigned int offset = gpa & (PAGE_SIZE - 1);
	struct mmio_access a;
	uint64_t v;

	if (q & EXIT_QUAL_EPT_FETCH)
		return vcpu_stop(vcpu, "instruction fetch from the local APIC page at %#llx",
				 (unsigned long long)gpa);
	/* The decode must agree with the access the CPU reported (else the code changed under it). */
	if (!vmx_mmio_decode(vcpu, &a) || a.store != !!(q & EXIT_QUAL_EPT_WRITE))
		return vcpu_stop(vcpu, "%s the local APIC page at %#llx by an instruction that is not "
				 "a MOV %s (RIP %#llx, bytes %02x %02x %02x %02x)",
				 (q & EXIT_QUAL_EPT_WRITE) ? "write to" : "read of",
				 (unsigned long long)gpa,
				 (q & EXIT_QUAL_EPT_WRITE) ? "store" : "load",
				 (unsigned long long)vmcs_read(GUEST_RIP),
				 a.bytes[0], a.bytes[1], a.bytes[2], a.bytes[3]);
	if (a.store) {
		/* An event the exit interrupted goes in first; what the write posts queues behind it. */
		vmx_mmio_complete(vcpu, &a, 0);
		return vmx_xapic_write(vcpu, offset, (uint32_t)a.value, a.size);
	}
	if (!vmx_xapic_read(vcpu, offset, a.size, &v))
		return vcpu_stop(vcpu, "%u-byte read of the local APIC page at %#llx: it spans two "
				 "registers (RIP %#llx)", a.size, (unsigned long long)gpa,
				 (unsigned long long)vmcs_read(GUEST_RIP));
	vmx_mmio_complete(vcpu, &a, v);
	return VMX_EXIT_RESUME;
}

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

static bool unclaimed_write_reported;

/*
 * A load or store to a guest-physical address that is neither the
 * guest's memory nor a device the runtime or its profile grants (the
 * VGA window, a framebuffer, a PCI BAR, the rest of the PCI hole, a
 * second I/O APIC, anything above RAM).  On a PC nothing decodes such a
 * cycle: it ends as a master abort, reads all ones and a write goes
 * nowhere.  The guest gets the same; the first write is reported.  A MOV
 * is emulated; anything else (a string instruction, an event delivered
 * through the page) stops the guest with a report.
 */
static enum vmx_exit_action unclaimed_access(struct vcpu *vcpu, uint64_t gpa, uint64_t q)
{
	struct mmio_access a;

	if (vmcs_read32(IDT_VECTORING_INFO_FIELD) & INTR_INFO_VALID)
		return emulated_page_event_delivery(vcpu, gpa, "an unclaimed address");
	/* The decode must agree with the access the CPU reported (else the code changed under it). */
	if (!vmx_mmio_decode(vcpu, &a) || a.store != !!(q & EXIT_QUAL_EPT_WRITE))
		return vcpu_stop(vcpu, "access to unclaimed GPA %#llx by an instruction that is not "
				 "a MOV load or store matching the exit (RIP %#llx, bytes %02x %02x "
				 "%02x %02x)", (unsigned long long)gpa,
				 (unsigned long long)vmcs_read(GUEST_RIP), a.bytes[0], a.bytes[1],
				 a.bytes[2], a.bytes[3]);
	if (a.store && !__atomic_exchange_n(&unclaimed_write_reported, true, __ATOMIC_RELAXED))
		printk("exitplan: guest write of %#llx to GPA %#llx dropped (no device the guest is "
		       "granted claims it); later ones are not reported\n",
		       (unsigned long long)a.value, (unsigned long long)gpa);
	vmx_mmio_complete(vcpu, &a, ~0ull);
	return VMX_EXIT_RESUME;
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
	uint64_t rip = vmcs_read(GUEST_RIP);

	if (platform_mmio_test_page(gpa))
		return mmio_test_page(vcpu, gpa, q);
	if ((gpa & ~(uint64_t)(PAGE_SIZE - 1)) == vmx_xapic_page()) {
		if (vmcs_read32(IDT_VECTORING_INFO_FIELD) & INTR_INFO_VALID)
			return emulated_page_event_delivery(vcpu, gpa, "the local APIC page");
		return PROFILE_APIC_VIRTUAL ? vmx_vlapic_mmio(vcpu, gpa, q)	/* vlapic_exits.c */
					    : xapic_page_access(vcpu, gpa, q);
	}
	if (vmx_device_page(gpa))
		return vmx_device_page_access(vcpu, gpa, q);
	if (!in_hv_region(gpa) && !(q & EXIT_QUAL_EPT_FETCH))
		return unclaimed_access(vcpu, gpa, q);

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
