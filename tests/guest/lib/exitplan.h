/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Is the guest running under exitplan?  CPUID leaf 0x40000000 answers:
 * EAX = the highest hypervisor leaf, EBX/ECX/EDX = "exit" "plan" "\0\0\0\0"
 * (docs/GUESTS.md).  Checks that need exitplan SKIP elsewhere.
 */
#ifndef GUEST_EXITPLAN_H
#define GUEST_EXITPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "x86.h"

/* The signature as the three registers hold it, little endian. */
struct hv_signature {
	uint32_t max_leaf;
	char text[13];		/* EBX, ECX, EDX as characters, NUL-ended */
};

struct hv_signature exitplan_signature(void);
bool exitplan_detected(void);
/*
 * QEMU's TCG (the "TCGTCGTCGTCG" signature), where a few architectural
 * behaviours are missing (docs/GUESTS.md): checks of those SKIP there.
 */
bool qemu_tcg_detected(void);
/* The guest-physical MMIO test page exitplan emulates (docs/GUESTS.md). */
#define EXITPLAN_TEST_PAGE	0xfeb00000u
#define EXITPLAN_TEST_PAGE_SIG	0x45584954u	/* "EXIT" read as a 32-bit value */
/*
 * The hypervisor's region, absent from the memory map exitplan passes: at
 * the top of RAM below 4 GiB, so under exitplan it starts where the
 * available range holding 1 MiB ends and ends where the map's next entry
 * (the firmware's ACPI tables) starts, or 2 MiB later if none does
 * (docs/GUESTS.md).  Read from the multiboot map.
 */
uint32_t exitplan_hv_start(void);
uint32_t exitplan_hv_end(void);

#endif /* GUEST_EXITPLAN_H */
