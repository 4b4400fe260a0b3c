/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Loading a Linux bzImage by the x86 boot protocol
 * (Documentation/arch/x86/boot.rst), chosen when the first module carries
 * the setup header's "HdrS" magic at 0x202.  The second module, if any, is
 * the initrd; the first module's string is the kernel command line.
 *
 * The protected-mode kernel is copied where the header asks (pref_address
 * for a relocatable kernel, else 0x100000), the zero page (struct
 * boot_params) is filled with a copy of the setup header, an e820 map of
 * the guest's RAM (guest_ram_ranges(): the hypervisor region is left out)
 * and the firmware's reserved ranges, the command line and the initrd's
 * place; vCPU 0 enters the 32-bit entry (code32_start) in flat protected
 * mode with ESI = the zero page.
 *
 * linux_plan() is the pure part (header checks, placement, boot_params),
 * unit-tested on the host; linux_load() copies the bytes into guest RAM.
 */
#ifndef EXITPLAN_LINUX_LOADER_H
#define EXITPLAN_LINUX_LOADER_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/loader/guest_loader.h"

struct boot_info;

#define LINUX_ZERO_PAGE_SIZE	4096
/* The oldest protocol this loader speaks: 2.10 has init_size and pref_address. */
#define LINUX_MIN_PROTOCOL	0x020a

/* A memory-map entry that is not RAM (the firmware's, passed on). */
struct linux_e820_in {
	uint64_t addr, len;
	uint32_t type;
};

/* What linux_plan() decided: where every piece goes in guest RAM. */
struct linux_plan {
	uint64_t kernel_addr;		/* the protected-mode kernel, also the entry */
	uint64_t kernel_file_off;	/* its offset in the image */
	uint64_t kernel_file_len;	/* bytes to copy */
	uint64_t kernel_mem_len;	/* what the kernel needs from kernel_addr (init_size) */
	uint64_t zero_page_addr;	/* boot_params */
	uint64_t cmdline_addr;
	uint64_t initrd_addr;		/* 0 when there is no initrd */
	uint64_t ram_bytes;
	uint16_t version;
	uint8_t zero_page[LINUX_ZERO_PAGE_SIZE];	/* the filled boot_params */
};

/* Whether @image looks like a bzImage (the "HdrS" magic at 0x202). */
bool linux_is_bzimage(const uint8_t *image, uint64_t len);

/*
 * Check the image's setup header, place kernel, zero page, command line
 * and initrd (of @initrd_len bytes, none when @have_initrd is false) in
 * @ram, and fill plan->zero_page.  @reserved lists the firmware's
 * non-RAM entries (sorted); those over @hv, the hypervisor region, are
 * left out of the e820 map.  false, with the reason printed, on any
 * problem.
 */
bool linux_plan(const uint8_t *image, uint64_t len, const char *cmdline,
		bool have_initrd, uint64_t initrd_len,
		const struct phys_range *ram, unsigned int n_ram,
		const struct linux_e820_in *reserved, unsigned int n_reserved,
		const struct phys_range *hv, struct linux_plan *plan);

/* Load module 0 (a bzImage) and module 1 (the initrd); start->mbi is the zero page. */
bool linux_load(const struct boot_info *bi, struct guest_start *start);

#endif /* EXITPLAN_LINUX_LOADER_H */
