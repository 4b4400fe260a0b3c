/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The page allocator: 4-KiB pages from the pool at the end of the
 * hypervisor region (boot_info.pool_start .. pool_end), zeroed on
 * allocation.  Physical == virtual in the hypervisor, so a page's
 * address is its physical address (virt_to_phys() says so in code).
 * Safe to call from any CPU.
 */
#ifndef EXITPLAN_PAGE_ALLOC_H
#define EXITPLAN_PAGE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/host/layout.h"

struct boot_info;

void page_alloc_init(const struct boot_info *bi);

/* A zeroed, page-aligned page, or NULL when the pool is exhausted. */
void *page_alloc(void);
/* `npages` physically contiguous zeroed pages (first fit), or NULL. */
void *page_alloc_contig(unsigned int npages);
/* Give back what page_alloc()/page_alloc_contig() returned; panics on a
 * page that is not allocated or not from the pool. */
void page_free(void *page);
void page_free_contig(void *first, unsigned int npages);

unsigned int page_alloc_free_pages(void);
unsigned int page_alloc_total_pages(void);

static inline uint64_t virt_to_phys(const void *p)
{
	return (uintptr_t)p;
}

static inline void *phys_to_virt(uint64_t pa)
{
	return (void *)(uintptr_t)pa;
}

#endif /* EXITPLAN_PAGE_ALLOC_H */
