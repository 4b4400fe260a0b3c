// SPDX-License-Identifier: GPL-2.0-only
/*
 * Emulated MMIO (mmio.h): the instruction at the guest's RIP that touched
 * a page the hypervisor answers, decoded by x86_decode.c and executed
 * here against the guest-physical address space as the guest sees it
 * (vmx_phys_read(), vmx_phys_write(): RAM, the local APIC page, the I/O
 * APIC and HPET pages, the MMIO test page, unclaimed addresses).  Its own
 * file, below the pages' owners: ept_exits.c, ioapic_exits.c and
 * vlapic_exits.c answer the accesses, io.c's string I/O reaches guest
 * memory through the same element walk.
 */
#include "arch_bits.h"
#include "runtime/vcpu/arch_checks.h"
#include "runtime/host/boot_info.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "lib/format.h"
#include "runtime/host/layout.h"
#include "arch/vmx/mmio.h"
#include "runtime/host/page_alloc.h"
#include "runtime/devices/platform.h"
#include "runtime/host/spinlock.h"
#include "lib/string.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "profile.h"		/* generated per profile: PROFILE_APIC_VIRTUAL */
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/events.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/guest_mem.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/vlapic_exits.h"
#include "runtime/vm/vmm.h"
#include "vmx_controls_bits.h"
#include "runtime/vcpu/x86_decode.h"

uint64_t vmx_guest_rip_linear(void)
{
	uint64_t rip = vmcs_read(GUEST_RIP) + vmcs_read(GUEST_CS_BASE);

	if (!(vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE))
		rip &= 0xffffffffull;
	return rip;
}

static enum x86_mode guest_code_mode(void)
{
	uint32_t cs_ar = vmcs_read32(GUEST_CS_AR_BYTES);

	if ((vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE) && (cs_ar & VMX_AR_L))
		return X86_MODE_64;
	return (cs_ar & VMX_AR_DB) ? X86_MODE_32 : X86_MODE_16;
}

/* --- the guest-physical address space, as the guest reaches it ---------------- */

static bool in_hv_region(uint64_t gpa, unsigned int size)
{
	const struct boot_info *bi = boot_info();

	return gpa < bi->hv_end && gpa + size > bi->hv_start;
}

static bool unclaimed_write_reported;

/*
 * The emulated device pages (the I/O APIC, the HPET) are one machine's,
 * shared by every vCPU: a read-modify-write of theirs (LOCK ADD, XCHG,
 * CMPXCHG, BTS... on IOWIN) holds this lock from its read to its write,
 * and every other access to them waits for it, so no vCPU's access lands
 * in between (SDM Vol. 3A 9.1.2.2: a locked operation is atomic).  The
 * device's own state has the VM's platform_lock inside this one.  One
 * lock for the one VM exitplan runs, as vm_ioapic is (ioapic_exits.c).
 */
static spinlock_t device_rmw_lock = SPINLOCK_INIT;
#define DEVICE_RMW_NOBODY	(~0u)
static unsigned int device_rmw_owner = DEVICE_RMW_NOBODY;

static enum vmx_exit_action device_access(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
					  uint64_t *v, bool write)
{
	/* Only this vCPU ever stores its own id there: a stale value is never its id. */
	bool mine = READ_ONCE(device_rmw_owner) == vcpu->id;
	enum vmx_exit_action act;

	if (!mine)
		spin_lock(&device_rmw_lock);
	act = write ? vmx_device_page_write(vcpu, gpa, size, *v)
		    : vmx_device_page_read(vcpu, gpa, size, v);
	if (!mine)
		spin_unlock(&device_rmw_lock);
	return act;
}

/* An access the guest's EPT maps (RAM, a ROM, a granted device): made as the guest makes it. */
static void mapped_access(uint64_t gpa, unsigned int size, uint64_t *v, bool write)
{
	volatile void *p = phys_to_virt(gpa);

	switch (size) {
	case 1:
		if (write) *(volatile uint8_t *)p = (uint8_t)*v; else *v = *(volatile uint8_t *)p;
		break;
	case 2:
		if (write) *(volatile uint16_t *)p = (uint16_t)*v; else *v = *(volatile uint16_t *)p;
		break;
	case 4:
		if (write) *(volatile uint32_t *)p = (uint32_t)*v; else *v = *(volatile uint32_t *)p;
		break;
	default:
		if (write) *(volatile uint64_t *)p = *v; else *v = *(volatile uint64_t *)p;
		break;
	}
}

