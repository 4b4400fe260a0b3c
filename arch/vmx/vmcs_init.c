// SPDX-License-Identifier: GPL-2.0-only
/*
 * The VMCS setup's VMWRITEs and allocations (vmcs_init.h): a failure says
 * which vCPU and which field -- the encoding, as SDM Vol. 3C Appendix B
 * lists it -- so that a CPU model lacking a field is named at once, not
 * found later as a failed VM entry.
 */
#include "runtime/host/console.h"
#include "runtime/host/page_alloc.h"
#include "arch/vmx/vmcs_init.h"
#include "arch/vmx/vmx_ops.h"

bool vmcs_setup_failed(unsigned int id, enum vmcs_field field)
{
	printk("exitplan: vCPU %u: VMWRITE of VMCS field %#x failed (VM-instruction error %u)\n",
	       id, (unsigned int)field, vmcs_read32(VM_INSTRUCTION_ERROR));
	return false;
}

bool vmcs_setup_write(unsigned int id, enum vmcs_field field, uint64_t value)
{
	return vmcs_write_checked(field, value) || vmcs_setup_failed(id, field);
}

bool vmcs_setup_write_all(unsigned int id, const struct vmcs_init *w, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (!vmcs_setup_write(id, w[i].f, w[i].v))
			return false;
	}
	return true;
}

void *vmx_alloc_pages(unsigned int n)
{
	return n == 1 ? page_alloc() : page_alloc_contig(n);
}

void *vmcs_setup_alloc(unsigned int id, const char *what, unsigned int n)
{
	void *p = vmx_alloc_pages(n);

	if (!p)
		printk("exitplan: vCPU %u: out of memory for its %s (%u pages)\n", id, what, n);
	return p;
}
