// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest loader (guest_loader.h): multiboot v1 kernels from the first
 * module, loaded at their physical addresses in guest RAM.
 */
#include "runtime/host/boot_info.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/loader/guest_loader.h"
#include "runtime/host/layout.h"
#include "runtime/loader/linux_loader.h"
#include "lib/multiboot.h"
#include "runtime/host/page_alloc.h"
#include "lib/string.h"

/* The multiboot header (Multiboot Specification 0.6.96, 3.1). */
#define MULTIBOOT_SEARCH		8192	/* the header lies in the first 8 KiB */
#define MULTIBOOT_AOUT_KLUDGE		(1u << 16)	/* address fields are valid */
#define MULTIBOOT_HEADER_UNSUPPORTED	0x0000fffcu	/* requirement bits 2..15 we cannot meet */

struct multiboot_header {
	uint32_t magic, flags, checksum;
	uint32_t header_addr, load_addr, load_end_addr, bss_end_addr, entry_addr;
} __packed;

/* ELF (System V ABI, gABI 4.1): just what a loader reads. */
#define ELF_MAGIC		"\177ELF"
#define ELFCLASS32		1
#define ELFCLASS64		2
#define PT_LOAD			1

struct elf32_ehdr {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version, entry, phoff, shoff, flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
} __packed;

struct elf32_phdr {
	uint32_t type, offset, vaddr, paddr, filesz, memsz, flags, align;
} __packed;

struct elf64_ehdr {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
} __packed;

struct elf64_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
} __packed;

#define SHT_SYMTAB		2

struct elf32_shdr {
	uint32_t name, type, flags, addr, offset, size, link, info, addralign, entsize;
} __packed;

struct elf64_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t addralign, entsize;
} __packed;

struct elf32_sym {
	uint32_t name, value, size;
	uint8_t info, other;
	uint16_t shndx;
} __packed;

struct elf64_sym {
	uint32_t name;
	uint8_t info, other;
	uint16_t shndx;
	uint64_t value, size;
} __packed;

static const char loader_name[] = "exitplan";

/*
 * Whether [off, off + size) lies in an image of @len bytes.  The offsets
 * and sizes come from the image (64-bit in ELF64): off + size may wrap
 * past 2^64 and compare below len, so never add before checking.
 */
