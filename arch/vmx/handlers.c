// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exit handlers for instructions and events (spec/handlers.yaml names
 * them; the generated dispatch calls them).  I/O is in io.c, MSRs in
 * msr.c, EPT in ept_exits.c, interrupts in intr_exits.c and events.c.
 *
 * A handler either completes the instruction (vmx_skip_instruction()),
 * injects the fault the instruction raises (RIP unchanged), or stops the
 * guest with a reason.  Nothing is silently skipped.
 */
#include <stddef.h>

#include "arch_bits.h"
#include "runtime/vcpu/arch_checks.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "runtime/host/extable.h"
#include "exit_handlers.h"
#include "runtime/vm/hypercall.h"
#include "runtime/host/page_alloc.h"
#include "lib/string.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "profile.h"		/* generated per profile */
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/events.h"
#include "arch/vmx/apic.h"
#include "runtime/host/percpu.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/msr.h"
#include "arch/vmx/vlapic_exits.h"
#include "arch/vmx/vcpu_switch.h"
#include "arch/vmx/nmi_root.h"
#include "arch/vmx/guest_mem.h"
#include "arch/vmx/vmx_ctls.h"
#include "arch/vmx/vmx_controls.h"
#include "vmx_controls_bits.h"
#include "vmx_exit_reasons.h"

/* --- general-purpose registers by their instruction encoding ---------- */

/*
 * 0 RAX, 1 RCX, 2 RDX, 3 RBX, 4 RSP (in the VMCS), 5 RBP, 6 RSI, 7 RDI,
 * 8-15 R8-R15.  RBP and R10-R15 (NULL here) are the guest's in the
 * registers themselves during an exit: no host C touches them (vcpu.h).
 */
#define GPR_SLOT(reg)	(offsetof(struct guest_regs, reg) / 8 + 1)

static uint64_t *gpr_slot(struct vcpu *vcpu, unsigned int n)
{
	/* Which uint64_t of struct guest_regs, + 1; 0: none.  A constant table, built once. */
	static const uint8_t slots[16] = {
		GPR_SLOT(rax), GPR_SLOT(rcx), GPR_SLOT(rdx), GPR_SLOT(rbx), 0, 0,
		GPR_SLOT(rsi), GPR_SLOT(rdi), GPR_SLOT(r8), GPR_SLOT(r9),
	};
	unsigned int k = slots[n & 15];

	return k ? (uint64_t *)&vcpu->regs + (k - 1) : NULL;
}

/*
 * The live guest RBP, R10-R15.  The asm names the register: the compiler
 * was told never to allocate it (-ffixed-*), so nothing else holds a
 * value there that a write could clobber.
 */
static uint64_t fixed_gpr_read(unsigned int n)
{
	uint64_t v;

	switch (n & 15) {
	case 5:
		asm volatile("mov %%rbp, %0" : "=r"(v));
		break;
	case 10:
		asm volatile("mov %%r10, %0" : "=r"(v));
		break;
	case 11:
		asm volatile("mov %%r11, %0" : "=r"(v));
		break;
	case 12:
		asm volatile("mov %%r12, %0" : "=r"(v));
		break;
	case 13:
		asm volatile("mov %%r13, %0" : "=r"(v));
		break;
	case 14:
		asm volatile("mov %%r14, %0" : "=r"(v));
		break;
	default:
		asm volatile("mov %%r15, %0" : "=r"(v));
		break;
	}
	return v;
}

static void fixed_gpr_write(unsigned int n, uint64_t v)
{
	switch (n & 15) {
	case 5:
		asm volatile("mov %0, %%rbp" : : "r"(v));
		break;
	case 10:
		asm volatile("mov %0, %%r10" : : "r"(v));
		break;
	case 11:
		asm volatile("mov %0, %%r11" : : "r"(v));
		break;
	case 12:
		asm volatile("mov %0, %%r12" : : "r"(v));
		break;
	case 13:
		asm volatile("mov %0, %%r13" : : "r"(v));
		break;
	case 14:
		asm volatile("mov %0, %%r14" : : "r"(v));
		break;
	default:
		asm volatile("mov %0, %%r15" : : "r"(v));
		break;
	}
}

static bool gpr_is_rsp(unsigned int n)
{
	return (n & 15) == 4;
}

