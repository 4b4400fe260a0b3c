/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guest_mem.c: guest memory as the hypervisor reaches it: identity
 * GPA == HPA outside the hypervisor region, and the guest's paging.
 */
#ifndef EXITPLAN_GUEST_MEM_H
#define EXITPLAN_GUEST_MEM_H

#include <stdbool.h>
#include <stdint.h>

/* The guest owns [gpa, gpa + len): RAM or firmware, outside the hypervisor. */
bool guest_phys_ok(uint64_t gpa, uint64_t len);
/*
 * [gpa, gpa + len), within one page, is mapped for the guest by EPT with
 * read (and @write) permission, whatever its memory type: RAM, a ROM, a
 * device the profile grants.  An access there made for the guest is one
 * it could make itself.
 */
bool guest_phys_mapped(uint64_t gpa, unsigned int len, bool write);
/* Translate a guest linear address through the guest's paging (or none). */
enum guest_walk {
	GUEST_WALK_OK,
	GUEST_WALK_PAGE_FAULT,		/* the guest's #PF: error code given */
	GUEST_WALK_UNREACHABLE,		/* a paging structure outside guest RAM */
};
#define GUEST_ACCESS_WRITE	1u
#define GUEST_ACCESS_USER	2u	/* at CPL 3 */
enum guest_walk guest_linear_walk(uint64_t gla, unsigned int access, uint64_t *gpa,
				  uint32_t *pf_error);
/* A supervisor access: true when it translates. */
bool guest_linear_to_phys(uint64_t gla, bool write, uint64_t *gpa);
/*
 * Copy from/to the guest's linear memory through its paging (or none);
 * false on a fault or an address in hypervisor memory.  len 0: true.
 */
bool guest_read_linear(uint64_t gla, void *dst, unsigned int len);
bool guest_write_linear(uint64_t gla, const void *src, unsigned int len);

#endif /* EXITPLAN_GUEST_MEM_H */
