// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/host/extable.c and the EXTABLE_FAULT() entries, on the host: RDMSR,
 * WRMSR (runtime/host/msr_safe.c) and UD2 fault in user mode too, as SIGSEGV
 * (#GP) and SIGILL (#UD).  The signal handler plays traps.c: it builds
 * the frame and asks extable_fixup(), which must send execution on to
 * the instruction's continuation with the error set -- on two threads
 * faulting at once, with no handler installed or removed between.
 */
#define _GNU_SOURCE	/* REG_RIP */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <cmocka.h>

#include "arch_bits.h"
#include "runtime/host/extable.h"
#include "msr_index.h"
#include "runtime/host/msr_safe.h"
#include "runtime/host/traps.h"

static volatile sig_atomic_t misses;

static void on_fault(int sig, siginfo_t *info, void *uc_v)
{
	ucontext_t *uc = uc_v;
	struct interrupt_frame f;

	(void)info;
	memset(&f, 0, sizeof(f));
	f.vector = sig == SIGILL ? X86_EXC_UD : X86_EXC_GP;
	f.rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	if (!extable_fixup(&f)) {
		/* Not an entry's instruction: skip it (2 bytes, UD2) and count it. */
		misses++;
		f.rip += 2;
	}
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)f.rip;
}

/* cmocka installs its own SIGSEGV/SIGILL handlers around each test: after them. */
static void catch_faults(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
}

static void test_msr_access_faults_are_false(void **state)
{
	uint64_t v = 0x1234;

	(void)state;
	catch_faults();
	assert_false(vmx_msr_access_safe(MSR_IA32_LSTAR, &v, true));
	assert_false(vmx_msr_access_safe(MSR_IA32_LSTAR, &v, false));
	assert_int_equal(v, 0x1234);	/* a failed read leaves the value */
	assert_int_equal(misses, 0);
}

/* An entry of this file's own: UD2 (#UD) continues at 2 with err = 1. */
static int ud2_fixed(void)
{
	uint32_t err = 0;

	asm volatile("1:\tud2\n"
		     "2:\n\t"
		     EXTABLE_FAULT("%[err]")
		     : [err] "+r"(err));
	return err;
}

static void test_entry_resumes_with_error(void **state)
{
	(void)state;
	catch_faults();
	assert_int_equal(ud2_fixed(), 1);
	assert_int_equal(misses, 0);
}

static void test_other_vectors_and_addresses_miss(void **state)
{
	extern const struct extable_entry __start___extable[], __stop___extable[];
	const struct extable_entry *first = __start___extable, *last = __stop___extable;
	struct interrupt_frame f;

	(void)state;
	catch_faults();
	assert_true(last - first >= 3);	/* RDMSR, WRMSR, this file's UD2 */
	for (const struct extable_entry *e = first; e < last; e++) {
		assert_ptr_equal(extable_search(first, last, extable_insn(e)), e);
		assert_null(extable_search(first, last, extable_insn(e) + 1));
		memset(&f, 0, sizeof(f));
		f.rip = extable_insn(e);
		f.vector = X86_EXC_PF;		/* only #GP and #UD are fixed */
		assert_false(extable_fixup(&f));
		assert_int_equal(f.rip, extable_insn(e));
		f.vector = X86_EXC_GP;
		assert_true(extable_fixup(&f));
		assert_int_equal(f.rip, extable_fixup_addr(e));
	}
	/* A fault anywhere else is not fixed: traps.c panics on it. */
	memset(&f, 0, sizeof(f));
	f.vector = X86_EXC_GP;
	f.rip = (uintptr_t)test_other_vectors_and_addresses_miss;
	assert_false(extable_fixup(&f));
	asm volatile("ud2");
	assert_int_equal(misses, 1);
	misses = 0;
}

/* Two threads faulting at once: each fault finds its entry, none is lost. */
static void *fault_loop(void *arg)
{
	uintptr_t bad = 0;

	for (unsigned int i = 0; i < 20000; i++) {
		uint64_t v = 0x8000000000000000ull | i;	/* non-canonical IA32_LSTAR */

		bad += vmx_msr_access_safe(i & 1 ? MSR_IA32_KERNEL_GS_BASE : MSR_IA32_LSTAR, &v, true);
		bad += ud2_fixed() != 1;
	}
	(void)arg;
	return (void *)bad;
}

static void test_concurrent_faults(void **state)
{
	pthread_t t[2];
	void *bad;

	(void)state;
	catch_faults();
	for (unsigned int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, fault_loop, NULL), 0);
	for (unsigned int i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_null(bad);
	}
	assert_int_equal(misses, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msr_access_faults_are_false),
		cmocka_unit_test(test_entry_resumes_with_error),
		cmocka_unit_test(test_other_vectors_and_addresses_miss),
		cmocka_unit_test(test_concurrent_faults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
