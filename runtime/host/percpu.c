// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-CPU areas: GDT with a 64-bit TSS (VMX requires a usable host TR,
 * and the TSS gives #DF, NMI and #MC their own stacks), and the GS base.
 */
#include "runtime/host/boot_data.h"
#include "runtime/host/cpu.h"
#include "runtime/host/percpu.h"
#include "lib/string.h"
#include "runtime/host/x86_arch.h"

static struct percpu percpu_areas[HV_MAX_CPUS] __aligned(PAGE_SIZE);
static unsigned int cpus_online;
int percpu_bsp_ready;

struct percpu *percpu_area(unsigned int id)
{
	return id < HV_MAX_CPUS ? &percpu_areas[id] : NULL;
}

unsigned int percpu_online_count(void)
{
	return READ_ONCE(cpus_online);
}

static void gdt_set_tss(uint64_t *gdt, const struct tss64 *tss)
{
	uint64_t base = (uintptr_t)tss;

	/* A system descriptor in IA-32e mode is 16 bytes: base 63:32 follows. */
	gdt[GDT_TSS_IDX] = GDT_ENTRY(DESC_P | DESC_TYPE_TSS64_AVAIL, base,
				     sizeof(*tss) - 1);
	gdt[GDT_TSS_IDX + 1] = base >> 32;
}

static void percpu_load(struct percpu *p)
{
	struct desc_ptr gdtr = {
		.limit = sizeof(p->gdt) - 1,
		.base = (uintptr_t)p->gdt,
	};

	asm volatile("lgdt %0" : : "m"(gdtr));
	/* Reload CS with a far return, then the data segments. */
	asm volatile("pushq %[cs]\n\t"
		     "leaq 1f(%%rip), %%rax\n\t"
		     "pushq %%rax\n\t"
		     "lretq\n"
		     "1:\n\t"
		     "movl %[ds], %%eax\n\t"
		     "movl %%eax, %%ds\n\t"
		     "movl %%eax, %%es\n\t"
		     "movl %%eax, %%ss\n\t"
		     "xorl %%eax, %%eax\n\t"
		     "movl %%eax, %%fs\n\t"
		     "movl %%eax, %%gs"
		     : : [cs] "i"(GDT_KERNEL_CS), [ds] "i"(GDT_KERNEL_DS)
		     : "rax", "memory");
	asm volatile("ltr %w0" : : "r"(GDT_TSS));
	/* After the GS selector load: loading a selector resets the base. */
	wrmsr(MSR_IA32_GS_BASE, (uintptr_t)p);
	wrmsr(MSR_IA32_FS_BASE, 0);
}

static void percpu_setup(struct percpu *p, unsigned int id, uint64_t stack_bottom,
			 uint64_t stack_top)
{
	uint32_t eax, ebx, ecx, edx;

	memset(p, 0, sizeof(*p));
	p->self = p;
	p->id = id;
	cpuid_count(1, 0, &eax, &ebx, &ecx, &edx);
	p->apic_id = ebx >> 24;
	p->stack_top = stack_top;
	p->stack_bottom = stack_bottom;

	p->gdt[GDT_NULL_IDX] = 0;
	p->gdt[GDT_KERNEL_CS_IDX] = GDT_ENTRY(DESC_KERNEL_CODE64, 0, 0xfffff);
	p->gdt[GDT_KERNEL_DS_IDX] = GDT_ENTRY(DESC_KERNEL_DATA, 0, 0xfffff);
	gdt_set_tss(p->gdt, &p->tss);

	p->tss.rsp[0] = stack_top;
	for (int i = 0; i < IST_COUNT; i++)
		p->tss.ist[i] = (uintptr_t)p->ist_stack[i] + HV_IST_STACK_SIZE;
	p->tss.iomap_base = sizeof(p->tss);	/* no I/O permission bitmap */
}

void percpu_init_bsp(void)
{
	struct percpu *p = &percpu_areas[0];

	BUILD_BUG_ON(sizeof(struct tss64) != 104);
	BUILD_BUG_ON(offsetof(struct percpu, self) != 0);

	percpu_setup(p, 0, (uintptr_t)boot_stack_bottom, (uintptr_t)boot_stack_top);
	percpu_load(p);
	WRITE_ONCE(percpu_bsp_ready, 1);
	WRITE_ONCE(cpus_online, 1);
}

void percpu_init_ap(unsigned int id, uint64_t stack_bottom, uint64_t stack_top)
{
	struct percpu *p = &percpu_areas[id];

	percpu_setup(p, id, stack_bottom, stack_top);
	percpu_load(p);
	/* Ids are handed out in order, so online CPUs are 0 .. count - 1. */
	__atomic_fetch_add(&cpus_online, 1, __ATOMIC_SEQ_CST);
}