static bool in_image(uint64_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

/* --- placing things in guest RAM ------------------------------------------ */

/*
 * What the loader places itself: the multiboot information, the command
 * line, the boot loader's name, the module list, and each further module
 * with its command line.
 */
#define GUEST_MAX_PLACED	(4 + 2 * (BOOT_MODULES_MAX - 1))

struct guest_layout {
	struct phys_range ram[GUEST_MAX_RANGES];
	unsigned int n_ram;
	uint64_t hv_start, hv_end;	/* the hole, for messages */
	/* What is taken: the kernel's segments, then what the loader placed. */
	struct phys_range used[GUEST_MAX_SEGMENTS + GUEST_MAX_PLACED];
	unsigned int n_used, n_segments;
};

static bool in_guest_ram(const struct guest_layout *g, uint64_t start, uint64_t end)
{
	for (unsigned int i = 0; i < g->n_ram; i++) {
		if (start >= g->ram[i].start && end <= g->ram[i].end)
			return true;
	}
	return false;
}

static bool overlaps_used(const struct guest_layout *g, uint64_t start, uint64_t end)
{
	for (unsigned int i = 0; i < g->n_used; i++) {
		if (start < g->used[i].end && end > g->used[i].start)
			return true;
	}
	return false;
}

static bool mark_used(struct guest_layout *g, uint64_t start, uint64_t end)
{
	if (g->n_used == ARRAY_SIZE(g->used))
		return false;
	g->used[g->n_used++] = (struct phys_range){ start, end };
	return true;
}

/*
 * A free, page-aligned place of @size bytes in guest RAM above 1 MiB
 * (below it is the BIOS's) and below 4 GiB (multiboot addresses are
 * 32-bit), first fit.  0 when there is none.
 */
static uint64_t guest_place(struct guest_layout *g, uint64_t size)
{
	size = ALIGN_UP(size, (uint64_t)PAGE_SIZE);
	for (unsigned int i = 0; i < g->n_ram; i++) {
		uint64_t a = ALIGN_UP(g->ram[i].start < 0x100000 ? 0x100000 : g->ram[i].start,
				      (uint64_t)PAGE_SIZE);

		while (a + size <= g->ram[i].end && a + size <= 0x100000000ull) {
			bool clash = false;

			for (unsigned int u = 0; u < g->n_used; u++) {
				if (a < g->used[u].end && a + size > g->used[u].start) {
					a = ALIGN_UP(g->used[u].end, (uint64_t)PAGE_SIZE);
					clash = true;
					break;
				}
			}
			if (!clash)
				return mark_used(g, a, a + size) ? a : 0;
		}
	}
	return 0;
}

/* --- the kernel image ------------------------------------------------------ */

/* Copy one segment to its physical address after checking where it goes. */
static bool load_segment(struct guest_layout *g, const uint8_t *image, uint64_t image_len,
			 uint64_t offset, uint64_t paddr, uint64_t filesz, uint64_t memsz)
{
	uint64_t end = paddr + memsz;

	if (!memsz)
		return true;
	if (filesz > memsz || !in_image(image_len, offset, filesz) || end < paddr ||
	    end > HV_IDENTITY_MAP_END) {
		printk("exitplan: guest: segment at %#llx lies outside the module\n",
		       (unsigned long long)paddr);
		return false;
	}
	/* The hypervisor region (and the module in it) is excluded from guest RAM. */
	if (!in_guest_ram(g, paddr, end)) {
		printk("exitplan: guest: segment [%#llx, %#llx) is not in guest RAM "
		       "(the hypervisor owns [%#llx, %#llx))\n", (unsigned long long)paddr,
		       (unsigned long long)end, (unsigned long long)g->hv_start,
		       (unsigned long long)g->hv_end);
		return false;
	}
	if (g->n_segments == GUEST_MAX_SEGMENTS) {
		printk("exitplan: guest: more than %u loadable segments (PT_LOAD with a size): "
		       "the loader tracks at most %u\n", GUEST_MAX_SEGMENTS, GUEST_MAX_SEGMENTS);
		return false;
	}
	if (overlaps_used(g, paddr, end) || !mark_used(g, paddr, end)) {
		printk("exitplan: guest: segment [%#llx, %#llx) overlaps another one\n",
		       (unsigned long long)paddr, (unsigned long long)end);
		return false;
	}
	g->n_segments++;
	memcpy(phys_to_virt(paddr), image + offset, filesz);
	memset(phys_to_virt(paddr + filesz), 0, memsz - filesz);
	return true;
}

static bool load_elf(struct guest_layout *g, const uint8_t *image, uint64_t len, uint32_t *entry)
{
	if (len < sizeof(struct elf32_ehdr) || memcmp(image, ELF_MAGIC, 4)) {
		printk("exitplan: guest: not an ELF image and no a.out-kludge address fields\n");
		return false;
	}
	if (image[4] == ELFCLASS32) {
		const struct elf32_ehdr *eh = (const void *)image;

		if (eh->phentsize < sizeof(struct elf32_phdr) ||
		    !in_image(len, eh->phoff, (uint64_t)eh->phnum * eh->phentsize))
			goto bad;
		for (unsigned int i = 0; i < eh->phnum; i++) {
			const struct elf32_phdr *ph =
				(const void *)(image + eh->phoff + (uint64_t)i * eh->phentsize);

			if (ph->type == PT_LOAD &&
			    !load_segment(g, image, len, ph->offset, ph->paddr, ph->filesz, ph->memsz))
				return false;
		}
		*entry = eh->entry;
		return true;
	}
	if (image[4] == ELFCLASS64 && len >= sizeof(struct elf64_ehdr)) {
		const struct elf64_ehdr *eh = (const void *)image;

		if (eh->phentsize < sizeof(struct elf64_phdr) ||
		    !in_image(len, eh->phoff, (uint64_t)eh->phnum * eh->phentsize) ||
		    eh->entry >> 32)
			goto bad;
		for (unsigned int i = 0; i < eh->phnum; i++) {
			const struct elf64_phdr *ph =
				(const void *)(image + eh->phoff + (uint64_t)i * eh->phentsize);

			if (ph->type == PT_LOAD &&
			    !load_segment(g, image, len, ph->offset, ph->paddr, ph->filesz, ph->memsz))
				return false;
		}
		*entry = (uint32_t)eh->entry;
		return true;
	}
bad:
	printk("exitplan: guest: malformed ELF header\n");
	return false;
}

/* The a.out kludge (Multiboot 3.1.3): the header says where the image goes. */
static bool load_aout_kludge(struct guest_layout *g, const uint8_t *image, uint64_t len,
			     const struct multiboot_header *h, uint64_t h_off, uint32_t *entry)
{
	uint64_t file_off, load_end, bss_end;

	if (h->header_addr < h->load_addr || h->header_addr - h->load_addr > h_off)
		goto bad;
	file_off = h_off - (h->header_addr - h->load_addr);
	load_end = h->load_end_addr ? h->load_end_addr : h->load_addr + (len - file_off);
	bss_end = h->bss_end_addr ? h->bss_end_addr : load_end;
	if (load_end < h->load_addr || bss_end < load_end)
		goto bad;
	if (!load_segment(g, image, len, file_off, h->load_addr, load_end - h->load_addr,
			  bss_end - h->load_addr))
		return false;
	*entry = h->entry_addr;
	return true;
bad:
	printk("exitplan: guest: inconsistent a.out-kludge address fields\n");
	return false;
}

static const struct multiboot_header *find_header(const uint8_t *image, uint64_t len,
						  uint64_t *off)
{
	for (uint64_t o = 0; o + sizeof(struct multiboot_header) <= len && o < MULTIBOOT_SEARCH;
	     o += 4) {
		const struct multiboot_header *h = (const void *)(image + o);

		if (h->magic == MULTIBOOT_HEADER_MAGIC &&
		    (uint32_t)(h->magic + h->flags + h->checksum) == 0) {
			*off = o;
			return h;
		}
	}
	return NULL;
}

/* --- the multiboot information --------------------------------------------- */

static uint32_t place_string(struct guest_layout *g, const char *s)
{
	size_t n = strlen(s) + 1;
	uint64_t a = guest_place(g, n);

	if (a)
		memcpy(phys_to_virt(a), s, n);
	return (uint32_t)a;
}

static bool build_mbi(struct guest_layout *g, const struct boot_info *bi,
		      struct guest_start *start)
{
	struct multiboot_info *mbi;
	struct multiboot_mmap_entry *mm;
	unsigned int n_mm = 0;
	uint64_t a, low = 0, upper_end = 0x100000;

	a = guest_place(g, sizeof(*mbi) + sizeof(*mm) * (GUEST_MAX_RANGES + BOOT_MMAP_MAX));
	if (!a)
		goto nomem;
	mbi = phys_to_virt(a);
	memset(mbi, 0, sizeof(*mbi));
	start->mbi = (uint32_t)a;
	mm = (struct multiboot_mmap_entry *)(mbi + 1);

	/*
	 * The memory map: the guest's RAM as available, every non-available
	 * entry of the firmware's map as it was (the guest may need to know
	 * where ACPI lives), nothing for the hypervisor region.
	 */
	start->ram_bytes = 0;
	for (unsigned int i = 0, r = 0; i < bi->mmap_count || r < g->n_ram;) {
		bool take_ram = r < g->n_ram &&
				(i >= bi->mmap_count || g->ram[r].start <= bi->mmap[i].addr);

		if (take_ram) {
			mm[n_mm++] = (struct multiboot_mmap_entry){
				.size = sizeof(*mm) - sizeof(mm->size), .addr = g->ram[r].start,
				.len = g->ram[r].end - g->ram[r].start, .type = MULTIBOOT_MEMORY_AVAILABLE,
			};
			start->ram_bytes += g->ram[r].end - g->ram[r].start;
			if (g->ram[r].start == 0)
				low = g->ram[r].end;
			if (g->ram[r].start <= upper_end && g->ram[r].end > upper_end)
				upper_end = g->ram[r].end;
			r++;
		} else {
			const struct boot_mmap_entry *e = &bi->mmap[i++];

			if (e->type == BOOT_MEM_AVAILABLE ||
			    (e->addr < bi->hv_end && e->addr + e->len > bi->hv_start))
				continue;
			mm[n_mm++] = (struct multiboot_mmap_entry){
				.size = sizeof(*mm) - sizeof(mm->size), .addr = e->addr,
				.len = e->len, .type = e->type,
			};
		}
	}
	mbi->flags = MULTIBOOT_INFO_MEMORY | MULTIBOOT_INFO_MEM_MAP | MULTIBOOT_INFO_CMDLINE |
		     MULTIBOOT_INFO_BOOT_LOADER_NAME | MULTIBOOT_INFO_MODS;
	/* KiB below 640 KiB, and contiguous KiB from 1 MiB (up to the hypervisor's hole). */
	mbi->mem_lower = (uint32_t)((low < 0xa0000 ? low : 0xa0000) >> 10);
	mbi->mem_upper = (uint32_t)((upper_end - 0x100000) >> 10);
	mbi->mmap_addr = start->mbi + sizeof(*mbi);
	mbi->mmap_length = n_mm * sizeof(*mm);
	mbi->cmdline = place_string(g, bi->modules[0].cmdline);
	mbi->boot_loader_name = place_string(g, loader_name);
	if (!mbi->cmdline || !mbi->boot_loader_name)
		goto nomem;

	/* Further modules: copied into guest RAM, passed on with their strings. */
	if (bi->module_count > 1) {
		struct multiboot_module *mods;

		a = guest_place(g, sizeof(*mods) * (bi->module_count - 1));
		if (!a)
			goto nomem;
		mods = phys_to_virt(a);
		mbi->mods_addr = (uint32_t)a;
		for (unsigned int i = 1; i < bi->module_count; i++) {
			const struct boot_module *m = &bi->modules[i];
			uint64_t len = m->end - m->start, dst = guest_place(g, len ? len : 1);

			if (!dst)
				goto nomem;
			memcpy(phys_to_virt(dst), phys_to_virt(m->start), len);
			mods[i - 1] = (struct multiboot_module){
				.mod_start = (uint32_t)dst, .mod_end = (uint32_t)(dst + len),
				.cmdline = place_string(g, m->cmdline),
			};
			if (!mods[i - 1].cmdline)
				goto nomem;
		}
		mbi->mods_count = bi->module_count - 1;
	}
	return true;
nomem:
	printk("exitplan: guest: no room in guest RAM for its multiboot information\n");
	return false;
}

/* --- the guest's name, for reports ---------------------------------------- */

/*
 * The file offset of virtual address @va in a PT_LOAD segment's file
 * bytes, or 0.  Called after load_elf() accepted the image, but every
 * field is checked again here: this reads the image by its own offsets.
 */
static uint64_t elf_va_to_offset(const uint8_t *image, uint64_t len, uint64_t va)
{
	bool is64 = image[4] == ELFCLASS64;
	uint64_t phoff = is64 ? ((const struct elf64_ehdr *)image)->phoff
			      : ((const struct elf32_ehdr *)image)->phoff;
	unsigned int phnum = is64 ? ((const struct elf64_ehdr *)image)->phnum
				  : ((const struct elf32_ehdr *)image)->phnum;
	/* The stride is e_phentsize, as load_elf() walks them; never shorter than a header. */
	unsigned int phsz = is64 ? ((const struct elf64_ehdr *)image)->phentsize
				 : ((const struct elf32_ehdr *)image)->phentsize;

	if (phsz < (is64 ? sizeof(struct elf64_phdr) : sizeof(struct elf32_phdr)) ||
	    !in_image(len, phoff, (uint64_t)phnum * phsz))
		return 0;
	for (unsigned int i = 0; i < phnum; i++) {
		uint64_t o = phoff + (uint64_t)i * phsz, type, off, vaddr, filesz;

		if (is64) {
			const struct elf64_phdr *ph = (const void *)(image + o);

			type = ph->type, off = ph->offset, vaddr = ph->vaddr, filesz = ph->filesz;
		} else {
			const struct elf32_phdr *ph = (const void *)(image + o);

			type = ph->type, off = ph->offset, vaddr = ph->vaddr, filesz = ph->filesz;
		}
		/* va - vaddr < filesz: no vaddr + filesz to wrap. */
		if (type == PT_LOAD && va >= vaddr && va - vaddr < filesz &&
		    in_image(len, off, filesz) && off + (va - vaddr) < len)
			return off + (va - vaddr);
	}
	return 0;
}

/*
 * Copy the NUL-terminated string at image[at] into @out, reading nothing
 * past the image's end: a string that runs to the end of the module
 * unterminated is cut there (strlcpy() would strlen() past it).
 */
static void copy_image_string(char *out, size_t size, const uint8_t *image, uint64_t len,
			      uint64_t at)
{
	size_t max, n;

	if (!size)
		return;
	max = size - 1;
	if (len - at < max)
		max = (size_t)(len - at);
	n = strnlen((const char *)image + at, max);
	memcpy(out, image + at, n);
	out[n] = '\0';
}

/* The string the symbol `guest_name` points at, from the image's symbol table. */
static bool elf_guest_name(const uint8_t *image, uint64_t len, char *out, size_t size)
{
	static const char sym[] = "guest_name";
	bool is64;
	uint64_t shoff;
	unsigned int shnum, shsz, symsz;

	if (len < sizeof(struct elf64_ehdr) || memcmp(image, ELF_MAGIC, 4))
		return false;
	is64 = image[4] == ELFCLASS64;
	shoff = is64 ? ((const struct elf64_ehdr *)image)->shoff : ((const struct elf32_ehdr *)image)->shoff;
	shnum = is64 ? ((const struct elf64_ehdr *)image)->shnum : ((const struct elf32_ehdr *)image)->shnum;
	/* The stride is e_shentsize (gABI), at least one header long. */
	shsz = is64 ? ((const struct elf64_ehdr *)image)->shentsize
		    : ((const struct elf32_ehdr *)image)->shentsize;
	symsz = is64 ? sizeof(struct elf64_sym) : sizeof(struct elf32_sym);
	/* Every section header in the image; checked once, before any addition. */
	if (shsz < (is64 ? sizeof(struct elf64_shdr) : sizeof(struct elf32_shdr)) ||
	    !in_image(len, shoff, (uint64_t)shnum * shsz))
		return false;
	for (unsigned int i = 0; i < shnum; i++) {
		uint64_t o = shoff + (uint64_t)i * shsz, off, secsize, link, stroff, strsize;

		if (is64) {
			const struct elf64_shdr *sh = (const void *)(image + o);

			if (sh->type != SHT_SYMTAB)
				continue;
			off = sh->offset, secsize = sh->size, link = sh->link;
		} else {
			const struct elf32_shdr *sh = (const void *)(image + o);

			if (sh->type != SHT_SYMTAB)
				continue;
			off = sh->offset, secsize = sh->size, link = sh->link;
		}
		/* sh_link names the string table; both tables lie in the image. */
		if (link >= shnum || !in_image(len, off, secsize))
			return false;
		if (is64) {
			const struct elf64_shdr *st = (const void *)(image + shoff + link * shsz);

			stroff = st->offset, strsize = st->size;
		} else {
			const struct elf32_shdr *st = (const void *)(image + shoff + link * shsz);

			stroff = st->offset, strsize = st->size;
		}
		if (!in_image(len, stroff, strsize))
			return false;
		for (uint64_t so = off; secsize - (so - off) >= symsz; so += symsz) {
			uint64_t name = is64 ? ((const struct elf64_sym *)(image + so))->name
					     : ((const struct elf32_sym *)(image + so))->name;
			uint64_t value = is64 ? ((const struct elf64_sym *)(image + so))->value
					      : ((const struct elf32_sym *)(image + so))->value;
			uint64_t at;

			/*
			 * The name with its NUL inside the string table: a
			 * table cut after "guest_nam" is not a match.
			 */
			if (name >= strsize || strsize - name < sizeof(sym) ||
			    memcmp(image + stroff + name, sym, sizeof(sym)) ||
			    !(at = elf_va_to_offset(image, len, value)))
				continue;
			copy_image_string(out, size, image, len, at);
			return out[0] != '\0';
		}
	}
	return false;
}

static void guest_identify(const struct boot_info *bi, const uint8_t *image, uint64_t len,
			   struct guest_start *start)
{
	const char *cmd = bi->modules[0].cmdline, *end = strchr(cmd, ' ');
	size_t first = end ? (size_t)(end - cmd) : strlen(cmd);
	bool path = first > 4 && !memcmp(cmd + first - 4, ".elf", 4);

	for (size_t i = 0; i < first; i++)
		path = path || cmd[i] == '/';

	start->args = path ? cmd + first + (end ? 1 : 0) : cmd;
	if (elf_guest_name(image, len, start->name, sizeof(start->name)))
		return;
	if (path) {
		const char *base = cmd;

		for (size_t i = 0; i < first; i++)
			if (cmd[i] == '/')
				base = cmd + i + 1;
		first -= (size_t)(base - cmd);
		if (first > 4 && !memcmp(base + first - 4, ".elf", 4))
			first -= 4;
		if (first >= sizeof(start->name))
			first = sizeof(start->name) - 1;
		memcpy(start->name, base, first);
		start->name[first] = '\0';
		return;
	}
	strlcpy(start->name, "unknown", sizeof(start->name));
}

bool guest_load(const struct boot_info *bi, struct guest_start *start)
{
	static struct guest_layout g;	/* large; built once at boot */
	const struct multiboot_header *h;
	const uint8_t *image;
	uint64_t len, h_off = 0;
	uint32_t entry = 0;
	bool ok;

	if (!bi->module_count) {
		printk("exitplan: no guest: the boot loader passed no module\n");
		return false;
	}
	image = phys_to_virt(bi->modules[0].start);
	len = bi->modules[0].end - bi->modules[0].start;
	start->boot_params = 0;
	/* A bzImage is booted by the Linux boot protocol instead. */
	if (linux_is_bzimage(image, len))
		return linux_load(bi, start);
	memset(&g, 0, sizeof(g));
	g.n_ram = guest_ram_ranges(bi, g.ram, ARRAY_SIZE(g.ram));
	g.hv_start = bi->hv_start;
	g.hv_end = bi->hv_end;

	h = find_header(image, len, &h_off);
	if (!h) {
		printk("exitplan: guest: no multiboot header in the first %u bytes of module 0\n",
		       MULTIBOOT_SEARCH);
		return false;
	}
	if (h->flags & MULTIBOOT_HEADER_UNSUPPORTED) {
		printk("exitplan: guest: multiboot header requires features %#x this loader lacks\n",
		       h->flags & MULTIBOOT_HEADER_UNSUPPORTED);
		return false;
	}
	/* Like GRUB: an ELF image is loaded by its program headers even with the kludge bit. */
	if (len >= 4 && !memcmp(image, ELF_MAGIC, 4))
		ok = load_elf(&g, image, len, &entry);
	else if (h->flags & MULTIBOOT_AOUT_KLUDGE)
		ok = load_aout_kludge(&g, image, len, h, h_off, &entry);
	else
		ok = load_elf(&g, image, len, &entry);
	if (!ok || !build_mbi(&g, bi, start))
		return false;
	start->entry = entry;
	guest_identify(bi, image, len, start);
	printk("exitplan: guest '%s' (\"%s\"): %llu KiB image, entry %#x, %llu MiB of RAM\n",
	       start->name, start->args, (unsigned long long)(len >> 10), entry,
	       (unsigned long long)(start->ram_bytes >> 20));
	return true;
}
