// SPDX-License-Identifier: GPL-2.0-only
/*
 * The status guest: exits at once with the code given as code=N, so that
 * a boot test can check that exitplan reports a guest's exit status
 * ((N << 1) | 1, as QEMU's isa-debug-exit does).
 */
#include "console.h"
#include "test.h"

const char guest_name[] = "status";

void guest_main(void)
{
	uint32_t code = cmdline_u32("code", 0);

	printf("status guest: exiting with code %u\n", code);
	guest_exit(code);
}
