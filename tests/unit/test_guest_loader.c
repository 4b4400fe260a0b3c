// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/loader/guest_loader.c: multiboot v1 guests (ELF32, ELF64, the a.out
 * kludge) built here in memory, loaded by guest_load(), and the guest's
 * multiboot information it builds: memory map without the hypervisor
 * region, mem_lower/mem_upper, command line, modules.  Malformed images
 * and images that reach into the hypervisor region are refused with the
 * loader's message.
 *
 * The loader writes guest-physical memory through phys_to_virt(), which
 * is the identity (physical == virtual in the hypervisor).  The test gives
 * it real memory at those addresses: an anonymous mapping at
 * [GUEST_MEM_START, GUEST_MEM_END) of this process, which holds the
 * guest's RAM above 1 MiB and the hypervisor region where boot modules
 * live.  Below 1 MiB is left unmapped: the loader must put nothing there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "runtime/host/boot_info.h"
#include "runtime/host/compiler.h"
#include "fake_runtime.h"
#include "runtime/loader/guest_loader.h"
#include "runtime/host/layout.h"
#include "lib/multiboot.h"
#include "test_layout.h"

#define MiB		0x100000ull

#define GUEST_MEM_START	(1 * MiB)
#define GUEST_MEM_END	(160 * MiB)
/* Where the boot loader left module 1 (inside the hypervisor region). */
#define MODULE1_PA	(TEST_HV_START + 16 * MiB)

/* Multiboot header flags (Multiboot 0.6.96 3.1.2): bit 16, the a.out kludge. */
#define MB_AOUT_KLUDGE	(1u << 16)
#define MB_VIDEO_MODE	(1u << 2)

static void *mem;

static int group_setup(void **state)
{
	(void)state;
	mem = mmap((void *)GUEST_MEM_START, GUEST_MEM_END - GUEST_MEM_START,
		   PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE, -1, 0);
	if (mem != (void *)GUEST_MEM_START) {
		fprintf(stderr, "test_guest_loader: cannot map [%#llx, %#llx) for guest memory\n",
			(unsigned long long)GUEST_MEM_START, (unsigned long long)GUEST_MEM_END);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	munmap(mem, GUEST_MEM_END - GUEST_MEM_START);
	return 0;
}

static void *pa(uint64_t addr)
{
	assert_true(addr >= GUEST_MEM_START && addr < GUEST_MEM_END);
	return (void *)(uintptr_t)addr;
}

/* --- boot information ---------------------------------------------------- */

static struct boot_info bi;

/* QEMU's 160 MiB pc machine, as SeaBIOS reports it. */
static void default_map(void)
{
	static const struct boot_mmap_entry m[] = {
		{ 0x0, 0x9fc00, BOOT_MEM_AVAILABLE },
		{ 0x9fc00, 0x400, BOOT_MEM_RESERVED },
		{ 0xf0000, 0x10000, BOOT_MEM_RESERVED },
		{ 0x100000, 0x9f00000, BOOT_MEM_AVAILABLE },	/* to 160 MiB */
		{ 0xfffc0000, 0x40000, BOOT_MEM_RESERVED },
	};

	memcpy(bi.mmap, m, sizeof(m));
	bi.mmap_count = ARRAY_SIZE(m);
}

/*
 * Module 0 is @image, copied into a heap buffer of exactly its size: the
 * loader reaches it through phys_to_virt() (the identity), so a heap
 * address works as well as the hypervisor region's, and ASan reports any
 * read past the module's end.
 */
static uint8_t *module0;

static void set_module0(const void *image, size_t len, const char *cmdline)
{
	free(module0);
	module0 = malloc(len ? len : 1);
	assert_non_null(module0);
	memcpy(module0, image, len);
	bi.modules[0] = (struct boot_module){ .start = (uintptr_t)module0,
					      .end = (uintptr_t)module0 + len,
					      .loaded_start = (uintptr_t)module0 };
	strcpy(bi.modules[0].cmdline, cmdline);
	if (!bi.module_count)
		bi.module_count = 1;
}

static int teardown(void **state)
{
	(void)state;
	free(module0);
	module0 = NULL;
	return 0;
}

static int setup(void **state)
{
	(void)state;
	/* Fresh zero pages: the test sees what the loader wrote and nothing older. */
	assert_int_equal(madvise(mem, GUEST_MEM_END - GUEST_MEM_START, MADV_DONTNEED), 0);
	memset(&bi, 0, sizeof(bi));
	default_map();
	bi.hv_start = TEST_HV_START;
	bi.hv_end = TEST_HV_END;
	fake_printk_reset();
	return 0;
}

/* --- images --------------------------------------------------------------- */

struct elf32_ehdr {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version, entry, phoff, shoff, flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
} __attribute__((packed));

struct elf32_phdr {
	uint32_t type, offset, vaddr, paddr, filesz, memsz, flags, align;
} __attribute__((packed));

struct elf64_ehdr {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
} __attribute__((packed));

struct elf64_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
} __attribute__((packed));

struct mb_header {
	uint32_t magic, flags, checksum;
	uint32_t header_addr, load_addr, load_end_addr, bss_end_addr, entry_addr;
} __attribute__((packed));

#define PT_LOAD		1
#define PT_NOTE		4
#define EM_386		3
#define EM_X86_64	62

struct seg {
	uint32_t type;
	uint64_t offset, paddr, filesz, memsz;
};

static uint8_t image[0x10000];
static size_t image_len;

/* The file bytes of a segment: a pattern that differs by segment and offset. */
static uint8_t fill_byte(unsigned int seg, uint64_t off)
{
	return (uint8_t)(0x11 * (seg + 1) + off * 7 + (off >> 8));
}

static void put_mb_header(size_t off, uint32_t flags)
{
	struct mb_header h = { .magic = MULTIBOOT_HEADER_MAGIC, .flags = flags };

	h.checksum = -(h.magic + h.flags);
	memcpy(image + off, &h, sizeof(h));
}

