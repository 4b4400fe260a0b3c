// SPDX-License-Identifier: GPL-2.0-only
#include "runtime/host/boot_info.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/layout.h"
#include "lib/multiboot.h"
#include "runtime/host/panic.h"
#include "runtime/host/reloc.h"
#include "lib/string.h"

extern char __image_start[], __image_end[];

static struct boot_info the_boot_info;

const struct boot_info *boot_info(void)
{
	return &the_boot_info;
}

/* The multiboot structures sit below 4 GiB, in the identity map. */
static const void *phys(uint32_t pa)
{
	return (const void *)(uintptr_t)pa;
}

static void copy_string(char *dst, size_t size, uint32_t pa)
{
	if (!pa) {
		dst[0] = '\0';
		return;
	}
	strlcpy(dst, phys(pa), size);
}

/*
 * A command line is passed on whole or not at all: a guest given the
 * first BOOT_CMDLINE_MAX - 1 bytes of its line would run with options
 * nobody gave it.  module < 0 is the hypervisor's own command line.
 */
static void copy_cmdline(char *dst, uint32_t pa, int module)
{
	size_t len;

	if (!pa) {
		dst[0] = '\0';
		return;
	}
	len = strlcpy(dst, phys(pa), BOOT_CMDLINE_MAX);
	if (len < BOOT_CMDLINE_MAX)
		return;
	if (module < 0)
		panic("exitplan's command line is %llu bytes long: at most %u bytes "
		      "(BOOT_CMDLINE_MAX - 1) are supported", (unsigned long long)len,
		      BOOT_CMDLINE_MAX - 1);
	panic("module %d's command line is %llu bytes long: at most %u bytes "
	      "(BOOT_CMDLINE_MAX - 1) are passed on, and a cut one is not", module,
	      (unsigned long long)len, BOOT_CMDLINE_MAX - 1);
}

static void copy_mmap(struct boot_info *bi, const struct multiboot_info *mbi)
{
	uint32_t off = 0;

	while (off + sizeof(struct multiboot_mmap_entry) <= mbi->mmap_length) {
		const struct multiboot_mmap_entry *e = phys(mbi->mmap_addr + off);

		if (bi->mmap_count == BOOT_MMAP_MAX)
			panic("more than %u memory-map entries", BOOT_MMAP_MAX);
		bi->mmap[bi->mmap_count++] = (struct boot_mmap_entry){
			.addr = e->addr, .len = e->len, .type = e->type,
		};
		/* `size` does not count itself. */
		off += e->size + sizeof(e->size);
	}
}

static void copy_modules(struct boot_info *bi, const struct multiboot_info *mbi)
{
	const struct multiboot_module *m = phys(mbi->mods_addr);

	if (mbi->mods_count > BOOT_MODULES_MAX)
		panic("%u boot modules, at most %u supported", mbi->mods_count,
		      BOOT_MODULES_MAX);
	for (uint32_t i = 0; i < mbi->mods_count; i++) {
		struct boot_module *bm = &bi->modules[i];

		bm->start = m[i].mod_start;
		bm->end = m[i].mod_end;
		copy_cmdline(bm->cmdline, m[i].cmdline, (int)i);
	}
	bi->module_count = mbi->mods_count;
}

static bool ranges_overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 < b1 && b0 < a1;
}

/*
 * The modules are the hypervisor's until it has copied them where they
 * belong, so they must end up in its region, after the image, where the
 * page allocator will not hand them out and EPT hides them.  GRUB 2.06
 * places them low (at 1 MiB and up, in what becomes guest memory), not
 * after the image, so a module entirely outside the region is moved to
 * the start of the free part of the region now, before anything in guest
 * memory or the pool is written.  A module that straddles the region's
 * edges or overlaps the image or another module cannot be moved safely:
 * that is a panic.
 */
static void place_modules(struct boot_info *bi)
{
	uint64_t next;

	bi->modules_end = bi->image_end;
	for (unsigned int i = 0; i < bi->module_count; i++) {
		struct boot_module *m = &bi->modules[i];

		m->loaded_start = m->start;
		if (m->end < m->start)
			panic("module %u ('%s') ends at %llx before it starts at %llx",
			      i, m->cmdline, (unsigned long long)m->end,
			      (unsigned long long)m->start);
		for (unsigned int j = 0; j < i; j++) {
			const struct boot_module *o = &bi->modules[j];

			if (ranges_overlap(m->start, m->end, o->start, o->end))
				panic("modules %u and %u overlap", j, i);
		}
		if (!ranges_overlap(m->start, m->end, bi->hv_start, bi->hv_end))
			continue;	/* moved below */
		if (m->start < bi->image_end || m->end > bi->hv_end)
			panic("module %u ('%s') at [%llx, %llx) overlaps the hypervisor "
			      "image [%llx, %llx) or crosses the end of its region at %llx",
			      i, m->cmdline, (unsigned long long)m->start,
			      (unsigned long long)m->end, (unsigned long long)bi->image_start,
			      (unsigned long long)bi->image_end, (unsigned long long)bi->hv_end);
		if (m->end > bi->modules_end)
			bi->modules_end = m->end;
	}

	/* Above everything already in the region: no copy can clobber a source. */
	next = ALIGN_UP(bi->modules_end, (uint64_t)PAGE_SIZE);
	for (unsigned int i = 0; i < bi->module_count; i++) {
		struct boot_module *m = &bi->modules[i];
		uint64_t size = m->end - m->start;

		if (ranges_overlap(m->start, m->end, bi->hv_start, bi->hv_end))
			continue;
		if (size > bi->hv_end - next)
			panic("module %u ('%s') of %llu bytes does not fit in the hypervisor "
			      "region: %llu bytes left above %llx", i, m->cmdline,
			      (unsigned long long)size, (unsigned long long)(bi->hv_end - next),
			      (unsigned long long)next);
		memcpy((void *)(uintptr_t)next, (const void *)(uintptr_t)m->start, size);
		m->start = next;
		m->end = next + size;
		next = ALIGN_UP(m->end, (uint64_t)PAGE_SIZE);
		bi->modules_end = m->end;
	}
}

