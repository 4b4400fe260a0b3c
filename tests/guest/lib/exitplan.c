// SPDX-License-Identifier: GPL-2.0-only
#include "exitplan.h"
#include "string.h"
#include "x86.h"

struct hv_signature exitplan_signature(void)
{
	struct cpuid_regs r = cpuid(CPUID_HYPERVISOR_BASE);
	struct hv_signature sig = { .max_leaf = r.eax };

	memcpy(sig.text + 0, &r.ebx, 4);
	memcpy(sig.text + 4, &r.ecx, 4);
	memcpy(sig.text + 8, &r.edx, 4);
	sig.text[12] = '\0';
	return sig;
}

bool exitplan_detected(void)
{
	static const char want[12] = "exitplan\0\0\0";
	struct hv_signature sig = exitplan_signature();

	return sig.max_leaf >= CPUID_HYPERVISOR_BASE &&
	       !memcmp(sig.text, want, sizeof(want));
}

bool qemu_tcg_detected(void)
{
	struct hv_signature sig = exitplan_signature();

	return !memcmp(sig.text, "TCGTCGTCGTCG", 12);
}