/* An ELF image with segments @s, a multiboot header at 0x200, fill patterns. */
static void build_elf(bool is64, const struct seg *s, unsigned int n, uint64_t entry)
{
	memset(image, 0, sizeof(image));
	image_len = 0x1000;
	for (unsigned int i = 0; i < n; i++) {
		for (uint64_t o = 0; o < s[i].filesz && s[i].offset + o < sizeof(image); o++)
			image[s[i].offset + o] = fill_byte(i, o);
		if (s[i].offset + s[i].filesz > image_len && s[i].offset + s[i].filesz <= sizeof(image))
			image_len = s[i].offset + s[i].filesz;
	}
	memcpy(image, "\177ELF", 4);
	image[4] = is64 ? 2 : 1;	/* ELFCLASS */
	image[5] = 1;			/* little endian */
	image[6] = 1;			/* EV_CURRENT */
	if (is64) {
		struct elf64_ehdr eh = {
			.type = 2, .machine = EM_X86_64, .version = 1, .entry = entry,
			.phoff = sizeof(eh), .ehsize = sizeof(eh),
			.phentsize = sizeof(struct elf64_phdr), .phnum = n,
		};

		memcpy(eh.ident, image, 16);
		memcpy(image, &eh, sizeof(eh));
		for (unsigned int i = 0; i < n; i++) {
			struct elf64_phdr ph = {
				.type = s[i].type, .flags = 7, .offset = s[i].offset,
				.vaddr = s[i].paddr, .paddr = s[i].paddr,
				.filesz = s[i].filesz, .memsz = s[i].memsz, .align = 0x1000,
			};

			memcpy(image + sizeof(eh) + i * sizeof(ph), &ph, sizeof(ph));
		}
	} else {
		struct elf32_ehdr eh = {
			.type = 2, .machine = EM_386, .version = 1, .entry = (uint32_t)entry,
			.phoff = sizeof(eh), .ehsize = sizeof(eh),
			.phentsize = sizeof(struct elf32_phdr), .phnum = n,
		};

		memcpy(eh.ident, image, 16);
		memcpy(image, &eh, sizeof(eh));
		for (unsigned int i = 0; i < n; i++) {
			struct elf32_phdr ph = {
				.type = s[i].type, .offset = (uint32_t)s[i].offset,
				.vaddr = (uint32_t)s[i].paddr, .paddr = (uint32_t)s[i].paddr,
				.filesz = (uint32_t)s[i].filesz, .memsz = (uint32_t)s[i].memsz,
				.flags = 7, .align = 0x1000,
			};

			memcpy(image + sizeof(eh) + i * sizeof(ph), &ph, sizeof(ph));
		}
	}
	put_mb_header(0x200, MULTIBOOT_PAGE_ALIGN | MULTIBOOT_MEMORY_INFO);
}

/* A kernel as the test guests are: text at 1 MiB, data with .bss after it. */
static const struct seg kernel[] = {
	{ PT_LOAD, 0x1000, 0x100000, 0x1000, 0x1000 },
	{ PT_LOAD, 0x2000, 0x102000, 0x0800, 0x3000 },	/* 0x2800 bytes of .bss */
	/* Not loaded: a note whose address is in the hypervisor region. */
	{ PT_NOTE, 0x200, TEST_HV_START, 0x20, 0x20 },
};
#define KERNEL_ENTRY	0x100010

/* The segment's bytes are in guest memory, the rest up to memsz zero. */
static void assert_segment_loaded(unsigned int i, const struct seg *s)
{
	const uint8_t *p = pa(s->paddr);

	for (uint64_t o = 0; o < s->memsz; o++) {
		uint8_t want = o < s->filesz ? fill_byte(i, o) : 0;

		if (p[o] != want)
			fail_msg("segment %u: byte %#llx at %#llx is %#x, want %#x", i,
				 (unsigned long long)o, (unsigned long long)(s->paddr + o), p[o], want);
	}
}

static bool load(struct guest_start *st)
{
	memset(st, 0, sizeof(*st));
	return guest_load(&bi, st);
}

/* --- the multiboot information -------------------------------------------- */

static const struct multiboot_info *mbi_of(const struct guest_start *st)
{
	return pa(st->mbi);
}

/* The guest's memory map: the loader's RAM ranges, the firmware's other entries. */
static void assert_guest_map(const struct guest_start *st)
{
	const struct multiboot_info *mbi = mbi_of(st);
	const uint8_t *p, *end;
	uint64_t ram = 0, avail_end = 0;
	unsigned int n = 0;

	assert_true(mbi->flags & MULTIBOOT_INFO_MEM_MAP);
	p = pa(mbi->mmap_addr);
	end = p + mbi->mmap_length;
	while (p < end) {
		const struct multiboot_mmap_entry *e = (const void *)p;

		/* Nothing of the guest's map may touch the hypervisor region. */
		if (e->addr < TEST_HV_END && e->addr + e->len > TEST_HV_START)
			fail_msg("guest memory map entry [%#llx, %#llx) type %u overlaps the hypervisor",
				 (unsigned long long)e->addr, (unsigned long long)(e->addr + e->len),
				 e->type);
		if (e->type == MULTIBOOT_MEMORY_AVAILABLE) {
			/* Available entries: sorted and disjoint, so RAM is counted once. */
			if (n && e->addr < avail_end)
				fail_msg("guest memory map: available [%#llx, %#llx) overlaps or "
					 "precedes the previous one (ending %#llx)",
					 (unsigned long long)e->addr,
					 (unsigned long long)(e->addr + e->len),
					 (unsigned long long)avail_end);
			avail_end = e->addr + e->len;
			ram += e->len;
		}
		assert_int_equal(e->size, sizeof(*e) - 4);
		p += e->size + 4;
		n++;
	}
	assert_true(n > 0);
	assert_int_equal(ram, st->ram_bytes);
}

/* --- tests: loading -------------------------------------------------------- */

