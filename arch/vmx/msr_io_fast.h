/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The answers of the MSR and I/O fast handlers (generated/PROFILE/
 * msr_io_fast.c, from the profile's fast.msrs and fast.io_ports; the
 * MSRs and ports they may name are spec/handlers.yaml's msr_fast and
 * io_fast_ports).  One function per MSR direction or port, named after
 * it, shared with the general handlers (msr.c, platform.c), so fast and
 * general give the same architectural result.  An MSR answer returns
 * false for a case it does not cover; the generated handler then hands
 * the exit to the general handler, which decides (the #GP included).
 */
#ifndef EXITPLAN_MSR_IO_FAST_H
#define EXITPLAN_MSR_IO_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/devices/apic_mode.h"
#include "arch_bits.h"
#include "runtime/host/cpu.h"
#include "msr_index.h"
#include "runtime/devices/platform.h"
#include "profile.h"
#include "runtime/host/spinlock.h"
#include "runtime/vm/vm.h"
#include "arch/vmx/vcpu_arch.h"

/* RDMSR IA32_APIC_BASE: the guest's copy (msr.c apic_base_write() keeps it). */
static inline bool msr_fast_read_ia32_apic_base(struct vcpu *vcpu, uint64_t *v)
{
	*v = vcpu->arch->apic_base;
	return true;
}

/*
 * WRMSR IA32_TSC_DEADLINE when it goes to the CPU's own MSR (not
 * emulated with the preemption timer): any value is valid, in host TSC
 * terms.  No TSC-deadline mode (the MSR does not exist) and the emulated
 * deadline are the general handler's.  The value comes as WRMSR's halves
 * (EDX:EAX) and goes to the CPU as halves: 0 (disarm, the common write)
 * is written as it came, with no 64-bit value built and split again.
 */
static inline bool msr_fast_write_ia32_tsc_deadline(struct vcpu *vcpu, uint32_t lo, uint32_t hi)
{
	if (!vcpu->tsc_deadline_to_cpu)	/* has_tsc_deadline && !tsc_deadline_emulated */
		return false;
	/* The guest's deadline is in its own TSC's terms; the CPU's in the host's. */
	if (lo | hi) {
		uint64_t v = ((uint64_t)hi << 32 | lo) - vcpu->arch->tsc.offset;

		lo = (uint32_t)v;
		hi = (uint32_t)(v >> 32);
	}
	wrmsr(MSR_IA32_TSC_DEADLINE, (uint64_t)hi << 32 | lo);
	return true;
}

/*
 * WRMSR IA32_X2APIC_ICR: the fixed, physical-destination IPI with no
 * reserved bit (x2apic_icr_fixed_physical()) goes to the real ICR as the
 * guest wrote it, without vm_icr_decode(): under apic: passthrough the
 * general path (apic.c vmx_icr_write()) writes exactly that too.  A guest
 * in x2APIC mode is on a physical APIC in x2APIC mode (msr.c
 * apic_base_write()).  Everything else -- another delivery mode, a
 * logical destination, a shorthand, a reserved bit (#GP), a guest outside
 * x2APIC mode (#GP), intercept-icr or virtual (the hypervisor delivers)
 * -- is the general handler's.
 */
static inline bool msr_fast_write_ia32_x2apic_icr(struct vcpu *vcpu, uint32_t lo, uint32_t hi)
{
	uint64_t icr = (uint64_t)hi << 32 | lo;

	if (PROFILE_APIC_INTERCEPT_ICR || !x2apic_icr_fixed_physical(icr) ||
	    !(vcpu->arch->apic_base & APIC_BASE_EXTD))
		return false;
	wrmsr(MSR_IA32_X2APIC_ICR, icr);
	return true;
}

/*
 * The exit qualification of an IN or OUT (not INS/OUTS) of @size bytes
 * at @port, in the bits the fast I/O handler switches on (SDM Vol. 3C
 * Table 28-5): size, direction, string, port.  REP and the operand
 * encoding (DX or immediate) are left out: neither changes the answer.
 */
#define IO_FAST_QUAL_MASK	(EXIT_QUAL_IO_SIZE_MASK | EXIT_QUAL_IO_IN | EXIT_QUAL_IO_STRING | \
				 (0xffffull << EXIT_QUAL_IO_PORT_SHIFT))
#define IO_FAST_QUAL(port, in, size) \
	((uint64_t)(port) << EXIT_QUAL_IO_PORT_SHIFT | ((in) ? EXIT_QUAL_IO_IN : 0) | ((size) - 1))

/* OUT of a word to the fw_cfg selector (platform.c: the item looked up once). */
static inline void io_fast_out_0x510(struct vcpu *vcpu, uint32_t value)
{
	spin_lock(&vcpu->vm->platform_lock);
	platform_fw_cfg_select(vcpu->arch->platform, (uint16_t)value);
	spin_unlock(&vcpu->vm->platform_lock);
}

/* IN of a byte from the fw_cfg data port: the next byte of the selected item. */
static inline uint32_t io_fast_in_0x511(struct vcpu *vcpu)
{
	uint32_t v;

	spin_lock(&vcpu->vm->platform_lock);
	v = platform_fw_cfg_byte(vcpu->arch->platform);
	spin_unlock(&vcpu->vm->platform_lock);
	return v;
}

#endif /* EXITPLAN_MSR_IO_FAST_H */
