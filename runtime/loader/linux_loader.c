// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Linux boot-protocol loader (linux_loader.h).  Offsets and flags are
 * those of Documentation/arch/x86/boot.rst ("The real-mode kernel header",
 * "Details of header fields", "32-bit boot protocol") and of the zero
 * page (Documentation/arch/x86/zero-page.rst).
 */
#include "runtime/host/boot_info.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/loader/linux_loader.h"
#include "runtime/host/layout.h"
#include "runtime/host/page_alloc.h"
#include "lib/string.h"

/* The setup header inside the zero page and the image's first sector. */
#define HDR_START		0x1f1	/* setup_sects: the header starts here */
#define HDR_SETUP_SECTS		0x1f1	/* u8: 512-byte setup sectors; 0 means 4 */
#define HDR_SYSSIZE		0x1f4	/* u32: protected-mode size in 16-byte units */
#define HDR_VID_MODE		0x1fa	/* u16 */
#define HDR_BOOT_FLAG		0x1fe	/* u16: 0xaa55 */
#define HDR_JUMP		0x200	/* u16: jmp short; its offset ends the header */
#define HDR_MAGIC		0x202	/* "HdrS" */
#define HDR_VERSION		0x206	/* u16 */
#define HDR_TYPE_OF_LOADER	0x210	/* u8 */
#define HDR_LOADFLAGS		0x211	/* u8 */
#define HDR_CODE32_START	0x214	/* u32 */
#define HDR_RAMDISK_IMAGE	0x218	/* u32 */
#define HDR_RAMDISK_SIZE	0x21c	/* u32 */
#define HDR_CMD_LINE_PTR	0x228	/* u32 */
#define HDR_INITRD_ADDR_MAX	0x22c	/* u32: highest address the initrd may end at */
#define HDR_KERNEL_ALIGNMENT	0x230	/* u32 */
#define HDR_RELOCATABLE		0x234	/* u8 */
#define HDR_CMDLINE_SIZE	0x238	/* u32: without the NUL */
#define HDR_PREF_ADDRESS	0x258	/* u64 */
#define HDR_INIT_SIZE		0x260	/* u32: linear memory the kernel needs */

#define LOADED_HIGH		(1u << 0)	/* protected-mode code at 0x100000 (bzImage) */
#define KEEP_SEGMENTS		(1u << 6)	/* obsolete: must be clear */
#define LOADER_UNDEFINED	0xff		/* type_of_loader: no assigned ID */
#define VID_MODE_NORMAL		0xffff

/* The zero page outside the setup header (zero-page.rst). */
#define ZP_EXT_RAMDISK_IMAGE	0x0c0
#define ZP_EXT_RAMDISK_SIZE	0x0c4
#define ZP_EXT_CMD_LINE_PTR	0x0c8
#define ZP_E820_ENTRIES		0x1e8	/* u8 */
#define ZP_E820_TABLE		0x2d0	/* struct boot_e820_entry[128] */
#define ZP_E820_MAX		128
#define E820_RAM		1

struct boot_e820_entry {
	uint64_t addr, size;
	uint32_t type;
} __packed;

#define LOW_1M			0x100000ull
#define BELOW_4G		0x100000000ull

static uint8_t rd8(const uint8_t *p, unsigned int off) { return p[off]; }