static void check_kernel_loaded(bool is64)
{
	struct guest_start st;

	/* Garbage where .bss goes: the loader must clear it. */
	memset(pa(0x102000), 0xaa, 0x3000);
	build_elf(is64, kernel, ARRAY_SIZE(kernel), KERNEL_ENTRY);
	set_module0(image, image_len, "/boot/guest.elf code=3 verbose");
	if (!load(&st))
		fail_msg("guest_load failed: %s", fake_printk_log);
	assert_int_equal(st.entry, KERNEL_ENTRY);
	for (unsigned int i = 0; i < 2; i++)
		assert_segment_loaded(i, &kernel[i]);
	/* The module itself is not modified. */
	assert_memory_equal(module0, image, image_len);
	/* The information structure is in guest RAM, not over the kernel. */
	assert_true(st.mbi >= 0x100000 && st.mbi < TEST_HV_START);
	for (unsigned int i = 0; i < 2; i++)
		assert_true(st.mbi >= kernel[i].paddr + kernel[i].memsz ||
			    st.mbi + sizeof(struct multiboot_info) <= kernel[i].paddr);
	assert_guest_map(&st);
	/* Its name and arguments for reports. */
	assert_string_equal(st.name, "guest");
	assert_string_equal(st.args, "code=3 verbose");
}

static void test_elf32(void **state)
{
	(void)state;
	check_kernel_loaded(false);
}

static void test_elf64(void **state)
{
	(void)state;
	check_kernel_loaded(true);
}

/* The a.out kludge: the header's address fields say where the file goes. */
static void test_aout_kludge(void **state)
{
	struct guest_start st;
	struct mb_header h = {
		.magic = MULTIBOOT_HEADER_MAGIC,
		.flags = MULTIBOOT_PAGE_ALIGN | MULTIBOOT_MEMORY_INFO | MB_AOUT_KLUDGE,
		/* The header sits 0x40 bytes into the file, loaded at 2 MiB. */
		.header_addr = 0x200040, .load_addr = 0x200000,
		.load_end_addr = 0x201800, .bss_end_addr = 0x204000, .entry_addr = 0x200080,
	};

	(void)state;
	h.checksum = -(h.magic + h.flags);
	memset(image, 0, sizeof(image));
	for (unsigned int o = 0; o < 0x2000; o++)
		image[o] = fill_byte(0, o);
	memcpy(image + 0x40, &h, sizeof(h));
	image_len = 0x2000;	/* 0x800 bytes after load_end are not loaded */
	memset(pa(0x200000), 0xaa, 0x5000);
	set_module0(image, image_len, "aout-guest");
	if (!load(&st))
		fail_msg("guest_load failed: %s", fake_printk_log);
	assert_int_equal(st.entry, 0x200080);
	assert_memory_equal(pa(0x200000), image, 0x1800);
	for (unsigned int o = 0x1800; o < 0x4000; o++)
		assert_int_equal(((uint8_t *)pa(0x200000))[o], 0);	/* bss */
	assert_int_equal(((uint8_t *)pa(0x200000))[0x4000], 0xaa);	/* past bss_end */
	assert_guest_map(&st);
	assert_string_equal(st.name, "unknown");	/* no path, no guest_name symbol */
	assert_string_equal(st.args, "aout-guest");

	/* load_end_addr 0: the whole file; bss_end_addr 0: no .bss. */
	setup(NULL);
	h.load_end_addr = 0;
	h.bss_end_addr = 0;
	h.checksum = -(h.magic + h.flags);
	memcpy(image + 0x40, &h, sizeof(h));
	memset(pa(0x200000), 0xaa, 0x5000);
	set_module0(image, image_len, "");
	if (!load(&st))
		fail_msg("guest_load failed: %s", fake_printk_log);
	assert_memory_equal(pa(0x200000), image, 0x2000);
	assert_int_equal(((uint8_t *)pa(0x200000))[0x2000], 0xaa);
}

/* --- tests: refusals ----------------------------------------------------- */

#define expect_refused(message) expect_refused_at(__LINE__, message)
static void expect_refused_at(int line, const char *message)
{
	struct guest_start st;

	fake_printk_reset();
	set_module0(image, image_len, "refused");
	if (load(&st))
		fail_msg("line %d: an image that should be refused (\"%s\") was loaded",
			 line, message);
	if (!fake_printk_contains(message))
		fail_msg("line %d: refused, but the message \"%s\" is missing; printed: %s",
			 line, message, fake_printk_log);
}

static void test_refuses_hypervisor_region(void **state)
{
	static const struct seg inside[] = {
		{ PT_LOAD, 0x1000, TEST_HV_START + 0x100000, 0x100, 0x100 },
	};
	static const struct seg across_start[] = {
		{ PT_LOAD, 0x1000, TEST_HV_START - 0x1000, 0x100, 0x2000 },	/* .bss reaches in */
	};
	static const struct seg across_end[] = {
		{ PT_LOAD, 0x1000, TEST_HV_END - 0x100, 0x200, 0x200 },
	};
	static const struct seg last_byte[] = {
		{ PT_LOAD, 0x1000, TEST_HV_START - 0x100, 0x100, 0x101 },	/* one byte in */
	};
	static const struct seg fits[] = {
		{ PT_LOAD, 0x1000, TEST_HV_START - 0x100, 0x100, 0x100 },	/* ends at the edge */
		{ PT_LOAD, 0x1100, TEST_HV_END, 0x100, 0x100 },		/* starts at the edge */
	};
	struct guest_start st;

	(void)state;
	for (int is64 = 0; is64 < 2; is64++) {
		build_elf(is64, inside, 1, 0x100000);
		expect_refused("is not in guest RAM");
		build_elf(is64, across_start, 1, 0x100000);
		expect_refused("is not in guest RAM");
		build_elf(is64, across_end, 1, 0x100000);
		expect_refused("is not in guest RAM");
		build_elf(is64, last_byte, 1, 0x100000);
		expect_refused("is not in guest RAM");
		/* Segments that touch the region without entering it load. */
		setup(NULL);
		build_elf(is64, fits, 2, TEST_HV_END);
		set_module0(image, image_len, "");
		if (!load(&st))
			fail_msg("guest_load failed: %s", fake_printk_log);
		assert_segment_loaded(0, &fits[0]);
		assert_segment_loaded(1, &fits[1]);
		setup(NULL);
	}
	/* Beyond the guest's RAM (and beyond 4 GiB). */
	{
		static const struct seg high[] = { { PT_LOAD, 0x1000, 0xc0000000, 0x100, 0x100 } };
		static const struct seg above4g[] = { { PT_LOAD, 0x1000, 0x100001000ull, 0x10, 0x10 } };

		build_elf(false, high, 1, 0x100000);
		expect_refused("is not in guest RAM");
		build_elf(true, above4g, 1, 0x100000);
		expect_refused("lies outside the module");
	}
	/* The a.out kludge loading into the region. */
	{
		struct mb_header h = {
			.magic = MULTIBOOT_HEADER_MAGIC, .flags = MB_AOUT_KLUDGE,
			.header_addr = TEST_HV_START, .load_addr = TEST_HV_START,
			.entry_addr = TEST_HV_START,
		};

		h.checksum = -(h.magic + h.flags);
		memset(image, 0, sizeof(image));
		memcpy(image, &h, sizeof(h));
		image_len = 0x1000;
		expect_refused("is not in guest RAM");
	}
}

