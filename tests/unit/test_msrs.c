// SPDX-License-Identifier: GPL-2.0-only
/*
 * One profile's MSR and I/O policy: the generated bitmap rules and trap
 * ranges turned into bitmaps (arch/vmx/policy.c), checked MSR by MSR and
 * port by port against the profile and spec/runtime.yaml; and the
 * generated manual MSR switch code (msr_switch.h) run against the fake
 * CPU of tests/unit/fakes/runtime/host/cpu.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"		/* tests/unit/fakes: the fake CPU */
#include "msr_index.h"
#include "msr_policy.h"
#include "msr_switch.h"
#include "arch/vmx/policy.h"
#include "profile.h"
#include "profile_facts.h"	/* build/unit/PROFILE: derived from the profile */
#include "arch/vmx/vcpu.h"
#include "arch/vmx/vmx_controls.h"

#define MSR_LOW_LAST	0x00001fffu	/* SDM 25.6.9: the two ranges with bits */
#define MSR_HIGH_FIRST	0xc0000000u
#define MSR_HIGH_LAST	0xc0001fffu

static uint8_t msr_bm[MSR_BITMAP_SIZE];
static uint8_t io_a[IO_BITMAP_SIZE], io_b[IO_BITMAP_SIZE];

struct msr_fact {
	uint32_t first, last;
	uint8_t intercept;
	bool manual, gated;
};

static const struct msr_fact named[] = {
#define NAMED(first, last, intercept, manual, gated) { first, last, intercept, manual, gated },
	UNIT_PROFILE_MSRS(NAMED)
#undef NAMED
};

static const struct { uint32_t first, last; } runtime_msrs[] = {
#define RT(first, last) { first, last },
	UNIT_RUNTIME_TRAPPED_MSRS(RT)
#undef RT
};

#define RT(first, last) { first, last },
static const struct io_port_range runtime_grants[] = { UNIT_RUNTIME_GRANTED_PORTS(RT) };
static const struct io_port_range runtime_reserved[] = { UNIT_RUNTIME_RESERVED_PORTS(RT) };
/* Never empty: a profile without grants still gets a { 1, 0 } that names no port. */
static const struct io_port_range profile_grants[] = { UNIT_PROFILE_GRANTED_PORTS(RT) { 1, 0 } };
#undef RT

/* A variable, not the enum: with no manual MSR, "i < 0" would not compile. */
static const unsigned int n_manual = PROFILE_MANUAL_MSR_COUNT;

/*
 * What the profile says about @msr: the runtime's traps win over
 * everything, a single MSR's entry over a range's, any entry over
 * msrs.default.
 */
static uint8_t expected_intercept(uint32_t msr)
{
	int single = -1, range = -1;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(runtime_msrs); i++)
		if (msr >= runtime_msrs[i].first && msr <= runtime_msrs[i].last)
			return MSR_INTERCEPT_RW;
	for (i = 0; i < ARRAY_SIZE(named); i++) {
		if (msr < named[i].first || msr > named[i].last)
			continue;
		if (named[i].first == named[i].last)
			single = (int)i;
		else
			range = (int)i;
	}
	if (single >= 0)
		return named[single].intercept;
	if (range >= 0)
		return named[range].intercept;
	return UNIT_MSR_DEFAULT_INTERCEPT;
}

static void check_msr(uint32_t msr)
{
	uint8_t want = expected_intercept(msr);
	bool rd = msr_bitmap_intercepts(msr_bm, msr, false);
	bool wr = msr_bitmap_intercepts(msr_bm, msr, true);

	if (rd != !!(want & MSR_INTERCEPT_READ) || wr != !!(want & MSR_INTERCEPT_WRITE))
		fail_msg("MSR %#x: RDMSR %s, WRMSR %s; the profile wants intercept %u",
			 msr, rd ? "exits" : "passes", wr ? "exits" : "passes", want);
}

static void test_msr_bitmap_follows_profile_and_runtime(void **state)
{
	uint32_t msr;

	(void)state;
	msr_bitmap_build(msr_bm, profile_msr_bitmap_rules, profile_msr_bitmap_rule_count);
	for (msr = 0; msr <= MSR_LOW_LAST; msr++)
		check_msr(msr);
	for (msr = MSR_HIGH_FIRST; msr <= MSR_HIGH_LAST; msr++)
		check_msr(msr);
}

