// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hypercalls.  Unknown numbers return HYPERCALL_ENOSYS (-1000, as
 * KVM's -KVM_ENOSYS), so a guest can probe for a call.
 */
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/vm/hypercall.h"
#include "runtime_profile.h"
#include "lib/string.h"
#include "runtime/vm/vmm.h"

/* PUTS prints at most this much per call; the guest loops for more. */
#define HYPERCALL_PUTS_MAX	256

static int64_t hc_puts(uint64_t gva, uint64_t len)
{
	char buf[HYPERCALL_PUTS_MAX + 1];

	if (len > HYPERCALL_PUTS_MAX)
		len = HYPERCALL_PUTS_MAX;
	if (!guest_read_linear(gva, buf, (unsigned int)len))
		return HYPERCALL_EFAULT;
	buf[len] = '\0';
	/* COM1 only: port 0xE9 carries the hypervisor's own words. */
	console_write_guest(buf, strnlen(buf, len));
	return (int64_t)len;
}

static int64_t hc_stats_read(const struct vcpu *vcpu, uint64_t reason)
{
	uint64_t count;

	if (PROFILE_STATS_LEVEL == STATS_OFF)
		return HYPERCALL_ENOSYS;
	if (!vmm_stats_read(vcpu, reason, &count))
		return HYPERCALL_EINVAL;
	/* The counts are 64-bit; a 32-bit guest reads the low half. */
	return (int64_t)count;
}

static int64_t hc_stats_reset(struct vcpu *vcpu)
{
	if (PROFILE_STATS_LEVEL == STATS_OFF)
		return HYPERCALL_ENOSYS;
	vmm_stats_reset(vcpu);
	return 0;
}

struct hypercall_result hypercall_dispatch(struct vcpu *vcpu, uint64_t nr, uint64_t a0,
					   uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct hypercall_result r = { .value = 0 };

	(void)a2;
	(void)a3;
	/* Numbers are 32-bit: a 32-bit guest leaves RAX[63:32] as it was. */
	switch ((uint32_t)nr) {
	case HYPERCALL_VERSION:
		r.value = HYPERCALL_ABI_VERSION;
		break;
	case HYPERCALL_NOP:
		break;
	case HYPERCALL_PUTS:
		r.value = hc_puts(a0, a1);
		break;
	case HYPERCALL_SHUTDOWN:
		r.stop = true;
		/* Never negative: those are the hypervisor's VMM_* results. */
		r.status = (int)((uint32_t)a0 & 0x7fffffffu);
		break;
	case HYPERCALL_STATS_READ:
		r.value = hc_stats_read(vcpu, a0);
		break;
	case HYPERCALL_STATS_RESET:
		r.value = hc_stats_reset(vcpu);
		break;
	default:
		r.value = HYPERCALL_ENOSYS;
		break;
	}
	return r;
}