/*
 * An ELF image with @n program headers (at 0x800, clear of the multiboot
 * header at 0x200), the first @loads of them PT_LOAD segments of 4 KiB of
 * .bss each from 1 MiB up, the rest PT_NOTE.
 */
static void build_many_segments(bool is64, unsigned int n, unsigned int loads)
{
	const uint64_t phoff = 0x800;

	build_elf(is64, NULL, 0, 0x100000);
	for (unsigned int i = 0; i < n; i++) {
		uint32_t type = i < loads ? PT_LOAD : PT_NOTE;
		uint64_t pa = 0x100000 + 0x1000ull * i;

		if (is64) {
			struct elf64_phdr ph = {
				.type = type, .flags = 7, .vaddr = pa, .paddr = pa,
				.memsz = 0x1000, .align = 0x1000,
			};

			memcpy(image + phoff + i * sizeof(ph), &ph, sizeof(ph));
		} else {
			struct elf32_phdr ph = {
				.type = type, .vaddr = (uint32_t)pa, .paddr = (uint32_t)pa,
				.memsz = 0x1000, .flags = 7, .align = 0x1000,
			};

			memcpy(image + phoff + i * sizeof(ph), &ph, sizeof(ph));
		}
	}
	if (is64) {
		((struct elf64_ehdr *)image)->phoff = phoff;
		((struct elf64_ehdr *)image)->phnum = (uint16_t)n;
	} else {
		((struct elf32_ehdr *)image)->phoff = (uint32_t)phoff;
		((struct elf32_ehdr *)image)->phnum = (uint16_t)n;
	}
}

