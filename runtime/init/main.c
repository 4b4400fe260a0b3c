// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hypervisor's C entry, called by boot.S in 64-bit mode on the boot
 * CPU's stack with interrupts off: the host first, then the VMM above
 * it.  Here, above both, so that runtime/host calls nothing up.
 */
#include <stdint.h>

#include "runtime/host/boot_info.h"
#include "runtime/host/console.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/paging.h"
#include "runtime/host/panic.h"
#include "runtime/host/percpu.h"
#include "runtime/host/pic.h"
#include "runtime/host/selftest.h"
#include "runtime/host/traps.h"

#include "runtime/vm/vmm.h"

#ifndef EXITPLAN_VERSION		/* from $(BUILD)/$(PROFILE)/include/version.h */
#define EXITPLAN_VERSION	"unknown"
#endif

void hv_main(uint32_t mb_magic, uint32_t mb_info_pa);

void hv_main(uint32_t mb_magic, uint32_t mb_info_pa)
{
	const struct boot_info *bi;
	char test[128];
	int status;

	/* Order matters: GS base first (printk asks which CPU it is on). */
	percpu_init_bsp();
	idt_init();
	idt_load();
	console_init();
	paging_protect_image();
	pic_remap_and_mask();

	printk("\nexitplan %s (profile %s)\n", EXITPLAN_VERSION, vmm_profile_name);

	bi = boot_info_init(mb_magic, mb_info_pa);
	boot_info_print(bi);

	page_alloc_init(bi);
	printk("exitplan: page pool [%llx, %llx): %u pages free\n",
	       (unsigned long long)bi->pool_start, (unsigned long long)bi->pool_end,
	       page_alloc_free_pages());

	if (cmdline_option(bi->cmdline, "selftest", test, sizeof(test)))
		status = selftest_run(test, bi);
	else
		status = vmm_run(bi);

	printk("exitplan: exit status %d\n", status);
	power_off_with_code(status & 0x7f);
}