static uint16_t rd16(const uint8_t *p, unsigned int off)
{
	uint16_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p, unsigned int off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p, unsigned int off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static void wr8(uint8_t *p, unsigned int off, uint8_t v) { p[off] = v; }
static void wr16(uint8_t *p, unsigned int off, uint16_t v) { memcpy(p + off, &v, sizeof(v)); }
static void wr32(uint8_t *p, unsigned int off, uint32_t v) { memcpy(p + off, &v, sizeof(v)); }

bool linux_is_bzimage(const uint8_t *image, uint64_t len)
{
	return len >= HDR_MAGIC + 4 && !memcmp(image + HDR_MAGIC, "HdrS", 4);
}

/* --- placing pieces in guest RAM ------------------------------------------ */

struct taken {
	uint64_t start[4], end[4];
	unsigned int n;
};

static bool in_ram(const struct phys_range *ram, unsigned int n, uint64_t s, uint64_t e)
{
	for (unsigned int i = 0; i < n; i++)
		if (s >= ram[i].start && e <= ram[i].end)
			return true;
	return false;
}

static void take(struct taken *t, uint64_t s, uint64_t e)
{
	t->start[t->n] = s;
	t->end[t->n] = e;
	t->n++;
}

/*
 * The highest page-aligned place of @size bytes in @ram, at or above 1 MiB
 * and ending at or below @limit, clear of what is taken; 0 if none.  Top
 * down, as GRUB places an initrd: the kernel's decompression room at the
 * bottom stays free.
 */
static uint64_t place_high(const struct phys_range *ram, unsigned int n,
			   const struct taken *t, uint64_t size, uint64_t limit)
{
	size = ALIGN_UP(size ? size : 1, (uint64_t)PAGE_SIZE);
	for (unsigned int i = n; i-- > 0;) {
		uint64_t lo = ram[i].start < LOW_1M ? LOW_1M : ram[i].start;
		uint64_t hi = ram[i].end < limit ? ram[i].end : limit;

		hi = ALIGN_DOWN(hi, (uint64_t)PAGE_SIZE);
		while (hi >= lo + size) {
			uint64_t a = hi - size;
			bool moved = false;

			for (unsigned int u = 0; u < t->n; u++) {
				if (a < t->end[u] && a + size > t->start[u]) {
					hi = ALIGN_DOWN(t->start[u], (uint64_t)PAGE_SIZE);
					moved = true;
					break;
				}
			}
			if (!moved)
				return a;
		}
	}
	return 0;
}

/* --- the e820 map ----------------------------------------------------------- */

static unsigned int build_e820(uint8_t *zp, const struct phys_range *ram, unsigned int n_ram,
			       const struct linux_e820_in *res, unsigned int n_res,
			       const struct phys_range *hv, uint64_t *ram_bytes)
{
	struct boot_e820_entry *e = (struct boot_e820_entry *)(zp + ZP_E820_TABLE);
	unsigned int n = 0, r = 0, i = 0;

	*ram_bytes = 0;
	/* Both lists are sorted: merge them by address, RAM first on a tie. */
	while ((r < n_ram || i < n_res) && n < ZP_E820_MAX) {
		struct boot_e820_entry x;

		if (r < n_ram && (i >= n_res || ram[r].start <= res[i].addr)) {
			x = (struct boot_e820_entry){ ram[r].start, ram[r].end - ram[r].start, E820_RAM };
			*ram_bytes += x.size;
			r++;
		} else {
			/* Firmware entries over the hypervisor region stay hidden. */
			if (!res[i].len || res[i].type == E820_RAM ||
			    (res[i].addr < hv->end && res[i].addr + res[i].len > hv->start)) {
				i++;
				continue;
			}
			x = (struct boot_e820_entry){ res[i].addr, res[i].len, res[i].type };
			i++;
		}
		memcpy(&e[n++], &x, sizeof(x));
	}
	return n;
}

/* --- the plan --------------------------------------------------------------- */

bool linux_plan(const uint8_t *image, uint64_t len, const char *cmdline,
		bool have_initrd, uint64_t initrd_len,
		const struct phys_range *ram, unsigned int n_ram,
		const struct linux_e820_in *reserved, unsigned int n_reserved,
		const struct phys_range *hv, struct linux_plan *p)
{
	struct taken t = { .n = 0 };
	unsigned int setup_sects, hdr_end, n_e820;
	uint64_t setup_len, cmd_len, initrd_max, addr;
	uint32_t init_size;
	uint8_t *zp = p->zero_page;

	memset(p, 0, sizeof(*p));
	if (!linux_is_bzimage(image, len) || len < HDR_INIT_SIZE + 4) {
		printk("exitplan: linux: image too short for a setup header (%llu bytes)\n",
		       (unsigned long long)len);
		return false;
	}
	p->version = rd16(image, HDR_VERSION);
	if (p->version < LINUX_MIN_PROTOCOL) {
		printk("exitplan: linux: boot protocol %u.%02u is older than %u.%02u\n",
		       p->version >> 8, p->version & 0xff, LINUX_MIN_PROTOCOL >> 8,
		       LINUX_MIN_PROTOCOL & 0xff);
		return false;
	}
	if (rd16(image, HDR_BOOT_FLAG) != 0xaa55) {
		printk("exitplan: linux: no boot_flag 0xaa55 in the setup header\n");
		return false;
	}
	if (!(rd8(image, HDR_LOADFLAGS) & LOADED_HIGH)) {
		printk("exitplan: linux: not a bzImage (LOADED_HIGH clear): zImage is not supported\n");
		return false;
	}
	/* The header runs from 0x1f1 to the jump's target (boot.rst: 0x202 + byte 0x201). */
	hdr_end = HDR_MAGIC + rd8(image, HDR_JUMP + 1);
	if (hdr_end < HDR_INIT_SIZE + 4 || hdr_end > len || hdr_end > ZP_E820_TABLE) {
		printk("exitplan: linux: setup header length %u is inconsistent\n", hdr_end - HDR_START);
		return false;
	}
	setup_sects = rd8(image, HDR_SETUP_SECTS);
	if (!setup_sects)
		setup_sects = 4;
	setup_len = (uint64_t)(setup_sects + 1) * 512;
	if (setup_len >= len || (uint64_t)rd32(image, HDR_SYSSIZE) * 16 > len - setup_len) {
		printk("exitplan: linux: image truncated: %llu bytes, the header wants %llu\n",
		       (unsigned long long)len,
		       (unsigned long long)(setup_len + (uint64_t)rd32(image, HDR_SYSSIZE) * 16));
		return false;
	}
	p->kernel_file_off = setup_len;
	p->kernel_file_len = len - setup_len;
	init_size = rd32(image, HDR_INIT_SIZE);
	p->kernel_mem_len = init_size > p->kernel_file_len ? init_size : p->kernel_file_len;

	/*
	 * Where the kernel goes: pref_address for a relocatable kernel
	 * (2.10), else 0x100000.  It must be RAM for all of init_size.
	 */
	addr = LOW_1M;
	if (rd8(image, HDR_RELOCATABLE)) {
		uint64_t pref = rd64(image, HDR_PREF_ADDRESS);
		uint32_t align = rd32(image, HDR_KERNEL_ALIGNMENT);

		if (pref && (!align || !(align & (align - 1))) && !(align && (pref & (align - 1)))) {
			addr = pref;
			/*
			 * A relocatable kernel runs at any kernel_alignment-aligned
			 * address (boot.rst): where pref_address is not RAM for all
			 * of init_size (Debian's wants [16 MiB, 79 MiB), across the
			 * hypervisor's region), the first such place above it that is.
			 */
			for (unsigned int i = 0; align && i < n_ram &&
			     !in_ram(ram, n_ram, addr, addr + p->kernel_mem_len); i++) {
				uint64_t a = ALIGN_UP(ram[i].start > pref ? ram[i].start : pref,
						      (uint64_t)align);

				if (a + p->kernel_mem_len <= ram[i].end)
					addr = a;
			}
		}
	}
	if (addr + p->kernel_mem_len < addr || addr + p->kernel_mem_len > BELOW_4G ||
	    !in_ram(ram, n_ram, addr, addr + p->kernel_mem_len)) {
		printk("exitplan: linux: the kernel needs [%#llx, %#llx), which is not guest RAM\n",
		       (unsigned long long)addr, (unsigned long long)(addr + p->kernel_mem_len));
		return false;
	}
	p->kernel_addr = addr;
	take(&t, addr, addr + p->kernel_mem_len);

	/* The command line: at most cmdline_size bytes before its NUL. */
	cmd_len = strlen(cmdline);
	if (cmd_len > rd32(image, HDR_CMDLINE_SIZE)) {
		printk("exitplan: linux: command line of %llu bytes, the kernel takes %u\n",
		       (unsigned long long)cmd_len, rd32(image, HDR_CMDLINE_SIZE));
		return false;
	}

	/* The initrd as high as it may go: it ends at or below initrd_addr_max. */
	initrd_max = (uint64_t)rd32(image, HDR_INITRD_ADDR_MAX) + 1;
	if (have_initrd) {
		p->initrd_addr = initrd_len > initrd_max ? 0
				 : place_high(ram, n_ram, &t, initrd_len, initrd_max);
		if (!p->initrd_addr) {
			printk("exitplan: linux: no room for the %llu KiB initrd in guest RAM "
			       "below initrd_addr_max %#llx\n", (unsigned long long)(initrd_len >> 10),
			       (unsigned long long)(initrd_max - 1));
			return false;
		}
		take(&t, p->initrd_addr, p->initrd_addr + ALIGN_UP(initrd_len ? initrd_len : 1,
								  (uint64_t)PAGE_SIZE));
	}
	/* The zero page and the command line: one page each, below 4 GiB. */
	p->zero_page_addr = place_high(ram, n_ram, &t, PAGE_SIZE, BELOW_4G);
	if (p->zero_page_addr)
		take(&t, p->zero_page_addr, p->zero_page_addr + PAGE_SIZE);
	p->cmdline_addr = place_high(ram, n_ram, &t, cmd_len + 1, BELOW_4G);
	if (!p->zero_page_addr || !p->cmdline_addr) {
		printk("exitplan: linux: no room in guest RAM for boot_params and the command line\n");
		return false;
	}

	/* boot_params: zero, the setup header as the image has it, then our fields. */
	memset(zp, 0, LINUX_ZERO_PAGE_SIZE);
	memcpy(zp + HDR_START, image + HDR_START, hdr_end - HDR_START);
	wr16(zp, HDR_VID_MODE, VID_MODE_NORMAL);
	wr8(zp, HDR_TYPE_OF_LOADER, LOADER_UNDEFINED);
	wr8(zp, HDR_LOADFLAGS, rd8(zp, HDR_LOADFLAGS) & ~KEEP_SEGMENTS);
	wr32(zp, HDR_CODE32_START, (uint32_t)p->kernel_addr);
	wr32(zp, HDR_CMD_LINE_PTR, (uint32_t)p->cmdline_addr);
	wr32(zp, ZP_EXT_CMD_LINE_PTR, (uint32_t)(p->cmdline_addr >> 32));
	wr32(zp, HDR_RAMDISK_IMAGE, (uint32_t)p->initrd_addr);
	wr32(zp, HDR_RAMDISK_SIZE, have_initrd ? (uint32_t)initrd_len : 0);
	wr32(zp, ZP_EXT_RAMDISK_IMAGE, (uint32_t)(p->initrd_addr >> 32));
	wr32(zp, ZP_EXT_RAMDISK_SIZE, have_initrd ? (uint32_t)(initrd_len >> 32) : 0);
	n_e820 = build_e820(zp, ram, n_ram, reserved, n_reserved, hv, &p->ram_bytes);
	wr8(zp, ZP_E820_ENTRIES, (uint8_t)n_e820);
	return true;
}

/* --- into guest RAM --------------------------------------------------------- */

bool linux_load(const struct boot_info *bi, struct guest_start *start)
{
	static struct phys_range ram[GUEST_MAX_RANGES];
	static struct linux_e820_in res[BOOT_MMAP_MAX];
	static struct linux_plan plan;	/* 4 KiB and more: not on the stack */
	const uint8_t *image = phys_to_virt(bi->modules[0].start);
	uint64_t len = bi->modules[0].end - bi->modules[0].start, initrd_len = 0;
	bool have_initrd = bi->module_count > 1;
	unsigned int n_ram, n_res = 0;

	if (bi->module_count > 2)
		printk("exitplan: linux: modules after the initrd are ignored (%u given)\n",
		       bi->module_count - 2);
	n_ram = guest_ram_ranges(bi, ram, ARRAY_SIZE(ram));
	for (unsigned int i = 0; i < bi->mmap_count; i++)
		if (bi->mmap[i].type != BOOT_MEM_AVAILABLE)
			res[n_res++] = (struct linux_e820_in){ bi->mmap[i].addr, bi->mmap[i].len,
							       bi->mmap[i].type };
	if (have_initrd)
		initrd_len = bi->modules[1].end - bi->modules[1].start;
	if (!linux_plan(image, len, bi->modules[0].cmdline, have_initrd, initrd_len,
			ram, n_ram, res, n_res,
			&(struct phys_range){ bi->hv_start, bi->hv_end }, &plan))
		return false;

	memcpy(phys_to_virt(plan.kernel_addr), image + plan.kernel_file_off, plan.kernel_file_len);
	memcpy(phys_to_virt(plan.zero_page_addr), plan.zero_page, LINUX_ZERO_PAGE_SIZE);
	strlcpy(phys_to_virt(plan.cmdline_addr), bi->modules[0].cmdline, PAGE_SIZE);
	if (have_initrd)
		memcpy(phys_to_virt(plan.initrd_addr), phys_to_virt(bi->modules[1].start), initrd_len);

	start->entry = (uint32_t)plan.kernel_addr;
	start->mbi = 0;
	start->boot_params = (uint32_t)plan.zero_page_addr;
	start->ram_bytes = plan.ram_bytes;
	strlcpy(start->name, "linux", sizeof(start->name));
	start->args = bi->modules[0].cmdline;
	printk("exitplan: guest 'linux': boot protocol %u.%02u, %llu KiB kernel at %#llx "
	       "(needs %llu KiB), initrd %llu KiB at %#llx, boot_params at %#llx, %llu MiB of RAM\n",
	       plan.version >> 8, plan.version & 0xff,
	       (unsigned long long)(plan.kernel_file_len >> 10), (unsigned long long)plan.kernel_addr,
	       (unsigned long long)(plan.kernel_mem_len >> 10), (unsigned long long)(initrd_len >> 10),
	       (unsigned long long)plan.initrd_addr, (unsigned long long)plan.zero_page_addr,
	       (unsigned long long)(plan.ram_bytes >> 20));
	return true;
}