/* With a memory map, the whole region must be in one available range. */
static void check_region_is_ram(const struct boot_info *bi)
{
	if (!bi->mmap_count)
		return;
	for (unsigned int i = 0; i < bi->mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi->mmap[i];

		if (e->type == BOOT_MEM_AVAILABLE && e->addr <= bi->hv_start &&
		    e->addr + e->len >= bi->hv_end)
			return;
	}
	panic("the hypervisor region [%llx, %llx) is not available RAM in the memory map",
	      (unsigned long long)bi->hv_start, (unsigned long long)bi->hv_end);
}

const struct boot_info *boot_info_init(uint32_t mb_magic, uint32_t mb_info_pa)
{
	struct boot_info *bi = &the_boot_info;
	const struct multiboot_info *mbi = phys(mb_info_pa);

	/* boot.S checked it already; a direct caller might not have. */
	if (mb_magic != MULTIBOOT_BOOTLOADER_MAGIC)
		panic("bad multiboot magic %x", mb_magic);

	if (!boot_region.end)
		panic("no room for the hypervisor region at the top of RAM: %s",
		      boot_region.error ? boot_region.error : "not relocated");
	bi->hv_start = boot_region.start;
	bi->hv_end = boot_region.end;
	bi->image_start = (uintptr_t)__image_start;
	bi->image_end = (uintptr_t)__image_end;

	if (mbi->flags & MULTIBOOT_INFO_CMDLINE)
		copy_cmdline(bi->cmdline, mbi->cmdline, -1);
	if (mbi->flags & MULTIBOOT_INFO_BOOT_LOADER_NAME)
		copy_string(bi->loader_name, sizeof(bi->loader_name), mbi->boot_loader_name);
	if (mbi->flags & MULTIBOOT_INFO_MEMORY) {
		bi->mem_lower_kb = mbi->mem_lower;
		bi->mem_upper_kb = mbi->mem_upper;
	}
	if (mbi->flags & MULTIBOOT_INFO_MEM_MAP)
		copy_mmap(bi, mbi);
	if (mbi->flags & MULTIBOOT_INFO_MODS)
		copy_modules(bi, mbi);

	check_region_is_ram(bi);
	place_modules(bi);
	bi->pool_start = ALIGN_UP(bi->modules_end, (uint64_t)PAGE_SIZE);
	bi->pool_end = bi->hv_end;
	return bi;
}

const char *boot_mem_type_name(uint32_t type)
{
	switch (type) {
	case BOOT_MEM_AVAILABLE:
		return "available";
	case BOOT_MEM_RESERVED:
		return "reserved";
	case BOOT_MEM_ACPI_RECLAIMABLE:
		return "ACPI reclaimable";
	case BOOT_MEM_ACPI_NVS:
		return "ACPI NVS";
	case BOOT_MEM_BAD:
		return "bad";
	default:
		return "unknown";
	}
}

void boot_info_print(const struct boot_info *bi)
{
	printk("exitplan: boot loader '%s', command line '%s'\n",
	       bi->loader_name, bi->cmdline);
	printk("exitplan: memory map (%u entries):\n", bi->mmap_count);
	for (unsigned int i = 0; i < bi->mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi->mmap[i];

		printk("  mem [%016llx-%016llx] %s\n", (unsigned long long)e->addr,
		       (unsigned long long)(e->addr + e->len - 1),
		       boot_mem_type_name(e->type));
	}
	printk("exitplan: hypervisor region [%llx, %llx), image [%llx, %llx) (moved from %llx)\n",
	       (unsigned long long)bi->hv_start, (unsigned long long)bi->hv_end,
	       (unsigned long long)bi->image_start, (unsigned long long)bi->image_end,
	       (unsigned long long)boot_region.loaded_at);
	printk("exitplan: %u module%s\n", bi->module_count,
	       bi->module_count == 1 ? "" : "s");
	for (unsigned int i = 0; i < bi->module_count; i++) {
		const struct boot_module *m = &bi->modules[i];

		printk("  module %u [%llx, %llx) %llu bytes '%s'", i,
		       (unsigned long long)m->start, (unsigned long long)m->end,
		       (unsigned long long)(m->end - m->start), m->cmdline);
		if (m->loaded_start != m->start)
			printk(" (moved from %llx)", (unsigned long long)m->loaded_start);
		printk("\n");
	}
}

bool cmdline_option(const char *cmdline, const char *name, char *value, size_t size)
{
	size_t name_len = strlen(name);
	const char *p = cmdline;

	while (*p) {
		const char *word = p, *end;

		while (*p && *p != ' ')
			p++;
		end = p;
		while (*p == ' ')
			p++;
		if ((size_t)(end - word) < name_len || strncmp(word, name, name_len))
			continue;
		if (word + name_len == end) {
			if (value && size)
				value[0] = '\0';
			return true;
		}
		if (word[name_len] == '=') {
			const char *v = word + name_len + 1;
			size_t n = end - v;

			if (value && size) {
				if (n > size - 1)
					n = size - 1;
				memcpy(value, v, n);
				value[n] = '\0';
			}
			return true;
		}
	}
	return false;
}
