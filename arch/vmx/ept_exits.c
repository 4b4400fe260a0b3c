// SPDX-License-Identifier: GPL-2.0-only
/*
 * EPT violations and misconfigurations (SDM Vol. 3C 29.3.3).
 *
 * Only two kinds of guest-physical address are not mapped: the MMIO test
 * page, whose 32-bit MOV loads and stores are emulated here, and the
 * hypervisor region, whose every access is an attack or a guest bug.
 * Anything else is a bug in the EPT built by vmx.c.  Either way the
 * guest is stopped with a report and the hypervisor carries on.
 */
#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "exit_handlers.h"
#include "layout.h"
#include "platform.h"
#include "string.h"
#include "vmcs_fields.h"
#include "vmx.h"
#include "vmx_controls_bits.h"

/* The guest-linear address of the instruction at GUEST_RIP. */
static uint64_t guest_rip_linear(void)
{
	uint64_t rip = vmcs_read(GUEST_RIP) + vmcs_read(GUEST_CS_BASE);

	if (!(vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE))
		rip &= 0xffffffffull;
	return rip;
}

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
	rip = guest_rip_linear();
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

	printk("exitplan: EPT violation: guest %s of GPA %#llx at RIP %#llx, qualification %#llx",
	       ept_access_name(q), (unsigned long long)gpa, (unsigned long long)rip,
	       (unsigned long long)q);
	if (q & EXIT_QUAL_EPT_GLA_VALID)
		printk(", linear address %#llx", (unsigned long long)vmcs_read(GUEST_LINEAR_ADDRESS));
	printk("\n");
	if (gpa >= HV_REGION_START && gpa < HV_REGION_END)
		return vcpu_stop(vcpu, "EPT violation: %s of hypervisor memory at GPA %#llx (RIP %#llx)",
				 ept_access_name(q), (unsigned long long)gpa,
				 (unsigned long long)rip);
	/*
	 * MMIO is mapped without execute permission (ept.c): the guest
	 * jumped into a device window (the local APIC page, VGA memory).
	 * There is no instruction stream there to emulate.
	 */
	if ((q & EXIT_QUAL_EPT_FETCH) && (q & EXIT_QUAL_EPT_READABLE))
		return vcpu_stop(vcpu, "EPT violation: instruction fetch from MMIO at GPA %#llx "
				 "(RIP %#llx): device memory is not executable",
				 (unsigned long long)gpa, (unsigned long long)rip);
	return vcpu_stop(vcpu, "EPT violation: %s of unmapped GPA %#llx (RIP %#llx)",
			 ept_access_name(q), (unsigned long long)gpa, (unsigned long long)rip);
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
