// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/boot_info.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "lib/format.h"
#include "runtime/host/layout.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/panic.h"
#include "runtime/host/percpu.h"
#include "runtime/host/smp.h"
#include "runtime/host/selftest.h"
#include "lib/string.h"
#include "runtime/host/x86_arch.h"

/*
 * Each case prints its format and its output; the boot test formats the
 * same arguments with Python's % operator and compares.  Keep the order
 * in step with FORMAT_CASES in tests/boot/test_boot_basic.py.
 */
#define FMT_CASE(fmt, ...)						\
	do {								\
		snprintf(buf, sizeof(buf), fmt, __VA_ARGS__);		\
		printk("selftest: format %u '%s' [%s]\n", n++, fmt, buf); \
	} while (0)

static int selftest_format(void)
{
	char buf[128];
	unsigned int n = 0;
	int ret;

	FMT_CASE("%d %i %d", 0, -1, 2147483647);
	FMT_CASE("%d", (int)-2147483647 - 1);
	FMT_CASE("%u %u", 0u, 4294967295u);
	FMT_CASE("%x %X", 0xdeadbeefu, 0xdeadbeefu);
	FMT_CASE("%lx %lu", 0xfffffffffffffffful, 18446744073709551615ul);
	FMT_CASE("%016llx", 0x1234abcdull);
	FMT_CASE("%lld %ld", (long long)-9223372036854775807ll - 1, -42l);
	FMT_CASE("%llu", 12345678901234567890ull);
	FMT_CASE("[%5d|%-5d|%05d]", 42, 42, 42);
	FMT_CASE("[%05d|%-5d]", -42, -42);
	FMT_CASE("[%8s|%-8s|%.3s]", "abc", "abc", "abcdef");
	FMT_CASE("[%c%c%c]", 'x', 'y', 'z');
	FMT_CASE("%p", (void *)0x4000000);
	FMT_CASE("%s %%", "100");
	FMT_CASE("%hhu %hd", 0x1ff, 0x18000);
	FMT_CASE("[%*d|%-*d]", 4, 7, 4, 7);
	FMT_CASE("%zu %zx", (size_t)4096, (size_t)4096);
	FMT_CASE("[%#x|%#llx|%#X|%#x|%#010x]", 255u, 0x4000000ull, 0xabu, 0u, 0x1fu);

	/* Truncation: C99 semantics, the would-be length comes back. */
	ret = snprintf(buf, 8, "%s", "abcdefghij");
	printk("selftest: snprintf truncation ret=%d buf=[%s]\n", ret, buf);
	return ret == 10 && !strcmp(buf, "abcdefg") ? 0 : 1;
}

static bool page_is_zero(const void *page, unsigned int npages)
{
	const uint64_t *p = page;

	for (size_t i = 0; i < (size_t)npages * PAGE_SIZE / sizeof(*p); i++)
		if (p[i])
			return false;
	return true;
}

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			printk("selftest: alloc FAILED: %s (line %d)\n", #cond, __LINE__); \
			return 1;					\
		}							\
	} while (0)

static int selftest_alloc(const struct boot_info *bi)
{
	unsigned int free0 = page_alloc_free_pages(), count = 0;
	uint8_t *p, *q, *first = NULL, *prev = NULL, *x;

	CHECK(free0 == page_alloc_total_pages());
	CHECK(free0 == (bi->pool_end - bi->pool_start) / PAGE_SIZE);

	p = page_alloc();
	CHECK(p && IS_ALIGNED((uintptr_t)p, PAGE_SIZE));
	CHECK((uintptr_t)p >= bi->pool_start && (uintptr_t)p < bi->pool_end);
	CHECK(page_is_zero(p, 1));
	CHECK(page_alloc_free_pages() == free0 - 1);
	memset(p, 0xaa, PAGE_SIZE);
	page_free(p);
	q = page_alloc();
	CHECK(q == p);			/* first fit: the same page again... */
	CHECK(page_is_zero(q, 1));	/* ...zeroed again */

	p = page_alloc_contig(16);
	CHECK(p && page_is_zero(p, 16));
	CHECK(p + 16 * PAGE_SIZE <= q || p >= q + PAGE_SIZE);
	page_free_contig(p, 16);
	page_free(q);
	CHECK(page_alloc_free_pages() == free0);

	/* Exhaust the pool: every page once, in ascending order, then NULL. */
	while ((x = page_alloc())) {
		CHECK(!prev || x > prev);
		if (!first)
			first = x;
		prev = x;
		count++;
	}
	CHECK(count == free0);
	CHECK(page_alloc_contig(1) == NULL);
	CHECK((uintptr_t)first == bi->pool_start);
	CHECK((uintptr_t)prev + PAGE_SIZE == bi->pool_end);
	for (uint8_t *pg = first; pg <= prev; pg += PAGE_SIZE)
		page_free(pg);
	CHECK(page_alloc_free_pages() == free0);

	printk("selftest: alloc ok: %u pages, pool [%llx, %llx)\n", count,
	       (unsigned long long)bi->pool_start, (unsigned long long)bi->pool_end);
	return 0;
}

