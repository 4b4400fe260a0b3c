/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hypervisor proper, as the image's entry (runtime/init) sees it:
 * one call that runs the guest machine to completion (every vCPU, one
 * per CPU); and the one service the architecture-neutral VM
 * (runtime/vm/vm.c) still calls up for, the kick.
 */
#ifndef EXITPLAN_VMM_H
#define EXITPLAN_VMM_H

#include <stdbool.h>
#include <stdint.h>

struct boot_info;

/*
 * vmm_run()'s result: >= 0 is the guest's exit status (isa-debug-exit
 * ((code mod 2^30) << 1) | 1, the SHUTDOWN hypercall's argument mod 2^31,
 * 0 for a power off), which is never negative, so that no guest can make
 * its status read as one of these; negative values say why no guest
 * status exists.  vmm_run() has printed the details
 * ("exitplan: guest exit status N", "exitplan: guest stopped: ...", or
 * the refusal) before it returns; the caller powers off.
 */
#define VMM_REFUSED		(-1)	/* no VT-x, or the profile cannot run here */
#define VMM_ERROR		(-2)	/* setup failed (memory, guest image, VMCS) */
#define VMM_GUEST_FAULT		(-3)	/* the guest was stopped: fault, violation */

int vmm_run(const struct boot_info *bi);

/* The profile the hypervisor was built for (profiles/NAME.yaml), for the banner. */
extern const char vmm_profile_name[];


#endif /* EXITPLAN_VMM_H */