static enum vmx_exit_action phys_access(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
					uint64_t *v, bool write)
{
	unsigned int offset = gpa & (PAGE_SIZE - 1);

	if ((gpa & ~(uint64_t)(PAGE_SIZE - 1)) == vmx_xapic_page()) {
		if (PROFILE_APIC_VIRTUAL)
			return write ? vmx_vlapic_mmio_write(vcpu, offset, size, (uint32_t)*v)
				     : vmx_vlapic_mmio_read(vcpu, offset, size, v);
		if (write)
			return vmx_xapic_write(vcpu, offset, (uint32_t)*v, size);
		vmx_xapic_read(vcpu, offset, size, v);
		return VMX_EXIT_RESUME;
	}
	if (vmx_device_page(gpa))
		return device_access(vcpu, gpa, size, v, write);
	if (platform_mmio_test_page(gpa)) {
		/* exitplan's own test device defines aligned 32-bit accesses only. */
		if (size != 4 || (gpa & 3))
			return vcpu_stop(vcpu, "%u-byte %s of the MMIO test page at %#llx: only aligned "
					 "32-bit accesses are defined (RIP %#llx)", size,
					 write ? "write" : "read", (unsigned long long)gpa,
					 (unsigned long long)vmcs_read(GUEST_RIP));
		if (!write)
			*v = PLATFORM_MMIO_TEST_VALUE;	/* stores are ignored, like a ROM's */
		return VMX_EXIT_RESUME;
	}
	if (in_hv_region(gpa, size))
		return vcpu_stop(vcpu, "EPT violation: %s of hypervisor memory at GPA %#llx (RIP %#llx)",
				 write ? "write" : "read", (unsigned long long)gpa,
				 (unsigned long long)vmcs_read(GUEST_RIP));
	if (guest_phys_mapped(gpa, size, write)) {
		mapped_access(gpa, size, v, write);
		return VMX_EXIT_RESUME;
	}
	/*
	 * Nothing the guest's machine has claims it (the VGA window, a PCI
	 * hole, above RAM; a write to a read-only mapping): as a PC answers
	 * a master abort, reads all ones and the write goes nowhere.
	 */
	if (!write) {
		*v = ~0ull;
	} else if (!__atomic_exchange_n(&unclaimed_write_reported, true, __ATOMIC_RELAXED)) {
		printk("exitplan: guest write of %#llx to GPA %#llx dropped (no device the guest is "
		       "granted claims it); later ones are not reported\n",
		       (unsigned long long)(size == 8 ? *v : *v & ((1ull << (8 * size)) - 1)),
		       (unsigned long long)gpa);
	}
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action vmx_phys_read(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
				   uint64_t *v)
{
	enum vmx_exit_action act;

	*v = 0;
	act = phys_access(vcpu, gpa, size, v, false);
	if (size < 8)
		*v &= (1ull << (8 * size)) - 1;
	return act;
}

enum vmx_exit_action vmx_phys_write(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
				    uint64_t v)
{
	return phys_access(vcpu, gpa, size, &v, true);
}

/* --- string elements: segment, paging, and the two pages of one ------------------ */

static const enum vmcs_field seg_base_field[6] = {
	GUEST_ES_BASE, GUEST_CS_BASE, GUEST_SS_BASE, GUEST_DS_BASE, GUEST_FS_BASE, GUEST_GS_BASE,
};
static const enum vmcs_field seg_limit_field[6] = {
	GUEST_ES_LIMIT, GUEST_CS_LIMIT, GUEST_SS_LIMIT, GUEST_DS_LIMIT, GUEST_FS_LIMIT,
	GUEST_GS_LIMIT,
};
static const enum vmcs_field seg_ar_field[6] = {
	GUEST_ES_AR_BYTES, GUEST_CS_AR_BYTES, GUEST_SS_AR_BYTES, GUEST_DS_AR_BYTES,
	GUEST_FS_AR_BYTES, GUEST_GS_AR_BYTES,
};

void vmx_string_seg_init(struct vcpu *vcpu, struct vmx_string_seg *sg, unsigned int seg)
{
	sg->seg = seg;
	sg->long_mode = vcpu_in_64bit_mode(vcpu);
	sg->pe = vmcs_read(CR0_READ_SHADOW) & X86_CR0_PE;
	sg->user = ((vmcs_read32(GUEST_SS_AR_BYTES) & VMX_AR_DPL_MASK) >> VMX_AR_DPL_SHIFT) == 3;
	sg->base = vmcs_read(seg_base_field[seg]);
	sg->limit = vmcs_read32(seg_limit_field[seg]);
	sg->ar = vmcs_read32(seg_ar_field[seg]);
	/* In 64-bit mode only FS and GS have a base (SDM Vol. 1 3.3.7.1). */
	if (sg->long_mode && seg != X86_SEG_FS && seg != X86_SEG_GS)
		sg->base = 0;
}

enum vmx_elem_result vmx_string_element(struct vcpu *vcpu, const struct vmx_string_seg *sg,
					uint64_t offset, unsigned int size, bool write,
					struct vmx_element *el)
{
	unsigned int access = (write ? GUEST_ACCESS_WRITE : 0) | (sg->user ? GUEST_ACCESS_USER : 0);
	uint64_t gla, page_left, cr2;
	uint32_t err = 0;
	enum guest_walk w;

	/* The segment first, as the CPU checks it (SDM Vol. 3A 5.3; canonical in 64-bit mode). */
	if (sg->long_mode) {
		gla = sg->base + offset;
		if (!is_canonical_address(gla) || !is_canonical_address(gla + size - 1))
			goto segment_fault;
	} else {
		if (seg_check_access(sg->ar, sg->limit, offset, size, write, sg->pe) != SEG_OK)
			goto segment_fault;
		gla = (sg->base + offset) & 0xffffffffull;	/* linear addresses wrap at 4 GiB */
	}
	page_left = PAGE_SIZE - (gla & (PAGE_SIZE - 1));
	el->first = page_left < size ? (unsigned int)page_left : size;
	cr2 = gla;
	w = guest_linear_walk(gla, access, &el->gpa[0], &err);
	el->gpa[1] = el->gpa[0] + el->first;
	if (w == GUEST_WALK_OK && el->first < size) {
		cr2 = (gla + el->first) & (sg->long_mode ? ~0ull : 0xffffffffull);
		w = guest_linear_walk(cr2, access, &el->gpa[1], &err);
	}
	if (w == GUEST_WALK_PAGE_FAULT) {
		write_cr2(cr2);
		vmx_inject_exception(vcpu, X86_EXC_PF, true, err);
		return VMX_ELEM_FAULT;
	}
	if (w != GUEST_WALK_OK) {
		vcpu_stop(vcpu, "%s string element at linear address %#llx: the guest's paging "
			  "structures are not in guest RAM (RIP %#llx)", write ? "write of" : "read of",
			  (unsigned long long)cr2, (unsigned long long)vmcs_read(GUEST_RIP));
		return VMX_ELEM_STOP;
	}
	el->size = size;
	return VMX_ELEM_OK;

segment_fault:
	if (sg->seg == X86_SEG_SS)
		vmx_inject_exception(vcpu, X86_EXC_SS, true, 0);
	else
		vmx_inject_gp(vcpu);
	return VMX_ELEM_FAULT;
}

enum vmx_exit_action vmx_element_read(struct vcpu *vcpu, const struct vmx_element *el,
				      uint64_t *v)
{
	uint64_t lo = 0, hi = 0;
	enum vmx_exit_action act;

	/* RAM, the common case of string I/O, is copied without the device dispatch. */
	if (guest_phys_ok(el->gpa[0], el->first) && guest_phys_ok(el->gpa[1], el->size - el->first)) {
		*v = 0;
		memcpy(&lo, phys_to_virt(el->gpa[0]), el->first);
		memcpy(&hi, phys_to_virt(el->gpa[1]), el->size - el->first);
		*v = lo | (el->first < 8 ? hi << (8 * el->first) : 0);
		return VMX_EXIT_RESUME;
	}
	act = vmx_phys_read(vcpu, el->gpa[0], el->first, &lo);
	if (act == VMX_EXIT_RESUME && el->first < el->size)
		act = vmx_phys_read(vcpu, el->gpa[1], el->size - el->first, &hi);
	*v = lo | (el->first < 8 ? hi << (8 * el->first) : 0);
	return act;
}

enum vmx_exit_action vmx_element_write(struct vcpu *vcpu, const struct vmx_element *el,
				       uint64_t v)
{
	enum vmx_exit_action act;

	if (guest_phys_ok(el->gpa[0], el->first) && guest_phys_ok(el->gpa[1], el->size - el->first)) {
		memcpy(phys_to_virt(el->gpa[0]), &v, el->first);
		v >>= 8 * el->first % 64;
		memcpy(phys_to_virt(el->gpa[1]), &v, el->size - el->first);
		return VMX_EXIT_RESUME;
	}
	act = vmx_phys_write(vcpu, el->gpa[0], el->first, v);
	if (act == VMX_EXIT_RESUME && el->first < el->size)
		act = vmx_phys_write(vcpu, el->gpa[1], el->size - el->first, v >> (8 * el->first));
	return act;
}

/* --- executing what x86_decode() found ---------------------------------------- */

static uint64_t sized(uint64_t v, unsigned int size)
{
	return size >= 8 ? v : v & ((1ull << (8 * size)) - 1);
}

static uint64_t reg_read(struct vcpu *vcpu, unsigned int reg, bool high, unsigned int size)
{
	uint64_t v = vcpu_gpr_read(vcpu, reg);

	return sized(high ? v >> 8 : v, size);
}

/* 32-bit results zero-extend; 8- and 16-bit ones merge (SDM Vol. 1 3.4.1.1). */
static void reg_write(struct vcpu *vcpu, unsigned int reg, bool high, unsigned int size,
		      uint64_t v)
{
	if (size < 4 || high) {
		uint64_t old = vcpu_gpr_read(vcpu, reg);

		if (high)
			v = (old & ~0xff00ull) | ((v & 0xff) << 8);
		else if (size == 1)
			v = (old & ~0xffull) | (v & 0xff);
		else
			v = (old & ~0xffffull) | (v & 0xffff);
	} else if (size == 4) {
		v &= 0xffffffffull;
	}
	vcpu_gpr_write(vcpu, reg, v);
}

/* The instruction completes: past it, out of any STI or MOV-SS shadow. */
static void complete(unsigned int len)
{
	vmx_advance_rip(len);
	/* An event the exit interrupted goes in first (SDM 28.2.4). */
	vmx_reinject_idt_vectoring();
}

static void set_flags(uint64_t rflags)
{
	vmcs_write(GUEST_RFLAGS, rflags);
}

static uint64_t extend(uint64_t v, unsigned int from, enum x86_ext ext)
{
	if (ext == X86_EXT_SIGN && from < 8 && ((v >> (8 * from - 1)) & 1))
		v |= ~0ull << (8 * from);
	return v;
}

/* Elements of a REP string instruction done per exit (as io.c's string I/O). */
#define MMIO_STRING_BATCH	4096

static enum vmx_exit_action emulate_string(struct vcpu *vcpu, const struct x86_insn *in)
{
	struct guest_regs *r = &vcpu->regs;
	uint64_t amask = in->addr_size == 2 ? 0xffffull : in->addr_size == 4 ? 0xffffffffull : ~0ull;
	int64_t step = (vmcs_read(GUEST_RFLAGS) & X86_RFLAGS_DF) ? -(int64_t)in->size
								  : (int64_t)in->size;
	unsigned int src_seg = in->seg_override >= 0 ? (unsigned int)in->seg_override : X86_SEG_DS;
	/* F2 repeats MOVS, STOS and LODS as F3 does (they have no condition to test). */
	bool rep = in->rep || in->repne;
	uint64_t count = rep ? (r->rcx & amask) : 1;
	struct vmx_string_seg ssg, dsg;

	vmx_string_seg_init(vcpu, &ssg, src_seg);
	vmx_string_seg_init(vcpu, &dsg, X86_SEG_ES);
	for (unsigned int batch = 0; count; batch++) {
		struct vmx_element src, dst;
		enum vmx_elem_result er;
		enum vmx_exit_action act;
		uint64_t v = 0;

		if (batch == MMIO_STRING_BATCH)
			return VMX_EXIT_RESUME;	/* RIP unchanged: the REP goes on after the next entry */
		if (in->op != X86_OP_STOS) {
			er = vmx_string_element(vcpu, &ssg, r->rsi & amask, in->size, false, &src);
			if (er != VMX_ELEM_OK)
				return er == VMX_ELEM_FAULT ? VMX_EXIT_RESUME : VMX_EXIT_STOP;
		}
		if (in->op != X86_OP_LODS) {
			er = vmx_string_element(vcpu, &dsg, r->rdi & amask, in->size, true, &dst);
			if (er != VMX_ELEM_OK)
				return er == VMX_ELEM_FAULT ? VMX_EXIT_RESUME : VMX_EXIT_STOP;
		}
		if (in->op == X86_OP_STOS) {
			v = sized(r->rax, in->size);
		} else {
			act = vmx_element_read(vcpu, &src, &v);
			if (act != VMX_EXIT_RESUME)
				return act;
			r->rsi = (r->rsi & ~amask) | ((r->rsi + step) & amask);
		}
		if (in->op == X86_OP_LODS)
			reg_write(vcpu, 0, false, in->size, v);
		else
			r->rdi = (r->rdi & ~amask) | ((r->rdi + step) & amask);
		count--;
		if (rep)
			r->rcx = (r->rcx & ~amask) | count;
		/* The last element completes the instruction before its write posts anything. */
		if (!count)
			complete(in->len);
		if (in->op != X86_OP_LODS) {
			act = vmx_element_write(vcpu, &dst, v);
			if (act != VMX_EXIT_RESUME)
				return act;
		}
	}
	return VMX_EXIT_RESUME;
}

/*
 * CMPS and SCAS: the flags of seg:rSI - ES:rDI (CMPS) or rAX - ES:rDI
 * (SCAS), nothing written.  REPE (F3) goes on while ZF is set, REPNE
 * (F2) while it is clear, each until rCX is 0 (SDM Vol. 2B REP).
 */
static enum vmx_exit_action emulate_compare_string(struct vcpu *vcpu, const struct x86_insn *in)
{
	struct guest_regs *r = &vcpu->regs;
	uint64_t amask = in->addr_size == 2 ? 0xffffull : in->addr_size == 4 ? 0xffffffffull : ~0ull;
	uint64_t rflags = vmcs_read(GUEST_RFLAGS);
	int64_t step = (rflags & X86_RFLAGS_DF) ? -(int64_t)in->size : (int64_t)in->size;
	unsigned int src_seg = in->seg_override >= 0 ? (unsigned int)in->seg_override : X86_SEG_DS;
	bool rep = in->rep || in->repne;
	uint64_t count = rep ? (r->rcx & amask) : 1;
	struct vmx_string_seg ssg, dsg;
	enum vmx_exit_action act = VMX_EXIT_RESUME;

	vmx_string_seg_init(vcpu, &ssg, src_seg);
	vmx_string_seg_init(vcpu, &dsg, X86_SEG_ES);
	for (unsigned int batch = 0; count; batch++) {
		struct vmx_element src, dst;
		enum vmx_elem_result er;
		uint64_t a, b;

		if (batch == MMIO_STRING_BATCH)
			break;	/* RIP unchanged: the REP goes on after the next entry */
		if (in->op == X86_OP_CMPS) {
			er = vmx_string_element(vcpu, &ssg, r->rsi & amask, in->size, false, &src);
			if (er != VMX_ELEM_OK)
				return er == VMX_ELEM_FAULT ? VMX_EXIT_RESUME : VMX_EXIT_STOP;
		}
		er = vmx_string_element(vcpu, &dsg, r->rdi & amask, in->size, false, &dst);
		if (er != VMX_ELEM_OK)
			return er == VMX_ELEM_FAULT ? VMX_EXIT_RESUME : VMX_EXIT_STOP;
		if (in->op == X86_OP_CMPS) {
			act = vmx_element_read(vcpu, &src, &a);
			if (act != VMX_EXIT_RESUME)
				return act;
		} else {
			a = sized(r->rax, in->size);
		}
		act = vmx_element_read(vcpu, &dst, &b);
		if (act != VMX_EXIT_RESUME)
			return act;
		x86_alu(X86_ALU_CMP, in->size, a, b, &rflags);
		vmcs_write(GUEST_RFLAGS, rflags);
		if (in->op == X86_OP_CMPS)
			r->rsi = (r->rsi & ~amask) | ((r->rsi + step) & amask);
		r->rdi = (r->rdi & ~amask) | ((r->rdi + step) & amask);
		count--;
		if (rep) {
			r->rcx = (r->rcx & ~amask) | count;
			if (in->rep ? !(rflags & X86_RFLAGS_ZF) : (rflags & X86_RFLAGS_ZF))
				count = 0;	/* the condition ends the repeat */
		}
		if (!count)
			complete(in->len);
	}
	return act;
}

/*
 * The instruction's memory operand: at @gpa within one page, or, when
 * @split is not NULL, in its two pieces (the operand crosses a page;
 * each piece is accessed as hardware splits it).
 */
static enum vmx_exit_action mem_read(struct vcpu *vcpu, uint64_t gpa,
				     const struct vmx_element *split, unsigned int size, uint64_t *v)
{
	if (split)
		return vmx_element_read(vcpu, split, v);
	return vmx_phys_read(vcpu, gpa, size, v);
}

static enum vmx_exit_action mem_write(struct vcpu *vcpu, uint64_t gpa,
				      const struct vmx_element *split, unsigned int size, uint64_t v)
{
	if (split)
		return vmx_element_write(vcpu, split, v);
	return vmx_phys_write(vcpu, gpa, size, v);
}

/*
 * XMM register @n, the guest's: the hypervisor itself never uses the SSE
 * registers (-mgeneral-regs-only), so during an exit they hold the
 * running vCPU's values (vcpu_switch.c saves them only when it switches).
 * The host's CR4.OSFXSR, CR0.TS and CR0.EM are set for the access alone.
 */
#define XMM_CASE(k, insn, p)	case k: asm volatile(insn " %%xmm" #k : : "r"(p) : "memory"); break;
#define XMM_CASES(insn, p)								XMM_CASE(0, insn, p) XMM_CASE(1, insn, p) XMM_CASE(2, insn, p) XMM_CASE(3, insn, p)		XMM_CASE(4, insn, p) XMM_CASE(5, insn, p) XMM_CASE(6, insn, p) XMM_CASE(7, insn, p)		XMM_CASE(8, insn, p) XMM_CASE(9, insn, p) XMM_CASE(10, insn, p) XMM_CASE(11, insn, p)		XMM_CASE(12, insn, p) XMM_CASE(13, insn, p) XMM_CASE(14, insn, p) XMM_CASE(15, insn, p)

static void xmm_access(unsigned int n, uint64_t v[2], bool write)
{
	uint64_t cr0 = read_cr0(), cr4 = read_cr4();

	if (!(cr4 & X86_CR4_OSFXSR))
		write_cr4(cr4 | X86_CR4_OSFXSR);
	if (cr0 & (X86_CR0_TS | X86_CR0_EM))
		write_cr0(cr0 & ~(X86_CR0_TS | X86_CR0_EM));
	if (write) {
		switch (n & 15) { XMM_CASES("movdqu (%0),", v) }
	} else {
		/* AT&T: movdqu %xmmN, (p) -- the register first. */
		switch (n & 15) {
#define XMM_ST(k) case k: asm volatile("movdqu %%xmm" #k ", (%0)" : : "r"(v) : "memory"); break;
		XMM_ST(0) XMM_ST(1) XMM_ST(2) XMM_ST(3) XMM_ST(4) XMM_ST(5) XMM_ST(6) XMM_ST(7)
		XMM_ST(8) XMM_ST(9) XMM_ST(10) XMM_ST(11) XMM_ST(12) XMM_ST(13) XMM_ST(14) XMM_ST(15)
#undef XMM_ST
		}
	}
	if (cr0 & (X86_CR0_TS | X86_CR0_EM))
		write_cr0(cr0);
	if (!(cr4 & X86_CR4_OSFXSR))
		write_cr4(cr4);
}

/*
 * An SSE move: 4, 8 or 16 bytes (two 8-byte accesses, low first, as
 * Bochs makes them); a load zero-extends into the whole XMM register
 * (MOVSS, MOVSD, MOVD, MOVQ from memory clear the rest; SDM Vol. 2B).
 * Alignment (MOVAPS, MOVDQA...) was checked by the CPU before its access.
 */
static enum vmx_exit_action emulate_sse(struct vcpu *vcpu, const struct x86_insn *in,
					uint64_t gpa)
{
	uint64_t x[2] = { 0, 0 };
	unsigned int part = in->size > 8 ? 8 : in->size;
	enum vmx_exit_action act;

	if (in->op == X86_OP_SSE_LOAD) {
		for (unsigned int k = 0; k * part < in->size; k++) {
			act = vmx_phys_read(vcpu, gpa + k * part, part, &x[k]);
			if (act != VMX_EXIT_RESUME)
				return act;
		}
		xmm_access(in->reg, x, true);
		complete(in->len);
		return VMX_EXIT_RESUME;
	}
	xmm_access(in->reg, x, false);
	complete(in->len);
	for (unsigned int k = 0; k * part < in->size; k++) {
		act = vmx_phys_write(vcpu, gpa + k * part, part, part == 8 ? x[k] :
				     x[0] & ((1ull << (8 * part)) - 1));
		if (act != VMX_EXIT_RESUME)
			return act;
	}
	return VMX_EXIT_RESUME;
}

/*
 * LLDT m16, LTR m16 with the selector on MMIO (SDM Vol. 2A LLDT, LTR):
 * every fault the selector and its GDT descriptor give is delivered as
 * the CPU delivers it -- #GP(0) above CPL 0; #GP(selector) for one in
 * the LDT, past the GDT's limit, or not an LDT (available TSS); #NP
 * (selector) for one not present; a null selector loads a null LDTR
 * (LLDT) or is #GP(0) (LTR).  A selector that would load (a valid LDT
 * or TSS) stops the guest with a report: loading the register itself is
 * not emulated (no kernel keeps its descriptors' selectors in MMIO).
 */
static enum vmx_exit_action emulate_load_syssel(struct vcpu *vcpu, const struct x86_insn *in,
						uint64_t gpa)
{
	bool ltr = in->sub == 3;
	uint64_t sel, desc = 0;
	unsigned int cpl = (vmcs_read32(GUEST_SS_AR_BYTES) & VMX_AR_DPL_MASK) >> VMX_AR_DPL_SHIFT;
	unsigned int type;
	enum vmx_exit_action act;

	if (cpl) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	act = vmx_phys_read(vcpu, gpa, 2, &sel);
	if (act != VMX_EXIT_RESUME)
		return act;
	if (!(sel & ~3ull) && !ltr)
		return vcpu_stop(vcpu, "LLDT of a null selector from MMIO at GPA %#llx: loading "
				 "the LDTR is not emulated (RIP %#llx)", (unsigned long long)gpa,
				 (unsigned long long)vmcs_read(GUEST_RIP));
	if (!(sel & ~3ull) || (sel & 4) || (sel | 7) > vmcs_read32(GUEST_GDTR_LIMIT)) {
		vmx_inject_exception(vcpu, X86_EXC_GP, true, (sel & ~3ull) ? (uint32_t)(sel & 0xfffc)
									   : 0);
		return VMX_EXIT_RESUME;
	}
	if (!guest_read_linear(vmcs_read(GUEST_GDTR_BASE) + (sel & ~7ull), &desc, sizeof(desc)))
		return vcpu_stop(vcpu, "%s from MMIO at GPA %#llx: the GDT's descriptor %#llx is not "
				 "in guest RAM (RIP %#llx)", ltr ? "LTR" : "LLDT",
				 (unsigned long long)gpa, (unsigned long long)sel,
				 (unsigned long long)vmcs_read(GUEST_RIP));
	type = (desc >> 40) & 0x1f;	/* S and the type */
	if (ltr ? (type != 0x09 && type != 0x01) : type != 0x02) {
		vmx_inject_exception(vcpu, X86_EXC_GP, true, (uint32_t)(sel & 0xfffc));
		return VMX_EXIT_RESUME;
	}
	if (!(desc & (1ull << 47))) {
		vmx_inject_exception(vcpu, X86_EXC_NP, true, (uint32_t)(sel & 0xfffc));
		return VMX_EXIT_RESUME;
	}
	return vcpu_stop(vcpu, "%s of selector %#llx from MMIO at GPA %#llx: loading the %s is "
			 "not emulated (RIP %#llx)", ltr ? "LTR" : "LLDT", (unsigned long long)sel,
			 (unsigned long long)gpa, ltr ? "TR" : "LDTR",
			 (unsigned long long)vmcs_read(GUEST_RIP));
}

static uint64_t byte_swap(uint64_t v, unsigned int size)
{
	return size == 2 ? __builtin_bswap16((uint16_t)v) : size == 4 ? __builtin_bswap32((uint32_t)v)
							  : __builtin_bswap64(v);
}

/* CR0 as the guest reads it: the bits the hypervisor owns from the read shadow. */
static uint64_t guest_cr0(void)
{
	uint64_t mask = vmcs_read(CR0_GUEST_HOST_MASK);

	return (vmcs_read(GUEST_CR0) & ~mask) | (vmcs_read(CR0_READ_SHADOW) & mask);
}

/* The stack's address size: 64-bit mode, else SS.B (SDM Vol. 1 6.2.3). */
static uint64_t stack_mask(struct vcpu *vcpu)
{
	if (vcpu_in_64bit_mode(vcpu))
		return ~0ull;
	return (vmcs_read32(GUEST_SS_AR_BYTES) & VMX_AR_DB) ? 0xffffffffull : 0xffffull;
}

/*
 * PUSH m (@push) or POP m: one element of the stack at SS:rSP - size
 * (PUSH) or SS:rSP (POP), through the guest's segment and paging as the
 * CPU makes it (a fault is delivered, nothing changed).  POP's operand
 * address was formed with rSP already incremented (SDM Vol. 2B POP): it
 * is the one the exit gives.
 */
static enum vmx_exit_action emulate_push_pop(struct vcpu *vcpu, const struct x86_insn *in,
					     uint64_t gpa, const struct vmx_element *split, bool push)
{
	uint64_t smask = stack_mask(vcpu), rsp = vcpu_gpr_read(vcpu, 4), v = 0;
	uint64_t top = push ? (rsp - in->size) & smask : rsp & smask;
	struct vmx_string_seg ss;
	struct vmx_element el;
	enum vmx_elem_result er;
	enum vmx_exit_action act;

	vmx_string_seg_init(vcpu, &ss, X86_SEG_SS);
	er = vmx_string_element(vcpu, &ss, top, in->size, push, &el);
	if (er != VMX_ELEM_OK)
		return er == VMX_ELEM_FAULT ? VMX_EXIT_RESUME : VMX_EXIT_STOP;
	act = push ? mem_read(vcpu, gpa, split, in->size, &v) : vmx_element_read(vcpu, &el, &v);
	if (act != VMX_EXIT_RESUME)
		return act;
	rsp = push ? top : (rsp & smask) + in->size;
	vcpu_gpr_write(vcpu, 4, (vcpu_gpr_read(vcpu, 4) & ~smask) | (rsp & smask));
	complete(in->len);
	return push ? vmx_element_write(vcpu, &el, v) : mem_write(vcpu, gpa, split, in->size, v);
}

/* MUL, IMUL, DIV, IDIV m: rDX:rAX (AX for a byte) with the operand; #DE as hardware. */
static enum vmx_exit_action emulate_muldiv(struct vcpu *vcpu, const struct x86_insn *in,
					   uint64_t old, uint64_t rflags)
{
	bool byte = in->size == 1;
	uint64_t lo = reg_read(vcpu, 0, false, in->size);
	uint64_t hi = byte ? reg_read(vcpu, 0, true, 1) : reg_read(vcpu, 2, false, in->size);

	if (!x86_muldiv(in->sub, in->size, &lo, &hi, old, &rflags)) {
		vmx_inject_exception(vcpu, X86_EXC_DE, false, 0);
		return VMX_EXIT_RESUME;
	}
	set_flags(rflags);
	reg_write(vcpu, 0, false, in->size, lo);
	reg_write(vcpu, byte ? 0 : 2, byte, in->size, hi);
	complete(in->len);
	return VMX_EXIT_RESUME;
}

/*
 * CMPXCHG8B m64 / CMPXCHG16B m128: rDX:rAX against the operand; equal:
 * ZF and rCX:rBX is stored, else rDX:rAX gets it and the operand is
 * written back unchanged (SDM Vol. 2A).  CMPXCHG16B's operand is 16-byte
 * aligned (else #GP, which the CPU raises before any access).
 */
static enum vmx_exit_action emulate_cmpxchg8b(struct vcpu *vcpu, const struct x86_insn *in,
					      uint64_t gpa, uint64_t rflags)
{
	unsigned int half = in->size / 2;
	uint64_t m[2], cmp[2], rep[2];
	enum vmx_exit_action act;
	bool eq;

	if (in->size == 16 && (gpa & 15)) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	for (unsigned int k = 0; k < 2; k++) {
		act = vmx_phys_read(vcpu, gpa + k * half, half, &m[k]);
		if (act != VMX_EXIT_RESUME)
			return act;
	}
	cmp[0] = reg_read(vcpu, 0, false, half);
	cmp[1] = reg_read(vcpu, 2, false, half);
	rep[0] = reg_read(vcpu, 3, false, half);
	rep[1] = reg_read(vcpu, 1, false, half);
	eq = m[0] == cmp[0] && m[1] == cmp[1];
	rflags = (rflags & ~X86_RFLAGS_ZF) | (eq ? X86_RFLAGS_ZF : 0);
	set_flags(rflags);
	if (!eq) {
		reg_write(vcpu, 0, false, half, m[0]);
		reg_write(vcpu, 2, false, half, m[1]);
	}
	complete(in->len);
	for (unsigned int k = 0; k < 2; k++) {
		act = vmx_phys_write(vcpu, gpa + k * half, half, eq ? rep[k] : m[k]);
		if (act != VMX_EXIT_RESUME)
			return act;
	}
	return VMX_EXIT_RESUME;
}

static enum vmx_exit_action emulate(struct vcpu *vcpu, const struct x86_insn *in, uint64_t gpa,
				    const struct vmx_element *split)
{
	uint64_t src, rflags, old = 0, res;
	enum vmx_exit_action act;

	/* The MOVs first: the common case (an APIC EOI, a device register) reads no flags. */
	if (in->op == X86_OP_LOAD) {
		act = mem_read(vcpu, gpa, split, in->size, &old);
		if (act != VMX_EXIT_RESUME)
			return act;
		if (in->bswap)
			old = byte_swap(old, in->size);
		reg_write(vcpu, in->reg, in->high_byte, in->reg_size,
			  extend(old, in->size, in->ext));
		complete(in->len);
		return VMX_EXIT_RESUME;
	}
	/* SHLD, SHRD: the immediate is the count; the source is the register. */
	src = in->has_imm && in->op != X86_OP_SHIFTD ? in->imm
						     : reg_read(vcpu, in->reg, in->high_byte, in->reg_size);
	if (in->op == X86_OP_STORE) {
		complete(in->len);
		return mem_write(vcpu, gpa, split, in->size, in->bswap ? byte_swap(src, in->size) : src);
	}
	if (in->op == X86_OP_SMSW) {
		complete(in->len);
		return mem_write(vcpu, gpa, split, 2, guest_cr0() & 0xffff);
	}
	if (in->op == X86_OP_SETCC) {
		bool set = x86_cond(in->sub, vmcs_read(GUEST_RFLAGS));

		complete(in->len);
		return mem_write(vcpu, gpa, split, 1, set);
	}
	if (in->op == X86_OP_PUSH || in->op == X86_OP_POP)
		return emulate_push_pop(vcpu, in, gpa, split, in->op == X86_OP_PUSH);
	if (in->op == X86_OP_CMPXCHG8B)
		return emulate_cmpxchg8b(vcpu, in, gpa, vmcs_read(GUEST_RFLAGS));
	if (in->op == X86_OP_SSE_LOAD || in->op == X86_OP_SSE_STORE)
		return emulate_sse(vcpu, in, gpa);
	if (in->op == X86_OP_LOAD_SYSSEL)
		return emulate_load_syssel(vcpu, in, gpa);
	if (in->op == X86_OP_CMPS || in->op == X86_OP_SCAS)
		return emulate_compare_string(vcpu, in);
	if (in->op >= X86_OP_STOS)
		return emulate_string(vcpu, in);
	act = mem_read(vcpu, gpa, split, in->size, &old);
	if (act != VMX_EXIT_RESUME)
		return act;
	rflags = vmcs_read(GUEST_RFLAGS);
	switch (in->op) {
	case X86_OP_ALU_MEM:
		res = x86_alu(in->alu, in->size, old, src, &rflags);
		set_flags(rflags);
		complete(in->len);
		if (!x86_insn_writes(in))
			return VMX_EXIT_RESUME;
		return mem_write(vcpu, gpa, split, in->size, res);
	case X86_OP_ALU_REG:
		res = x86_alu(in->alu, in->size, src, old, &rflags);
		set_flags(rflags);
		if (in->alu != X86_ALU_CMP)
			reg_write(vcpu, in->reg, in->high_byte, in->reg_size, res);
		complete(in->len);
		return VMX_EXIT_RESUME;
	case X86_OP_XCHG:
		reg_write(vcpu, in->reg, in->high_byte, in->reg_size, old);
		complete(in->len);
		return mem_write(vcpu, gpa, split, in->size, src);
	case X86_OP_XADD:
		res = x86_alu(X86_ALU_ADD, in->size, old, src, &rflags);
		set_flags(rflags);
		reg_write(vcpu, in->reg, in->high_byte, in->reg_size, old);
		complete(in->len);
		return mem_write(vcpu, gpa, split, in->size, res);
	case X86_OP_CMPXCHG: {
		uint64_t acc = reg_read(vcpu, 0, false, in->size);

		x86_alu(X86_ALU_CMP, in->size, acc, old, &rflags);
		set_flags(rflags);
		/* On a mismatch the destination is written back unchanged (SDM Vol. 2A CMPXCHG). */
		if (acc != old)
			reg_write(vcpu, 0, false, in->size, old);
		complete(in->len);
		return mem_write(vcpu, gpa, split, in->size, acc == old ? src : old);
	}
	case X86_OP_BT:
		/* The exit's address is the operand's, a register's bit offset already applied. */
		res = x86_bitop(in->sub, in->size, old, src, &rflags);
		set_flags(rflags);
		complete(in->len);
		return in->sub ? mem_write(vcpu, gpa, split, in->size, res) : VMX_EXIT_RESUME;
	case X86_OP_SHIFT:
	case X86_OP_SHIFTD: {
		unsigned int count = in->count_cl ? (uint8_t)vcpu_gpr_read(vcpu, 1) : (unsigned int)in->imm;

		if (in->op == X86_OP_SHIFT)
			res = x86_shift(in->sub, in->size, old, count, &rflags);
		else
			res = x86_shiftd(in->sub, in->size, old, src, count, &rflags);
		set_flags(rflags);
		complete(in->len);
		/* A masked count of 0 changes nothing: no write reaches the device. */
		if (!(count & (in->size == 8 ? 63 : 31)))
			return VMX_EXIT_RESUME;
		return mem_write(vcpu, gpa, split, in->size, res);
	}
	case X86_OP_MULDIV:
		return emulate_muldiv(vcpu, in, old, rflags);
	case X86_OP_IMUL:
		/* 0F AF: reg = reg * mem; 69, 6B: reg = mem * imm. */
		res = x86_imul(in->size, old, src, &rflags);
		set_flags(rflags);
		reg_write(vcpu, in->reg, false, in->reg_size, res);
		complete(in->len);
		return VMX_EXIT_RESUME;
	case X86_OP_BITSCAN:
		if (x86_bitscan(in->sub, in->size, old, &res, &rflags))
			reg_write(vcpu, in->reg, false, in->reg_size, res);
		set_flags(rflags);
		complete(in->len);
		return VMX_EXIT_RESUME;
	case X86_OP_CMOV:
		/* Not taken, a 32-bit destination still has its upper half cleared (64-bit mode). */
		reg_write(vcpu, in->reg, false, in->reg_size,
			  x86_cond(in->sub, rflags) ? old : reg_read(vcpu, in->reg, false, in->reg_size));
		complete(in->len);
		return VMX_EXIT_RESUME;
	default:
		return VMX_EXIT_RESUME;	/* not reached: x86_decode() gives no other operation */
	}
}

static enum vmx_exit_action refuse(struct vcpu *vcpu, uint64_t gpa, uint64_t q, const char *what,
				   const char *why, const uint8_t *code, unsigned int avail)
{
	char bytes[3 * X86_INSN_MAX + 1];
	unsigned int n = 0;

	bytes[0] = 0;
	for (unsigned int k = 0; k < avail && k < X86_INSN_MAX; k++)
		n += snprintf(bytes + n, sizeof(bytes) - n, k ? " %02x" : "%02x", code[k]);
	return vcpu_stop(vcpu, "%s %s at GPA %#llx by an instruction %s (RIP %#llx, bytes %s)",
			 (q & EXIT_QUAL_EPT_WRITE) ? "write to" : "read of", what,
			 (unsigned long long)gpa, why, (unsigned long long)vmcs_read(GUEST_RIP),
			 avail ? bytes : "unreadable");
}

/* A read-modify-write of a device page holds the device lock from its read to its write. */
static enum vmx_exit_action emulate_locked(struct vcpu *vcpu, const struct x86_insn *in,
					   uint64_t gpa, const struct vmx_element *split, bool device)
{
	enum vmx_exit_action act;

	if (!device || !x86_insn_reads(in) || !x86_insn_writes(in))
		return emulate(vcpu, in, gpa, split);
	spin_lock(&device_rmw_lock);
	WRITE_ONCE(device_rmw_owner, vcpu->id);
	act = emulate(vcpu, in, gpa, split);
	WRITE_ONCE(device_rmw_owner, DEVICE_RMW_NOBODY);
	spin_unlock(&device_rmw_lock);
	return act;
}

static uint64_t addr_size_mask(unsigned int addr_size)
{
	return addr_size == 2 ? 0xffffull : addr_size == 4 ? 0xffffffffull : ~0ull;
}

/* The operand's offset in its segment: its effective address (SDM Vol. 1 3.7.5). */
static uint64_t operand_offset(struct vcpu *vcpu, const struct x86_insn *in)
{
	uint64_t ea = (uint64_t)in->ea_disp;

	if (in->ea_rip)
		ea += vmcs_read(GUEST_RIP) + in->len;	/* from the next instruction */
	if (in->ea_base >= 0)
		ea += vcpu_gpr_read(vcpu, (unsigned int)in->ea_base);
	/* POP m through rSP addresses with rSP already incremented (SDM Vol. 2B POP). */
	if (in->op == X86_OP_POP && in->ea_base == 4)
		ea += in->size;
	if (in->ea_index >= 0)
		ea += vcpu_gpr_read(vcpu, (unsigned int)in->ea_index) * in->ea_scale;
	return ea & addr_size_mask(in->addr_size);
}

static unsigned int operand_seg(const struct x86_insn *in)
{
	return in->seg_override >= 0 ? (unsigned int)in->seg_override : in->ea_seg;
}

/* Its linear address (the segment's base added: 0 in 64-bit mode but for FS and GS). */
static uint64_t operand_linear(struct vcpu *vcpu, const struct x86_insn *in)
{
	unsigned int seg = operand_seg(in);
	uint64_t base = vmcs_read(seg_base_field[seg]);

	if (vcpu_in_64bit_mode(vcpu))
		return (seg == X86_SEG_FS || seg == X86_SEG_GS ? base : 0) + operand_offset(vcpu, in);
	return (base + operand_offset(vcpu, in)) & 0xffffffffull;
}

/*
 * The operand crosses a page boundary: both pieces through the guest's
 * segment and paging (a fault there is delivered, as the CPU's), each
 * piece accessed where it is, as hardware splits the access.  The exit's
 * page must be one of the two (else the code changed under the exit).
 */
static enum vmx_exit_action emulate_crossing(struct vcpu *vcpu, const struct x86_insn *in,
					     uint64_t gpa, uint64_t q, const char *what,
					     const uint8_t *code)
{
	struct vmx_string_seg sg;
	struct vmx_element el;
	enum vmx_elem_result er;
	uint64_t page = gpa & ~(uint64_t)(PAGE_SIZE - 1);
	bool write = x86_insn_writes(in);

	if (in->op == X86_OP_CMPXCHG8B || in->op == X86_OP_SSE_LOAD || in->op == X86_OP_SSE_STORE ||
	    in->op == X86_OP_LOAD_SYSSEL)
		return refuse(vcpu, gpa, q, what, "whose operand (CMPXCHG8B/16B, SSE, LLDT, LTR) "
			      "crosses a page boundary", code, in->len);
	vmx_string_seg_init(vcpu, &sg, operand_seg(in));
	er = vmx_string_element(vcpu, &sg, operand_offset(vcpu, in), in->size, write, &el);
	if (er != VMX_ELEM_OK)
		return er == VMX_ELEM_FAULT ? VMX_EXIT_RESUME : VMX_EXIT_STOP;
	if ((el.gpa[0] & ~(uint64_t)(PAGE_SIZE - 1)) != page &&
	    (el.first == el.size || (el.gpa[1] & ~(uint64_t)(PAGE_SIZE - 1)) != page))
		return refuse(vcpu, gpa, q, what, "whose operand is not where the exit says", code,
			      in->len);
	if (el.first == el.size)	/* it starts at the page's start after all */
		return emulate_locked(vcpu, in, el.gpa[0], NULL, vmx_device_page(el.gpa[0]));
	return emulate_locked(vcpu, in, el.gpa[0], &el,
			      vmx_device_page(el.gpa[0]) || vmx_device_page(el.gpa[1]));
}

/*
 * The store to the xAPIC page an EOI, an ICR or a TPR write is, in a
 * fraction of the general path's ticks (mmio.h).  The instruction's
 * bytes are read as the general path reads them -- through the guest's
 * paging (guest_linear_walk(), which remembers the last translation),
 * from guest RAM only (guest_phys_ok()) -- 16 of them at once where its
 * page holds them, and decoded by x86_decode_store32(); the store is
 * answered as the general path answers it (phys_access()).
 */
bool vmx_xapic_store_fast(struct vcpu *vcpu, uint64_t gpa, enum vmx_exit_action *act)
{
	uint32_t entry = vmcs_read32(VM_ENTRY_CONTROLS), cs_ar = vmcs_read32(GUEST_CS_AR_BYTES);
	uint64_t rip = vmcs_read(GUEST_RIP) + vmcs_read(GUEST_CS_BASE), code_gpa;
	unsigned int offset = gpa & (PAGE_SIZE - 1);
	uint64_t code[X86_STORE32_BYTES / 8];
	struct x86_store32 st;
	enum x86_mode mode;
	uint32_t v, pf_error;

	if ((entry & VM_ENTRY_IA32E_MODE) && (cs_ar & VMX_AR_L)) {
		mode = X86_MODE_64;
	} else {
		rip &= 0xffffffffull;	/* linear addresses wrap at 4 GiB outside IA-32e mode */
		if (!(cs_ar & VMX_AR_DB))
			return false;	/* 16-bit code: the general path */
		mode = X86_MODE_32;
	}
	if ((rip & (PAGE_SIZE - 1)) > PAGE_SIZE - sizeof(code) || offset > PAGE_SIZE - 4 ||
	    guest_linear_walk(rip, 0, &code_gpa, &pf_error) != GUEST_WALK_OK ||
	    /* guest_phys_ok()'s own memo first: the page it passed last, most often this one. */
	    (vcpu->arch->ram_page_ok != (code_gpa & ~(uint64_t)(PAGE_SIZE - 1)) + 1 &&
	     !guest_phys_ok(code_gpa, sizeof(code))))
		return false;
	code[0] = *(const volatile uint64_t *)phys_to_virt(code_gpa);
	code[1] = *(const volatile uint64_t *)phys_to_virt(code_gpa + 8);
	if (!x86_decode_store32((const uint8_t *)code, mode, &st))
		return false;
	v = st.has_imm ? st.imm : (uint32_t)vcpu_gpr_read(vcpu, st.reg);
	/*
	 * As emulate()'s STORE: the instruction completes, then its write
	 * posts.  No event is being delivered (the caller checked), so none
	 * is to be put back.
	 */
	vmx_advance_rip(st.len);
	if (PROFILE_APIC_VIRTUAL)
		*act = vmx_vlapic_mmio_write(vcpu, offset, 4, v);
	else
		*act = vmx_xapic_write(vcpu, offset, v, 4);
	return true;
}

enum vmx_exit_action vmx_mmio_emulate(struct vcpu *vcpu, uint64_t gpa, uint64_t q,
				      const char *what)
{
	uint8_t code[X86_INSN_MAX];
	struct x86_insn in;
	unsigned int avail, first;
	uint64_t rip = vmx_guest_rip_linear();

	/* The instruction's bytes: to the end of its page, then on into the next if that reads. */
	first = PAGE_SIZE - (rip & (PAGE_SIZE - 1));
	if (first > sizeof(code))
		first = sizeof(code);
	avail = guest_read_linear(rip, code, first) ? first : 0;
	if (avail == first && first < sizeof(code) &&
	    guest_read_linear(rip + first, code + first, sizeof(code) - first))
		avail = sizeof(code);
	switch (x86_decode(code, avail, guest_code_mode(), &in)) {
	case X86_DECODE_OK:
		break;
	case X86_DECODE_UD:
		vmx_inject_ud(vcpu);
		return VMX_EXIT_RESUME;
	case X86_DECODE_SHORT:
		return refuse(vcpu, gpa, q, what, "whose bytes could not be read", code, avail);
	default:
		return refuse(vcpu, gpa, q, what, "exitplan does not emulate", code, avail);
	}
	/* The decode must agree with the access the CPU reported (else the code changed under it). */
	if ((q & EXIT_QUAL_EPT_WRITE) ? !x86_insn_writes(&in) : !x86_insn_reads(&in))
		return refuse(vcpu, gpa, q, what, "that does not make that access", code, in.len);
	if (in.op == X86_OP_CMPS || in.op == X86_OP_SCAS)
		return emulate_compare_string(vcpu, &in);
	if (in.op >= X86_OP_STOS)
		return emulate_string(vcpu, &in);
	/*
	 * An operand that crosses into the next page: the exit names the
	 * page that faulted, which is either piece (the first one's offset +
	 * size passes the page's end, or the second's offset is 0).
	 */
	if ((gpa & (PAGE_SIZE - 1)) + in.size > PAGE_SIZE ||
	    (!(gpa & (PAGE_SIZE - 1)) && (operand_linear(vcpu, &in) & (PAGE_SIZE - 1))))
		return emulate_crossing(vcpu, &in, gpa, q, what, code);
	return emulate_locked(vcpu, &in, gpa, NULL, vmx_device_page(gpa));
}
