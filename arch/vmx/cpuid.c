// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPUID: the general handler, and the answer code it shares with the
 * profile's fast handler (generated cpuid_fast.c), which takes the
 * answers of a few leaves from here once at boot.
 */
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "exit_handlers.h"
#include "msr_index.h"		/* CPUID_HIDE_*: the features whose MSRs are not virtualised */
#include "arch/vmx/vcpu.h"
#include "runtime/vm/vm.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "profile.h"		/* generated per profile */
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/vmx_ctls.h"
#include "vmx_controls_bits.h"

/* Four characters as CPUID returns them in a register (little endian). */
#define CPUID_SIG(a, b, c, d) \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

/*
 * The host's CPUID, with the hypervisor bit set and VMX hidden (the guest
 * gets no nested VMX), OSXSAVE reflecting the guest's own CR4, the APIC
 * bit its IA32_APIC_BASE, the PMU hidden (spec/msrs.yaml), and the
 * hypervisor leaves 0x40000000.. answering "exitplan".  Inlined into
 * handle_cpuid(), the hot path: no function calls besides CPUID itself.
 * 64-bit values: CPUID zero-extends what it writes, so no masking is
 * needed when they go to the guest's registers.  Returned by value, so
 * that once inlined they stay in registers until the caller stores them;
 * the subleaf is read through ecx where it is tested (only past leaf 6),
 * as a value held across CPUID it would cost handle_cpuid() a spill
 * (the hypervisor fixes RBP and R10-R15, which leaves few registers).
 */
struct cpuid_result {
	uint64_t a, b, c, d;
};

/*
 * Leaves 15H and 16H as the guest's TSC runs (cpuid_set_tsc_hz()): the
 * CPU's own may claim another rate (Bochs's claim 3.5 GHz while its TSC
 * counts instructions), and Linux takes its TSC and local-APIC timer
 * rates from them.  One machine-wide answer, set once before any vCPU runs.
 */
static struct cpuid_regs cpuid_tsc_leaves[2];
static bool cpuid_tsc_leaves_set;

/*
 * The TSC runs at @hz.  Leaf 15H: the crystal clock is the TSC clock,
 * ratio 1/1 (the local APIC timer counts at the crystal rate, and on the
 * CPUs exitplan runs on it counts at the TSC's), divided down by an
 * integer when @hz does not fit ECX; leaf 16H: base and maximum
 * frequency and the bus (reference) frequency, in MHz.  Linux then
 * takes the TSC rate as known (no calibration, no tsc_early_khz=) and
 * its local-APIC timer period from the crystal (native_calibrate_tsc()).
 */
void cpuid_set_tsc_hz(uint64_t hz)
{
	uint64_t div = hz / 0xffffffffull + 1;
	uint32_t mhz = (uint32_t)((hz + 500000) / 1000000);

	cpuid_tsc_leaves_set = hz != 0;
	cpuid_tsc_leaves[0] = (struct cpuid_regs){
		.eax = 1, .ebx = (uint32_t)div, .ecx = (uint32_t)(hz / div), .edx = 0,
	};
	cpuid_tsc_leaves[1] = (struct cpuid_regs){ .eax = mhz, .ebx = mhz, .ecx = mhz, .edx = 0 };
}

static __always_inline
struct cpuid_result __cpuid_answer(struct vcpu *vcpu, uint32_t leaf, const uint64_t *ecx)
{
	uint64_t a, b, c, d;

