// SPDX-License-Identifier: GPL-2.0-only
/*
 * I/O instruction exits (SDM Vol. 3C 28.2.1 Table 28-5 for the exit
 * qualification, 28.2.5 Table 28-8 for the instruction information of
 * INS/OUTS): IN/OUT with DX or an immediate, and INS/OUTS with and
 * without REP, on the ports the profile traps (platform.c emulates them).
 */
#include "arch_bits.h"
#include "arch_checks.h"
#include "compiler.h"
#include "exit_handlers.h"
#include "page_alloc.h"
#include "platform.h"
#include "spinlock.h"
#include "string.h"
#include "vm.h"
#include "vmcs_fields.h"
#include "vcpu_arch.h"
#include "vcpu_stop.h"
#include "events.h"
#include "vcpu_regs.h"
#include "legacy_irq.h"
#include "guest_mem.h"
#include "vmx_controls_bits.h"

/* Segment bases, limits, access rights by the instruction-information encoding (0 ES .. 5 GS). */
static const enum vmcs_field segment_base[6] = {
	GUEST_ES_BASE, GUEST_CS_BASE, GUEST_SS_BASE, GUEST_DS_BASE, GUEST_FS_BASE, GUEST_GS_BASE,
};
static const enum vmcs_field segment_limit[6] = {
	GUEST_ES_LIMIT, GUEST_CS_LIMIT, GUEST_SS_LIMIT, GUEST_DS_LIMIT, GUEST_FS_LIMIT,
	GUEST_GS_LIMIT,
};
static const enum vmcs_field segment_ar[6] = {
	GUEST_ES_AR_BYTES, GUEST_CS_AR_BYTES, GUEST_SS_AR_BYTES, GUEST_DS_AR_BYTES,
	GUEST_FS_AR_BYTES, GUEST_GS_AR_BYTES,
};

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
static __attribute__((__always_inline__)) inline enum vmx_exit_action
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
 * One element of a string I/O instruction in guest memory: the
 * guest-physical address of its bytes in the first page and, when it
 * crosses a page, in the second.
 */
struct io_element {
	uint64_t gpa[2];
	unsigned int first;	/* bytes in the first page */
};

/*
 * Translate the element of @size bytes at @gla as the CPU would for the
 * access (SDM Vol. 3A 4.7): on a #PF, @cr2 and @err are what the CPU
 * would report (the linear address that faulted, the error code).
 */
static enum guest_walk io_element_walk(uint64_t gla, unsigned int size, unsigned int access,
				       uint64_t amask_linear, struct io_element *el,
				       uint64_t *cr2, uint32_t *err)
{
	uint64_t page_left = PAGE_SIZE - (gla & (PAGE_SIZE - 1));
	enum guest_walk w;

	el->first = page_left < size ? (unsigned int)page_left : size;
	*cr2 = gla;
	w = guest_linear_walk(gla, access, &el->gpa[0], err);
	el->gpa[1] = el->gpa[0] + el->first;	/* unused (0 bytes) unless it crosses */
	if (w != GUEST_WALK_OK || el->first == size)
		return w;
	*cr2 = (gla + el->first) & amask_linear;
	return guest_linear_walk(*cr2, access, &el->gpa[1], err);
}

/* The element's bytes are guest RAM, not device memory or the hypervisor's. */
static bool io_element_ram(const struct io_element *el, unsigned int size)
{
	return guest_phys_ok(el->gpa[0], el->first) &&
	       guest_phys_ok(el->gpa[1], size - el->first);
}

static void io_element_copy(const struct io_element *el, void *buf, unsigned int size, bool to_guest)
{
	uint8_t *b = buf;

	if (to_guest) {
		memcpy(phys_to_virt(el->gpa[0]), b, el->first);
		memcpy(phys_to_virt(el->gpa[1]), b + el->first, size - el->first);
	} else {
		memcpy(b, phys_to_virt(el->gpa[0]), el->first);
		memcpy(b + el->first, phys_to_virt(el->gpa[1]), size - el->first);
	}
}

/*
 * INS/OUTS.  The address size and, for OUTS, the segment come from the
 * instruction information; INS always writes ES:(E/R)DI.  Each element
 * is checked against its segment first, as the CPU checks it (type and
 * limit outside 64-bit mode, canonical addresses in it; SDM Vol. 3A 5.3):
 * a violation is the guest's #GP(0), or #SS(0) through SS, with the
 * elements before it done, as a REP instruction leaves them.  Then it
 * goes through the guest's paging (a user access at CPL 3): a page not
 * present or not permitted is the guest's #PF with the CPU's error code
 * and CR2, again with the elements before it done.  An INS element is
 * translated before the port is read, so a faulting INS consumes nothing
 * from the device and its restart reads the value the fault would have
 * lost.  An element in device memory or behind a paging structure
 * outside guest RAM stops the guest.  Not inlined: its frame and its
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
	bool long_mode = vcpu_in_64bit_mode(vcpu);
	bool pe = vmcs_read(CR0_READ_SHADOW) & X86_CR0_PE;
	bool user = ((vmcs_read32(GUEST_SS_AR_BYTES) & VMX_AR_DPL_MASK) >> VMX_AR_DPL_SHIFT) == 3;
	unsigned int access = (in ? GUEST_ACCESS_WRITE : 0) | (user ? GUEST_ACCESS_USER : 0);
	uint32_t ar, limit;
	uint64_t base, cr2 = 0;

	if (seg > 5)
		return vcpu_stop(vcpu, "string I/O with segment %u", seg);
	base = vmcs_read(segment_base[seg]);
	ar = vmcs_read32(segment_ar[seg]);
	limit = vmcs_read32(segment_limit[seg]);
	while (count) {
		uint64_t gla = base + (*idx & amask);
		struct io_element el;
		enum guest_walk w;
		uint32_t v = 0, err;

		if (!batch--)
			return VMX_EXIT_RESUME;	/* RIP unchanged: the REP goes on */
		if (long_mode ? !is_canonical_address(gla) || !is_canonical_address(gla + size - 1)
			      : seg_check_access(ar, limit, *idx & amask, size, in, pe) != SEG_OK) {
			if (seg == VMX_SEG_SS)
				vmx_inject_exception(vcpu, X86_EXC_SS, true, 0);
			else
				vmx_inject_gp(vcpu);
			return VMX_EXIT_RESUME;
		}

		/* Outside 64-bit mode the linear address wraps at 4 GiB. */
		if (asz != 2)
			gla &= 0xffffffffull;
		w = io_element_walk(gla, size, access, asz != 2 ? 0xffffffffull : ~0ull, &el, &cr2,
				    &err);
		if (w == GUEST_WALK_PAGE_FAULT) {
			write_cr2(cr2);
			vmx_inject_exception(vcpu, X86_EXC_PF, true, err);
			return VMX_EXIT_RESUME;
		}
		if (w != GUEST_WALK_OK || !io_element_ram(&el, size))
			goto unreachable;
		if (in) {
			v = io_platform_read(vcpu, port, size);
			io_element_copy(&el, &v, size, true);
		} else {
			enum vmx_exit_action act;

			io_element_copy(&el, &v, size, false);
			act = io_write(vcpu, port, size, v);
			if (act != VMX_EXIT_RESUME)
				return act;
		}
		*idx = (*idx & ~amask) | ((*idx + step) & amask);
		count--;
		if (rep)
			r->rcx = (r->rcx & ~amask) | count;
	}
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
unreachable:
	return vcpu_stop(vcpu, "%s of port %#x: guest address %#llx is not guest RAM",
			 in ? "INS" : "OUTS", port, (unsigned long long)cr2);
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