static void test_runtime_msrs_always_exit(void **state)
{
	/* The ones INTERFACES.md says spec/runtime.yaml traps, by name. */
	const uint32_t must_exit[] = {
		MSR_IA32_APIC_BASE, MSR_IA32_FEATURE_CONTROL,
		MSR_IA32_VMX_BASIC, MSR_IA32_VMX_PROCBASED_CTLS2, MSR_IA32_VMX_VMFUNC,
	};
	unsigned int i;
	uint32_t msr;

	(void)state;
	msr_bitmap_build(msr_bm, profile_msr_bitmap_rules, profile_msr_bitmap_rule_count);
	for (i = 0; i < ARRAY_SIZE(must_exit); i++) {
		assert_true(msr_bitmap_intercepts(msr_bm, must_exit[i], false));
		assert_true(msr_bitmap_intercepts(msr_bm, must_exit[i], true));
	}
	for (i = 0; i < ARRAY_SIZE(runtime_msrs); i++)
		for (msr = runtime_msrs[i].first; msr <= runtime_msrs[i].last; msr++) {
			assert_true(msr_bitmap_intercepts(msr_bm, msr, false));
			assert_true(msr_bitmap_intercepts(msr_bm, msr, true));
		}
}

static bool in_ranges(const struct io_port_range *r, unsigned int n, uint32_t port)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (port >= r[i].first && port <= r[i].last)
			return true;
	return false;
}

/*
 * Default deny: exactly the runtime's and the profile's grants pass
 * through; everything else, the runtime's reserved ports included, exits.
 */
static void test_io_bitmaps(void **state)
{
	uint32_t port;

	(void)state;
	io_bitmap_build(io_a, io_b, profile_io_grant_ranges, profile_io_grant_range_count);
	/* isa-debug-exit, fw_cfg and PCI configuration, which the runtime emulates or filters. */
	assert_true(io_bitmap_intercepts(io_a, io_b, 0xf4));
	assert_true(io_bitmap_intercepts(io_a, io_b, 0x510));
	assert_true(io_bitmap_intercepts(io_a, io_b, 0x511));
	assert_true(io_bitmap_intercepts(io_a, io_b, 0xcfc));
	/* A port nobody names: denied. */
	assert_true(io_bitmap_intercepts(io_a, io_b, 0x300));
	for (port = 0; port <= 0xffff; port++) {
		bool granted = in_ranges(runtime_grants, ARRAY_SIZE(runtime_grants), port) ||
			       in_ranges(profile_grants, ARRAY_SIZE(profile_grants), port);
		bool listed = in_ranges(profile_io_grant_ranges, profile_io_grant_range_count, port);

		/* The generated list is exactly the grants... */
		assert_int_equal(listed, granted);
		/* ...no reserved port among them... */
		if (in_ranges(runtime_reserved, ARRAY_SIZE(runtime_reserved), port))
			assert_false(listed);
		/* ...and the bitmap passes exactly the listed ports. */
		assert_int_equal(io_bitmap_intercepts(io_a, io_b, (uint16_t)port), !listed);
	}
}

/* ---- manual MSR switching ---- */

static struct vcpu vcpu;
static struct vmx_controls ctl;

/* Index of the choice named @choice in @gate, or -1. */
static int choice_index(const struct vmx_gate *gate, const char *choice)
{
	unsigned int c;

	for (c = 0; c < gate->n_choices; c++)
		if (!strcmp(gate->choices[c].name, choice))
			return (int)c;
	return -1;
}

/* Make gate @name take the choice named @choice; false if there is no such gate. */
static bool force_gate(const char *name, const char *choice)
{
	unsigned int g;
	int c;

	for (g = 0; g < profile_vmx_setup.n_gates; g++) {
		const struct vmx_gate *gate = &profile_vmx_setup.gates[g];

		if (strcmp(gate->name, name))
			continue;
		c = choice_index(gate, choice);
		if (c < 0)
			fail_msg("gate %s has no choice %s", name, choice);
		ctl.gate_choice[g] = (unsigned int)c;
		ctl.gate_fell_back[g] = c > 0;
		return true;
	}
	return false;
}

