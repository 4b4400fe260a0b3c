// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reaching guest memory from the hypervisor: guest-linear to
 * guest-physical through the guest's own paging (SDM Vol. 3A 4.3-4.5),
 * and guest-physical to host through the identity EPT, refusing
 * everything the EPT does not map (the hypervisor region, the MMIO test
 * page) -- the hypervisor must not do on a guest's behalf what the guest
 * cannot do itself.
 */
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/layout.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/percpu.h"
#include "lib/string.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/guest_mem.h"
#include "arch/vmx/vmx_ops.h"
#include "vmx_controls_bits.h"

static const struct ept *current_ept(void)
{
	struct vcpu *vcpu = this_cpu()->vcpu;

	return &vcpu->arch->ept;
}

/*
 * Every page of [gpa, gpa + len) is guest RAM: mapped by EPT as
 * write-back memory, and by the host.  Not MMIO, though EPT maps it for
 * the guest: a device register read or written by the hypervisor's
 * memcpy() would be an access the guest never made (of whatever width
 * the copy chose; Bochs ends the emulation on a misaligned APIC access,
 * as the fuzz guest found with a PUTS buffer in the APIC page).
 */
bool guest_phys_ok(uint64_t gpa, uint64_t len)
{
	const struct ept *ept = current_ept();
	uint64_t end = gpa + len;

	if (!len)
		return true;
	if (end < gpa || end > HV_IDENTITY_MAP_END)
		return false;
	for (uint64_t p = ALIGN_DOWN(gpa, (uint64_t)PAGE_SIZE); p < end; p += PAGE_SIZE) {
		uint64_t e = ept_lookup(ept, p, NULL);

		if (!e || (e & EPT_MEMTYPE_MASK) != EPT_MEMTYPE_WB)
			return false;
	}
	return true;
}

static bool read_pte(uint64_t pa, unsigned int size, uint64_t *v)
{
	if (!guest_phys_ok(pa, size))
		return false;
	*v = size == 8 ? *(volatile uint64_t *)phys_to_virt(pa)
		       : *(volatile uint32_t *)phys_to_virt(pa);
	return true;
}

/*
 * May an access of kind @access go through a translation whose entries
 * all allow writes (@writable) and user access (@user)?  SDM Vol. 3A
 * 4.6: a user-mode access needs U/S set everywhere, and R/W for a write;
 * a supervisor write to a read-only page faults only with CR0.WP; a
 * supervisor data access to a user page faults with CR4.SMAP unless
 * EFLAGS.AC is set.  Execute-disable concerns fetches only.
 */
static bool walk_permitted(unsigned int access, bool writable, bool user, uint64_t cr0,
			   uint64_t cr4)
{
	bool write = access & GUEST_ACCESS_WRITE;

	if (access & GUEST_ACCESS_USER)
		return user && (!write || writable);
	if (write && !writable && (cr0 & X86_CR0_WP))
		return false;
	if (user && (cr4 & X86_CR4_SMAP) && !(vmcs_read(GUEST_RFLAGS) & X86_RFLAGS_AC))
		return false;
	return true;
}

/*
 * The guest's paging mode comes from its CR0.PG, CR4.PAE and the IA-32e
 * mode entry control (its EFER.LMA).  Present, R/W, U/S (with CR0.WP and
 * CR4.SMAP) are checked as the CPU checks them; a failure is the #PF the
 * CPU would raise, its error code in @pf_error.  Accessed/dirty bits are
 * not set: the hypervisor's accesses are not the guest's.  A paging
 * structure outside guest RAM (MMIO, the hypervisor region) is
 * GUEST_WALK_UNREACHABLE: nothing the hypervisor will read for the guest.
 * Reserved bits are not checked (no RSVD faults).
 */
