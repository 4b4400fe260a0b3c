// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device pages EPT leaves out although they are neither RAM nor the
 * hypervisor's: devices a guest could program to run code outside VMX
 * (SMM, through an SMI) or to write any physical address.
 *
 *   - The I/O APIC (the MADT's first, else 0xFEC00000): a redirection
 *     entry delivers a device interrupt as an SMI, NMI or INIT to any
 *     CPU.  Emulated by ioapic.c over the hardware, the entries filtered.
 *     Any further I/O APIC the MADT lists is not emulated: like every
 *     page EPT does not map, it is an absent device (ept_exits.c).
 *   - The HPET (the ACPI HPET table's base, else 0xFED00000): a timer in
 *     FSB delivery writes a guest-chosen value to a guest-chosen address
 *     (an MSI with any delivery mode; on Bochs, a write to any physical
 *     address).  Not the guest's at all: an absent device, reads all
 *     ones, writes dropped.
 *
 * Each access is an EPT violation, its instruction emulated by mmio.c
 * (vmx_mmio_emulate()), which reaches the pages through
 * vmx_device_page_read() and vmx_device_page_write(); an instruction
 * fetch or an event delivery through the page stops the guest with a
 * report (ept_exits.c).
 */
#include "arch/vmx/ap_park.h"
#include "runtime/host/boot_info.h"
#include "runtime/host/acpi.h"
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "arch/vmx/ept.h"
#include "runtime/devices/ioapic.h"
#include "runtime/host/layout.h"
#include "arch/vmx/mmio.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/percpu.h"
#include "arch/vmx/profile_values.h"
#include "runtime/host/traps.h"
#include "runtime/vm/vm.h"
#include "vmcs_fields.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/vlapic_exits.h"
#include "arch/vmx/legacy_irq.h"
#include "arch/vmx/vmx_ops.h"

#define HPET_DEFAULT_BASE	0xfed00000ull	/* IA-PC HPET Specification 1.0a, 2.1 */

static uint64_t hpet_page = HPET_DEFAULT_BASE;

/* The guest's I/O APIC, under the VM's platform_lock (so is the hardware's IOREGSEL). */
static struct ioapic_guest vm_ioapic;
static bool vm_ioapic_ready;
/* The pin the guest's 8254 drives (the MADT's override of ISA IRQ 0). */
static unsigned int vm_ioapic_pit_pin;
/* apic: virtual: the VM whose vCPUs the interrupts taken in root operation are for. */
static struct vm *ioapic_vm;
static void ioapic_root_irq(struct interrupt_frame *f);
static bool ioapic_refusal_reported, hpet_write_reported;

static uint64_t page_of(uint64_t gpa)
{
	return gpa & ~(uint64_t)(PAGE_SIZE - 1);
}

bool vmx_device_page(uint64_t gpa)
{
	return page_of(gpa) == ioapic_hw_page || page_of(gpa) == hpet_page;
}

/* Unmap the page at @pa (a device window, present as MMIO until now). */
static bool hide_page(struct ept *ept, uint64_t pa)
{
	if (!ept_lookup(ept, pa, NULL))
		return true;		/* not mapped anyway */
	return ept_set_4k(ept, pa, 0);
}

/* A table naming RAM the hypervisor owns or no address below 4 GiB is not believed. */
static bool device_base_plausible(uint64_t base)
{
	const struct boot_info *bi = boot_info();

	return base && base < HV_IDENTITY_MAP_END &&
	       !(base >= bi->hv_start && base < bi->hv_end);
}

bool vmx_hide_device_pages(struct ept *ept)
{
	uint64_t base = acpi_hpet_base(), ioapics[2];
	unsigned int n_ioapics = acpi_madt_ioapic_bases(ioapics, ARRAY_SIZE(ioapics));
	bool from_madt = n_ioapics && device_base_plausible(ioapics[0]);

	if (device_base_plausible(base))
		hpet_page = page_of(base);
	if (from_madt)
		ioapic_hw_page = page_of(ioapics[0]);
	printk("exitplan: EPT: the I/O APIC page %#llx%s and the HPET page %#llx%s are emulated, "
	       "not mapped\n", (unsigned long long)ioapic_hw_page, from_madt ? " (MADT)" : "",
	       (unsigned long long)hpet_page, base ? " (ACPI HPET table)" : "");
	if (n_ioapics > 1)
		printk("exitplan: EPT: the MADT lists %u I/O APICs; the guest gets the first, the "
		       "others are absent (not mapped, read all ones)\n", n_ioapics);
	/* Left out of the map already (default deny); a grant must not bring them back. */
	return hide_page(ept, ioapic_hw_page) && hide_page(ept, hpet_page);
}

static enum vmx_exit_action ioapic_access(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
					  uint64_t *v, bool write)
{
	unsigned int offset = gpa & (PAGE_SIZE - 1);
	struct ioapic_refusal refusal;
	enum ioapic_result r;
	uint32_t value = 0;
	bool report = false;

	spin_lock(&vcpu->vm->platform_lock);
	if (!vm_ioapic_ready) {
		/*
		 * The 8254's pin is an emulated pin under every APIC model:
		 * the host's 8254 behind it is the hypervisor's delay timer,
		 * never the guest's, and the guest's own 8254 (runtime/devices/vpit.c)
		 * drives the pin instead (legacy_irq.c).
		 */
		uint64_t emulated;

		vm_ioapic_pit_pin = acpi_madt_isa_irq_pin(0);
		emulated = vm_ioapic_pit_pin < 64 ? 1ull << vm_ioapic_pit_pin : 0;
		/*
		 * apic: virtual: no physical APIC answers the guest's
		 * destinations; the hardware sends every interrupt to CPU 0,
		 * whose exit hands it on (vmx_ioapic_deliver()).
		 */
		if (exitplan_profile.apic_virtual) {
			ioapic_guest_init_virtual(&vm_ioapic, (uint8_t)percpu_area(0)->apic_id,
						  emulated);
		} else {
			ioapic_guest_init(&vm_ioapic, emulated);
		}
		WRITE_ONCE(vm_ioapic_ready, true);
	}
	if (write)
		r = ioapic_guest_write(&vm_ioapic, offset, size, (uint32_t)*v, &refusal);
	else
		r = ioapic_guest_read(&vm_ioapic, offset, size, &value);
	if (r == IOAPIC_REFUSED && !ioapic_refusal_reported)
		report = ioapic_refusal_reported = true;
	spin_unlock(&vcpu->vm->platform_lock);

	if (r == IOAPIC_BAD_ACCESS)
		return vcpu_stop(vcpu, "I/O APIC %s of %u byte(s) at GPA %#llx (RIP %#llx): only "
				 "aligned 32-bit accesses are defined (82093AA)",
				 write ? "write" : "read", size, (unsigned long long)gpa,
				 (unsigned long long)vmcs_read(GUEST_RIP));
	if (report)
		printk("exitplan: guest I/O APIC redirection entry %u written masked: delivery "
		       "mode %s (low dword %#x) is not the guest's; later ones are not reported\n",
		       refusal.entry, ioapic_delivery_mode_name(refusal.value), refusal.value);
	if (!write)
		*v = value;
	/* The 8254's pin may have been unmasked, masked or re-routed (legacy_irq.c). */
	if (write && offset == IOAPIC_IOWIN)
		vmx_legacy_irq_update(vcpu);
	return VMX_EXIT_RESUME;
}

static bool host_vector(uint8_t vector)
{
	return vector >= IOAPIC_HOST_VECTOR_BASE &&
	       vector < IOAPIC_HOST_VECTOR_BASE + IOAPIC_MAX_ENTRIES;
}

/*
 * Post the interrupt that arrived as @vector to the vCPUs its guest
 * entry names (@self is the vCPU that took it, VM_MAX_VCPUS for none):
 * decoded as the I/O APIC's message, each target matched in its own
 * APIC mode (vm_ioapic_decode(): x2APIC-mode targets too), and posted
 * as an IPI would be (runtime/vm/vm.c), the targets but @self kicked.  The
 * targets, or 0 when no entry delivers @vector.
 */
static uint32_t ioapic_post(struct vm *vm, unsigned int self, uint8_t vector)
{
	struct icr_request req;
	uint32_t low = 0, high = 0;
	bool routed = false;

	if (READ_ONCE(vm_ioapic_ready)) {
		spin_lock(&vm->platform_lock);
		routed = ioapic_guest_route(&vm_ioapic, vector, &low, &high);
		spin_unlock(&vm->platform_lock);
	}
	if (!routed)
		return 0;
	req = vm_ioapic_decode(vm, low, high);
	vmx_kick_vcpus(vm_icr_deliver(vm, self, &req) & ~(1u << self));
	return req.targets;
}

enum vmx_exit_action vmx_ioapic_deliver(struct vcpu *vcpu, uint8_t vector)
{
	uint32_t targets;

	/* Not an I/O APIC entry's: raised here, as it came. */
	if (!host_vector(vector)) {
		vmx_vlapic_post(vcpu, vector);
		return VMX_EXIT_RESUME;
	}
	/* An entry's (none when it was masked since it was sent: dropped). */
	targets = ioapic_post(vcpu->vm, vcpu->id, vector);
	if (targets & (1u << vcpu->id))
		return vmx_take_events(vcpu);
	return VMX_EXIT_RESUME;
}

/*
 * A CPU whose vCPUs are all blocked takes the hardware's interrupts in
 * root operation (vmx_ioapic_idle()): an entry's is posted to its
 * targets (woken, vcpu_switch.c), a late kick is dropped (its events
 * are taken when the vCPU is switched in).
 */
static void ioapic_root_irq(struct interrupt_frame *f)
{
	uint8_t vector = (uint8_t)f->vector;

	vmx_apic_eoi();
	vmx_idle_irq(f);	/* a halted idle CPU's HLT ends (ap_park.c) */
	if (host_vector(vector))
		ioapic_post(ioapic_vm, VM_MAX_VCPUS, vector);
}

void vmx_ioapic_root_init(struct vm *vm)
{
	/*
	 * apic: virtual: the entries' vectors may arrive in root operation
	 * at any time once the guest unmasks one.  Registered here, before
	 * any vCPU runs: the IDT's handlers are fixed from then on.
	 */
	if (!exitplan_profile.apic_virtual)
		return;
	ioapic_vm = vm;
	for (unsigned int n = 0; n < IOAPIC_MAX_ENTRIES; n++)
		idt_set_handler(IOAPIC_HOST_VECTOR(n), ioapic_root_irq);
}

bool vmx_ioapic_pit_route(uint32_t *low, uint32_t *high)
{
	return READ_ONCE(vm_ioapic_ready) &&
	       ioapic_guest_pin_route(&vm_ioapic, vm_ioapic_pit_pin, low, high);
}

bool vmx_ioapic_idle_polls(unsigned int cpu)
{
	return exitplan_profile.apic_virtual && cpu == 0 && READ_ONCE(vm_ioapic_ready);
}

void vmx_ioapic_idle(unsigned int cpu)
{
	if (!vmx_ioapic_idle_polls(cpu))
		return;
	/* One instruction with interrupts on: each pending one is taken there. */
	asm volatile("sti; nop; cli" : : : "memory");
}

/* An absent device: all ones, writes go nowhere (the first is reported). */
static enum vmx_exit_action hpet_access(uint64_t gpa, uint64_t *v, bool write)
{
	if (!write)
		*v = ~0ull;
	else if (!__atomic_exchange_n(&hpet_write_reported, true, __ATOMIC_RELAXED))
		printk("exitplan: guest write of %#llx to the HPET at %#llx dropped (the HPET is "
		       "not the guest's: FSB delivery writes any address); later ones are not "
		       "reported\n", (unsigned long long)*v, (unsigned long long)gpa);
	return VMX_EXIT_RESUME;
}

const char *vmx_device_page_name(uint64_t gpa)
{
	return page_of(gpa) == ioapic_hw_page ? "the I/O APIC page" : "the HPET page";
}

enum vmx_exit_action vmx_device_page_read(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
					  uint64_t *v)
{
	if (page_of(gpa) == ioapic_hw_page)
		return ioapic_access(vcpu, gpa, size, v, false);
	return hpet_access(gpa, v, false);
}

enum vmx_exit_action vmx_device_page_write(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
					   uint64_t v)
{
	if (page_of(gpa) == ioapic_hw_page)
		return ioapic_access(vcpu, gpa, size, &v, true);
	return hpet_access(gpa, &v, true);
}
