/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Multiboot v1 (the GNU Multiboot Specification 0.6.96): the header a
 * boot loader looks for in the first 8 KiB of the image, and the
 * information structure it passes in EBX.  Only what exitplan reads.
 */
#ifndef EXITPLAN_MULTIBOOT_H
#define EXITPLAN_MULTIBOOT_H

#define MULTIBOOT_HEADER_MAGIC		0x1BADB002
#define MULTIBOOT_BOOTLOADER_MAGIC	0x2BADB002	/* in EAX at entry */

/* Header flags. */
#define MULTIBOOT_PAGE_ALIGN		(1 << 0)	/* modules on 4-KiB boundaries */
#define MULTIBOOT_MEMORY_INFO		(1 << 1)	/* mem_* and mmap_* wanted */

#ifndef __ASSEMBLER__
#include <stdint.h>

/* multiboot_info.flags: which fields are valid. */
#define MULTIBOOT_INFO_MEMORY		(1u << 0)
#define MULTIBOOT_INFO_CMDLINE		(1u << 2)
#define MULTIBOOT_INFO_MODS		(1u << 3)
#define MULTIBOOT_INFO_MEM_MAP		(1u << 6)
#define MULTIBOOT_INFO_BOOT_LOADER_NAME	(1u << 9)

struct multiboot_info {
	uint32_t flags;
	uint32_t mem_lower;		/* KiB below 1 MiB */
	uint32_t mem_upper;		/* KiB above 1 MiB, up to the first hole */
	uint32_t boot_device;
	uint32_t cmdline;		/* physical address of a C string */
	uint32_t mods_count;
	uint32_t mods_addr;		/* physical address of multiboot_module[] */
	uint32_t syms[4];
	uint32_t mmap_length;		/* bytes */
	uint32_t mmap_addr;
	uint32_t drives_length;
	uint32_t drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;
	uint32_t apm_table;
	/* VBE and framebuffer fields follow; unused. */
} __attribute__((packed));

struct multiboot_module {
	uint32_t mod_start;
	uint32_t mod_end;		/* exclusive */
	uint32_t cmdline;
	uint32_t reserved;
} __attribute__((packed));

/*
 * A memory-map entry.  `size` does not count itself: the next entry
 * starts size + 4 bytes after this one.
 */
struct multiboot_mmap_entry {
	uint32_t size;
	uint64_t addr;
	uint64_t len;
	uint32_t type;
} __attribute__((packed));

#define MULTIBOOT_MEMORY_AVAILABLE		1
#define MULTIBOOT_MEMORY_RESERVED		2
#define MULTIBOOT_MEMORY_ACPI_RECLAIMABLE	3
#define MULTIBOOT_MEMORY_NVS			4
#define MULTIBOOT_MEMORY_BADRAM			5
#endif /* !__ASSEMBLER__ */

#endif /* EXITPLAN_MULTIBOOT_H */