static void test_refuses_malformed(void **state)
{
	static const struct seg beyond_file[] = {
		{ PT_LOAD, 0x1000, 0x100000, 0x1000, 0x1000 },
		{ PT_LOAD, 0x1800, 0x200000, 0x1000, 0x1000 },	/* file has 0x2000 bytes */
	};
	static const struct seg overlap[] = {
		{ PT_LOAD, 0x1000, 0x100000, 0x1000, 0x2000 },
		{ PT_LOAD, 0x1000, 0x101000, 0x1000, 0x1000 },	/* inside the first's .bss */
	};
	static const struct seg filesz_big[] = {
		{ PT_LOAD, 0x1000, 0x100000, 0x1000, 0x800 },	/* filesz > memsz */
	};
	static const struct seg wraps[] = {
		{ PT_LOAD, 0x1000, 0xfffff000ull, 0x10, 0x2000 },
	};

	(void)state;
	for (int is64 = 0; is64 < 2; is64++) {
		build_elf(is64, beyond_file, 2, 0x100000);
		image_len = 0x2000;
		expect_refused("lies outside the module");

		build_elf(is64, overlap, 2, 0x100000);
		expect_refused("overlaps another one");

		build_elf(is64, filesz_big, 1, 0x100000);
		expect_refused("lies outside the module");

		/*
		 * One loadable segment more than the loader tracks, none
		 * overlapping: refused naming the limit, not as an overlap.
		 */
		build_many_segments(is64, GUEST_MAX_SEGMENTS + 1, GUEST_MAX_SEGMENTS + 1);
		expect_refused("more than 32 loadable segments (PT_LOAD with a size): "
			       "the loader tracks at most 32");
		assert_false(fake_printk_contains("overlaps another one"));
		/* As many as it tracks, and a program header of another type besides: loaded. */
		build_many_segments(is64, GUEST_MAX_SEGMENTS + 1, GUEST_MAX_SEGMENTS);
		{
			struct guest_start st;

			fake_printk_reset();
			set_module0(image, image_len, "many");
			if (!load(&st))
				fail_msg("%u loadable segments refused: %s", GUEST_MAX_SEGMENTS,
					 fake_printk_log);
		}

		build_elf(is64, wraps, 1, 0x100000);
		expect_refused("segment");

		/* Program headers past the end of the file. */
		build_elf(is64, kernel, 2, 0x100000);
		if (is64)
			((struct elf64_ehdr *)image)->phnum = 0xffff;
		else
			((struct elf32_ehdr *)image)->phnum = 0xffff;
		expect_refused("malformed ELF header");

		/* A program header entry smaller than the structure. */
		build_elf(is64, kernel, 2, 0x100000);
		if (is64)
			((struct elf64_ehdr *)image)->phentsize = 8;
		else
			((struct elf32_ehdr *)image)->phentsize = 8;
		expect_refused("malformed ELF header");

		/* A file cut inside a segment's bytes. */
		build_elf(is64, kernel, 2, 0x100000);
		image_len = 0x2400;
		expect_refused("lies outside the module");
	}

	/* ELF64 entry above 4 GiB: a multiboot entry is 32-bit. */
	build_elf(true, kernel, 2, 0x100000000ull);
	expect_refused("malformed ELF header");

	/* An ELF64 file cut inside its ELF header (the multiboot header first). */
	build_elf(true, kernel, 0, 0x100000);
	memmove(image + 0x1c, image + 0x200, sizeof(struct mb_header));
	image_len = 0x3c;	/* more than an ELF32 header, less than ELF64's */
	expect_refused("malformed ELF header");

	/* Bad ELF magic, no a.out kludge. */
	build_elf(false, kernel, 2, 0x100000);
	image[1] = 'X';
	expect_refused("not an ELF image");

	/* Unknown ELF class. */
	build_elf(false, kernel, 2, 0x100000);
	image[4] = 3;
	expect_refused("malformed ELF header");

	/* No multiboot header: bad magic, bad checksum, beyond the first 8 KiB. */
	build_elf(false, kernel, 2, 0x100000);
	((struct mb_header *)(image + 0x200))->magic ^= 1;
	expect_refused("no multiboot header");
	build_elf(false, kernel, 2, 0x100000);
	((struct mb_header *)(image + 0x200))->checksum += 1;
	expect_refused("no multiboot header");
	build_elf(false, kernel, 2, 0x100000);
	memset(image + 0x200, 0, sizeof(struct mb_header));
	put_mb_header(0x2000, MULTIBOOT_PAGE_ALIGN);
	image_len = 0x3000;
	expect_refused("no multiboot header");
	/* ...or not 4-byte aligned. */
	build_elf(false, kernel, 2, 0x100000);
	memset(image + 0x200, 0, sizeof(struct mb_header));
	put_mb_header(0x202, MULTIBOOT_PAGE_ALIGN);
	expect_refused("no multiboot header");
	/* A header cut by the end of the module. */
	memset(image, 0, sizeof(image));
	put_mb_header(0, MULTIBOOT_PAGE_ALIGN);
	image_len = sizeof(struct mb_header) - 4;
	expect_refused("no multiboot header");

	/* Requirements the loader cannot meet (video mode). */
	build_elf(false, kernel, 2, 0x100000);
	put_mb_header(0x200, MULTIBOOT_PAGE_ALIGN | MB_VIDEO_MODE);
	expect_refused("requires features");

	/* a.out kludge with inconsistent address fields. */
	{
		struct mb_header h = {
			.magic = MULTIBOOT_HEADER_MAGIC, .flags = MB_AOUT_KLUDGE,
			.header_addr = 0x200000, .load_addr = 0x200100,	/* header before load */
			.entry_addr = 0x200000,
		};

		h.checksum = -(h.magic + h.flags);
		memset(image, 0, sizeof(image));
		memcpy(image, &h, sizeof(h));
		image_len = 0x1000;
		expect_refused("inconsistent a.out-kludge");
		h.header_addr = 0x200000;
		h.load_addr = 0x200000;
		h.load_end_addr = 0x1ff000;			/* ends before it starts */
		h.checksum = -(h.magic + h.flags);
		memcpy(image, &h, sizeof(h));
		expect_refused("inconsistent a.out-kludge");
		h.load_end_addr = 0x201000;
		h.bss_end_addr = 0x200800;			/* .bss ends before the file */
		h.checksum = -(h.magic + h.flags);
		memcpy(image, &h, sizeof(h));
		expect_refused("inconsistent a.out-kludge");
		h.bss_end_addr = 0;
		h.load_end_addr = 0x202000;			/* more than the file has */
		h.checksum = -(h.magic + h.flags);
		memcpy(image, &h, sizeof(h));
		expect_refused("lies outside the module");
	}

	/* No module at all. */
	bi.module_count = 0;
	{
		struct guest_start st;

		fake_printk_reset();
		assert_false(load(&st));
		assert_true(fake_printk_contains("no guest"));
	}
}

/* --- tests: the guest's view of memory and its boot information ---------- */

static void test_guest_ram_ranges(void **state)
{
	struct phys_range r[GUEST_MAX_RANGES];
	unsigned int n;

	(void)state;
	n = guest_ram_ranges(&bi, r, ARRAY_SIZE(r));
	/* [0, 636 KiB) (whole pages only), [1 MiB, 64 MiB), [96 MiB, 160 MiB). */
	assert_int_equal(n, 3);
	assert_int_equal(r[0].start, 0);
	assert_int_equal(r[0].end, 0x9f000);
	assert_int_equal(r[1].start, 0x100000);
	assert_int_equal(r[1].end, TEST_HV_START);
	assert_int_equal(r[2].start, TEST_HV_END);
	assert_int_equal(r[2].end, 160 * MiB);

	/* Unsorted input comes out sorted; an entry wholly inside the region is gone. */
	{
		static const struct boot_mmap_entry m[] = {
			{ TEST_HV_END, 0x1000000, BOOT_MEM_AVAILABLE },
			{ TEST_HV_START + 0x1000, 0x1000, BOOT_MEM_AVAILABLE },
			{ 0x100000, 0x100000, BOOT_MEM_AVAILABLE },
			{ 0x300000, 0x100000, BOOT_MEM_ACPI_RECLAIMABLE },
		};

		memcpy(bi.mmap, m, sizeof(m));
		bi.mmap_count = ARRAY_SIZE(m);
		n = guest_ram_ranges(&bi, r, ARRAY_SIZE(r));
		assert_int_equal(n, 2);
		assert_int_equal(r[0].start, 0x100000);
		assert_int_equal(r[1].start, TEST_HV_END);
	}
	/* The output is bounded by @max. */
	default_map();
	assert_int_equal(guest_ram_ranges(&bi, r, 2), 2);
}

/*
 * The hole follows boot_info's region, not layout.h's: with the
 * hypervisor at the top of RAM below 4 GiB (as Jailhouse and ACRN
 * reserve theirs), RAM from 1 MiB to the region is one range and
 * nothing lies above it; RAM above 4 GiB is untouched.
 */
