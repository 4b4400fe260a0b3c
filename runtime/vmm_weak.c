// SPDX-License-Identifier: GPL-2.0-only
/*
 * TEMPORARY: a stand-in for vmm_run() until arch/vmx provides the real
 * one, so that the boot runtime links and boots on its own.  The real
 * definition overrides this weak one; remove this file once it exists.
 */
#include "boot_info.h"
#include "compiler.h"
#include "console.h"

int vmm_run(const struct boot_info *bi);

__weak int vmm_run(const struct boot_info *bi)
{
	(void)bi;
	printk("exitplan: no VMM linked\n");
	return 1;
}
