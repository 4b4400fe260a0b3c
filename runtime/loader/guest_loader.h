/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Loading the guest kernel: the first multiboot module is a multiboot v1
 * kernel (ELF32 or ELF64 program headers, or the a.out-kludge address
 * fields of its multiboot header).  Guest-physical == host-physical
 * outside the hypervisor region, so loading is copying to the physical
 * addresses the kernel asks for, after checking they are guest RAM.
 *
 * The guest gets a multiboot information structure of its own, built in
 * its memory: mem_lower/mem_upper, the memory map without the
 * hypervisor region, its command line, the boot loader name, and the
 * further modules (copied into guest RAM) as its modules.
 *
 * Command line: the module's string is passed unchanged -- no word is
 * dropped.  GRUB 2 gives a module only the arguments after its path
 * ("module /boot/guest.elf code=3" yields "code=3"), so the guest sees
 * exactly its arguments; a boot loader that includes the path gives the
 * guest the path first, as a kernel booted directly would get it.
 */
#ifndef EXITPLAN_GUEST_LOADER_H
#define EXITPLAN_GUEST_LOADER_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/loader/guest_ram.h"

struct boot_info;

/*
 * The kernel's loadable segments (ELF PT_LOAD entries with a size, or the
 * a.out kludge's one) the loader tracks, each checked against the others
 * and against what it places itself: a kernel with more is refused with
 * "more than 32 loadable segments".  Kernels have a handful (the test
 * guests 2-3, a Linux vmlinux 5, kvm-unit-tests' 1-2); program headers of
 * other types (notes, GNU_STACK, ...) do not count.
 */
#define GUEST_MAX_SEGMENTS	32

struct guest_start {
	uint32_t entry;			/* EIP at entry */
	uint32_t mbi;			/* EBX: the guest's multiboot information */
	/* ESI for a Linux kernel (linux_loader.h): its boot_params; 0 for multiboot. */
	uint32_t boot_params;
	uint64_t ram_bytes;		/* RAM the guest's map gives it */
	/*
	 * For reports (docs/STATS.md): the guest's name -- its image's
	 * `guest_name` symbol (the exitplan test guests define one), else
	 * the file name of a path-like first command-line word without
	 * ".elf", else "unknown" -- and its arguments (the command line
	 * without that path).
	 */
	char name[64];
	const char *args;
};

/*
 * Load module 0 and build the guest's multiboot information (or, for a
 * Linux bzImage, its boot_params: linux_loader.h); false (printed why) on error.
 */
bool guest_load(const struct boot_info *bi, struct guest_start *start);

#endif /* EXITPLAN_GUEST_LOADER_H */