enum guest_walk guest_linear_walk(uint64_t gla, unsigned int access, uint64_t *gpa,
				  uint32_t *pf_error)
{
	uint64_t cr0 = vmcs_read(GUEST_CR0), cr4 = vmcs_read(GUEST_CR4), cr3 = vmcs_read(GUEST_CR3);
	bool writable = true, user = true;
	uint32_t err = (access & GUEST_ACCESS_WRITE ? PF_ERROR_WRITE : 0) |
		       (access & GUEST_ACCESS_USER ? PF_ERROR_USER : 0);
	uint64_t e;

	if (!(cr0 & X86_CR0_PG)) {
		*gpa = gla & 0xffffffffull;
		return GUEST_WALK_OK;
	}
	if (!(cr4 & X86_CR4_PAE)) {
		/* 32-bit paging: two levels, 4-MiB pages with CR4.PSE. */
		uint64_t pde, pte;

		if (!read_pte((cr3 & PT32_ADDR_MASK) + ((gla >> PT32_ADDR_4M_SHIFT) & 0x3ff) * 4, 4, &pde))
			return GUEST_WALK_UNREACHABLE;
		if (!(pde & PT32_PRESENT))
			goto not_present;
		writable = pde & PT32_RW;
		user = pde & PT32_USER;
		if ((pde & PT32_PS) && (cr4 & X86_CR4_PSE)) {
			if (!walk_permitted(access, writable, user, cr0, cr4))
				goto protection;
			*gpa = (pde & PT32_ADDR_4M_MASK) | (gla & ~(uint64_t)PT32_ADDR_4M_MASK & 0xffffffffull);
			return GUEST_WALK_OK;
		}
		if (!read_pte((pde & PT32_ADDR_MASK) + ((gla >> PT32_ADDR_SHIFT) & 0x3ff) * 4, 4, &pte))
			return GUEST_WALK_UNREACHABLE;
		if (!(pte & PT32_PRESENT))
			goto not_present;
		writable = writable && (pte & PT32_RW);
		user = user && (pte & PT32_USER);
		if (!walk_permitted(access, writable, user, cr0, cr4))
			goto protection;
		*gpa = (pte & PT32_ADDR_MASK) | (gla & 0xfff);
		return GUEST_WALK_OK;
	}

	/* PAE (3 levels, from CR3[31:5]) or IA-32e (4 levels). */
	int level;
	uint64_t table;

	if (vmcs_read(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE) {
		level = 3;
		table = cr3 & PT64_ADDR_MASK;
	} else {
		uint64_t pdpte;

		/* The PDPTEs have no R/W or U/S bits (Vol. 3A 4.4.1). */
		if (!read_pte((cr3 & PAE_CR3_PDPT_MASK) + ((gla >> 30) & 3) * 8, 8, &pdpte))
			return GUEST_WALK_UNREACHABLE;
		if (!(pdpte & PT64_PRESENT))
			goto not_present;
		level = 1;
		table = pdpte & PT64_ADDR_MASK;
	}
	for (;; level--) {
		unsigned int shift = 12 + 9 * level;

		if (!read_pte(table + ((gla >> shift) & 0x1ff) * 8, 8, &e))
			return GUEST_WALK_UNREACHABLE;
		if (!(e & PT64_PRESENT))
			goto not_present;
		writable = writable && (e & PT64_RW);
		user = user && (e & PT64_USER);
		if (level == 0 || (level <= 2 && (e & PT64_PS))) {
			uint64_t page_mask = (1ull << shift) - 1;

			if (!walk_permitted(access, writable, user, cr0, cr4))
				goto protection;
			*gpa = (e & PT64_ADDR_MASK & ~page_mask) | (gla & page_mask);
			return GUEST_WALK_OK;
		}
		table = e & PT64_ADDR_MASK;
	}
protection:
	err |= PF_ERROR_PRESENT;
not_present:
	*pf_error = err;
	return GUEST_WALK_PAGE_FAULT;
}

bool guest_linear_to_phys(uint64_t gla, bool write, uint64_t *gpa)
{
	uint32_t err;

	return guest_linear_walk(gla, write ? GUEST_ACCESS_WRITE : 0, gpa, &err) == GUEST_WALK_OK;
}

static bool guest_copy(uint64_t gla, void *buf, unsigned int len, bool write)
{
	uint8_t *p = buf;

	while (len) {
		unsigned int chunk = PAGE_SIZE - (gla & (PAGE_SIZE - 1));
		uint64_t gpa;

		if (chunk > len)
			chunk = len;
		if (!guest_linear_to_phys(gla, write, &gpa) || !guest_phys_ok(gpa, chunk))
			return false;
		if (write)
			memcpy(phys_to_virt(gpa), p, chunk);
		else
			memcpy(p, phys_to_virt(gpa), chunk);
		gla += chunk;
		p += chunk;
		len -= chunk;
	}
	return true;
}

bool guest_read_linear(uint64_t gla, void *dst, unsigned int len)
{
	return guest_copy(gla, dst, len, false);
}

bool guest_write_linear(uint64_t gla, const void *src, unsigned int len)
{
	return guest_copy(gla, (void *)src, len, true);
}

bool guest_phys_mapped(uint64_t gpa, unsigned int len, bool write)
{
	uint64_t e;

	if (!len || gpa + len > HV_IDENTITY_MAP_END ||
	    (gpa & ~(uint64_t)(PAGE_SIZE - 1)) != ((gpa + len - 1) & ~(uint64_t)(PAGE_SIZE - 1)))
		return false;
	e = ept_lookup(current_ept(), gpa, NULL);
	return (e & EPT_READ) && (!write || (e & EPT_WRITE));
}