/* Every gate that chooses between "atomic" and "manual" takes one of them. */
static void set_gates(bool manual)
{
	unsigned int g;

	memset(&ctl, 0, sizeof(ctl));
	for (g = 0; g < profile_vmx_setup.n_gates; g++) {
		const struct vmx_gate *gate = &profile_vmx_setup.gates[g];

		if (choice_index(gate, "manual") >= 0 && choice_index(gate, "atomic") >= 0)
			force_gate(gate->name, manual ? "manual" : "atomic");
	}
	vcpu.controls = &ctl;
}

static int reset(void **state)
{
	(void)state;
	memset(&vcpu, 0, sizeof(vcpu));
	fake_cpu_reset();
	return 0;
}

/* Host and guest values: different from each other and from MSR to MSR. */
static uint64_t host_value(uint32_t msr)
{
	return 0x1111111100000000ull | msr;
}

static uint64_t guest_value(uint32_t msr)
{
	return 0x2222222200000000ull | msr;
}

/* Give every MSR the profile may switch by hand its host value, and save them. */
static void seed_host_values(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(named); i++)
		if (named[i].manual || named[i].gated)
			fake_msr_set(named[i].first, host_value(named[i].first));
	profile_msrs_save_host(&vcpu);
}

static void test_manual_msrs_switched_both_ways(void **state)
{
	unsigned int i, n = 0;

	(void)state;
	set_gates(true);
	seed_host_values();

	for (i = 0; i < ARRAY_SIZE(named); i++) {
		uint32_t msr = named[i].first;
		bool writes_pass = !(named[i].intercept & MSR_INTERCEPT_WRITE);
		int slot;
		uint64_t now;

		if (!named[i].manual && !named[i].gated)
			continue;
		n++;
		slot = profile_msr_manual_slot(&vcpu, msr);
		assert_true(slot >= 0 && slot < PROFILE_MANUAL_MSR_COUNT);
		assert_int_equal(vcpu.msrs.host[slot], host_value(msr));
		vcpu.msrs.guest[slot] = guest_value(msr);

		/* Before entry: the guest's value is loaded. */
		fake_cpu.n_log = 0;
		profile_msrs_before_entry(&vcpu);
		assert_int_equal(fake_msr_count(FAKE_WRMSR, msr), 1);
		assert_true(fake_msr_get(msr, &now));
		assert_int_equal(now, guest_value(msr));

		/* The guest changes it; it only may without an exit if writes pass. */
		if (writes_pass)
			fake_msr_set(msr, guest_value(msr) ^ 1);

		/* After exit: the guest's value is kept, the host's is back. */
		fake_cpu.n_log = 0;
		profile_msrs_on_exit(&vcpu);
		assert_int_equal(fake_msr_count(FAKE_WRMSR, msr), 1);
		assert_true(fake_msr_get(msr, &now));
		assert_int_equal(now, host_value(msr));
		assert_int_equal(vcpu.msrs.guest[slot], guest_value(msr) ^ (writes_pass ? 1 : 0));
		/* A trapped write is already in guest[]: no RDMSR needed. */
		if (!writes_pass)
			assert_int_equal(fake_msr_count(FAKE_RDMSR, msr), 0);
	}
	assert_int_equal(n, n_manual);
	assert_int_equal(fake_cpu.gp_faults, 0);
}

static void test_equal_values_are_not_rewritten(void **state)
{
	unsigned int i;

	(void)state;
	set_gates(true);
	seed_host_values();
	for (i = 0; i < n_manual; i++)
		vcpu.msrs.guest[i] = vcpu.msrs.host[i];

	/* WRMSR to EFER flushes the TLB: skip it when nothing changes. */
	fake_cpu.n_log = 0;
	profile_msrs_before_entry(&vcpu);
	profile_msrs_on_exit(&vcpu);
	for (i = 0; i < fake_cpu.n_log; i++)
		assert_int_equal(fake_cpu.log[i].op, FAKE_RDMSR);
	assert_int_equal(fake_cpu.gp_faults, 0);
}

