// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fake exit handlers for the host microbenchmark: one per function that
 * spec/handlers.yaml names, shared by every compiled dispatch.  Each does
 * nothing and returns VMX_EXIT_RESUME, so the time measured is that of the
 * dispatch (and of the call and return it makes), not of a handler.
 *
 * Several reasons share one function (handle_vmx_instruction), so the
 * fakes come from VMX_EXIT_HANDLER_FUNCTIONS(), the generated X-macro of
 * the distinct functions, not from VMX_EXIT_HANDLERS().
 *
 * Compiled without retpolines: the fakes have no indirect branch, and the
 * returns are plain RETs in both variants (-mfunction-return=keep).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "arch/vmx/exit.h"
#include "exit_handlers.h"	/* generated: VMX_EXIT_HANDLER_FUNCTIONS(X) */

/*
 * noinline and not static: the dispatch objects call them by name.  The
 * empty asm keeps GCC from treating them as pure (IPA could otherwise
 * reason about the calls made from this file, the floor's).
 */
#define DEFINE_FAKE(fn)						\
	__attribute__((noinline)) enum vmx_exit_action fn(struct vcpu *vcpu)	\
	{							\
		asm volatile("" : : "r"(vcpu) : "memory");	\
		return VMX_EXIT_RESUME;				\
	}
VMX_EXIT_HANDLER_FUNCTIONS(DEFINE_FAKE)
/*
 * The profile's fast handlers (generated cpuid_fast.c and msr_io_fast.c),
 * which a dispatch calls instead of the general ones.
 */
DEFINE_FAKE(handle_cpuid_fast)
DEFINE_FAKE(handle_msr_read_fast)
DEFINE_FAKE(handle_msr_write_fast)
DEFINE_FAKE(handle_io_instruction_fast)
#undef DEFINE_FAKE

__attribute__((noinline)) enum vmx_exit_action handle_unexpected_exit(struct vcpu *vcpu,
								    uint16_t basic_reason)
{
	asm volatile("" : : "r"(vcpu), "r"(basic_reason) : "memory");
	return VMX_EXIT_RESUME;
}

/* The floor's "dispatch": no decision, one direct call to one handler. */
static __attribute__((noinline)) enum vmx_exit_action floor_dispatch(struct vcpu *vcpu,
								     uint16_t basic_reason)
{
	asm volatile("" : : "r"(basic_reason));
	return handle_cpuid(vcpu);
}

uint64_t bench_floor_run(struct vcpu *vcpu, const uint16_t *reasons, size_t n)
{
	uint64_t actions = 0;
	size_t i;

	for (i = 0; i < n; i++)
		actions += floor_dispatch(vcpu, reasons[i]);
	return actions;
}
