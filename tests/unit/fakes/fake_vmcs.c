// SPDX-License-Identifier: GPL-2.0-only
/* The fake current VMCS of fakes/arch/vmx/vmx_ops.h. */
#include <stdlib.h>
#include <string.h>

#include "arch/vmx/vmx_ops.h"

struct fake_vmcs fake_vmcs;

void fake_vmcs_reset(void)
{
	memset(&fake_vmcs, 0, sizeof(fake_vmcs));
}

void fake_vmcs_set(enum vmcs_field field, uint64_t value)
{
	for (unsigned int i = 0; i < fake_vmcs.n; i++) {
		if (fake_vmcs.f[i].field == field) {
			fake_vmcs.f[i].value = value;
			return;
		}
	}
	if (fake_vmcs.n == FAKE_VMCS_FIELDS)
		abort();	/* a test wrote more fields than the fake holds */
	fake_vmcs.f[fake_vmcs.n].field = field;
	fake_vmcs.f[fake_vmcs.n].value = value;
	fake_vmcs.n++;
}

uint64_t fake_vmcs_get(enum vmcs_field field)
{
	for (unsigned int i = 0; i < fake_vmcs.n; i++)
		if (fake_vmcs.f[i].field == field)
			return fake_vmcs.f[i].value;
	return 0;
}
