// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>

#include "console.h"
#include "cpu.h"
#include "panic.h"
#include "percpu.h"

/* Ports that turn the emulated machine off (see docs in panic.h). */
#define BOCHS_SHUTDOWN_PORT	0x8900
#define BOCHS_ACPI_PM1A_CNT	0xb004	/* Bochs BIOS puts the PM base at 0xb000 */
#define QEMU_ACPI_PM1A_CNT	0x604	/* SeaBIOS puts PIIX4's PM base at 0x600 */
#define QEMU_DEBUG_EXIT_PORT	0xf4	/* -device isa-debug-exit,iobase=0xf4 */
/* PM1a_CNT.SLP_EN with SLP_TYP 0, which both DSDTs give to \_S5. */
#define ACPI_PM1_CNT_S5		0x2000

static int panicking;

void power_off_with_code(uint8_t code)
{
	console_flush();
	for (const char *s = "Shutdown"; *s; s++)
		outb(BOCHS_SHUTDOWN_PORT, *s);
	outw(BOCHS_ACPI_PM1A_CNT, ACPI_PM1_CNT_S5);
	outb(QEMU_DEBUG_EXIT_PORT, code);
	outw(QEMU_ACPI_PM1A_CNT, ACPI_PM1_CNT_S5);
	cpu_halt_forever();
}

void power_off(void)
{
	power_off_with_code(0);
}

void panic(const char *fmt, ...)
{
	va_list ap;

	local_irq_disable();
	if (__atomic_exchange_n(&panicking, 1, __ATOMIC_SEQ_CST)) {
		printk("exitplan: PANIC: nested panic, powering off\n");
		power_off_with_code(0x7f);
	}

	printk("exitplan: PANIC: ");
	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
	printk("\n");

	printk("  on CPU %u, called from %p, RSP %016llx\n", this_cpu_id(),
	       __builtin_return_address(0), (unsigned long long)read_rsp());
	printk("  CR0 %016llx  CR3 %016llx  CR4 %016llx\n",
	       (unsigned long long)read_cr0(), (unsigned long long)read_cr3(),
	       (unsigned long long)read_cr4());
	power_off_with_code(0x7f);
}