static uint64_t fnv1a64(const void *data, uint64_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV offset basis */

	for (uint64_t k = 0; k < len; k++)
		h = (h ^ p[k]) * 0x100000001b3ull;	/* FNV prime */
	return h;
}

/*
 * FNV-1a (64-bit) of every module, which the test computes over the file
 * it put on the ISO: the copy into the hypervisor region is exact.
 */
static int selftest_modules(const struct boot_info *bi)
{
	for (unsigned int i = 0; i < bi->module_count; i++) {
		const void *p = (const void *)(uintptr_t)bi->modules[i].start;
		uint64_t h = fnv1a64(p, bi->modules[i].end - bi->modules[i].start);

		printk("selftest: module %u fnv1a64 %016llx\n", i, (unsigned long long)h);
	}
	return 0;
}

struct smp_probe {
	unsigned int id;
	uint32_t apic_id;
	uint16_t tr;
	uint64_t gs_base, rsp;
	bool rsp_on_own_stack;
};

/* Runs on the CPU under test: what it believes it is. */
static void smp_probe(void *arg)
{
	struct smp_probe *probe = arg;
	struct percpu *p = this_cpu();
	uint32_t eax, ebx, ecx, edx;

	probe->id = p->id;
	cpuid_count(CPUID_LEAF_FEATURES, 0, &eax, &ebx, &ecx, &edx);
	probe->apic_id = ebx >> 24;
	asm volatile("str %0" : "=r"(probe->tr));
	probe->gs_base = rdmsr(MSR_IA32_GS_BASE);
	probe->rsp = read_rsp();
	probe->rsp_on_own_stack = probe->rsp > p->stack_bottom && probe->rsp <= p->stack_top;
}

/*
 * Start the APs and have each report its id, APIC ID, task register, GS
 * base and stack; every one must be its own.
 */
static int selftest_smp(void)
{
	const void *tramp = (const void *)(uintptr_t)SMP_TRAMPOLINE_PA;
	uint64_t before = fnv1a64(tramp, PAGE_SIZE);
	unsigned int n = smp_start_aps();
	int failed = 0;

	/* The page the APs started in is the guest's: it must be as it was. */
	if (fnv1a64(tramp, PAGE_SIZE) != before) {
		printk("selftest: smp: the trampoline page was not restored\n");
		failed = 1;
	}

	for (unsigned int cpu = 0; cpu < n; cpu++) {
		struct smp_probe probe = { .id = ~0u };
		bool ok;

		if (!smp_call(cpu, smp_probe, &probe)) {
			printk("selftest: smp cpu %u: call failed\n", cpu);
			failed = 1;
			continue;
		}
		ok = probe.id == cpu && probe.apic_id == percpu_area(cpu)->apic_id &&
		     probe.tr == GDT_TSS && probe.gs_base == (uintptr_t)percpu_area(cpu) &&
		     probe.rsp_on_own_stack;
		for (unsigned int other = 0; other < cpu; other++)
			ok = ok && percpu_area(other)->apic_id != probe.apic_id;
		printk("selftest: smp cpu %u: id %u apic %u tr %x gs %llx rsp %llx %s\n", cpu,
		       probe.id, probe.apic_id, probe.tr, (unsigned long long)probe.gs_base,
		       (unsigned long long)probe.rsp, ok ? "ok" : "WRONG");
		failed |= !ok;
	}
	if (!failed)
		printk("selftest: smp ok: %u CPUs\n", n);
	return failed;
}

