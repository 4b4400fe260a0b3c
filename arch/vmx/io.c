// SPDX-License-Identifier: GPL-2.0-only
/*
 * I/O instruction exits (SDM Vol. 3C 28.2.1 Table 28-5 for the exit
 * qualification, 28.2.5 Table 28-8 for the instruction information of
 * INS/OUTS): IN/OUT with DX or an immediate, and INS/OUTS with and
 * without REP, on the ports the profile traps (platform.c emulates them).
 */
#include "arch_bits.h"
#include "runtime/vcpu/arch_checks.h"
#include "runtime/host/compiler.h"
#include "exit_handlers.h"
#include "runtime/host/page_alloc.h"
#include "runtime/devices/platform.h"
#include "runtime/host/spinlock.h"
#include "lib/string.h"
#include "runtime/vm/vm.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "profile.h"		/* generated per profile */
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/events.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/legacy_irq.h"
#include "arch/vmx/guest_mem.h"
#include "arch/vmx/mmio.h"
#include "vmx_controls_bits.h"

/*
 * The shared platform devices, under the VM's platform lock (every
 * vCPU's I/O exits reach the same devices).  Inline: uncontended, the
 * lock is an XCHG and a store, fewer instructions than a call around it.
 */
static inline uint32_t io_platform_read(struct vcpu *vcpu, uint16_t port, unsigned int size)
{
	uint32_t v;

	spin_lock(&vcpu->vm->platform_lock);
	v = platform_io_read(vcpu->arch->platform, port, size);
	spin_unlock(&vcpu->vm->platform_lock);
	return v;
}

static inline enum platform_io_result io_platform_write(struct vcpu *vcpu, uint16_t port,
							unsigned int size, uint32_t value,
							int *status)
{
	enum platform_io_result r;

	spin_lock(&vcpu->vm->platform_lock);
	r = platform_io_write(vcpu->arch->platform, port, size, value, status);
	spin_unlock(&vcpu->vm->platform_lock);
	return r;
}

/* Always inline: OUT is half of the common I/O exits, and a call costs it five instructions. */
static __always_inline enum vmx_exit_action
io_write(struct vcpu *vcpu, uint16_t port, unsigned int size, uint32_t value)
{
	int status;

	switch (io_platform_write(vcpu, port, size, value, &status)) {
	case PLATFORM_IO_EXIT:
		return vcpu_stop_status(vcpu, VCPU_STOP_STATUS, status);
	case PLATFORM_IO_STOP:
		return vcpu_stop(vcpu, "%s", vcpu->arch->platform->stop_reason);
	default:
		return VMX_EXIT_RESUME;
	}
}

/*
 * Elements of a REP INS/OUTS done per exit.  The rest is done by
 * resuming the guest at the same instruction with RCX, RSI/RDI updated,
 * as the CPU itself does when a REP string instruction is interrupted:
 * a guest with RCX = 2^32 cannot hold the hypervisor for minutes.
 */
#define IO_STRING_BATCH		4096

/*
 * INS/OUTS.  The address size and, for OUTS, the segment come from the
 * instruction information; INS always writes ES:(E/R)DI.  Each element
 * goes through mmio.c's vmx_string_element(): its segment checked as the
 * CPU checks it (type and limit outside 64-bit mode, canonical addresses
 * in it; SDM Vol. 3A 5.3), a violation the guest's #GP(0), or #SS(0)
 * through SS, with the elements before it done, as a REP instruction
 * leaves them; the linear address wrapped at 4 GiB outside 64-bit mode
 * and the offset at the address size; then the guest's paging (a user
 * access at CPL 3): a page not present or not permitted is the guest's
 * #PF with the CPU's error code and CR2, again with the elements before
 * it done.  An INS element is translated before the port is read, so a
 * faulting INS consumes nothing from the device and its restart reads
 * the value the fault would have lost.  An element outside guest RAM is
 * answered as the guest's machine answers it (vmx_element_read(),
 * vmx_element_write(): a device page, a ROM, all ones where nothing
 * claims the address); only a paging structure outside guest RAM stops
 * the guest.  Not inlined: its frame and its
 * register pressure would otherwise be paid by every IN/OUT exit (with
 * R10/R11 fixed, gcc has eight registers left).
 */
