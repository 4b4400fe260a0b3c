/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The x86 instructions the test guests use, as inline functions, and the
 * architectural numbers they need.
 *
 * Architectural numbers come from exitplan's generated headers
 * (generated/common/msr_index.h and arch_bits.h, from the YAML in spec/), so the
 * guests and the hypervisor agree on one source of truth.  The block
 * marked FALLBACK below defines only what those headers do not (yet)
 * provide; each name is guarded so that the generated definition wins.
 * Drop a fallback name once spec/ carries it.
 */
#ifndef GUEST_X86_H
#define GUEST_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if __has_include("msr_index.h")
#include "msr_index.h"
#endif
#if __has_include("arch_bits.h")
#include "arch_bits.h"
#endif

/*
 * ---- FALLBACK: remove once generated/common/ exists ----
 * The names are the ones spec/msrs.yaml and spec/arch.yaml generate, with
 * the same values; each is guarded so that the generated definition wins.
 */
#ifndef MSR_IA32_APIC_BASE
#define MSR_IA32_APIC_BASE		0x0000001bu
#endif
#ifndef MSR_IA32_FEATURE_CONTROL
#define MSR_IA32_FEATURE_CONTROL	0x0000003au
#endif
#ifndef MSR_IA32_TSC_DEADLINE
#define MSR_IA32_TSC_DEADLINE		0x000006e0u
#endif
#ifndef MSR_IA32_VMX_BASIC
#define MSR_IA32_VMX_BASIC		0x00000480u
#endif
#ifndef MSR_IA32_VMX_PROCBASED_CTLS2
#define MSR_IA32_VMX_PROCBASED_CTLS2	0x0000048bu
#endif
#ifndef MSR_IA32_EFER
#define MSR_IA32_EFER			0xc0000080u
#endif
#ifndef MSR_IA32_TSC_AUX
#define MSR_IA32_TSC_AUX		0xc0000103u
#endif
#ifndef X86_CR0_PE
#define X86_CR0_PE			(1u << 0)
#define X86_CR0_MP			(1u << 1)
#define X86_CR0_TS			(1u << 3)
#define X86_CR0_WP			(1u << 16)
#define X86_CR0_PG			(1u << 31)
#endif
#ifndef X86_CR4_PGE
#define X86_CR4_PGE			(1u << 7)
#define X86_CR4_OSFXSR			(1u << 9)
#define X86_CR4_VMXE			(1u << 13)
#define X86_CR4_OSXSAVE			(1u << 18)
#endif
#ifndef EFER_SCE
#define EFER_SCE			(1ull << 0)
#define EFER_LME			(1ull << 8)
#define EFER_LMA			(1ull << 10)
#define EFER_NXE			(1ull << 11)
#endif
#ifndef XCR0_X87
#define XCR0_X87			(1ull << 0)
#define XCR0_SSE			(1ull << 1)
#endif
#ifndef CPUID_1_ECX_VMX
#define CPUID_1_ECX_VMX			(1u << 5)
#define CPUID_1_ECX_TSC_DEADLINE	(1u << 24)
#define CPUID_1_ECX_XSAVE		(1u << 26)
#define CPUID_1_ECX_OSXSAVE		(1u << 27)
#define CPUID_1_ECX_HYPERVISOR		(1u << 31)
#endif
#ifndef APIC_BASE_BSP
#define APIC_BASE_BSP			(1ull << 8)
#define APIC_BASE_EN			(1ull << 11)
#define APIC_BASE_ADDR_MASK		0x000ffffffffff000ull
#endif
#ifndef APIC_DEFAULT_PHYS_BASE
#define APIC_DEFAULT_PHYS_BASE		0xfee00000
#endif
#ifndef XAPIC_REG_ID
#define XAPIC_REG_ID			0x020
#define XAPIC_REG_TPR			0x080
#define XAPIC_REG_EOI			0x0b0
#define XAPIC_REG_SVR			0x0f0
#define XAPIC_REG_LVT_TIMER		0x320
#define XAPIC_REG_TIMER_INIT_COUNT	0x380
#define XAPIC_REG_TIMER_CUR_COUNT	0x390
#define XAPIC_REG_TIMER_DIV_CONF	0x3e0
#define APIC_TIMER_DIV_1		0xb
#endif
#ifndef APIC_LVT_MASKED
#define APIC_LVT_MASKED			(1u << 16)
#define APIC_LVT_TIMER_MODE_ONESHOT	(0u << 17)
#define APIC_LVT_TIMER_MODE_TSC_DEADLINE (2u << 17)
#endif
#ifndef APIC_SVR_ENABLE
#define APIC_SVR_ENABLE			(1u << 8)
#endif
#ifndef FEAT_CTL_LOCKED
#define FEAT_CTL_LOCKED			(1ull << 0)
#endif
#ifndef X86_EXC_DE
#define X86_EXC_DE	0
#define X86_EXC_DB	1
#define X86_EXC_NMI	2
#define X86_EXC_BP	3
#define X86_EXC_OF	4
#define X86_EXC_BR	5
#define X86_EXC_UD	6
#define X86_EXC_NM	7
#define X86_EXC_DF	8
#define X86_EXC_TS	10
#define X86_EXC_NP	11
#define X86_EXC_SS	12
#define X86_EXC_GP	13
#define X86_EXC_PF	14
#define X86_EXC_MF	16
#define X86_EXC_AC	17
#define X86_EXC_MC	18
#define X86_EXC_XM	19
#define X86_EXC_VE	20
#define X86_EXC_CP	21
#endif
/* ---- end of FALLBACK ---- */

