/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A virtual local APIC: the device model, architecture-neutral like
 * KVM's lapic.c.  It holds the registers of one vCPU's APIC (SDM Vol. 3A
 * chapter 11), answers its xAPIC (MMIO offset) and x2APIC (MSR 800H-8FFH)
 * accesses, keeps IRR/ISR/TMR and the priority rules, and runs the timer
 * in all three modes.  How the accesses arrive and how the interrupt it
 * names is injected are the VMM's (arch/vmx/vlapic_exits.c).
 *
 * Time is an input: every call that can observe the timer takes "now" in
 * the guest's TSC ticks, and vlapic_timer_next() says when the model next
 * needs to be called.  One APIC timer count is `divide` TSC ticks (on
 * Bochs both count one per instruction; hardware's bus clock is another
 * ratio, a constant the VMM could add).
 *
 * The ICR write does not deliver anything itself: it hands back the
 * request, decoded by the VM (vm_icr_decode(), runtime/vm/vm.c), for the
 * VMM to carry out with vm_icr_deliver().  The model is touched only by
 * its own vCPU's CPU: no locking here.
 */
#ifndef EXITPLAN_VLAPIC_H
#define EXITPLAN_VLAPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/vm/vm.h"

/* The LVT entries, in the model's order (each one's MMIO offset: vlapic.c). */
enum vlapic_lvt {
	VLAPIC_LVT_TIMER,
	VLAPIC_LVT_THERMAL,
	VLAPIC_LVT_PERF,
	VLAPIC_LVT_LINT0,
	VLAPIC_LVT_LINT1,
	VLAPIC_LVT_ERROR,
	VLAPIC_LVT_CMCI,
	VLAPIC_LVT_COUNT,
};

/* vlapic_timer_next(): nothing to wait for. */
#define VLAPIC_NO_DEADLINE	UINT64_MAX

struct vlapic {
	struct vm *vm;
	unsigned int vcpu_id;		/* in vm->vcpu[] */
	uint32_t apic_id;		/* the initial APIC ID (read-only here) */
	bool has_x2apic;		/* CPUID.1:ECX.x2APIC: EXTD may be set */
	bool has_tsc_deadline;		/* CPUID.1:ECX.TSC_Deadline: LVT timer mode 2 */
	uint64_t base_reserved;		/* IA32_APIC_BASE bits that #GP (above MAXPHYADDR, 7:0, 9) */

	uint64_t apic_base;		/* IA32_APIC_BASE */
	uint32_t tpr, ldr, dfr, svr;
	uint32_t esr;			/* what the guest reads: latched by its last ESR write */
	uint32_t esr_pending;		/* errors since then */
	uint32_t isr[8], tmr[8], irr[8];
	uint32_t lvt[VLAPIC_LVT_COUNT];
	uint32_t icr_low, icr_high;

	/* The timer: one-shot and periodic count from start; TSC-deadline waits for tsc_deadline. */
	uint32_t timer_initial;		/* Initial Count Register */
	uint32_t timer_dcr;		/* Divide Configuration Register */
	bool timer_running;		/* counting down (one-shot/periodic) */
	uint64_t timer_start;		/* when the count was count_at_start ... */
	uint32_t count_at_start;	/* ... (reloaded to timer_initial each period) */
	uint64_t tsc_deadline;		/* IA32_TSC_DEADLINE; 0 = disarmed */
};

/* What an access asks of the VMM beyond its result. */
enum vlapic_result {
	VLAPIC_DONE,		/* handled; a read's value is set */
	VLAPIC_GP,		/* #GP (x2APIC, IA32_APIC_BASE); nothing changed */
	VLAPIC_SEND_IPI,	/* an ICR write: carry out *req (vm_icr_deliver()) */
};

/*
 * Power-up reset (SDM Vol. 3A 11.4.7.1) of vCPU @vcpu_id's APIC in @vm:
 * globally enabled in xAPIC mode at the default base, software-disabled,
 * LVT masked.  @bsp sets IA32_APIC_BASE.BSP; @maxphyaddr bounds the base.
 */
void vlapic_init(struct vlapic *l, struct vm *vm, unsigned int vcpu_id, uint32_t apic_id,
		 bool bsp, bool has_x2apic, bool has_tsc_deadline, unsigned int maxphyaddr);

/* An INIT signal: every register to its reset value but the ID (and IA32_APIC_BASE). */
void vlapic_init_signal(struct vlapic *l);

