// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdbool.h>

#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "lib/format.h"
#include "runtime/host/panic.h"
#include "runtime/host/percpu.h"
#include "lib/string.h"

extern const char __text_start[], __text_end[];

/* Enough to reach from a handler back to hv_main or ap_main. */
#define STACK_DUMP_MAX	16

/*
 * The CPU that ends the run, 1 + its id (0: none yet): the first to
 * panic or to power off.  Its report is the last word; any other CPU
 * that panics or powers off meanwhile halts for good instead of cutting
 * that report short (a second panic on two CPUs at once, or the boot
 * CPU's power off while an AP prints its panic).
 */
static int ending_cpu;

/* True when this CPU ends the run: it was first, or it is that CPU again (a nested panic). */
static bool claim_the_end(bool *nested)
{
	int me = (int)this_cpu_id() + 1, prev = 0;

	if (__atomic_compare_exchange_n(&ending_cpu, &prev, me, false, __ATOMIC_SEQ_CST,
					__ATOMIC_SEQ_CST)) {
		*nested = false;
		return true;
	}
	*nested = true;
	return prev == me;
}

void dump_stack_words(uint64_t rsp, uint64_t top)
{
	unsigned int n = 0;

	printk("  code addresses on the stack (? = maybe stale):");
	for (uint64_t a = ALIGN_UP(rsp, 8); a + 8 <= top && n < STACK_DUMP_MAX; a += 8) {
		uint64_t v = *(const uint64_t *)(uintptr_t)a;

		if (v >= (uintptr_t)__text_start && v < (uintptr_t)__text_end) {
			printk("%s ? %llx", n % 6 ? "" : "\n   ", (unsigned long long)v);
			n++;
		}
	}
	printk("%s\n", n ? "" : " none");
}

/* Whichever of this CPU's stacks rsp lies on: the main one or an IST one. */
static void dump_this_stack(uint64_t rsp)
{
	struct percpu *p = percpu_bsp_ready ? this_cpu() : NULL;

	if (!p)
		return;
	if (rsp > p->stack_bottom && rsp <= p->stack_top) {
		dump_stack_words(rsp, p->stack_top);
		return;
	}
	for (int i = 0; i < IST_COUNT; i++) {
		uint64_t bottom = (uintptr_t)p->ist_stack[i];

		if (rsp > bottom && rsp <= bottom + HV_IST_STACK_SIZE) {
			dump_stack_words(rsp, bottom + HV_IST_STACK_SIZE);
			return;
		}
	}
	printk("  (RSP is on no stack of this CPU)\n");
}

void power_off_with_code(uint8_t code)
{
	bool nested;

	if (!claim_the_end(&nested))
		cpu_halt_forever();	/* another CPU's panic ends the run */
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
	char msg[256];
	va_list ap;
	bool nested;

	local_irq_disable();
	console_enter_panic();
	if (!claim_the_end(&nested))
		cpu_halt_forever();	/* another CPU ends the run: its report stays whole */
	if (nested) {
		printk("exitplan: PANIC: nested panic, powering off\n");
		power_off_with_code(POWER_OFF_PANIC);
	}

	/* One printk: another CPU's output cannot land inside the line. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printk("exitplan: PANIC: %s\n", msg);

	printk("  on CPU %u, called from %p, RSP %016llx\n", this_cpu_id(),
	       __builtin_return_address(0), (unsigned long long)read_rsp());
	printk("  CR0 %016llx  CR3 %016llx  CR4 %016llx\n",
	       (unsigned long long)read_cr0(), (unsigned long long)read_cr3(),
	       (unsigned long long)read_cr4());
	dump_this_stack(read_rsp());
	power_off_with_code(POWER_OFF_PANIC);
}