/* smppanic: CPU 1 is in panic() (or about to be) when CPU 0 panics too. */
static uint32_t smppanic_ap_started;

static void smppanic_ap(void *arg)
{
	(void)arg;
	__atomic_store_n(&smppanic_ap_started, 1, __ATOMIC_RELEASE);
	panic("selftest panic on CPU %u", this_cpu_id());
}

/*
 * Two CPUs panic at once: one report, whole, ends the run (panic.c);
 * the other CPU halts instead of powering off in the middle of it.
 */
static int selftest_smppanic(void)
{
	if (smp_start_aps() < 2) {
		printk("selftest: smppanic needs two CPUs\n");
		return 2;
	}
	if (!smp_call_async(1, smppanic_ap, NULL)) {
		printk("selftest: smppanic: CPU 1 did not take the call\n");
		return 1;
	}
	while (!__atomic_load_n(&smppanic_ap_started, __ATOMIC_ACQUIRE))
		cpu_relax();
	panic("selftest panic on CPU %u", this_cpu_id());
}

/*
 * Each frame holds a page the compiler cannot drop.  The depth limit is
 * far beyond what the stack holds: the guard page is hit long before.
 */
static noinline int overflow_stack(uint64_t depth)
{
	volatile uint8_t pad[PAGE_SIZE];

	if (depth > HV_REGION_MAX / PAGE_SIZE)
		return 0;
	pad[0] = (uint8_t)depth;
	return overflow_stack(depth + 1) + pad[0];
}

static int selftest_one(const char *name, const struct boot_info *bi)
{
	printk("selftest: %s\n", name);
	if (!strcmp(name, "format"))
		return selftest_format();
	if (!strcmp(name, "modules"))
		return selftest_modules(bi);
	if (!strcmp(name, "smp"))
		return selftest_smp();
	if (!strcmp(name, "alloc"))
		return selftest_alloc(bi);
	if (!strcmp(name, "pagefault")) {
		/* Above the 4-GiB identity map: not present. */
		volatile uint64_t *unmapped = (volatile uint64_t *)HV_IDENTITY_MAP_END;

		printk("selftest: reading %p\n", (void *)unmapped);
		(void)*unmapped;
		return 1;
	}
	if (!strcmp(name, "ud")) {
		asm volatile("ud2");
		return 1;
	}
	if (!strcmp(name, "stackoverflow"))
		return overflow_stack(0);
	if (!strcmp(name, "writetext")) {
		/* The code is write-protected: this must fault, not patch. */
		volatile uint8_t *text = (volatile uint8_t *)(uintptr_t)selftest_run;

		printk("selftest: writing to %p\n", (void *)text);
		*text = *text;
		return 1;
	}
	if (!strcmp(name, "writerelro")) {
		/* const pointers (.data.rel.ro, as the exit dispatch table): write-protected too. */
		static const char *const probe[] = { "relro" };
		const char *volatile *slot = (const char *volatile *)(uintptr_t)&probe[0];

		/* Hidden from the compiler, which may drop a store to a const object. */
		asm volatile("" : "+r"(slot));
		printk("selftest: writing to %p\n", (void *)slot);
		*slot = *slot;
		return 1;
	}
	if (!strcmp(name, "panic"))
		panic("selftest panic %d", 42);
	if (!strcmp(name, "smppanic"))
		return selftest_smppanic();
	if (!strcmp(name, "doublefree")) {
		void *p = page_alloc();

		page_free(p);
		page_free(p);
		return 1;
	}
	printk("selftest: unknown test '%s'\n", name);
	return 2;
}

int selftest_run(const char *names, const struct boot_info *bi)
{
	char name[32];

	while (*names) {
		size_t n = strchr(names, ',') ? (size_t)(strchr(names, ',') - names) : strlen(names);
		int status;

		if (n >= sizeof(name)) {
			printk("selftest: name too long: '%s'\n", names);
			return 2;
		}
		memcpy(name, names, n);
		name[n] = '\0';
		status = selftest_one(name, bi);
		if (status)
			return status;
		names += n + (names[n] == ',');
	}
	return 0;
}
