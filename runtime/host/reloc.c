// SPDX-License-Identifier: GPL-2.0-only
/*
 * The image moves itself to the top of RAM (issue 9 item 2), as ACRN's
 * CONFIG_RELOC does: it is linked position-independent (-fpie, -pie), so
 * its code addresses everything RIP-relative and only the pointers in its
 * data need fixing, the R_X86_64_RELATIVE entries of .rela.dyn.  Physical
 * stays equal to virtual, which the page tables, the VMCS pointers, EPT
 * and the AP trampoline rely on.
 *
 * Runs before anything is initialised, at the link address, so no
 * printk or panic: a failure is recorded in boot_region and reported by
 * boot_info_init() once the console is up.
 */
#include "runtime/host/reloc.h"

#include "runtime/host/boot_data.h"
#include "runtime/host/compiler.h"
#include "runtime/host/layout.h"
#include "lib/multiboot.h"
#include "runtime/host/region.h"
#include "lib/string.h"

#define R_X86_64_RELATIVE	8	/* ELF x86-64 psABI: B + A */
#define ELF64_R_TYPE(info)	((uint32_t)(info))

struct elf64_rela {
	uint64_t r_offset, r_info;
	int64_t r_addend;
};

extern char __image_start[], __image_end[];
extern const struct elf64_rela __rela_start[], __rela_end[];

struct boot_region boot_region;

/* The multiboot structures: below 4 GiB, in the identity map. */
static const void *phys(uint32_t pa)
{
	return (const void *)(uintptr_t)pa;
}

static uint64_t str_end(uint32_t pa)
{
	return pa ? pa + strlen(phys(pa)) + 1 : 0;
}

#define AVOID_MAX	(6 + 2 * BOOT_MODULES_MAX)

int64_t boot_relocate(uint32_t mb_magic, uint32_t mb_info_pa)
{
	static struct boot_mmap_entry map[BOOT_MMAP_MAX];
	struct phys_range avoid[AVOID_MAX], r;
	const struct multiboot_info *mbi = phys(mb_info_pa);
	uint64_t image = (uintptr_t)__image_start, image_bytes = __image_end - __image_start;
	uint64_t module_bytes = 0, size;
	unsigned int n = 0, na = 0;
	int64_t delta;
	struct boot_region *copy;

	boot_region.loaded_at = image;
	if (mb_magic != MULTIBOOT_BOOTLOADER_MAGIC)
		return 0;			/* boot_info_init() says so */
	if (!(mbi->flags & MULTIBOOT_INFO_MEM_MAP)) {
		boot_region.error = "the boot loader gave no memory map";
		return 0;
	}
	for (uint32_t off = 0; off + sizeof(struct multiboot_mmap_entry) <= mbi->mmap_length;) {
		const struct multiboot_mmap_entry *e = phys(mbi->mmap_addr + off);

		if (n == BOOT_MMAP_MAX)
			break;			/* boot_info_init() refuses it */
		map[n++] = (struct boot_mmap_entry){ e->addr, e->len, e->type };
		off += e->size + sizeof(e->size);
	}

	/* What the copy must not overwrite: everything boot_info_init() reads. */
	avoid[na++] = (struct phys_range){ image, image + image_bytes };
	avoid[na++] = (struct phys_range){ mb_info_pa, mb_info_pa + sizeof(*mbi) };
	avoid[na++] = (struct phys_range){ mbi->mmap_addr, mbi->mmap_addr + mbi->mmap_length };
	if (mbi->flags & MULTIBOOT_INFO_CMDLINE)
		avoid[na++] = (struct phys_range){ mbi->cmdline, str_end(mbi->cmdline) };
	if (mbi->flags & MULTIBOOT_INFO_BOOT_LOADER_NAME)
		avoid[na++] = (struct phys_range){ mbi->boot_loader_name,
						     str_end(mbi->boot_loader_name) };
	if ((mbi->flags & MULTIBOOT_INFO_MODS) && mbi->mods_count <= BOOT_MODULES_MAX) {
		const struct multiboot_module *m = phys(mbi->mods_addr);

		avoid[na++] = (struct phys_range){ mbi->mods_addr,
						     mbi->mods_addr + mbi->mods_count * sizeof(*m) };
		for (uint32_t i = 0; i < mbi->mods_count; i++) {
			avoid[na++] = (struct phys_range){ m[i].mod_start, m[i].mod_end };
			avoid[na++] = (struct phys_range){ m[i].cmdline, str_end(m[i].cmdline) };
			if (m[i].mod_end > m[i].mod_start)
				module_bytes += ALIGN_UP((uint64_t)(m[i].mod_end - m[i].mod_start),
							 (uint64_t)PAGE_SIZE);
		}
	}

	size = region_size(image_bytes, module_bytes, region_ram_bytes(map, n));
	if (!size) {
		boot_region.error = "the image and the modules exceed HV_REGION_MAX";
		return 0;
	}
	if (!region_choose(map, n, avoid, na, size, &r)) {
		boot_region.error = "no available RAM below 4 GiB holds it";
		return 0;
	}

	/* The whole image, .bss too: the boot page tables are in use. */
	delta = (int64_t)(r.start - image);
	memmove((void *)(uintptr_t)r.start, __image_start, image_bytes);
	for (const struct elf64_rela *e = __rela_start; e < __rela_end; e++) {
		if (ELF64_R_TYPE(e->r_info) != R_X86_64_RELATIVE)
			continue;		/* none are linked (the build checks -z notext) */
		*(uint64_t *)(uintptr_t)(e->r_offset + delta) = (uint64_t)(e->r_addend + delta);
	}
	/* The copy's page tables point at their own lower levels. */
	((uint64_t *)((uintptr_t)boot_pml4 + delta))[0] += delta;
	for (unsigned int i = 0; i < 4; i++)
		((uint64_t *)((uintptr_t)boot_pdpt + delta))[i] += delta;

	copy = (struct boot_region *)((uintptr_t)&boot_region + delta);
	copy->start = r.start;
	copy->end = r.end;
	return delta;
}
