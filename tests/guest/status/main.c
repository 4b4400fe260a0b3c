// SPDX-License-Identifier: GPL-2.0-only
/*
 * The status guest: exits at once with the code given as code=N, so that
 * a boot test can check that exitplan reports a guest's exit status
 * ((N << 1) | 1, as QEMU's isa-debug-exit does).  With via=shutdown it
 * ends through exitplan's SHUTDOWN(N) hypercall instead (exitplan only).
 */
#include "console.h"
#include "exitplan.h"
#include "hypercall.h"
#include "string.h"
#include "test.h"

const char guest_name[] = "status";

void guest_main(void)
{
	uint32_t code = cmdline_u32("code", 0);
	char via[16];

	if (cmdline_value("via", via, sizeof(via)) && !strcmp(via, "shutdown")) {
		if (!exitplan_detected()) {
			check("status-via-shutdown", false, "not running under exitplan");
			return;
		}
		printf("status guest: exiting with code %u through SHUTDOWN\n", code);
		console_flush();
		hypercall4(HYPERCALL_SHUTDOWN, code, 0, 0, 0);
		check("status-via-shutdown", false, "SHUTDOWN returned");
		return;
	}
	printf("status guest: exiting with code %u\n", code);
	guest_exit(code);
}
