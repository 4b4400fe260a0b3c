/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-CPU state, reached through the GS base: %gs:0 holds the area's own
 * address, so this_cpu() is one load.  The boot CPU is id 0; each AP
 * that smp.c starts gets area 1..HV_MAX_CPUS-1 (percpu_init_ap()).
 *
 * VMX host state is read from the CPU that sets up the VMCS (vmx.c), so
 * it is what this file left there: HOST_GS_BASE is this CPU's struct
 * percpu (the exit path calls this_cpu()), HOST_TR_SELECTOR = GDT_TSS,
 * HOST_TR_BASE = &this_cpu()->tss, HOST_GDTR_BASE = this_cpu()->gdt,
 * HOST_CS_SELECTOR = GDT_KERNEL_CS, HOST_SS/DS/ES_SELECTOR =
 * GDT_KERNEL_DS, HOST_FS/GS_SELECTOR = 0, HOST_IDTR_BASE = idt_base().
 */
#ifndef EXITPLAN_PERCPU_H
#define EXITPLAN_PERCPU_H

#include <stdint.h>

#include "runtime/host/compiler.h"
#include "runtime/host/desc.h"
#include "runtime/host/layout.h"

struct vcpu;

struct percpu {
	struct percpu *self;		/* first: this_cpu() reads %gs:0 */
	unsigned int id;		/* 0 = the boot CPU */
	uint32_t apic_id;		/* initial APIC ID, CPUID.1:EBX[31:24] */
	struct vcpu *vcpu;		/* the vCPU running here, or NULL */
	void *arch;			/* VT-x per-CPU state (arch/vmx) */
	uint64_t stack_top;		/* main stack, grows down from here */
	uint64_t stack_bottom;
	/* smp_call(): the function an idle AP is asked to run, and its argument. */
	void (*call_fn)(void *arg);
	void *call_arg;
	uint64_t gdt[GDT_ENTRIES] __aligned(16);
	struct tss64 tss __aligned(16);
	uint8_t ist_stack[IST_COUNT][HV_IST_STACK_SIZE] __aligned(16);
};

/* Set up the boot CPU's GDT, TSS and GS base.  First thing in hv_main. */
void percpu_init_bsp(void);
/* The same for an AP (smp.c), on the stack [stack_bottom, stack_top). */
void percpu_init_ap(unsigned int id, uint64_t stack_bottom, uint64_t stack_top);

/* The area of CPU `id` (0 <= id < HV_MAX_CPUS), whether started or not. */
struct percpu *percpu_area(unsigned int id);

/* How many CPUs run the hypervisor: their ids are 0 .. count - 1. */
unsigned int percpu_online_count(void);

/* True once the running CPU's GS base points at its area. */
extern int percpu_bsp_ready;

static inline struct percpu *this_cpu(void)
{
	struct percpu *p;

	asm volatile("mov %%gs:0, %0" : "=r"(p));
	return p;
}

/* Safe before percpu_init_bsp(): the boot CPU is 0. */
static inline unsigned int this_cpu_id(void)
{
	return READ_ONCE(percpu_bsp_ready) ? this_cpu()->id : 0;
}

#endif /* EXITPLAN_PERCPU_H */
