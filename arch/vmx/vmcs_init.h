/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VMCS setup's writes and allocations (vmcs_init.c), each failure
 * reported where it happens: which vCPU, which field or what for, the
 * VM-instruction error.  The caller gives up on that vCPU (false/NULL up
 * to vmx_setup_cpu_vcpus(), which stops the machine or parks the AP).
 */
#ifndef EXITPLAN_VMX_VMCS_INIT_H
#define EXITPLAN_VMX_VMCS_INIT_H

#include <stdbool.h>
#include <stdint.h>

#include "vmcs_fields.h"	/* generated: enum vmcs_field */

/* One VMWRITE of a setup table. */
struct vmcs_init {
	enum vmcs_field f;
	uint64_t v;
};

#define VMCS_WRITES(name, ...)	const struct vmcs_init name[] = { __VA_ARGS__ }

/* A failed VMWRITE of @field for vCPU @id, reported; always false. */
bool vmcs_setup_failed(unsigned int id, enum vmcs_field field);
/* VMWRITE @value to @field of vCPU @id's (current) VMCS; false, reported, if it failed. */
bool vmcs_setup_write(unsigned int id, enum vmcs_field field, uint64_t value);
/* The writes of @w in order, up to the first that fails (reported). */
bool vmcs_setup_write_all(unsigned int id, const struct vmcs_init *w, unsigned int n);
/* @n zeroed contiguous pages. */
void *vmx_alloc_pages(unsigned int n);
/* @n pages for vCPU @id's @what; NULL, reported, when the pool is out. */
void *vmcs_setup_alloc(unsigned int id, const char *what, unsigned int n);

#endif /* EXITPLAN_VMX_VMCS_INIT_H */