/*
 * Not in spec/ (the hypervisor has no use for them), so defined here:
 * CPUID bits only the guests test (SDM Vol. 2A, CPUID).
 */
#define CPUID_1_EDX_APIC		(1u << 9)
#define CPUID_80000001_EDX_RDTSCP	(1u << 27)

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid_count(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;

	asm volatile("cpuid"
		     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
		     : "a"(leaf), "c"(subleaf)
		     : "memory");
	return r;
}

static inline struct cpuid_regs cpuid(uint32_t leaf)
{
	return cpuid_count(leaf, 0);
}

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	asm volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	asm volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	asm volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	asm volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void insb(uint16_t port, void *buf, uint32_t count)
{
	asm volatile("rep insb"
		     : "+D"(buf), "+c"(count)
		     : "d"(port)
		     : "memory");
}

static inline void outsb(uint16_t port, const void *buf, uint32_t count)
{
	asm volatile("rep outsb"
		     : "+S"(buf), "+c"(count)
		     : "d"(port)
		     : "memory");
}

static inline void outsw(uint16_t port, const void *buf, uint32_t count)
{
	asm volatile("rep outsw"
		     : "+S"(buf), "+c"(count)
		     : "d"(port)
		     : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr) : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	asm volatile("wrmsr"
		     : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
		     : "memory");
}

#define DEFINE_CR_ACCESSORS(n)						\
static inline uint32_t read_cr##n(void)					\
{									\
	uint32_t v;							\
	asm volatile("mov %%cr" #n ", %0" : "=r"(v) : : "memory");	\
	return v;							\
}									\
static inline void write_cr##n(uint32_t v)				\
{									\
	asm volatile("mov %0, %%cr" #n : : "r"(v) : "memory");		\
}
DEFINE_CR_ACCESSORS(0)
DEFINE_CR_ACCESSORS(2)
DEFINE_CR_ACCESSORS(3)
DEFINE_CR_ACCESSORS(4)
#undef DEFINE_CR_ACCESSORS

#define DEFINE_DR_ACCESSORS(n)						\
static inline uint32_t read_dr##n(void)					\
{									\
	uint32_t v;							\
	asm volatile("mov %%dr" #n ", %0" : "=r"(v));			\
	return v;							\
}									\
static inline void write_dr##n(uint32_t v)				\
{									\
	asm volatile("mov %0, %%dr" #n : : "r"(v));			\
}
DEFINE_DR_ACCESSORS(0)
DEFINE_DR_ACCESSORS(7)
#undef DEFINE_DR_ACCESSORS

static inline uint32_t read_eflags(void)
{
	uint32_t f;

	asm volatile("pushfl; popl %0" : "=r"(f));
	return f;
}

static inline void cli(void)
{
	asm volatile("cli" : : : "memory");
}

static inline void sti(void)
{
	asm volatile("sti" : : : "memory");
}

/* STI's one-instruction shadow guarantees no interrupt slips in before HLT. */
static inline void sti_hlt(void)
{
	asm volatile("sti; hlt" : : : "memory");
}

static inline void pause(void)
{
	asm volatile("pause" : : : "memory");
}

/*
 * A pointer to a physical address (paging is off).  The empty asm hides
 * the constant from GCC, which otherwise warns about dereferencing
 * addresses in the first page as if they were offsets from NULL.
 */
static inline void *phys_ptr(uintptr_t addr)
{
	asm("" : "+r"(addr));
	return (void *)addr;
}

static inline void mmio_write32(uintptr_t addr, uint32_t v)
{
	*(volatile uint32_t *)addr = v;
}

static inline uint32_t mmio_read32(uintptr_t addr)
{
	return *(volatile uint32_t *)addr;
}

#endif /* GUEST_X86_H */
