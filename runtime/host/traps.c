// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IDT and what happens on an interrupt or exception in the
 * hypervisor: a registered handler, or a full report and a panic.
 */
#include <stddef.h>

#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "runtime/host/desc.h"
#include "runtime/host/extable.h"
#include "lib/exceptions.h"	/* lib/: the mnemonics, shared with the test guests */
#include "runtime/host/paging.h"
#include "runtime/host/panic.h"
#include "runtime/host/percpu.h"
#include "runtime/host/traps.h"
#include "runtime/host/x86_arch.h"

extern const uint64_t interrupt_stubs[IDT_VECTORS];

static struct idt_gate idt[IDT_VECTORS] __aligned(16);
static interrupt_handler_t handlers[IDT_VECTORS];

/* Reserved vectors print as #<n>. */
static const char *const reserved_names[NR_EXCEPTION_VECTORS] = {
	"#0", "#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8", "#9", "#10",
	"#11", "#12", "#13", "#14", "#15", "#16", "#17", "#18", "#19", "#20",
	"#21", "#22", "#23", "#24", "#25", "#26", "#27", "#28", "#29", "#30",
	"#31",
};

/* Vectors that get a known-good stack whatever RSP was. */
static unsigned int vector_ist(unsigned int vector)
{
	switch (vector) {
	case X86_EXC_DF:
		return IST_DOUBLE_FAULT;
	case X86_EXC_NMI:
		return IST_NMI;
	case X86_EXC_MC:
		return IST_MACHINE_CHECK;
	default:
		return 0;
	}
}

const char *exception_name(unsigned int vector)
{
	if (vector >= NR_EXCEPTION_VECTORS)
		return NULL;
	return x86_exception_mnemonic(vector) ?: reserved_names[vector];
}

void idt_init(void)
{
	for (unsigned int v = 0; v < IDT_VECTORS; v++) {
		uint64_t addr = interrupt_stubs[v];

		idt[v] = (struct idt_gate){
			.offset_low = addr & 0xffff,
			.selector = GDT_KERNEL_CS,
			.ist = vector_ist(v),
			.type_attr = IDT_GATE_INTERRUPT,
			.offset_mid = (addr >> 16) & 0xffff,
			.offset_high = addr >> 32,
		};
	}
}

void idt_load(void)
{
	struct desc_ptr idtr = {
		.limit = sizeof(idt) - 1,
		.base = (uintptr_t)idt,
	};

	asm volatile("lidt %0" : : "m"(idtr));
}

uint64_t idt_base(void)
{
	return (uintptr_t)idt;
}

/* Set by idt_seal(): the handlers are fixed from then on, on every CPU. */
static bool handlers_sealed;

void idt_set_handler(unsigned int vector, interrupt_handler_t handler)
{
	if (vector >= IDT_VECTORS)
		panic("idt_set_handler: vector %u out of range", vector);
	if (READ_ONCE(handlers_sealed))
		panic("idt_set_handler: vector %u after idt_seal(): the handlers are fixed at boot",
		      vector);
	WRITE_ONCE(handlers[vector], handler);
}

/*
 * The NMI's owner (traps.h).  An indirect call, but off the exit path (an
 * NMI in root operation: a kick to a CPU waiting or idle, the guest's
 * own NMI landing in the hypervisor) and fixed at boot like the handlers
 * above: the host, below the VMM, names nothing of it.
 */
static nmi_owner_t nmi_owner;

void traps_set_nmi_owner(nmi_owner_t owner)
{
	if (READ_ONCE(handlers_sealed) || READ_ONCE(nmi_owner))
		panic("traps_set_nmi_owner: once, at boot, before idt_seal()");
	WRITE_ONCE(nmi_owner, owner);
}

void idt_seal(void)
{
	__atomic_store_n(&handlers_sealed, true, __ATOMIC_SEQ_CST);
}

/* The general registers in the dump's order, three to a line. */
static const struct {
	char name[4];
	uint16_t offset;
} frame_gprs[] = {
	{ "RAX", offsetof(struct interrupt_frame, rax) },
	{ "RBX", offsetof(struct interrupt_frame, rbx) },
	{ "RCX", offsetof(struct interrupt_frame, rcx) },
	{ "RDX", offsetof(struct interrupt_frame, rdx) },
	{ "RSI", offsetof(struct interrupt_frame, rsi) },
	{ "RDI", offsetof(struct interrupt_frame, rdi) },
	{ "RBP", offsetof(struct interrupt_frame, rbp) },
	{ "R8", offsetof(struct interrupt_frame, r8) },
	{ "R9", offsetof(struct interrupt_frame, r9) },
	{ "R10", offsetof(struct interrupt_frame, r10) },
	{ "R11", offsetof(struct interrupt_frame, r11) },
	{ "R12", offsetof(struct interrupt_frame, r12) },
	{ "R13", offsetof(struct interrupt_frame, r13) },
	{ "R14", offsetof(struct interrupt_frame, r14) },
	{ "R15", offsetof(struct interrupt_frame, r15) },
};

