/* SPDX-License-Identifier: GPL-2.0-only */
/* Multiboot v1 boot information (Multiboot Specification 0.6.96, 3.3). */
#ifndef GUEST_MULTIBOOT_H
#define GUEST_MULTIBOOT_H

#include <stdint.h>

#define MULTIBOOT_BOOTLOADER_MAGIC	0x2BADB002u

#define MULTIBOOT_INFO_MEMORY		(1u << 0)	/* mem_lower/mem_upper */
#define MULTIBOOT_INFO_CMDLINE		(1u << 2)
#define MULTIBOOT_INFO_MODS		(1u << 3)	/* mods_count/mods_addr */
#define MULTIBOOT_INFO_MEM_MAP		(1u << 6)

#define MULTIBOOT_MEMORY_AVAILABLE	1

struct multiboot_info {
	uint32_t flags;
	uint32_t mem_lower;	/* KiB below 1 MiB */
	uint32_t mem_upper;	/* KiB from 1 MiB to the first hole */
	uint32_t boot_device;
	uint32_t cmdline;
	uint32_t mods_count;
	uint32_t mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length;
	uint32_t mmap_addr;
} __attribute__((packed));

/* One boot module: [mod_start, mod_end) and its command line. */
struct multiboot_module {
	uint32_t mod_start;
	uint32_t mod_end;
	uint32_t cmdline;
	uint32_t reserved;
} __attribute__((packed));

/* `size` does not count itself: the next entry is at +size+4. */
struct multiboot_mmap_entry {
	uint32_t size;
	uint64_t addr;
	uint64_t len;
	uint32_t type;
} __attribute__((packed));

/* Saved by lib/main.c before the guest runs. */
extern uint32_t multiboot_magic;
extern const struct multiboot_info *multiboot_info;

#endif /* GUEST_MULTIBOOT_H */