static void test_guest_ram_ranges_region_at_top(void **state)
{
	static const struct boot_mmap_entry m[] = {
		{ 0, 0x9fc00, BOOT_MEM_AVAILABLE },
		{ 0xf0000, 0x10000, BOOT_MEM_RESERVED },
		{ 0x100000, 160 * MiB - 0x100000, BOOT_MEM_AVAILABLE },
		{ 0x100000000ull, 256 * MiB, BOOT_MEM_AVAILABLE },
	};
	struct phys_range r[GUEST_MAX_RANGES];
	unsigned int n;

	(void)state;
	memcpy(bi.mmap, m, sizeof(m));
	bi.mmap_count = ARRAY_SIZE(m);
	bi.hv_start = 128 * MiB;
	bi.hv_end = 160 * MiB;
	n = guest_ram_ranges(&bi, r, ARRAY_SIZE(r));
	assert_int_equal(n, 3);
	assert_int_equal(r[0].start, 0);
	assert_int_equal(r[0].end, 0x9f000);
	assert_int_equal(r[1].start, 0x100000);
	assert_int_equal(r[1].end, 128 * MiB);
	assert_int_equal(r[2].start, 0x100000000ull);
	assert_int_equal(r[2].end, 0x100000000ull + 256 * MiB);

	/* A region that does not reach the end of its entry leaves the rest. */
	bi.hv_start = 96 * MiB;
	bi.hv_end = 128 * MiB;
	n = guest_ram_ranges(&bi, r, ARRAY_SIZE(r));
	assert_int_equal(n, 4);
	assert_int_equal(r[1].end, 96 * MiB);
	assert_int_equal(r[2].start, 128 * MiB);
	assert_int_equal(r[2].end, 160 * MiB);
}

static bool overlaps_kernel(uint64_t start, uint64_t len)
{
	for (unsigned int i = 0; i < 2; i++)
		if (start < kernel[i].paddr + kernel[i].memsz && start + len > kernel[i].paddr)
			return true;
	return false;
}

static void test_mbi(void **state)
{
	static const uint8_t mod1[] = "second module's bytes";
	struct guest_start st;
	const struct multiboot_info *mbi;
	const struct multiboot_module *mods;

	(void)state;
	build_elf(false, kernel, 2, KERNEL_ENTRY);
	/* A second module, which the guest gets as its module 0. */
	memcpy(pa(MODULE1_PA), mod1, sizeof(mod1));
	bi.modules[1] = (struct boot_module){ .start = MODULE1_PA, .end = MODULE1_PA + sizeof(mod1),
					      .loaded_start = MODULE1_PA };
	strcpy(bi.modules[1].cmdline, "initrd arg");
	bi.module_count = 2;
	set_module0(image, image_len, "kernel-args a=1 b=2");
	if (!load(&st))
		fail_msg("guest_load failed: %s", fake_printk_log);
	mbi = mbi_of(&st);
	assert_int_equal(mbi->flags & (MULTIBOOT_INFO_MEMORY | MULTIBOOT_INFO_MEM_MAP |
				       MULTIBOOT_INFO_CMDLINE | MULTIBOOT_INFO_MODS |
				       MULTIBOOT_INFO_BOOT_LOADER_NAME),
			 MULTIBOOT_INFO_MEMORY | MULTIBOOT_INFO_MEM_MAP | MULTIBOOT_INFO_CMDLINE |
			 MULTIBOOT_INFO_MODS | MULTIBOOT_INFO_BOOT_LOADER_NAME);
	/* 636 KiB below 640 KiB; from 1 MiB contiguous up to the hypervisor's hole. */
	assert_int_equal(mbi->mem_lower, 0x9f000 >> 10);
	assert_int_equal(mbi->mem_upper, (TEST_HV_START - 0x100000) >> 10);
	/* The command line unchanged; the loader's name. */
	assert_string_equal((const char *)pa(mbi->cmdline), "kernel-args a=1 b=2");
	assert_string_equal((const char *)pa(mbi->boot_loader_name), "exitplan");
	assert_string_equal(st.args, "kernel-args a=1 b=2");
	/* The second module, copied into guest RAM with its string. */
	assert_int_equal(mbi->mods_count, 1);
	mods = pa(mbi->mods_addr);
	assert_true(mods[0].mod_start < TEST_HV_START || mods[0].mod_start >= TEST_HV_END);
	assert_int_equal(mods[0].mod_end - mods[0].mod_start, sizeof(mod1));
	assert_memory_equal(pa(mods[0].mod_start), mod1, sizeof(mod1));
	assert_string_equal((const char *)pa(mods[0].cmdline), "initrd arg");
	/* Nothing the loader placed overlaps the kernel's segments. */
	assert_false(overlaps_kernel(st.mbi, sizeof(*mbi) + mbi->mmap_length));
	assert_false(overlaps_kernel(mbi->mmap_addr, mbi->mmap_length));
	assert_false(overlaps_kernel(mods[0].mod_start, sizeof(mod1)));
	assert_false(overlaps_kernel(mbi->cmdline, strlen("kernel-args a=1 b=2") + 1));
	assert_false(overlaps_kernel(mbi->boot_loader_name, strlen("exitplan") + 1));
	assert_false(overlaps_kernel(mods[0].cmdline, strlen("initrd arg") + 1));
	assert_false(overlaps_kernel(mbi->mods_addr, sizeof(*mods)));
	assert_guest_map(&st);
	/* 636 KiB + 63 MiB + 64 MiB of RAM. */
	assert_int_equal(st.ram_bytes, 0x9f000 + (TEST_HV_START - 0x100000) +
				       (160 * MiB - TEST_HV_END));
	/* The reserved entries of the firmware's map are passed on as they were. */
	{
		const struct multiboot_mmap_entry *e = pa(mbi->mmap_addr);
		unsigned int n = mbi->mmap_length / sizeof(*e), found = 0;

		for (unsigned int i = 0; i < n; i++)
			if (e[i].type == MULTIBOOT_MEMORY_RESERVED &&
			    ((e[i].addr == 0x9fc00 && e[i].len == 0x400) ||
			     (e[i].addr == 0xf0000 && e[i].len == 0x10000) ||
			     (e[i].addr == 0xfffc0000 && e[i].len == 0x40000)))
				found++;
		assert_int_equal(found, 3);
	}
}

/* --- the guest's name from its `guest_name` symbol ------------------------- */

