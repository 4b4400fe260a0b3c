/* SPDX-License-Identifier: GPL-2.0-only */
/* What the boot loader passed; the multiboot v1 structures are the repository's lib/multiboot.h. */
#ifndef GUEST_BOOT_H
#define GUEST_BOOT_H

#include <stdint.h>

#include "multiboot.h"

/* Saved by lib/main.c before the guest runs. */
extern uint32_t multiboot_magic;
extern const struct multiboot_info *multiboot_info;

#endif /* GUEST_BOOT_H */