static noinline enum vmx_exit_action io_string(struct vcpu *vcpu, uint64_t q, uint16_t port,
				      unsigned int size, bool in)
{
	struct guest_regs *r = &vcpu->regs;
	uint32_t info = vmcs_read32(VMX_INSTRUCTION_INFO);
	unsigned int asz = (info >> VMX_INSN_INFO_ADDR_SIZE_SHIFT) & 7;
	unsigned int seg = in ? VMX_SEG_ES : (info >> VMX_INSN_INFO_SEG_SHIFT) & 7;
	uint64_t amask = asz == 0 ? 0xffffull : asz == 1 ? 0xffffffffull : ~0ull;
	bool rep = q & EXIT_QUAL_IO_REP;
	int64_t step = (vmcs_read(GUEST_RFLAGS) & X86_RFLAGS_DF) ? -(int64_t)size : (int64_t)size;
	uint64_t *idx = in ? &r->rdi : &r->rsi;
	uint64_t count = rep ? (r->rcx & amask) : 1;
	unsigned int batch = IO_STRING_BATCH;
	struct vmx_string_seg sg;

	if (seg > VMX_SEG_GS)
		return vcpu_stop(vcpu, "string I/O with segment %u", seg);
	vmx_string_seg_init(vcpu, &sg, seg);
	while (count) {
		struct vmx_element el;
		enum vmx_elem_result er;
		enum vmx_exit_action act;
		uint64_t v = 0;

		if (!batch--)
			return VMX_EXIT_RESUME;	/* RIP unchanged: the REP goes on */
		/* The offset wraps at the address size: (E)DI 0xffff.. + 1 is 0 (SDM Vol. 1 3.3.6). */
		er = vmx_string_element(vcpu, &sg, *idx & amask, size, in, &el);
		if (er != VMX_ELEM_OK)
			return er == VMX_ELEM_FAULT ? VMX_EXIT_RESUME : VMX_EXIT_STOP;
		if (in) {
			v = io_platform_read(vcpu, port, size);
			act = vmx_element_write(vcpu, &el, v);
		} else {
			act = vmx_element_read(vcpu, &el, &v);
			if (act == VMX_EXIT_RESUME)
				act = io_write(vcpu, port, size, (uint32_t)v);
		}
		if (act != VMX_EXIT_RESUME)
			return act;
		*idx = (*idx & ~amask) | ((*idx + step) & amask);
		count--;
		if (rep)
			r->rcx = (r->rcx & ~amask) | count;
	}
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

/*
 * IN and OUT with AL, AX or EAX: the common case, decoded from the exit
 * qualification alone.  The segment and paging checks are string I/O's
 * (io_string()); the access size is checked for both.
 */
enum vmx_exit_action handle_io_instruction(struct vcpu *vcpu)
{
	uint64_t q = vmcs_read(EXIT_QUALIFICATION);
	unsigned int size = (q & EXIT_QUAL_IO_SIZE_MASK) + 1;
	uint16_t port = (uint16_t)(q >> EXIT_QUAL_IO_PORT_SHIFT);
	struct guest_regs *r = &vcpu->regs;

	if (VCPU_STATS_COUNTING)
		exit_stats_table_count(&vcpu->stats.io, port);
	if (unlikely(size != 1 && size != 2 && size != 4))
		return vcpu_stop(vcpu, "I/O exit with access size %u", size);
	if (unlikely(q & EXIT_QUAL_IO_STRING))
		return io_string(vcpu, q, port, size, q & EXIT_QUAL_IO_IN);
	if (q & EXIT_QUAL_IO_IN) {
		uint32_t v = io_platform_read(vcpu, port, size);

		/* IN to AL/AX keeps the rest of RAX; to EAX zero-extends. */
		if (size == 4)
			r->rax = v;
		else
			r->rax = (r->rax & ~((1ull << (8 * size)) - 1)) | v;
	} else {
		enum vmx_exit_action act = io_write(vcpu, port, size, (uint32_t)r->rax);

		if (unlikely(act != VMX_EXIT_RESUME))
			return act;
	}
	vmx_skip_instruction();
	/* The 8259s' INT may have changed (an EOI, a mask, a new count). */
	if (unlikely(platform_legacy_port(port, size)))
		vmx_legacy_irq_update(vcpu);
	return VMX_EXIT_RESUME;
}
