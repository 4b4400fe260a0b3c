// SPDX-License-Identifier: GPL-2.0-only
#include "exitplan.h"
#include "boot.h"
#include "string.h"
#include "x86.h"

struct hv_signature exitplan_signature(void)
{
	struct cpuid_regs r = cpuid(CPUID_HYPERVISOR_BASE);
	struct hv_signature sig = { .max_leaf = r.eax };

	memcpy(sig.text + 0, &r.ebx, 4);
	memcpy(sig.text + 4, &r.ecx, 4);
	memcpy(sig.text + 8, &r.edx, 4);
	sig.text[12] = '\0';
	return sig;
}

bool exitplan_detected(void)
{
	static const char want[12] = "exitplan\0\0\0";
	struct hv_signature sig = exitplan_signature();

	return sig.max_leaf >= CPUID_HYPERVISOR_BASE &&
	       !memcmp(sig.text, want, sizeof(want));
}

bool qemu_tcg_detected(void)
{
	struct hv_signature sig = exitplan_signature();

	return !memcmp(sig.text, "TCGTCGTCGTCG", 12);
}

/* [start, end) of the hole above the RAM that holds 1 MiB; 0, 0 without a map. */
static void hv_region(uint32_t *start, uint32_t *end)
{
	const struct multiboot_info *mbi = multiboot_info;
	uint64_t ram_end = 0, next = 0;

	*start = *end = 0;
	if (!mbi || !(mbi->flags & MULTIBOOT_INFO_MEM_MAP))
		return;
	for (int pass = 0; pass < 2; pass++) {
		uintptr_t p = mbi->mmap_addr, stop = mbi->mmap_addr + mbi->mmap_length;

		while (p + sizeof(struct multiboot_mmap_entry) <= stop) {
			const struct multiboot_mmap_entry *e = phys_ptr(p);

			if (!pass && e->type == MULTIBOOT_MEMORY_AVAILABLE &&
			    e->addr <= 0x100000 && e->addr + e->len > 0x100000)
				ram_end = e->addr + e->len;
			if (pass && ram_end && e->addr >= ram_end && (!next || e->addr < next))
				next = e->addr;
			p += e->size + sizeof(e->size);
		}
	}
	if (!ram_end || ram_end >= 0x100000000ull)
		return;
	*start = (uint32_t)ram_end;
	*end = next && next < 0x100000000ull ? (uint32_t)next : (uint32_t)ram_end + 0x200000;
}

uint32_t exitplan_hv_start(void)
{
	uint32_t s, e;

	hv_region(&s, &e);
	return s;
}

uint32_t exitplan_hv_end(void)
{
	uint32_t s, e;

	hv_region(&s, &e);
	return e;
}
