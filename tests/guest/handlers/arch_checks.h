/* SPDX-License-Identifier: GPL-2.0-only */
/* The handlers guest's architectural checks (arch_checks.c). */
#ifndef GUEST_HANDLERS_ARCH_CHECKS_H
#define GUEST_HANDLERS_ARCH_CHECKS_H

void check_arch(void);

#endif