	if (unlikely(leaf - CPUID_HYPERVISOR_BASE <= CPUID_HV_LEAF_RANGE)) {
		a = b = c = d = 0;
		if (leaf == CPUID_HYPERVISOR_BASE) {
			a = CPUID_HYPERVISOR_BASE;	/* the highest hypervisor leaf */
			/* The signature "exitplan" and four NULs, as KVM's "KVMKVMKVM\0\0\0". */
			b = CPUID_SIG('e', 'x', 'i', 't');
			c = CPUID_SIG('p', 'l', 'a', 'n');
			d = 0;
		}
	} else {
		asm volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			     : "a"((uint64_t)leaf), "c"(*ecx & 0xffffffffull));
		if (leaf == CPUID_LEAF_FEATURES) {
			c = (c & ~(uint64_t)(CPUID_1_ECX_VMX | CPUID_1_ECX_OSXSAVE | CPUID_HIDE_1_ECX)) |
			    CPUID_1_ECX_HYPERVISOR;
			d &= ~(uint64_t)CPUID_HIDE_1_EDX;
			if (vmcs_read(GUEST_CR4) & X86_CR4_OSXSAVE)
				c |= CPUID_1_ECX_OSXSAVE;
			/* The APIC bit follows IA32_APIC_BASE[11], as on hardware (SDM Vol. 3A 11.4.3). */
			if (!(vcpu->arch->apic_base & APIC_BASE_EN))
				d &= ~(uint64_t)CPUID_1_EDX_APIC;
			/*
			 * The vCPU's APIC ID, not the CPU's: they differ when
			 * vCPUs share CPUs (vmx.c); the same value otherwise.
			 */
			b = (b & ~(uint64_t)CPUID_1_EBX_INITIAL_APIC_ID_MASK) |
			    ((uint64_t)vcpu->vv->apic_id << CPUID_1_EBX_INITIAL_APIC_ID_SHIFT);
		} else if (leaf >= CPUID_HIDDEN_LEAF_MONITOR_MWAIT) {
			/*
			 * The leaves whose bits follow the controls or exitplan's
			 * own choices, tested only past the low ones, so that
			 * leaf 0 (and 2-4) pay one compare here, not several.
			 */
			uint32_t proc2 = vcpu_ctls(vcpu, VMX_PROC_BASED2);

			if (leaf == CPUID_LEAF_EXT_FEATURES &&
			    !(proc2 & SECONDARY_EXEC_ENABLE_RDTSCP)) {
				/* Without "enable RDTSCP" the instruction is #UD in the guest. */
				d &= ~(uint64_t)CPUID_80000001_EDX_RDTSCP;
			} else if (leaf == CPUID_LEAF_EXT_STRUCT_FEATURES && (uint32_t)*ecx == 0 &&
				   !(proc2 & SECONDARY_EXEC_ENABLE_INVPCID)) {
				/* Likewise INVPCID without "enable INVPCID" (SDM Vol. 3C 26.3). */
				b &= ~(uint64_t)CPUID_7_EBX_INVPCID;
			} else if (leaf == CPUID_LEAF_XSTATE && (uint32_t)*ecx == 1 &&
				   !(proc2 & SECONDARY_EXEC_ENABLE_XSAVES)) {
				/* And XSAVES/XRSTORS without "enable XSAVES/XRSTORS". */
				a &= ~(uint64_t)CPUID_D_1_EAX_XSAVES;
			} else if (leaf == CPUID_HIDDEN_LEAF_ARCH_PERFMON ||
				   leaf == CPUID_HIDDEN_LEAF_MONITOR_MWAIT) {
				/* No PMU, no MONITOR/MWAIT (spec/msrs.yaml cpuid_msrs). */
				a = b = c = d = 0;
			} else if (leaf == CPUID_LEAF_THERMAL_POWER) {
				/*
				 * Thermal and power management hidden, ARAT kept (the
				 * APIC timer runs in every state the guest can enter);
				 * EBX counts the hidden sensor's interrupt thresholds.
				 */
				a &= ~(uint64_t)CPUID_HIDE_6_EAX;
				b = 0;
				c &= ~(uint64_t)CPUID_HIDE_6_ECX;
			} else if (leaf == CPUID_LEAF_EXT_TOPOLOGY ||
				   leaf == CPUID_LEAF_EXT_TOPOLOGY_V2) {
				/*
				 * EDX is the x2APIC ID of the processor asking: the
				 * vCPU's, as CPUID.1:EBX[31:24] above (they differ from
				 * the CPU's when vCPUs share CPUs).
				 */
				d = vcpu->vv->apic_id;
			} else if ((leaf == CPUID_LEAF_TSC_CRYSTAL || leaf == CPUID_LEAF_FREQUENCY) &&
				   cpuid_tsc_leaves_set) {
				const struct cpuid_regs *t = &cpuid_tsc_leaves[leaf - CPUID_LEAF_TSC_CRYSTAL];

				a = t->eax;
				b = t->ebx;
				c = t->ecx;
				d = t->edx;
			}
		}
	}
	return (struct cpuid_result){ .a = a, .b = b, .c = c, .d = d };
}

/* The answer the guest gets for (leaf, subleaf): the fast handler's table. */
void cpuid_answer(struct vcpu *vcpu, uint32_t leaf, uint32_t subleaf, struct cpuid_regs *out)
{
	uint64_t ecx = subleaf;
	struct cpuid_result res = __cpuid_answer(vcpu, leaf, &ecx);

	out->eax = (uint32_t)res.a;
	out->ebx = (uint32_t)res.b;
	out->ecx = (uint32_t)res.c;
	out->edx = (uint32_t)res.d;
}

enum vmx_exit_action handle_cpuid(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;
	uint32_t leaf = (uint32_t)r->rax;
	struct cpuid_result res;

	if (VCPU_STATS_COUNTING)
		exit_stats_count_cpuid(&vcpu->stats, leaf);
	res = __cpuid_answer(vcpu, leaf, &r->rcx);
	r->rax = res.a;
	r->rbx = res.b;
	r->rcx = res.c;
	r->rdx = res.d;
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}
