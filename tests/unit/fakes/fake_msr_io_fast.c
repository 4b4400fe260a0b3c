// SPDX-License-Identifier: GPL-2.0-only
/*
 * What arch/vmx/msr.c and io.c call beyond what test_msr_io_fast.c
 * compares: exception injection recorded in the fake VMCS (as events.c
 * writes it), the rest inert or failing loudly.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "arch/vmx/vmx_ops.h"

#include "arch_bits.h"
#include "runtime/vcpu/arch_checks.h"
#include "runtime/host/traps.h"
#include "arch/vmx/vcpu.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/events.h"
#include "arch/vmx/guest_mem.h"
#include "arch/vmx/legacy_irq.h"
#include "arch/vmx/mmio.h"
#include "arch/vmx/vcpu_stop.h"

void vmx_inject_exception(struct vcpu *vcpu, unsigned int vector, bool has_error,
			  uint32_t error_code)
{
	(void)vcpu;
	(void)has_error;
	(void)error_code;
	fake_vmcs_set(VM_ENTRY_INTR_INFO_FIELD, vector | (1u << 31));
}

void vmx_inject_gp(struct vcpu *vcpu)
{
	vmx_inject_exception(vcpu, X86_EXC_GP, true, 0);
}

void interrupt_frame_dump(const struct interrupt_frame *frame)
{
	(void)frame;
}

void panic(const char *fmt, ...)
{
	(void)fmt;
	abort();
}

enum vmx_exit_action vcpu_stop(struct vcpu *vcpu, const char *fmt, ...)
{
	(void)vcpu;
	(void)fmt;
	return VMX_EXIT_STOP;
}

enum vmx_exit_action vcpu_stop_status(struct vcpu *vcpu, enum vcpu_stop_kind kind, int status)
{
	(void)vcpu;
	(void)kind;
	(void)status;
	return VMX_EXIT_STOP;
}

bool vcpu_in_64bit_mode(const struct vcpu *vcpu)
{
	(void)vcpu;
	return true;
}

bool guest_read_linear(uint64_t gla, void *dst, unsigned int len)
{
	(void)gla;
	(void)dst;
	(void)len;
	return false;
}

bool guest_write_linear(uint64_t gla, const void *src, unsigned int len)
{
	(void)gla;
	(void)src;
	(void)len;
	return false;
}

enum vmx_exit_action vmx_icr_write(struct vcpu *vcpu, uint64_t icr, bool x2apic)
{
	(void)vcpu;
	(void)icr;
	(void)x2apic;
	abort();	/* no test sends an IPI */
}

/* apic.c's check, without its report. */
uint32_t vmx_apic_lvt_checked(unsigned int reg, uint32_t value)
{
	return apic_lvt_delivery_allowed(reg, value) ? value : value | APIC_LVT_MASKED;
}

void vmx_apic_mode_changed(struct vcpu *vcpu)
{
	(void)vcpu;
	abort();	/* no test changes the APIC's mode */
}

bool vmx_inject_pending(struct vcpu *vcpu, int fresh)
{
	(void)vcpu;
	(void)fresh;
	return false;
}

void vmx_deliver_apic_irq(struct vcpu *vcpu, uint8_t vector)
{
	(void)vcpu;
	(void)vector;
}

void vmx_deliver_apic_oneshot_irq(struct vcpu *vcpu, uint8_t vector)
{
	(void)vcpu;
	(void)vector;
}

void vmx_legacy_irq_update(struct vcpu *vcpu)
{
	(void)vcpu;
}

enum vmx_exit_action vmx_take_events(struct vcpu *vcpu)
{
	(void)vcpu;
	return VMX_EXIT_RESUME;
}

/* String I/O is not among the compared accesses: its element walk fails loudly. */
void vmx_string_seg_init(struct vcpu *vcpu, struct vmx_string_seg *sg, unsigned int seg)
{
	(void)vcpu;
	(void)sg;
	(void)seg;
	abort();
}

enum vmx_elem_result vmx_string_element(struct vcpu *vcpu, const struct vmx_string_seg *sg,
					uint64_t offset, unsigned int size, bool write,
					struct vmx_element *el)
{
	(void)vcpu;
	(void)sg;
	(void)offset;
	(void)size;
	(void)write;
	(void)el;
	abort();
}

enum vmx_exit_action vmx_element_read(struct vcpu *vcpu, const struct vmx_element *el,
				      uint64_t *v)
{
	(void)vcpu;
	(void)el;
	(void)v;
	abort();
}

enum vmx_exit_action vmx_element_write(struct vcpu *vcpu, const struct vmx_element *el,
				       uint64_t v)
{
	(void)vcpu;
	(void)el;
	(void)v;
	abort();
}

/* No test arms the TSC deadline with an illegal vector. */
void vmx_apic_flag_illegal_vector(uint8_t vector)
{
	(void)vector;
	abort();
}