/*
 * What firmware leaves before it boots the OS (SeaBIOS's smp_setup(),
 * MP spec 3.6.2.2's virtual wire mode): the APIC software-enabled
 * (SVR 1FFH) and, on the BSP, LINT0 ExtINT and LINT1 NMI, so that the
 * 8259s' INT reaches the BSP as it does on a PC (vm_extint_vcpu()).
 */
void vlapic_firmware_handoff(struct vlapic *l);

/*
 * Does LINT0 take the 8259s' INT: unmasked in ExtINT mode on a
 * software-enabled APIC, or the BSP's APIC globally disabled (its LINT0
 * is then the INTR pin, SDM 11.4.3)?  Published as vm_vcpu.lint0_extint.
 */
bool vlapic_lint0_extint(const struct vlapic *l);

/* IA32_APIC_BASE (SDM 11.4.4, 11.12.5): VLAPIC_GP for reserved bits and invalid transitions. */
enum vlapic_result vlapic_write_apic_base(struct vlapic *l, uint64_t value, uint64_t now);

/* Globally enabled (IA32_APIC_BASE.EN), in x2APIC mode (EXTD), software-enabled (SVR[8]). */
bool vlapic_enabled(const struct vlapic *l);
bool vlapic_x2apic_mode(const struct vlapic *l);
bool vlapic_sw_enabled(const struct vlapic *l);

/*
 * xAPIC MMIO, 32-bit accesses at @offset in the page (SDM 11.4.1): reads
 * of reserved or write-only offsets give 0, writes to read-only ones are
 * ignored, reserved offsets set ESR.illegal register address.  In x2APIC
 * mode or globally disabled there is no MMIO interface: reads give all
 * ones, writes are dropped.
 */
enum vlapic_result vlapic_mmio_read(struct vlapic *l, unsigned int offset, uint64_t now,
				    uint32_t *value);
enum vlapic_result vlapic_mmio_write(struct vlapic *l, unsigned int offset, uint32_t value,
				     uint64_t now, struct icr_request *req);

/*
 * x2APIC MSRs 800H-8FFH and IA32_TSC_DEADLINE (SDM 11.12.1, Table 11-6):
 * VLAPIC_GP outside x2APIC mode, for a reserved MSR, a write to a
 * read-only one, a read of a write-only one, and reserved bits set.
 */
enum vlapic_result vlapic_msr_read(struct vlapic *l, uint32_t msr, uint64_t now, uint64_t *value);
enum vlapic_result vlapic_msr_write(struct vlapic *l, uint32_t msr, uint64_t value, uint64_t now,
				    struct icr_request *req);

/*
 * An interrupt for this APIC (a fixed IPI, an I/O APIC message): IRR set,
 * TMR for @level.  False when not accepted: the APIC is disabled, or the
 * vector is illegal (0-15: ESR received illegal vector, SDM 11.5.3).
 */
bool vlapic_accept_irq(struct vlapic *l, uint8_t vector, bool level);

/*
 * CR8 in 64-bit mode is TPR[7:4] (SDM Vol. 3A 11.8.6): a MOV to CR8 sets
 * TPR to @cr8 << 4 (bits 63:4 are reserved: the caller's #GP).
 */
void vlapic_write_cr8(struct vlapic *l, uint64_t cr8);
uint64_t vlapic_read_cr8(const struct vlapic *l);

/* The Processor Priority Register (SDM 11.8.3.1). */
uint32_t vlapic_ppr(const struct vlapic *l);
/* The highest IRR vector whose priority class is above the PPR's, or -1 (SDM 11.8.4). */
int vlapic_pending_vector(const struct vlapic *l);
/* The processor took @vector (injected): IRR -> ISR (SDM 11.8.4's INTA). */
void vlapic_ack(struct vlapic *l, uint8_t vector);

/* Fire what expired by @now (IRR set per the LVT timer), reload a periodic timer. */
void vlapic_timer_update(struct vlapic *l, uint64_t now);
/*
 * The timer's period in TSC ticks if it is periodic, unmasked, running
 * and @vector is its vector (an interrupt storm's source, events.c), else 0.
 */
uint64_t vlapic_timer_period(const struct vlapic *l, int vector);
/* When the timer next fires, in TSC ticks, or VLAPIC_NO_DEADLINE. */
uint64_t vlapic_timer_next(const struct vlapic *l);

#endif /* EXITPLAN_VLAPIC_H */
