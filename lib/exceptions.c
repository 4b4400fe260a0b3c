// SPDX-License-Identifier: GPL-2.0-only
#include <stddef.h>

#include "arch_bits.h"		/* generated from spec/arch.yaml: X86_EXC_* */
#include "exceptions.h"

/* SDM Vol. 3A table 6-1 mnemonics. */
static const char *const names[32] = {
	[X86_EXC_DE] = "#DE", [X86_EXC_DB] = "#DB", [X86_EXC_NMI] = "NMI",
	[X86_EXC_BP] = "#BP", [X86_EXC_OF] = "#OF", [X86_EXC_BR] = "#BR",
	[X86_EXC_UD] = "#UD", [X86_EXC_NM] = "#NM", [X86_EXC_DF] = "#DF",
	[X86_EXC_TS] = "#TS", [X86_EXC_NP] = "#NP", [X86_EXC_SS] = "#SS",
	[X86_EXC_GP] = "#GP", [X86_EXC_PF] = "#PF", [X86_EXC_MF] = "#MF",
	[X86_EXC_AC] = "#AC", [X86_EXC_MC] = "#MC", [X86_EXC_XM] = "#XM",
	[X86_EXC_VE] = "#VE", [X86_EXC_CP] = "#CP", [X86_EXC_HV] = "#HV",
	[X86_EXC_VC] = "#VC", [X86_EXC_SX] = "#SX",
};

const char *x86_exception_mnemonic(unsigned int vector)
{
	return vector < 32 ? names[vector] : NULL;
}
