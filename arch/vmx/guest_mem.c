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
	struct vcpu_arch_state *a = this_cpu()->vcpu->arch;
	uint64_t end = gpa + len;

	if (!len)
		return true;
	if (end < gpa || end > HV_IDENTITY_MAP_END)
		return false;
	for (uint64_t p = ALIGN_DOWN(gpa, (uint64_t)PAGE_SIZE); p < end; p += PAGE_SIZE) {
		uint64_t e;

		/*
		 * The EPT is built before any vCPU runs and not changed after
		 * (vmx.c copies it into each): a page once found guest RAM
		 * stays guest RAM, and the memo answers for it again.
		 */
		if (p + 1 == a->ram_page_ok)
			continue;
		e = ept_lookup(&a->ept, p, NULL);
		if (!e || (e & EPT_MEMTYPE_MASK) != EPT_MEMTYPE_WB)
			return false;
		a->ram_page_ok = p + 1;
	}
	return true;
}

/* Read a paging-structure entry from guest RAM, and note it in @rec (guest_linear_walk()). */
static bool read_pte(struct guest_walk_memo *rec, uint64_t pa, unsigned int size, uint64_t *v)
{
	if (!guest_phys_ok(pa, size))
		return false;
	*v = size == 8 ? *(volatile uint64_t *)phys_to_virt(pa)
		       : *(volatile uint32_t *)phys_to_virt(pa);
	if (rec->n < ARRAY_SIZE(rec->pte)) {
		rec->pte_pa[rec->n] = pa;
		rec->pte[rec->n] = *v;
	}
	rec->n++;
	rec->pte_size = size;
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
 * Present, R/W, U/S (with CR0.WP and
 * CR4.SMAP) are checked as the CPU checks them; a failure is the #PF the
 * CPU would raise, its error code in @pf_error.  Accessed/dirty bits are
 * not set: the hypervisor's accesses are not the guest's.  A paging
 * structure outside guest RAM (MMIO, the hypervisor region) is
 * GUEST_WALK_UNREACHABLE: nothing the hypervisor will read for the guest.
 * Reserved bits are not checked (no RSVD faults).
 */
static enum guest_walk walk(uint64_t gla, unsigned int access, uint64_t *gpa, uint32_t *pf_error,
			    struct guest_walk_memo *rec)
{
	uint64_t cr0 = rec->cr0, cr4 = rec->cr4, cr3 = rec->cr3;
	bool writable = true, user = true;
	uint32_t err = (access & GUEST_ACCESS_WRITE ? PF_ERROR_WRITE : 0) |
		       (access & GUEST_ACCESS_USER ? PF_ERROR_USER : 0);
	uint64_t e;

	if (!(cr4 & X86_CR4_PAE)) {
		/* 32-bit paging: two levels, 4-MiB pages with CR4.PSE. */
		uint64_t pde, pte;

		if (!read_pte(rec, (cr3 & PT32_ADDR_MASK) + ((gla >> PT32_ADDR_4M_SHIFT) & 0x3ff) * 4, 4, &pde))
			return GUEST_WALK_UNREACHABLE;
		if (!(pde & PT32_PRESENT))
			goto not_present;
		writable = pde & PT32_RW;
		user = pde & PT32_USER;
		if ((pde & PT32_PS) && (cr4 & X86_CR4_PSE)) {
			if (!walk_permitted(access, writable, user, cr0, cr4))
				goto protection;
			*gpa = (pde & PT32_ADDR_4M_MASK) | (gla & ~(uint64_t)PT32_ADDR_4M_MASK & 0xffffffffull);
			goto done;
		}
		if (!read_pte(rec, (pde & PT32_ADDR_MASK) + ((gla >> PT32_ADDR_SHIFT) & 0x3ff) * 4, 4, &pte))
			return GUEST_WALK_UNREACHABLE;
		if (!(pte & PT32_PRESENT))
			goto not_present;
		writable = writable && (pte & PT32_RW);
		user = user && (pte & PT32_USER);
		if (!walk_permitted(access, writable, user, cr0, cr4))
			goto protection;
		*gpa = (pte & PT32_ADDR_MASK) | (gla & 0xfff);
		goto done;
	}

	/* PAE (3 levels, from CR3[31:5]) or IA-32e (4 levels). */
	int level;
	uint64_t table;

	if (rec->ia32e) {
		level = 3;
		table = cr3 & PT64_ADDR_MASK;
	} else {
		uint64_t pdpte;

		/* The PDPTEs have no R/W or U/S bits (Vol. 3A 4.4.1). */
		if (!read_pte(rec, (cr3 & PAE_CR3_PDPT_MASK) + ((gla >> 30) & 3) * 8, 8, &pdpte))
			return GUEST_WALK_UNREACHABLE;
		if (!(pdpte & PT64_PRESENT))
			goto not_present;
		level = 1;
		table = pdpte & PT64_ADDR_MASK;
	}
	for (;; level--) {
		unsigned int shift = 12 + 9 * level;

		if (!read_pte(rec, table + ((gla >> shift) & 0x1ff) * 8, 8, &e))
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
			goto done;
		}
		table = e & PT64_ADDR_MASK;
	}
done:
	rec->writable = writable;
	rec->user = user;
	return GUEST_WALK_OK;
protection:
	err |= PF_ERROR_PRESENT;
not_present:
	*pf_error = err;
	return GUEST_WALK_PAGE_FAULT;
}