static void test_atomic_gate_means_no_wrmsr(void **state)
{
	unsigned int i, gated = 0;

	(void)state;
	set_gates(false);
	for (i = 0; i < ARRAY_SIZE(named); i++) {
		if (!named[i].gated)
			continue;
		gated++;
		fake_msr_set(named[i].first, host_value(named[i].first));
		/* Switched by the VMCS: the handlers find no manual slot. */
		assert_int_equal(profile_msr_manual_slot(&vcpu, named[i].first), -1);
	}
	if (!gated)
		skip();
	profile_msrs_save_host(&vcpu);
	for (i = 0; i < n_manual; i++)
		vcpu.msrs.guest[i] = ~vcpu.msrs.host[i];

	fake_cpu.n_log = 0;
	profile_msrs_before_entry(&vcpu);
	profile_msrs_on_exit(&vcpu);
	/* Only MSRs switched by hand whatever the CPU may be touched. */
	for (i = 0; i < fake_cpu.n_log && i < FAKE_LOG; i++) {
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(named); k++)
			if (named[k].gated)
				assert_int_not_equal(fake_cpu.log[i].index, named[k].first);
	}
}

/* The gate that switches EFER, checked by name: the case the design is about. */
static void test_efer_manual_only_when_gate_says_so(void **state)
{
	uint64_t now;
	int slot;

	(void)state;
	memset(&ctl, 0, sizeof(ctl));
	vcpu.controls = &ctl;
	if (!force_gate("efer", "manual"))
		skip();
	fake_msr_set(MSR_IA32_EFER, host_value(MSR_IA32_EFER));
	profile_msrs_save_host(&vcpu);
	slot = profile_msr_manual_slot(&vcpu, MSR_IA32_EFER);
	assert_true(slot >= 0);
	vcpu.msrs.guest[slot] = guest_value(MSR_IA32_EFER);

	fake_cpu.n_log = 0;
	profile_msrs_before_entry(&vcpu);
	assert_true(fake_msr_get(MSR_IA32_EFER, &now));
	assert_int_equal(now, guest_value(MSR_IA32_EFER));
	profile_msrs_on_exit(&vcpu);
	assert_true(fake_msr_get(MSR_IA32_EFER, &now));
	assert_int_equal(now, host_value(MSR_IA32_EFER));
	assert_int_equal(fake_msr_count(FAKE_WRMSR, MSR_IA32_EFER), 2);

	/* The CPU loads EFER itself: not one WRMSR to it. */
	force_gate("efer", "atomic");
	assert_int_equal(profile_msr_manual_slot(&vcpu, MSR_IA32_EFER), -1);
	fake_cpu.n_log = 0;
	profile_msrs_before_entry(&vcpu);
	profile_msrs_on_exit(&vcpu);
	assert_int_equal(fake_msr_count(FAKE_WRMSR, MSR_IA32_EFER), 0);
	assert_int_equal(fake_msr_count(FAKE_RDMSR, MSR_IA32_EFER), 0);
}

/*
 * The manual EFER switch leaves LME and LMA to VM entry ("IA-32e mode
 * guest") and VM exit ("host address-space size"): in the 64-bit host a
 * WRMSR that clears LME #GPs (the fake CPU does so with CR0.PG set), so
 * a 32-bit guest's EFER (0) is written with the host's LME/LMA.  Commit
 * be4968e fixed the switch that wrote the guest's value whole.
 */
