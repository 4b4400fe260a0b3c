/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The image moves itself (runtime/host/reloc.c): GRUB loads it at
 * HV_LOAD_ADDR, boot_relocate() copies it to the region that
 * region_choose() picks at the top of RAM below 4 GiB and applies its
 * R_X86_64_RELATIVE relocations there; boot.S then jumps into the copy.
 */
#ifndef EXITPLAN_RELOC_H
#define EXITPLAN_RELOC_H

#include <stdint.h>

struct boot_region {
	uint64_t start, end;		/* the hypervisor region; 0, 0 if none fits */
	uint64_t loaded_at;		/* where GRUB put the image */
	const char *error;		/* why it did not move, for boot_info_init() */
};

/* What boot_relocate() decided, in the copy that runs. */
extern struct boot_region boot_region;

/*
 * Called by boot.S in 64-bit mode, where GRUB loaded the image, before
 * anything else; nothing is initialised (no console).  Returns how far
 * the image moved (0: it did not, and boot_region.error says why).
 */
int64_t boot_relocate(uint32_t mb_magic, uint32_t mb_info_pa);

#endif /* EXITPLAN_RELOC_H */
