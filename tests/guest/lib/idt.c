// SPDX-License-Identifier: GPL-2.0-only
/*
 * IDT setup, exception reporting and recovery, interrupt dispatch.
 */
#include "console.h"
#include "exceptions.h"	/* lib/ at the top: the mnemonics, shared with the hypervisor */
#include "idt.h"
#include "smp.h"
#include "test.h"
#include "x86.h"

#define GUEST_CS		0x08	/* entry.S's GDT */
#define IDT_ENTRIES		256
#define FIRST_EXTERNAL_VECTOR	32
/* 32-bit interrupt gate, present, DPL 0 (SDM Vol. 3A, figure 6-2) */
#define IDT_GATE_INTR32		0x8e00

struct idt_entry {
	uint16_t offset_lo;
	uint16_t selector;
	uint16_t flags;
	uint16_t offset_hi;
} __attribute__((packed));

struct idt_desc {
	uint16_t limit;
	uint32_t base;
} __attribute__((packed));

extern const uint32_t trap_stub_table[IDT_ENTRIES];	/* entry.S */

static struct idt_entry idt[IDT_ENTRIES] __attribute__((aligned(8)));
static irq_handler_t irq_handlers[IDT_ENTRIES];

/*
 * ASM_TRY's regions: an exception raised in [first, last] resumes at
 * recovery -- the end included, where a trap (INT3, INTO, INT n, a
 * single step) leaves EIP after its instruction.
 */
struct try_region {
	uint32_t first, last, recovery;
};
extern const struct try_region __try_table_start[], __try_table_end[];

/* What each CPU expects and was raised, by smp_cpu_slot(). */
static struct {
	int expected, vector;
	uint32_t error;
} fault[SMP_CPU_SLOTS];

static const struct try_region *try_region(uint32_t eip)
{
	for (const struct try_region *r = __try_table_start; r < __try_table_end; r++)
		if (eip >= r->first && eip <= r->last)
			return r;
	return NULL;
}

const char *vector_name(int vector)
{
	if (vector == NO_FAULT)
		return "no exception";
	if (vector >= 0 && x86_exception_mnemonic((unsigned int)vector))
		return x86_exception_mnemonic((unsigned int)vector);
	return vector >= FIRST_EXTERNAL_VECTOR ? "interrupt" : "reserved";
}

void idt_init(void)
{
	struct idt_desc desc = {
		.limit = sizeof(idt) - 1,
		.base = (uint32_t)(uintptr_t)idt,
	};

	for (int v = 0; v < IDT_ENTRIES; v++) {
		idt[v].offset_lo = trap_stub_table[v] & 0xffff;
		idt[v].offset_hi = trap_stub_table[v] >> 16;
		idt[v].selector = GUEST_CS;
		idt[v].flags = IDT_GATE_INTR32;
	}
	asm volatile("lidt %0" : : "m"(desc));
}

void irq_register(uint8_t vector, irq_handler_t handler)
{
	irq_handlers[vector] = handler;
}

void idt_set_gate(uint8_t vector, uint32_t entry)
{
	if (!entry)
		entry = trap_stub_table[vector];
	idt[vector].offset_lo = entry & 0xffff;
	idt[vector].offset_hi = entry >> 16;
}

void nmi_register(irq_handler_t handler)
{
	irq_handlers[X86_EXC_NMI] = handler;
}

void expect_fault(int vector)
{
	unsigned int cpu = smp_cpu_slot();

	fault[cpu].expected = vector;
	fault[cpu].vector = NO_FAULT;
	fault[cpu].error = 0;
}

bool fault_happened(void)
{
	unsigned int cpu = smp_cpu_slot();

	if (fault[cpu].vector == NO_FAULT)
		return false;
	return fault[cpu].expected == ANY_VECTOR || fault[cpu].vector == fault[cpu].expected;
}

int last_fault_vector(void)
{
	return fault[smp_cpu_slot()].vector;
}

uint32_t last_fault_error_code(void)
{
	return fault[smp_cpu_slot()].error;
}

static void __attribute__((noreturn)) unexpected(struct trap_frame *f)
{
	bool exception = f->vector < FIRST_EXTERNAL_VECTOR;

	printf("FAIL: unexpected %s %s (vector %u) error code 0x%x at EIP 0x%08x"
	       " EFLAGS 0x%x CR2 0x%08x\n",
	       exception ? "exception" : "interrupt", vector_name(f->vector),
	       f->vector, f->error_code, f->eip, f->eflags, read_cr2());
	printf("  eax %08x ebx %08x ecx %08x edx %08x esi %08x edi %08x ebp %08x\n",
	       f->eax, f->ebx, f->ecx, f->edx, f->esi, f->edi, f->ebp);
	test_abort();
}

void trap_dispatch(struct trap_frame *f);
void trap_dispatch(struct trap_frame *f)
{
	if (f->vector == X86_EXC_NMI && irq_handlers[X86_EXC_NMI]) {
		irq_handlers[X86_EXC_NMI](f);
		return;
	}
	if (f->vector < FIRST_EXTERNAL_VECTOR) {
		const struct try_region *r = try_region(f->eip);
		unsigned int cpu = smp_cpu_slot();	/* the same stack as the faulting code */

		if (!r)
			unexpected(f);
		fault[cpu].vector = (int)f->vector;
		fault[cpu].error = f->error_code;
		f->eip = r->recovery;
		return;
	}
	if (!irq_handlers[f->vector])
		unexpected(f);
	irq_handlers[f->vector](f);
}

int rdmsr_safe(uint32_t msr, uint64_t *value)
{
	uint32_t lo = 0, hi = 0;

	expect_fault(ANY_VECTOR);
	asm volatile(ASM_TRY("1f")
		     "rdmsr\n\t"
		     "1:"
		     : "+a"(lo), "+d"(hi) : "c"(msr) : "memory");
	fault_happened();
	*value = ((uint64_t)hi << 32) | lo;
	return last_fault_vector();
}

int wrmsr_safe(uint32_t msr, uint64_t value)
{
	expect_fault(ANY_VECTOR);
	asm volatile(ASM_TRY("1f")
		     "wrmsr\n\t"
		     "1:"
		     : : "c"(msr), "a"((uint32_t)value),
		       "d"((uint32_t)(value >> 32))
		     : "memory");
	fault_happened();
	return last_fault_vector();
}

int write_cr4_safe(uint32_t value)
{
	expect_fault(ANY_VECTOR);
	asm volatile(ASM_TRY("1f")
		     "mov %0, %%cr4\n\t"
		     "1:"
		     : : "r"(value) : "memory");
	fault_happened();
	return last_fault_vector();
}

int xsetbv_safe(uint32_t xcr, uint64_t value)
{
	expect_fault(ANY_VECTOR);
	asm volatile(ASM_TRY("1f")
		     "xsetbv\n\t"
		     "1:"
		     : : "c"(xcr), "a"((uint32_t)value),
		       "d"((uint32_t)(value >> 32))
		     : "memory");
	fault_happened();
	return last_fault_vector();
}
