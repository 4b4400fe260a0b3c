/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the boot loader told us, copied out of the multiboot information
 * (which lies in memory we do not own) into the hypervisor's .bss before
 * anything else is allocated.  All addresses are physical.
 */
#ifndef EXITPLAN_BOOT_INFO_H
#define EXITPLAN_BOOT_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Command lines longer than BOOT_CMDLINE_MAX - 1 bytes are refused at
 * boot, never cut (boot_info_init()).  A page: longer than any kernel's
 * own limit that a guest is likely to assume (Linux's x86 COMMAND_LINE_SIZE
 * is 2048).
 */
#define BOOT_CMDLINE_MAX	4096
#define BOOT_MMAP_MAX		64
#define BOOT_MODULES_MAX	8

/* Types as in the e820 map and multiboot. */
enum boot_mem_type {
	BOOT_MEM_AVAILABLE = 1,
	BOOT_MEM_RESERVED = 2,
	BOOT_MEM_ACPI_RECLAIMABLE = 3,
	BOOT_MEM_ACPI_NVS = 4,
	BOOT_MEM_BAD = 5,
};

struct boot_mmap_entry {
	uint64_t addr;
	uint64_t len;
	uint32_t type;			/* enum boot_mem_type, or other */
};

struct boot_module {
	uint64_t start;			/* first byte */
	uint64_t end;			/* one past the last byte */
	uint64_t loaded_start;		/* where the boot loader put it */
	char cmdline[BOOT_CMDLINE_MAX];
};

struct boot_info {
	char cmdline[BOOT_CMDLINE_MAX];	/* the hypervisor's own */
	char loader_name[64];
	uint32_t mem_lower_kb;		/* 0 when the loader gave none */
	uint32_t mem_upper_kb;

	unsigned int mmap_count;
	struct boot_mmap_entry mmap[BOOT_MMAP_MAX];

	unsigned int module_count;
	struct boot_module modules[BOOT_MODULES_MAX];

	/* The hypervisor region and its parts (layout.h). */
	uint64_t hv_start, hv_end;	/* HV_REGION_START, HV_REGION_END */
	uint64_t image_start, image_end;
	uint64_t modules_end;		/* past the last module; image_end if none */
	uint64_t pool_start, pool_end;	/* what the page allocator manages */
};

/*
 * Check the multiboot magic, copy everything out and validate it: the
 * region must be RAM according to the memory map; every module ends up
 * inside the hypervisor region after the image (modules the boot loader
 * put outside the region are copied in, see place_modules()).  Panics
 * when that cannot be done.
 */
const struct boot_info *boot_info_init(uint32_t mb_magic, uint32_t mb_info_pa);

/* The copy made by boot_info_init(). */
const struct boot_info *boot_info(void);

void boot_info_print(const struct boot_info *bi);

const char *boot_mem_type_name(uint32_t type);

/*
 * Find `name` or `name=value` among the space-separated words of a
 * command line.  Returns false when absent; otherwise copies the value
 * ("" for a bare name) into value (if not NULL), truncated to size.
 */
bool cmdline_option(const char *cmdline, const char *name, char *value, size_t size);

#endif /* EXITPLAN_BOOT_INFO_H */