static void test_efer_switch_never_writes_lme_lma(void **state)
{
	const uint64_t host = EFER_SCE | EFER_LME | EFER_LMA | EFER_NXE;
	const uint64_t lm = EFER_LME | EFER_LMA;
	static const uint64_t guests[] = {
		0,				/* a 32-bit guest before anything */
		EFER_NXE,			/* PAE with NX */
		EFER_LME,			/* long mode enabled, paging not yet on */
		EFER_SCE | EFER_LME | EFER_LMA | EFER_NXE,	/* the host's own */
		EFER_SCE | EFER_NXE,		/* same as the host but for LME/LMA */
	};
	uint64_t now;
	int slot;

	(void)state;
	set_gates(true);
	slot = profile_msr_manual_slot(&vcpu, MSR_IA32_EFER);
	if (slot < 0)
		skip();		/* this profile never switches EFER by hand */
#ifdef PROFILE_SWITCHED_IA32_EFER
	assert_int_equal(PROFILE_SWITCHED_IA32_EFER & lm, 0);
#else
	fail_msg("EFER is switched by hand, but msr_switch.h has no PROFILE_SWITCHED_IA32_EFER");
#endif
	fake_cpu.cr0 = X86_CR0_PG;	/* the host runs in long mode */
	for (unsigned int i = 0; i < ARRAY_SIZE(guests); i++) {
		bool differs = (guests[i] ^ host) & ~lm;

		/* The other MSRs switched by hand exist, with their own values. */
		seed_host_values();
		fake_msr_set(MSR_IA32_EFER, host);
		profile_msrs_save_host(&vcpu);
		assert_int_equal(vcpu.msrs.host[slot], host);
		vcpu.msrs.guest[slot] = guests[i];

		fake_cpu.n_log = 0;
		profile_msrs_before_entry(&vcpu);
		/* Written only when a switched bit differs; then the guest's bits
		 * with the host's LME/LMA, which VM entry then sets for the guest. */
		assert_int_equal(fake_msr_count(FAKE_WRMSR, MSR_IA32_EFER), differs);
		assert_true(fake_msr_get(MSR_IA32_EFER, &now));
		assert_int_equal(now, (guests[i] & ~lm) | (host & lm));
		/* VM exit restores the host's; the guest's value is kept as it was. */
		profile_msrs_on_exit(&vcpu);
		assert_true(fake_msr_get(MSR_IA32_EFER, &now));
		assert_int_equal(now, host);
		assert_int_equal(fake_msr_count(FAKE_WRMSR, MSR_IA32_EFER), differs ? 2 : 0);
		assert_int_equal(vcpu.msrs.guest[slot], guests[i]);
		for (unsigned int k = 0; k < fake_cpu.n_log && k < FAKE_LOG; k++)
			if (fake_cpu.log[k].op == FAKE_WRMSR && fake_cpu.log[k].index == MSR_IA32_EFER)
				assert_int_equal(fake_cpu.log[k].value & lm, host & lm);
		assert_int_equal(fake_cpu.gp_faults, 0);
	}
}

/*
 * Only EFER has bits the switch leaves alone: every other manual MSR is
 * switched whole, also in the bit positions of LME and LMA and the top bit.
 */
static void test_other_manual_msrs_switched_whole(void **state)
{
	static const uint64_t flips[] = { 1ull << 8, 1ull << 10, 1ull << 63, 1 };
	unsigned int n = 0;

	(void)state;
	set_gates(true);
	for (unsigned int i = 0; i < ARRAY_SIZE(named); i++) {
		uint32_t msr = named[i].first;
		int slot;

		if ((!named[i].manual && !named[i].gated) || msr == MSR_IA32_EFER)
			continue;
		slot = profile_msr_manual_slot(&vcpu, msr);
		assert_true(slot >= 0);
		n++;
		for (unsigned int f = 0; f < ARRAY_SIZE(flips); f++) {
			uint64_t now;

			fake_cpu_reset();
			fake_msr_set(msr, host_value(msr));
			profile_msrs_save_host(&vcpu);
			vcpu.msrs.guest[slot] = host_value(msr) ^ flips[f];
			profile_msrs_before_entry(&vcpu);
			assert_true(fake_msr_get(msr, &now));
			assert_int_equal(now, host_value(msr) ^ flips[f]);
			assert_int_equal(fake_msr_count(FAKE_WRMSR, msr), 1);
		}
	}
	if (!n)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msr_bitmap_follows_profile_and_runtime),
		cmocka_unit_test(test_runtime_msrs_always_exit),
		cmocka_unit_test(test_io_bitmaps),
		cmocka_unit_test_setup(test_manual_msrs_switched_both_ways, reset),
		cmocka_unit_test_setup(test_equal_values_are_not_rewritten, reset),
		cmocka_unit_test_setup(test_atomic_gate_means_no_wrmsr, reset),
		cmocka_unit_test_setup(test_efer_manual_only_when_gate_says_so, reset),
		cmocka_unit_test_setup(test_efer_switch_never_writes_lme_lma, reset),
		cmocka_unit_test_setup(test_other_manual_msrs_switched_whole, reset),
	};

	return cmocka_run_group_tests_name("MSR and I/O policy of profile " PROFILE_NAME,
					   tests, NULL, NULL);
}
