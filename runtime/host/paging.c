// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finer protection for the hypervisor's own memory than the boot page
 * tables' 2-MiB pages give: write-protected code (CR0.WP makes that hold
 * in ring 0 too) and unmapped guard pages under the stacks.
 */
#include "runtime/host/boot_data.h"
#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"
#include "runtime/host/layout.h"
#include "runtime/host/paging.h"
#include "runtime/host/panic.h"

#define HV_LARGE_PAGES	(HV_IMAGE_MAX / LARGE_PAGE_SIZE)

extern char __image_start[], __image_end[], __text_end[], __rodata_start[], __rodata_end[];

/* One page table per 2-MiB page of the image (it starts on a 2-MiB boundary). */
static uint64_t region_pt[HV_LARGE_PAGES][PT_ENTRIES] __aligned(PAGE_SIZE);

static uint64_t *region_pte(uint64_t addr)
{
	uint64_t off = addr - (uintptr_t)__image_start;

	return &region_pt[off / LARGE_PAGE_SIZE][(off % LARGE_PAGE_SIZE) / PAGE_SIZE];
}

static void clear_bits(uint64_t start, uint64_t end, uint64_t bits)
{
	for (uint64_t a = ALIGN_DOWN(start, (uint64_t)PAGE_SIZE); a < end; a += PAGE_SIZE)
		*region_pte(a) &= ~bits;
}

bool paging_is_stack_guard(uint64_t addr)
{
	if (addr >= (uintptr_t)boot_stack_guard && addr < (uintptr_t)boot_stack_guard + PAGE_SIZE)
		return true;
	for (unsigned int i = 0; i < HV_MAX_CPUS; i++)
		if (addr >= (uintptr_t)ap_stacks[i] && addr < (uintptr_t)ap_stacks[i] + PAGE_SIZE)
			return true;
	return false;
}

void paging_protect_image(void)
{
	uint64_t image = (uintptr_t)__image_start;
	unsigned int first_pde = image / LARGE_PAGE_SIZE;
	unsigned int n = ALIGN_UP((uintptr_t)__image_end - image, (uint64_t)LARGE_PAGE_SIZE) /
			 LARGE_PAGE_SIZE;

	if (image % LARGE_PAGE_SIZE)
		panic("the image at %llx is not on a 2-MiB boundary", (unsigned long long)image);
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < PT_ENTRIES; j++)
			region_pt[i][j] = (image + (uint64_t)i * LARGE_PAGE_SIZE +
					   (uint64_t)j * PAGE_SIZE) | PTE_PRESENT | PTE_WRITE;

	/*
	 * First swap each 2-MiB mapping for a page table with the very same
	 * translations and rights, so that no entry changes page size and
	 * rights at once (SDM Vol. 3A 4.10.2.2); the CR3 reload drops the
	 * large-page TLB entries (CR4.PGE is off: nothing is global).
	 */
	for (unsigned int i = 0; i < n; i++)
		WRITE_ONCE(boot_pd[first_pde + i],
			   (uintptr_t)region_pt[i] | PTE_PRESENT | PTE_WRITE);
	write_cr3(read_cr3());

	/* Then take the rights away, 4 KiB at a time. */
	clear_bits((uintptr_t)__image_start, (uintptr_t)__text_end, PTE_WRITE);
	clear_bits((uintptr_t)__rodata_start, (uintptr_t)__rodata_end, PTE_WRITE);
	clear_bits((uintptr_t)boot_stack_guard, (uintptr_t)boot_stack_guard + PAGE_SIZE,
		   PTE_PRESENT);
	for (unsigned int i = 0; i < HV_MAX_CPUS; i++)
		clear_bits((uintptr_t)ap_stacks[i], (uintptr_t)ap_stacks[i] + PAGE_SIZE,
			   PTE_PRESENT);
	write_cr3(read_cr3());
}
