/* SPDX-License-Identifier: GPL-2.0-only */
/* The handlers guest's MMIO instruction forms and string I/O wrap (mmio_checks.c). */
#ifndef GUEST_HANDLERS_MMIO_CHECKS_H
#define GUEST_HANDLERS_MMIO_CHECKS_H

void check_mmio_forms(void);

#endif