/* IA-32e mode with CS.L: the only mode with 64-bit operands (SDM Vol. 1 3.2.1). */
bool vcpu_in_64bit_mode(const struct vcpu *vcpu)
{
	return (vcpu_ctls(vcpu, VMX_ENTRY) & VM_ENTRY_IA32E_MODE) &&
	       (vmcs_read32(GUEST_CS_AR_BYTES) & VMX_AR_L);
}

/*
 * The register as the exiting instruction read it: outside 64-bit mode
 * (compatibility mode included) its operand is 32 bits wide, and
 * whatever a 64-bit stretch of code left in bits 63:32 is not part of it.
 */
uint64_t vcpu_gpr_read(struct vcpu *vcpu, unsigned int n)
{
	uint64_t *p = gpr_slot(vcpu, n);
	uint64_t v;

	if (p)
		v = *p;
	else
		v = gpr_is_rsp(n) ? vmcs_read(GUEST_RSP) : fixed_gpr_read(n);
	return vcpu_in_64bit_mode(vcpu) ? v : v & 0xffffffffull;
}

void vcpu_gpr_write(struct vcpu *vcpu, unsigned int n, uint64_t v)
{
	uint64_t *p = gpr_slot(vcpu, n);

	/* A 32-bit result (any mode but 64-bit) zero-extends (SDM Vol. 1 3.4.1.1). */
	if (!vcpu_in_64bit_mode(vcpu))
		v &= 0xffffffffull;
	if (p)
		*p = v;
	else if (gpr_is_rsp(n))
		vmcs_write(GUEST_RSP, v);
	else
		fixed_gpr_write(n, v);
}

/* --- VMCALL ------------------------------------------------------------ */

/* STATS_RESET (runtime/vm/hypercall.c asks it in its result). */
static void vmx_stats_reset(struct vcpu *vcpu)
{
	memset(&vcpu->stats, 0, sizeof(vcpu->stats));
	/* The fast handlers' breakdown slots again (profile.h), before the next exit. */
	PROFILE_STATS_CLAIM_FAST_KEYS(&vcpu->stats);
	/* The MSR write a tickless kernel makes per timer (exit_stats.h). */
	exit_stats_table_claim(&vcpu->stats.msr_write, MSR_IA32_TSC_DEADLINE);
	/*
	 * At "timing" the exit path adds rdtsc() - exit_tsc to this exit's
	 * reason when it resumes the guest: restart the clock here rather than
	 * leave it at 0, which would add the whole TSC to VMCALL's ticks.
	 */
	if (PROFILE_STATS_LEVEL >= STATS_TIMING)
		vcpu->stats.exit_tsc = rdtsc();
}

/*
 * Every hypercall but NOP.  Out of line: its call would otherwise make
 * handle_vmcall() save a register and set up a frame for NOP too.
 */