static unsigned long long frame_gpr(const struct interrupt_frame *f, unsigned int i)
{
	return *(const uint64_t *)((const char *)f + frame_gprs[i].offset);
}

void interrupt_frame_dump(const struct interrupt_frame *f)
{
	printk("  RIP %016llx  CS %04llx  RFLAGS %016llx\n",
	       (unsigned long long)f->rip, (unsigned long long)f->cs,
	       (unsigned long long)f->rflags);
	printk("  RSP %016llx  SS %04llx  error code %016llx\n",
	       (unsigned long long)f->rsp, (unsigned long long)f->ss,
	       (unsigned long long)f->error_code);
	BUILD_BUG_ON(ARRAY_SIZE(frame_gprs) % 3 != 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(frame_gprs); i += 3)
		printk("  %-3s %016llx  %-3s %016llx  %-3s %016llx\n",
		       frame_gprs[i].name, frame_gpr(f, i),
		       frame_gprs[i + 1].name, frame_gpr(f, i + 1),
		       frame_gprs[i + 2].name, frame_gpr(f, i + 2));
	printk("  CR0 %016llx  CR2 %016llx  CR3 %016llx  CR4 %016llx\n",
	       (unsigned long long)read_cr0(), (unsigned long long)read_cr2(),
	       (unsigned long long)read_cr3(), (unsigned long long)read_cr4());
}

/* NMIs the hypervisor took for itself, by CPU (reported once each). */
static uint64_t host_nmis[HV_MAX_CPUS];

void nmi_host(struct interrupt_frame *f)
{
	unsigned int cpu = this_cpu_id();

	/*
	 * Nothing in the hypervisor sends or expects an NMI: one with no
	 * guest to give it to (before the guest starts, after it stopped)
	 * is reported and dropped.  Never a panic: a guest can aim NMIs at
	 * any CPU through the APIC it owns.  printk() is safe here: the
	 * console lock lets the CPU that holds it print again.
	 */
	if (cpu < HV_MAX_CPUS && host_nmis[cpu]++ == 0)
		printk("exitplan: NMI on CPU %u in the hypervisor (RIP %#llx, no guest on this CPU): "
		       "dropped\n", cpu, (unsigned long long)f->rip);
}

/*
 * NMI: its owner's when it takes it (the VMM: the guest's when a vCPU
 * runs on this CPU, queued for it), else a registered handler's (parked
 * CPUs), else the host's.
 */
static void nmi_dispatch(struct interrupt_frame *f)
{
	nmi_owner_t owner = READ_ONCE(nmi_owner);
	interrupt_handler_t handler;

	if (owner && owner(f))
		return;
	handler = READ_ONCE(handlers[X86_EXC_NMI]);
	if (handler)
		handler(f);
	else
		nmi_host(f);
}

void interrupt_dispatch(struct interrupt_frame *f)
{
	unsigned int vector = f->vector & (IDT_VECTORS - 1);
	interrupt_handler_t handler = READ_ONCE(handlers[vector]);

	if (vector == X86_EXC_NMI) {
		nmi_dispatch(f);
		return;
	}
	if (handler) {
		handler(f);
		return;
	}

	/* An instruction that may fault on a guest's value (extable.h). */
	if (extable_fixup(f))
		return;
	if (vector < NR_EXCEPTION_VECTORS) {
		struct percpu *p = this_cpu();

		printk("exitplan: EXCEPTION %s (vector %u) on CPU %u, error code 0x%llx\n",
		       exception_name(vector), vector, this_cpu_id(),
		       (unsigned long long)f->error_code);
		interrupt_frame_dump(f);
		if ((vector == X86_EXC_PF || vector == X86_EXC_DF) && paging_is_stack_guard(read_cr2()))
			printk("exitplan: CR2 is in a stack guard page: stack overflow\n");
		/* The interrupted stack, which an IST exception is not on. */
		if (f->rsp > p->stack_bottom && f->rsp <= p->stack_top)
			dump_stack_words(f->rsp, p->stack_top);
		panic("unhandled exception %s at RIP %016llx",
		      exception_name(vector), (unsigned long long)f->rip);
	}
	printk("exitplan: unexpected interrupt vector %u on CPU %u\n",
	       vector, this_cpu_id());
	interrupt_frame_dump(f);
	panic("unexpected interrupt vector %u", vector);
}
