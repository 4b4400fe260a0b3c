/* SPDX-License-Identifier: GPL-2.0-only */
/* Stopping the machine: on purpose (power_off) or not (panic). */
#ifndef EXITPLAN_PANIC_H
#define EXITPLAN_PANIC_H

/* Ports that turn the emulated machine off (power_off(), boot.S). */
#define BOCHS_SHUTDOWN_PORT	0x8900	/* write "Shutdown" */
#define BOCHS_ACPI_PM1A_CNT	0xb004	/* the Bochs BIOS puts the PM base at 0xb000 */
#define QEMU_ACPI_PM1A_CNT	0x604	/* SeaBIOS puts PIIX4's PM base at 0x600 */
#define QEMU_DEBUG_EXIT_PORT	0xf4	/* -device isa-debug-exit,iobase=0xf4 */
/* PM1a_CNT.SLP_EN with SLP_TYP 0, which both DSDTs give to \_S5. */
#define ACPI_PM1_CNT_S5		0x2000

/* isa-debug-exit codes of power-offs that are not a guest's status. */
#define POWER_OFF_PANIC		0x7f
#define POWER_OFF_FAILED_BOOT	0x7e

#ifndef __ASSEMBLER__
#include <stdint.h>

#include "runtime/host/compiler.h"

/*
 * Print "exitplan: PANIC: <message>" with the CPU, the caller and the
 * control registers, flush the UART and power off.  A panic inside a
 * panic powers off at once.  The first CPU to panic or power off ends
 * the run: another that panics or powers off meanwhile halts for good,
 * so that the first one's report is printed whole.
 */
void panic(const char *fmt, ...) __printf(1, 2) __noreturn;

/*
 * Flush the console and power off: Bochs's shutdown port 0x8900, ACPI
 * S5 at the Bochs BIOS's PM base, QEMU's isa-debug-exit (QEMU exits with
 * status (code << 1) | 1), QEMU's PIIX4 ACPI S5; if all fail, halt.
 */
void power_off(void) __noreturn;

/*
 * Print the words of the stack [rsp, top) that point into the
 * hypervisor's code: return addresses, most likely, but the image has no
 * frame pointers, so some may be stale ("?" as in Linux's unreliable
 * traces).  Look them up with addr2line -e exitplan.elf.
 */
void dump_stack_words(uint64_t rsp, uint64_t top);
void power_off_with_code(uint8_t code) __noreturn;
#endif /* !__ASSEMBLER__ */

#endif /* EXITPLAN_PANIC_H */