/* The entries the memo's translation read still hold what they held. */
static bool memo_entries_unchanged(const struct guest_walk_memo *m)
{
	for (unsigned int i = 0; i < m->n; i++) {
		const volatile void *p = phys_to_virt(m->pte_pa[i]);
		uint64_t v = m->pte_size == 8 ? *(const volatile uint64_t *)p
					      : *(const volatile uint32_t *)p;

		if (v != m->pte[i])
			return false;
	}
	return true;
}

/*
 * The guest's paging mode comes from its CR0.PG, CR4.PAE and the IA-32e
 * mode entry control (its EFER.LMA).  A translation of the same linear
 * page under the same CR0, CR3, CR4 and mode, whose paging-structure
 * entries (in guest RAM: the memo holds only addresses guest_phys_ok()
 * passed) still read the same, is the walk's own result: the memo gives
 * it without walking again -- an MMIO exit's instruction fetch is most
 * of the time the previous one's (an EOI per interrupt).  The
 * permission check is made again for each access.
 */
/* A miss: the whole walk, remembered when it gives a translation. */
static noinline enum guest_walk
walk_and_remember(uint64_t gla, unsigned int access, uint64_t *gpa, uint32_t *pf_error,
		  const struct guest_walk_memo *key, struct guest_walk_memo *m)
{
	struct guest_walk_memo rec = *key;
	enum guest_walk w;

	rec.n = 0;
	rec.pte_size = 8;
	w = walk(gla, access, gpa, pf_error, &rec);
	if (w == GUEST_WALK_OK && rec.n <= ARRAY_SIZE(rec.pte)) {
		rec.page = (gla >> PAGE_SHIFT) + 1;
		rec.frame = *gpa & ~(uint64_t)(PAGE_SIZE - 1);
		*m = rec;
	}
	return w;
}

enum guest_walk guest_linear_walk(uint64_t gla, unsigned int access, uint64_t *gpa,
				  uint32_t *pf_error)
{
	struct guest_walk_memo *m, key;
	uint64_t cr0 = vmcs_read(GUEST_CR0);

	if (!(cr0 & X86_CR0_PG)) {
		*gpa = gla & 0xffffffffull;
		return GUEST_WALK_OK;
	}
	m = &this_cpu()->vcpu->arch->walk_memo;
	key.cr0 = cr0;
	key.cr3 = vmcs_read(GUEST_CR3);
	key.cr4 = vmcs_read(GUEST_CR4);
	key.ia32e = vmcs_read(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE;
	if (m->page == (gla >> PAGE_SHIFT) + 1 && m->cr3 == key.cr3 && m->cr0 == cr0 &&
	    m->cr4 == key.cr4 && m->ia32e == key.ia32e && memo_entries_unchanged(m) &&
	    walk_permitted(access, m->writable, m->user, cr0, key.cr4)) {
		*gpa = m->frame | (gla & (PAGE_SIZE - 1));
		return GUEST_WALK_OK;
	}
	return walk_and_remember(gla, access, gpa, pf_error, &key, m);
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