struct elf32_shdr {
	uint32_t name, type, flags, addr, offset, size, link, info, addralign, entsize;
} __attribute__((packed));

struct elf64_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t addralign, entsize;
} __attribute__((packed));

struct elf32_sym {
	uint32_t name, value, size;
	uint8_t info, other;
	uint16_t shndx;
} __attribute__((packed));

struct elf64_sym {
	uint32_t name;
	uint8_t info, other;
	uint16_t shndx;
	uint64_t value, size;
} __attribute__((packed));

#define SHT_SYMTAB	2
#define SHT_STRTAB	3

/*
 * Append a symbol table with a symbol @sym of value @value (and one other
 * symbol before it), its string table, and section headers [null, symtab,
 * strtab] to the image build_elf() made.
 */
static void add_symtab(bool is64, const char *sym, uint64_t value)
{
	static const char other[] = "_start";
	size_t symsz = is64 ? sizeof(struct elf64_sym) : sizeof(struct elf32_sym);
	size_t shsz = is64 ? sizeof(struct elf64_shdr) : sizeof(struct elf32_shdr);
	size_t symoff = (image_len + 15) & ~(size_t)15, stroff = symoff + 3 * symsz;
	size_t strsize = 1 + sizeof(other) + strlen(sym) + 1;
	size_t shoff = (stroff + strsize + 15) & ~(size_t)15;

	assert_true(shoff + 3 * shsz <= sizeof(image));
	memset(image + symoff, 0, shoff + 3 * shsz - symoff);
	/* Strings: "", "_start", @sym. */
	memcpy(image + stroff + 1, other, sizeof(other));
	memcpy(image + stroff + 1 + sizeof(other), sym, strlen(sym) + 1);
	if (is64) {
		struct elf64_sym s1 = { .name = 1, .value = 0x100000 };
		struct elf64_sym s2 = { .name = 1 + sizeof(other), .value = value, .size = 8 };
		struct elf64_shdr sh[3] = {
			{ 0 },
			{ .type = SHT_SYMTAB, .offset = symoff, .size = 3 * symsz, .link = 2,
			  .entsize = symsz },
			{ .type = SHT_STRTAB, .offset = stroff, .size = strsize },
		};

		memcpy(image + symoff + symsz, &s1, symsz);
		memcpy(image + symoff + 2 * symsz, &s2, symsz);
		memcpy(image + shoff, sh, sizeof(sh));
		((struct elf64_ehdr *)image)->shoff = shoff;
		((struct elf64_ehdr *)image)->shnum = 3;
		((struct elf64_ehdr *)image)->shentsize = shsz;
	} else {
		struct elf32_sym s1 = { .name = 1, .value = 0x100000 };
		struct elf32_sym s2 = { .name = 1 + sizeof(other), .value = (uint32_t)value, .size = 8 };
		struct elf32_shdr sh[3] = {
			{ 0 },
			{ .type = SHT_SYMTAB, .offset = symoff, .size = 3 * symsz, .link = 2,
			  .entsize = symsz },
			{ .type = SHT_STRTAB, .offset = stroff, .size = strsize },
		};

		memcpy(image + symoff + symsz, &s1, symsz);
		memcpy(image + symoff + 2 * symsz, &s2, symsz);
		memcpy(image + shoff, sh, sizeof(sh));
		((struct elf32_ehdr *)image)->shoff = shoff;
		((struct elf32_ehdr *)image)->shnum = 3;
		((struct elf32_ehdr *)image)->shentsize = shsz;
	}
	image_len = shoff + 3 * shsz;
}

/* The symbol's string wins over the path; the arguments stay those after the path. */
static void test_guest_name_symbol(void **state)
{
	struct guest_start st;

	(void)state;
	for (int is64 = 0; is64 < 2; is64++) {
		setup(NULL);
		build_elf(is64, kernel, 2, KERNEL_ENTRY);
		/* "pingpong" in the text segment's file bytes, at va 0x100800. */
		memcpy(image + 0x1800, "pingpong", 9);
		add_symtab(is64, "guest_name", 0x100800);
		set_module0(image, image_len, "/boot/other.elf n=5");
		if (!load(&st))
			fail_msg("guest_load failed: %s", fake_printk_log);
		assert_string_equal(st.name, "pingpong");
		assert_string_equal(st.args, "n=5");
		/* The loaded bytes are the same as without a symbol table. */
		assert_memory_equal(pa(0x100800), "pingpong", 9);

		/* A symbol whose name only starts with "guest_name" is not it. */
		setup(NULL);
		build_elf(is64, kernel, 2, KERNEL_ENTRY);
		memcpy(image + 0x1800, "pingpong", 9);
		add_symtab(is64, "guest_name_len", 0x100800);
		set_module0(image, image_len, "/boot/other.elf n=5");
		assert_true(load(&st));
		assert_string_equal(st.name, "other");

		/* A value outside every segment's file bytes: the path's name. */
		setup(NULL);
		build_elf(is64, kernel, 2, KERNEL_ENTRY);
		add_symtab(is64, "guest_name", 0x104000);	/* .bss */
		set_module0(image, image_len, "dir/sub/x.elf");
		assert_true(load(&st));
		assert_string_equal(st.name, "x");
		assert_string_equal(st.args, "");
	}
}

/*
 * Regression: the `guest_name` string was copied with strlcpy(), which
 * runs strlen() over its source; a string not terminated before the end
 * of the module was read past the module's end (an ASan
 * heap-buffer-overflow here).  It is cut at the module's end instead.
 */
