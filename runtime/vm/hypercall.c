// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hypercalls.  Unknown numbers return HYPERCALL_ENOSYS (-1000, as
 * KVM's -KVM_ENOSYS), so a guest can probe for a call.  What a call
 * needs of its vCPU comes in struct hypercall_call, as data: this file
 * calls nothing of the VMM (arch/vmx), which calls it.
 */
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/vm/hypercall.h"
#include "lib/string.h"

/* PUTS's length: what it prints of the guest's, at most HYPERCALL_PUTS_MAX. */
static unsigned int puts_len(const struct hypercall_call *call)
{
	return call->arg[1] > HYPERCALL_PUTS_MAX ? HYPERCALL_PUTS_MAX : (unsigned int)call->arg[1];
}

unsigned int hypercall_guest_read(const struct hypercall_call *call, uint64_t *gla)
{
	if ((uint32_t)call->nr != HYPERCALL_PUTS)
		return 0;
	*gla = call->arg[0];
	return puts_len(call);
}

static int64_t hc_puts(const struct hypercall_call *call)
{
	unsigned int len = puts_len(call);

	if (!call->guest)
		return HYPERCALL_EFAULT;
	/* COM1 only: port 0xE9 carries the hypervisor's own words.  A NUL ends it early. */
	console_write_guest(call->guest, strnlen(call->guest, len));
	return (int64_t)len;
}

static int64_t hc_stats_read(const struct hypercall_call *call, uint64_t reason)
{
	if (!call->exit_counts)
		return HYPERCALL_ENOSYS;
	if (reason >= call->nr_exit_counts)
		return HYPERCALL_EINVAL;
	/* The counts are 64-bit; a 32-bit guest reads the low half. */
	return (int64_t)call->exit_counts[reason];
}

static int64_t hc_stats_reset(const struct hypercall_call *call, struct hypercall_result *r)
{
	if (!call->exit_counts)
		return HYPERCALL_ENOSYS;
	r->stats_reset = true;
	return 0;
}

struct hypercall_result hypercall_dispatch(const struct hypercall_call *call)
{
	struct hypercall_result r = { .value = 0 };
	uint64_t a0 = call->arg[0];

	/* Numbers are 32-bit: a 32-bit guest leaves RAX[63:32] as it was. */
	switch ((uint32_t)call->nr) {
	case HYPERCALL_VERSION:
		r.value = HYPERCALL_ABI_VERSION;
		break;
	case HYPERCALL_NOP:
		break;
	case HYPERCALL_PUTS:
		r.value = hc_puts(call);
		break;
	case HYPERCALL_SHUTDOWN:
		r.stop = true;
		/* Never negative: those are the hypervisor's VMM_* results. */
		r.status = (int)((uint32_t)a0 & 0x7fffffffu);
		break;
	case HYPERCALL_STATS_READ:
		r.value = hc_stats_read(call, a0);
		break;
	case HYPERCALL_STATS_RESET:
		r.value = hc_stats_reset(call, &r);
		break;
	default:
		r.value = HYPERCALL_ENOSYS;
		break;
	}
	return r;
}