static noinline enum vmx_exit_action vmcall_dispatch(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;
	struct hypercall_call call = {
		.nr = r->rax,
		.arg = { r->rbx, r->rcx, r->rdx, r->rsi },
		/* None where the profile keeps no statistics: its hypercalls say ENOSYS. */
		.exit_counts = VCPU_STATS_COUNTING ? vcpu->stats.count : NULL,
		.nr_exit_counts = VCPU_STATS_COUNTING ? EXIT_STATS_SLOTS : 0,
	};
	struct hypercall_result res;
	char buf[HYPERCALL_PUTS_MAX];
	uint64_t gla = 0;
	unsigned int len;

	if (VCPU_STATS_COUNTING)
		exit_stats_count_hypercall(&vcpu->stats, (uint32_t)r->rax);
	/* The guest memory the call reads, through the guest's paging (guest_mem.c). */
	len = hypercall_guest_read(&call, &gla);
	if (guest_read_linear(gla, buf, len))
		call.guest = buf;
	res = hypercall_dispatch(&call);
	if (res.stats_reset)
		vmx_stats_reset(vcpu);
	if (res.stop)
		return vcpu_stop_status(vcpu, VCPU_STOP_SHUTDOWN, res.status);
	/* Outside 64-bit mode the guest reads EAX: sign-extended -1000 is fine either way. */
	r->rax = (uint64_t)res.value;
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action handle_vmcall(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;

	/* Hypercalls are the guest kernel's: from CPL > 0 they fail (KVM: -KVM_EPERM). */
	if (unlikely(vmcs_read32(GUEST_SS_AR_BYTES) & VMX_AR_DPL_MASK)) {
		r->rax = (uint64_t)(int64_t)HYPERCALL_EPERM;
		vmx_skip_instruction();
		return VMX_EXIT_RESUME;
	}
	/*
	 * NOP answered here, without hypercall_dispatch()'s returned struct:
	 * it is the hypercall that measures the exit itself (bench guest).
	 * The same result: RAX = 0.  Counted here with its constant number
	 * (one increment), every other hypercall in vmcall_dispatch().
	 */
	if ((uint32_t)r->rax != HYPERCALL_NOP)
		return vmcall_dispatch(vcpu);
	if (VCPU_STATS_COUNTING)
		exit_stats_count_hypercall(&vcpu->stats, HYPERCALL_NOP);
	r->rax = 0;
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

/* --- CR access (SDM Vol. 3C 28.2.1, Table 28-3) ------------------------ */

/* The CR0 bits LMSW loads (SDM Vol. 2A LMSW). */
#define LMSW_BITS	(X86_CR0_PE | X86_CR0_MP | X86_CR0_EM | X86_CR0_TS)

/*
 * With EPT, a VM entry into PAE paging (CR0.PG, CR4.PAE, not IA-32e mode)
 * takes the four PDPTEs from the VMCS, not from memory (SDM Vol. 3C
 * 26.3.2.4): when the hypervisor performs the guest's MOV to CR0/CR4 it
 * must load them, as the instruction itself would have (Vol. 3A 4.4.1).
 * false when they cannot be read (the guest's CR3 points at memory it
 * does not have).
 */
bool load_pae_pdptrs(void)
{
	static const enum vmcs_field pdptr[4] = {
		GUEST_PDPTR0, GUEST_PDPTR1, GUEST_PDPTR2, GUEST_PDPTR3,
	};
	uint64_t e[4];

	if (!(vmcs_read(GUEST_CR0) & X86_CR0_PG) || !(vmcs_read(GUEST_CR4) & X86_CR4_PAE) ||
	    (vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE))
		return true;
	/* CR3[31:5] is the page-directory-pointer table in PAE mode: 32-byte aligned. */
	if (!guest_phys_ok(vmcs_read(GUEST_CR3) & PAE_CR3_PDPT_MASK, sizeof(e)))
		return false;
	memcpy(e, phys_to_virt(vmcs_read(GUEST_CR3) & PAE_CR3_PDPT_MASK), sizeof(e));
	for (unsigned int i = 0; i < 4; i++)
		vmcs_write(pdptr[i], e[i]);
	return true;
}

static enum vmx_exit_action set_cr0(struct vcpu *vcpu, uint64_t val)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t old_shadow = vmcs_read(CR0_READ_SHADOW);
	uint64_t hw;

	/* What MOV to CR0 itself would #GP on (SDM Vol. 3A 2.5, 4.1.1). */
	if ((val >> 32) || ((val & X86_CR0_PG) && !(val & X86_CR0_PE)) ||
	    ((val & X86_CR0_NW) && !(val & X86_CR0_CD))) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	hw = (val | a->cr0_fixed0) & a->cr0_fixed1;
	/*
	 * Enabling paging with EFER.LME set activates IA-32e mode, clearing
	 * it leaves (SDM Vol. 3A 10.8.5, 10.8.6).  CR0.PG is in the guest/host
	 * mask for exactly this: the "IA-32e mode guest" entry control and
	 * EFER.LMA must follow, whether VM entry loads EFER or the runtime
	 * switches it by hand (then the control sets LMA and LME at entry).
	 */
	if ((val & X86_CR0_PG) && !(old_shadow & X86_CR0_PG)) {
		uint64_t efer = vcpu_guest_efer(vcpu);

		if (efer & EFER_LME) {
			if (!(vmcs_read(GUEST_CR4) & X86_CR4_PAE)) {
				vmx_inject_gp(vcpu);
				return VMX_EXIT_RESUME;
			}
			vcpu_set_guest_efer(vcpu, efer | EFER_LMA);
			vcpu_ctls_setbit(vcpu, VMX_ENTRY, VM_ENTRY_IA32E_MODE);
		}
	} else if (!(val & X86_CR0_PG) && (old_shadow & X86_CR0_PG) &&
		   (vcpu_ctls(vcpu, VMX_ENTRY) & VM_ENTRY_IA32E_MODE)) {
		vcpu_set_guest_efer(vcpu, vcpu_guest_efer(vcpu) & ~(uint64_t)EFER_LMA);
		vcpu_ctls_clearbit(vcpu, VMX_ENTRY, VM_ENTRY_IA32E_MODE);
	}
	vmcs_write(CR0_READ_SHADOW, val);
	vmcs_write(GUEST_CR0, hw);
	if (!load_pae_pdptrs())
		return vcpu_stop(vcpu, "PAE paging enabled with CR3 %#llx outside guest memory",
				 (unsigned long long)vmcs_read(GUEST_CR3));
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

static enum vmx_exit_action set_cr4(struct vcpu *vcpu, uint64_t val)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/* The guest has no VMX; bits this CPU cannot set are reserved: #GP. */
	if ((val & X86_CR4_VMXE) || (val & ~a->cr4_fixed1)) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	vmcs_write(CR4_READ_SHADOW, val);
	vmcs_write(GUEST_CR4, (val | a->cr4_fixed0 | X86_CR4_VMXE) & a->cr4_fixed1);
	if (!load_pae_pdptrs())
		return vcpu_stop(vcpu, "PAE paging enabled with CR3 %#llx outside guest memory",
				 (unsigned long long)vmcs_read(GUEST_CR3));
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action handle_cr_access(struct vcpu *vcpu)
{
	uint64_t q = vmcs_read(EXIT_QUALIFICATION);
	unsigned int cr = q & EXIT_QUAL_CR_NUM_MASK;
	unsigned int type = q & EXIT_QUAL_CR_ACCESS_TYPE_MASK;
	unsigned int reg = (q & EXIT_QUAL_CR_GPR_MASK) >> EXIT_QUAL_CR_GPR_SHIFT;
	uint64_t v;

	switch (type) {
	case EXIT_QUAL_CR_ACCESS_TYPE_MOV_TO_CR:
		v = vcpu_gpr_read(vcpu, reg);
		if (cr == 0)
			return set_cr0(vcpu, v);
		if (cr == 4)
			return set_cr4(vcpu, v);
		if (cr == 3) {
			vmcs_write(GUEST_CR3, v);
			if (!load_pae_pdptrs())
				return vcpu_stop(vcpu, "PAE CR3 %#llx outside guest memory",
						 (unsigned long long)v);
			break;
		}
		if (cr == 8) {
			/*
			 * The guest owns the local APIC: CR8 is its TPR.  Bits
			 * 63:4 are reserved: executed here, they would be the
			 * hypervisor's #GP (SDM Vol. 3A 2.5).
			 */
			if (!cr8_valid(v)) {
				vmx_inject_gp(vcpu);
				return VMX_EXIT_RESUME;
			}
			if (PROFILE_APIC_VIRTUAL) {
				/* The virtual APIC's TPR: a lower one may let an interrupt in. */
				vlapic_write_cr8(&vcpu->arch->vlapic, v);
				vmx_skip_instruction();
				vmx_vlapic_sync(vcpu);
				return VMX_EXIT_RESUME;
			}
			asm volatile("mov %0, %%cr8" : : "r"(v));
			break;
		}
		goto unexpected;
	case EXIT_QUAL_CR_ACCESS_TYPE_MOV_FROM_CR:
		if (cr == 3)
			v = vmcs_read(GUEST_CR3);
		else if (cr == 8 && PROFILE_APIC_VIRTUAL)
			v = vlapic_read_cr8(&vcpu->arch->vlapic);
		else if (cr == 8)
			asm volatile("mov %%cr8, %0" : "=r"(v));
		else
			goto unexpected;
		vcpu_gpr_write(vcpu, reg, v);
		break;
	case EXIT_QUAL_CR_ACCESS_TYPE_CLTS:
		vmcs_write(CR0_READ_SHADOW, vmcs_read(CR0_READ_SHADOW) & ~(uint64_t)X86_CR0_TS);
		vmcs_write(GUEST_CR0, vmcs_read(GUEST_CR0) & ~(uint64_t)X86_CR0_TS);
		break;
	case EXIT_QUAL_CR_ACCESS_TYPE_LMSW: {
		/* LMSW loads CR0[3:0] but cannot clear PE (SDM Vol. 2A LMSW). */
		uint64_t src = ((q & EXIT_QUAL_CR_LMSW_DATA_MASK) >> EXIT_QUAL_CR_LMSW_DATA_SHIFT) & LMSW_BITS;
		uint64_t shadow = vmcs_read(CR0_READ_SHADOW);

		v = (shadow & ~(uint64_t)LMSW_BITS) | src | (shadow & X86_CR0_PE);
		return set_cr0(vcpu, v);
	}
	}
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
unexpected:
	return vcpu_stop(vcpu, "CR access exit for CR%u (type %u) the runtime does not handle",
			 cr, type);
}

/* --- DR access (Table 28-4) ------------------------------------------- */

enum vmx_exit_action handle_dr_access(struct vcpu *vcpu)
{
	uint64_t q = vmcs_read(EXIT_QUALIFICATION);
	unsigned int dr = q & EXIT_QUAL_DR_NUM_MASK;
	bool from_dr = q & EXIT_QUAL_DR_FROM_DR;
	unsigned int reg = (q & EXIT_QUAL_DR_GPR_MASK) >> EXIT_QUAL_DR_GPR_SHIFT;
	uint64_t v = 0;

	/* DR4/DR5 alias DR6/DR7 unless CR4.DE makes them #UD (SDM Vol. 3B 18.2.2). */
	if (dr == 4 || dr == 5) {
		if (vmcs_read(CR4_READ_SHADOW) & X86_CR4_DE) {
			vmx_inject_ud(vcpu);
			return VMX_EXIT_RESUME;
		}
		dr += 2;
	}
	/*
	 * DR7 is in the VMCS; DR0-3 and DR6 are not switched by VMX and the
	 * host never uses them, so the guest's values live in the registers.
	 */
	if (from_dr) {
		switch (dr) {
		case 0: asm volatile("mov %%db0, %0" : "=r"(v)); break;
		case 1: asm volatile("mov %%db1, %0" : "=r"(v)); break;
		case 2: asm volatile("mov %%db2, %0" : "=r"(v)); break;
		case 3: asm volatile("mov %%db3, %0" : "=r"(v)); break;
		case 6: asm volatile("mov %%db6, %0" : "=r"(v)); break;
		case 7: v = vmcs_read(GUEST_DR7); break;
		}
		vcpu_gpr_write(vcpu, reg, v);
	} else {
		v = vcpu_gpr_read(vcpu, reg);
		if ((dr == 6 || dr == 7) && (v >> 32)) {
			vmx_inject_gp(vcpu);
			return VMX_EXIT_RESUME;
		}
		switch (dr) {
		case 0: asm volatile("mov %0, %%db0" : : "r"(v)); break;
		case 1: asm volatile("mov %0, %%db1" : : "r"(v)); break;
		case 2: asm volatile("mov %0, %%db2" : : "r"(v)); break;
		case 3: asm volatile("mov %0, %%db3" : : "r"(v)); break;
		case 6: asm volatile("mov %0, %%db6" : : "r"(v)); break;
		case 7: vmcs_write(GUEST_DR7, v); break;
		}
	}
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

/* --- HLT, PAUSE -------------------------------------------------------- */

/*
 * HLT: the vCPU sleeps until an interrupt.  It is resumed in the HLT
 * activity state after the instruction; the interrupt that wakes it
 * arrives as an external-interrupt exit (or directly, without interrupt
 * exiting) and is injected, which makes it active again.  With an
 * interrupt already queued the HLT completes at once.  A guest that halts
 * with interrupts off waits for an NMI or INIT from another vCPU in root
 * operation (vmx_halt_interrupts_off()); with no other vCPU left to send
 * one it is stopped and reported instead of hanging the machine.
 */
enum vmx_exit_action handle_hlt(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	if (!(vmcs_read(GUEST_RFLAGS) & X86_RFLAGS_IF))
		return vmx_halt_interrupts_off(vcpu);	/* vmx_run.c: only NMI or INIT wakes it */
	vmx_skip_instruction();		/* ends the STI shadow of "sti; hlt" */
	if (PROFILE_APIC_VIRTUAL)
		return vmx_vlapic_hlt(vcpu);	/* woken by its virtual APIC */
	if (a->irq_pending) {
		/*
		 * The HLT completes at once: an interrupt is already waiting.
		 * One held back under a storm (events.c) goes in now: the
		 * guest has nothing of its own left to run.
		 */
		a->storm_hold_until = 0;
		vmx_try_inject_pending(vcpu);
		return VMX_EXIT_RESUME;
	}
	/*
	 * So does the 8259s' INT the STI shadow held back (legacy_irq.c): its
	 * interrupt-window exit comes as soon as the guest runs, which in
	 * the HLT state it would not (Bochs: a window exit never wakes HLT).
	 */
	if (a->legacy_int_waiting)
		return VMX_EXIT_RESUME;
	vmcs_write(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_HLT);
	return VMX_EXIT_RESUME;
}

/*
 * PAUSE (and PAUSE-loop) exits: a vCPU alone on its CPU has no one to
 * yield to; one that shares it asks the scheduler (vcpu_switch.c).
 */
enum vmx_exit_action handle_pause_instruction(struct vcpu *vcpu)
{
	vmx_skip_instruction();
	if (unlikely(vcpu->arch->shared))
		return vmx_sched_pause(vcpu);
	return VMX_EXIT_RESUME;
}

/* --- XSETBV, INVD/WBINVD ----------------------------------------------- */

enum vmx_exit_action handle_xsetbv(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;
	uint64_t xcr0 = ((r->rdx & 0xffffffffull) << 32) | (r->rax & 0xffffffffull);
	uint32_t a, b, c, d, faulted = 0;
	uint64_t supported;

	cpuid_count(CPUID_LEAF_XSTATE, 0, &a, &b, &c, &d);
	supported = ((uint64_t)d << 32) | a;
	/*
	 * The checks XSETBV itself makes (SDM Vol. 2C XSETBV; 13.3), all
	 * before the value reaches the host's XCR0, where a #GP would be
	 * the hypervisor's.
	 */
	if ((uint32_t)r->rcx != 0 || !xcr0_valid(xcr0, supported)) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	/*
	 * XCR0 is not switched by VMX; the host uses no extended state.  A
	 * rule the checks above miss faults here, not in the hypervisor:
	 * the guest gets the #GP its XSETBV would have raised.
	 */
	asm volatile("1:\txsetbv\n"
		     "2:\n\t"
		     EXTABLE_FAULT("%[faulted]")
		     : [faulted] "+r"(faulted)
		     : "c"(0), "a"((uint32_t)xcr0), "d"((uint32_t)(xcr0 >> 32)));
	if (faulted) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	vcpu->arch->xcr0 = xcr0;
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action handle_wbinvd(struct vcpu *vcpu)
{
	(void)vcpu;
	/* Also for INVD: dropping dirty lines the host owns would be wrong. */
	asm volatile("wbinvd" : : : "memory");
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action handle_invd(struct vcpu *vcpu)
{
	return handle_wbinvd(vcpu);
}

/* --- events that end the guest ---------------------------------------- */

enum vmx_exit_action handle_triple_fault(struct vcpu *vcpu)
{
	printk("exitplan: guest triple fault\n");
	vmx_dump_guest_state(vcpu);
	return vcpu_stop(vcpu, "triple fault at RIP %#llx", (unsigned long long)vmcs_read(GUEST_RIP));
}

/*
 * INIT: Bochs 2.7 never consumes an INIT received in VMX non-root
 * operation (every VMRESUME exits with it again, PLATFORM.md), and with
 * one vCPU there is no one to reset it.  Say so and stop, rather than
 * loop on it.
 */
enum vmx_exit_action handle_init_signal(struct vcpu *vcpu)
{
	/* The watchdog's INIT to a vCPU that ignored the machine's stop (vmx_run.c). */
	if (vm_stopping(vcpu->vm)) {
		printk("exitplan: vCPU %u: taken back by an INIT signal at RIP %#llx\n", vcpu->id,
		       (unsigned long long)vmcs_read(GUEST_RIP));
		if (vcpu->arch->stop == VCPU_RUNNING)
			vcpu->arch->stop = VCPU_STOP_VM;
		return VMX_EXIT_STOP;
	}
	return vcpu_stop(vcpu, "INIT signal at RIP %#llx: a vCPU reset is not emulated "
			 "(and Bochs 2.7 cannot consume an INIT in VMX non-root operation)",
			 (unsigned long long)vmcs_read(GUEST_RIP));
}

enum vmx_exit_action handle_sipi_signal(struct vcpu *vcpu)
{
	/* Only a vCPU in wait-for-SIPI gets one; this runtime never puts one there. */
	return vcpu_stop(vcpu, "SIPI (vector %#llx) to a vCPU not waiting for one",
			 (unsigned long long)vmcs_read(EXIT_QUALIFICATION));
}

/* VMX instructions in the guest: it has no VMX (CPUID hides it), so #UD. */
enum vmx_exit_action handle_vmx_instruction(struct vcpu *vcpu)
{
	vmx_inject_ud(vcpu);
	return VMX_EXIT_RESUME;
}

/* GETSEC, MONITOR, MWAIT: not offered to the guest (CPUID hides them or they exit): #UD. */
enum vmx_exit_action handle_invalid_op(struct vcpu *vcpu)
{
	vmx_inject_ud(vcpu);
	return VMX_EXIT_RESUME;
}

/* RDTSC exiting: the guest's TSC is the host's plus the VMCS TSC offset. */
enum vmx_exit_action handle_rdtsc(struct vcpu *vcpu)
{
	uint64_t tsc = rdtsc();

	if (vcpu_ctls(vcpu, VMX_PROC_BASED) & CPU_BASED_USE_TSC_OFFSETTING)
		tsc += vmcs_read(TSC_OFFSET);
	vcpu->regs.rax = (uint32_t)tsc;
	vcpu->regs.rdx = (uint32_t)(tsc >> 32);
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

/*
 * The guest lowered its TPR below the threshold: the local APIC itself
 * delivers what is now unmasked (the guest owns it); nothing to emulate.
 */
enum vmx_exit_action handle_tpr_below_threshold(struct vcpu *vcpu)
{
	(void)vcpu;
	return VMX_EXIT_RESUME;
}

/*
 * Exceptions and NMIs.  The exception bitmap is empty unless a profile
 * asks for exits on some vector (to count them): reflect the exception
 * into the guest unchanged.  An NMI (NMI exiting, every profile:
 * spec/runtime.yaml) is the host's kick or wake-up when its sender's
 * flag is there to claim (apic.c), else the guest's.
 */
enum vmx_exit_action handle_exception_nmi(struct vcpu *vcpu)
{
	uint32_t info = vmcs_read32(VM_EXIT_INTR_INFO);
	uint32_t type = info & INTR_INFO_TYPE_MASK;

	if (!(info & INTR_INFO_VALID))
		return handle_unexpected_exit(vcpu, EXIT_REASON_EXCEPTION_NMI);
	if (type == INTR_INFO_TYPE_NMI) {
		vmx_nmi_unblock();
		vmx_reinject_idt_vectoring();
		/* The host's kick (apic.c), not the guest's NMI. */
		if (vmx_kick_nmi_claim(this_cpu_id()))
			return vmx_take_events(vcpu);
		/* Injected before VMRESUME if the guest can take it (events.c). */
		vmx_queue_nmi(vcpu);
		return VMX_EXIT_RESUME;
	}
	if (type == INTR_INFO_TYPE_HW_EXCEPTION) {
		vmx_inject_exception(vcpu, info & INTR_INFO_VECTOR_MASK,
				     info & INTR_INFO_DELIVER_CODE,
				     vmcs_read32(VM_EXIT_INTR_ERROR_CODE));
		return VMX_EXIT_RESUME;
	}
	/* Software exceptions (INT3, INTO) are re-injected with their length. */
	vmcs_write(VM_ENTRY_INSTRUCTION_LEN, vmcs_read32(VM_EXIT_INSTRUCTION_LEN));
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD, info & (INTR_INFO_VALID | INTR_INFO_TYPE_MASK |
						     INTR_INFO_VECTOR_MASK | INTR_INFO_DELIVER_CODE));
	if (info & INTR_INFO_DELIVER_CODE)
		vmcs_write(VM_ENTRY_EXCEPTION_ERROR_CODE, vmcs_read32(VM_EXIT_INTR_ERROR_CODE));
	return VMX_EXIT_RESUME;
}
