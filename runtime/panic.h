/* SPDX-License-Identifier: GPL-2.0-only */
/* Stopping the machine: on purpose (power_off) or not (panic). */
#ifndef EXITPLAN_PANIC_H
#define EXITPLAN_PANIC_H

#include <stdint.h>

#include "compiler.h"

/*
 * Print "exitplan: PANIC: <message>" with the CPU, the caller and the
 * control registers, flush the UART and power off.  A panic inside a
 * panic powers off at once.
 */
void panic(const char *fmt, ...) __printf(1, 2) __noreturn;

/*
 * Flush the console and power off: Bochs's shutdown port 0x8900, ACPI
 * S5 at the Bochs BIOS's PM base, QEMU's isa-debug-exit (QEMU exits with
 * status (code << 1) | 1), QEMU's PIIX4 ACPI S5; if all fail, halt.
 */
void power_off(void) __noreturn;
void power_off_with_code(uint8_t code) __noreturn;

#endif /* EXITPLAN_PANIC_H */
