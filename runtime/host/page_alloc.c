// SPDX-License-Identifier: GPL-2.0-only
/*
 * A bitmap over the hypervisor region, one bit per page, set = in use.
 * The region is at most HV_REGION_MAX, so the bitmap is 8 KiB and a linear first-fit
 * search is cheap; allocation happens at setup, not on the exit path.
 */
#include <stdbool.h>

#include "runtime/host/boot_info.h"
#include "runtime/host/compiler.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/panic.h"
#include "runtime/host/spinlock.h"
#include "lib/string.h"

#define REGION_PAGES	(HV_REGION_MAX / PAGE_SIZE)
#define BITS_PER_WORD	64

static uint64_t used[REGION_PAGES / BITS_PER_WORD];
static uint64_t region_start;		/* boot_info's hv_start */
static unsigned int pool_first, pool_end;	/* page indices in the region */
static unsigned int free_pages, total_pages;
static spinlock_t page_lock = SPINLOCK_INIT;

static bool page_used(unsigned int i)
{
	return used[i / BITS_PER_WORD] & (1ull << (i % BITS_PER_WORD));
}

static void page_mark(unsigned int i, bool in_use)
{
	if (in_use)
		used[i / BITS_PER_WORD] |= 1ull << (i % BITS_PER_WORD);
	else
		used[i / BITS_PER_WORD] &= ~(1ull << (i % BITS_PER_WORD));
}

static void *page_addr(unsigned int i)
{
	return phys_to_virt(region_start + (uint64_t)i * PAGE_SIZE);
}

void page_alloc_init(const struct boot_info *bi)
{
	if (bi->pool_start < bi->hv_start || bi->pool_end > bi->hv_end ||
	    bi->pool_start >= bi->pool_end || bi->hv_end - bi->hv_start > HV_REGION_MAX)
		panic("page pool [%llx, %llx) is empty or outside the hypervisor region",
		      (unsigned long long)bi->pool_start, (unsigned long long)bi->pool_end);

	region_start = bi->hv_start;
	pool_first = (bi->pool_start - region_start) / PAGE_SIZE;
	pool_end = (bi->pool_end - region_start) / PAGE_SIZE;
	/* Everything outside the pool (image, modules) is permanently used. */
	for (unsigned int i = 0; i < REGION_PAGES; i++)
		page_mark(i, i < pool_first || i >= pool_end);
	total_pages = free_pages = pool_end - pool_first;
}

void *page_alloc_contig(unsigned int npages)
{
	unsigned int run = 0;
	void *p = NULL;

	if (!npages)
		return NULL;
	spin_lock(&page_lock);
	for (unsigned int i = pool_first; i < pool_end; i++) {
		run = page_used(i) ? 0 : run + 1;
		if (run == npages) {
			unsigned int first = i + 1 - npages;

			for (unsigned int j = first; j <= i; j++)
				page_mark(j, true);
			free_pages -= npages;
			p = page_addr(first);
			break;
		}
	}
	spin_unlock(&page_lock);
	if (p)
		memset(p, 0, (size_t)npages * PAGE_SIZE);
	return p;
}

void *page_alloc(void)
{
	return page_alloc_contig(1);
}

void page_free_contig(void *first, unsigned int npages)
{
	uint64_t pa = virt_to_phys(first);
	unsigned int idx;

	if (!IS_ALIGNED(pa, (uint64_t)PAGE_SIZE) || pa < region_start ||
	    pa >= region_start + (uint64_t)pool_end * PAGE_SIZE)
		panic("page_free(%p): not a page of the pool", first);
	idx = (pa - region_start) / PAGE_SIZE;
	if (idx < pool_first || idx + npages > pool_end)
		panic("page_free(%p, %u): outside the pool", first, npages);

	spin_lock(&page_lock);
	for (unsigned int i = idx; i < idx + npages; i++) {
		if (!page_used(i)) {
			spin_unlock(&page_lock);
			panic("page_free: page %p is not allocated (double free?)",
			      page_addr(i));
		}
		page_mark(i, false);
	}
	free_pages += npages;
	spin_unlock(&page_lock);
}

void page_free(void *page)
{
	page_free_contig(page, 1);
}

unsigned int page_alloc_free_pages(void)
{
	return READ_ONCE(free_pages);
}

unsigned int page_alloc_total_pages(void)
{
	return total_pages;
}