static void test_guest_name_unterminated(void **state)
{
	struct guest_start st;

	(void)state;
	build_elf(false, kernel, 2, KERNEL_ENTRY);
	add_symtab(false, "guest_name", 0x100800);
	/* One more segment whose file bytes end the image, with the string last. */
	{
		struct elf32_ehdr *eh = (struct elf32_ehdr *)image;
		struct elf32_phdr ph = {
			.type = PT_LOAD, .offset = (uint32_t)image_len, .vaddr = 0x300000,
			.paddr = 0x300000, .filesz = 4, .memsz = 4, .flags = 4, .align = 4,
		};

		memcpy(image + eh->phoff + 2 * sizeof(ph), &ph, sizeof(ph));
		eh->phnum = 3;
		memcpy(image + image_len, "abcd", 4);	/* no NUL */
		image_len += 4;
		/* Point the symbol at it. */
		((struct elf32_sym *)(image + (((struct elf32_shdr *)(image + eh->shoff))[1].offset)))[2].value =
			0x300000;
	}
	set_module0(image, image_len, "");
	assert_true(load(&st));
	assert_string_equal(st.name, "abcd");
}

/*
 * Regression: ELF64 offsets are 64-bit and the loader's bounds check
 * added them unchecked: e_phoff near 2^64 wrapped
 * "phoff + phnum * phentsize > len" below len, and the program headers
 * were read from before the image (ASan aborted).
 */
static void test_elf64_phoff_wraps(void **state)
{
	(void)state;
	/* e_phoff = -0x38: the first program header "at" 0x38 bytes before the image. */
	build_elf(true, kernel, 2, KERNEL_ENTRY);
	((struct elf64_ehdr *)image)->phoff = -(uint64_t)sizeof(struct elf64_phdr);
	expect_refused("malformed ELF header");
}

/*
 * Regression: the same in elf_guest_name(): a string table's sh_offset
 * near 2^64 passed "stroff + strsize > len", and the symbol names were
 * read from before the image (ASan aborted).
 */
static void test_elf64_strtab_offset_wraps(void **state)
{
	struct guest_start st;

	(void)state;
	build_elf(true, kernel, 2, KERNEL_ENTRY);
	add_symtab(true, "guest_name", 0x100800);
	{
		struct elf64_ehdr *eh = (struct elf64_ehdr *)image;
		struct elf64_shdr *sh = (struct elf64_shdr *)(image + eh->shoff);

		sh[2].size = 0x1000;
		sh[2].offset = -(uint64_t)0x800;
	}
	set_module0(image, image_len, "");
	assert_true(load(&st));		/* the image loads; only its name is unreadable */
	assert_string_equal(st.name, "unknown");
}

/*
 * Regression: two available entries of the firmware's map that overlap
 * were passed to the guest as two overlapping available entries, and the
 * overlap was counted twice in ram_bytes (which fw_cfg reports as the RAM
 * size).  They are one range now.
 */
static void test_overlapping_available_entries(void **state)
{
	static const struct boot_mmap_entry m[] = {
		{ 0x0, 0x9fc00, BOOT_MEM_AVAILABLE },
		{ 0x100000, 0x1000000, BOOT_MEM_AVAILABLE },	/* 1 MiB .. 17 MiB */
		{ 0x800000, 0x1000000, BOOT_MEM_AVAILABLE },	/* 8 MiB .. 24 MiB */
	};
	struct guest_start st;

	(void)state;
	memcpy(bi.mmap, m, sizeof(m));
	bi.mmap_count = ARRAY_SIZE(m);
	build_elf(false, kernel, 2, KERNEL_ENTRY);
	set_module0(image, image_len, "");
	if (!load(&st))
		fail_msg("guest_load failed: %s", fake_printk_log);
	assert_int_equal(st.ram_bytes, 0x9f000 + 23 * MiB);
	assert_guest_map(&st);
}

/* guest_ram_ranges() on overlapping, nested, touching and wrapping entries. */
static void test_ram_ranges_merge(void **state)
{
	static const struct boot_mmap_entry m[] = {
		{ 0x10000000, 0x1000000, BOOT_MEM_AVAILABLE },	/* 256 .. 272 MiB */
		{ 0x100000, 0x1000000, BOOT_MEM_AVAILABLE },	/* 1 .. 17 MiB */
		{ 0x800000, 0x1000000, BOOT_MEM_AVAILABLE },	/* 8 .. 24 MiB: overlaps */
		{ 0x200000, 0x100000, BOOT_MEM_AVAILABLE },	/* inside 1 .. 17 MiB */
		{ 0x1800000, 0x800000, BOOT_MEM_AVAILABLE },	/* 24 .. 32 MiB: touches */
		{ 0x10800000, 0x100, BOOT_MEM_AVAILABLE },	/* less than a page */
		{ 0xfff000, 0x2000, BOOT_MEM_RESERVED },	/* reserved: no effect on RAM */
		/* Past the top of the address space: malformed, ignored (not wrapped). */
		{ 0xffffffffffe00000ull, 0x400000, BOOT_MEM_AVAILABLE },
		/* Over everything from 200 MiB to 264 MiB, and touching 256 MiB's. */
		{ 0xc800000, 0x4000000, BOOT_MEM_AVAILABLE },
	};
	struct phys_range r[GUEST_MAX_RANGES];
	unsigned int n;

	(void)state;
	memcpy(bi.mmap, m, sizeof(m));
	bi.mmap_count = ARRAY_SIZE(m);
	n = guest_ram_ranges(&bi, r, ARRAY_SIZE(r));
	assert_int_equal(n, 2);
	assert_int_equal(r[0].start, 0x100000);
	assert_int_equal(r[0].end, 32 * MiB);
	assert_int_equal(r[1].start, 200 * MiB);
	assert_int_equal(r[1].end, 272 * MiB);

	/*
	 * With room for one range: the first one found, grown by every later
	 * entry that overlaps or touches it; entries needing a slot are dropped.
	 */
	n = guest_ram_ranges(&bi, r, 1);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 200 * MiB);
	assert_int_equal(r[0].end, 272 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_elf32, setup, teardown),
		cmocka_unit_test_setup_teardown(test_elf64, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aout_kludge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_hypervisor_region, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_ram_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_ram_ranges_region_at_top, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbi, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_name_symbol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_name_unterminated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_elf64_phoff_wraps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_elf64_strtab_offset_wraps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlapping_available_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ram_ranges_merge, setup, teardown),
	};

	return cmocka_run_group_tests_name("runtime/loader/guest_loader.c", tests, group_setup,
					   group_teardown);
}
