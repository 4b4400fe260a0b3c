// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bringing up VMX and running the guest: detection, the capability MSRs,
 * the profile's control computation and gate lines, VMXON, the VMCS
 * (controls, host state, guest state for a multiboot entry), EPT, VPID,
 * the MSR and I/O bitmaps, and the exit summary when the guest stops.
 */
#include <stdarg.h>
#include <stddef.h>

#include "acpi.h"
#include "ap_park.h"
#include "boot_info.h"
#include "panic.h"
#include "arch_bits.h"
#include "smp.h"
#include "spinlock.h"
#include "timer.h"
#include "vm.h"
#include "compiler.h"
#include "cpu.h"
#include "exit_stats.h"
#include "guest_loader.h"
#include "layout.h"
#include "multiboot.h"
#include "msr_index.h"
#include "msr_switch.h"
#include "policy.h"
#include "profile.h"
#include "vcpu_asm.h"
#include "vmcs_fields.h"
#include "platform.h"
#include "vmm.h"
#include "vmx.h"
#include "vmx_ctls.h"
#include "mmio.h"
#include "vmx_controls_bits.h"
#include "vmx_exit_reasons.h"
#include "vmx_features.h"
#include "console.h"
#include "page_alloc.h"
#include "percpu.h"
#include "string.h"

#define VMX_EXIT_STACK_PAGES	4

/*
 * Selectors the guest starts with.  Multiboot leaves their values
 * undefined (the guest must load its own GDT before reloading a segment);
 * these are the ones GRUB happens to use.
 */
#define GUEST_BOOT_CS_SELECTOR	0x10
#define GUEST_BOOT_DS_SELECTOR	0x18

static void *vmx_alloc_pages(unsigned int n)
{
	return n == 1 ? page_alloc() : page_alloc_contig(n);
}

/* --- capabilities ------------------------------------------------------ */

static void vmx_read_caps(struct vmx_caps *c)
{
	uint32_t eax, ebx, ecx, edx;

	*c = (struct vmx_caps){ 0 };
	cpuid_count(1, 0, &eax, &ebx, &ecx, &edx);
	c->cpuid_1_ecx = ecx;
	c->cpuid_1_edx = edx;
	if (!(ecx & CPUID_1_ECX_VMX))
		return;

	c->basic = rdmsr(MSR_IA32_VMX_BASIC);
	c->pinbased = rdmsr(MSR_IA32_VMX_PINBASED_CTLS);
	c->procbased = rdmsr(MSR_IA32_VMX_PROCBASED_CTLS);
	c->exit = rdmsr(MSR_IA32_VMX_EXIT_CTLS);
	c->entry = rdmsr(MSR_IA32_VMX_ENTRY_CTLS);
	c->misc = rdmsr(MSR_IA32_VMX_MISC);
	c->cr0_fixed0 = rdmsr(MSR_IA32_VMX_CR0_FIXED0);
	c->cr0_fixed1 = rdmsr(MSR_IA32_VMX_CR0_FIXED1);
	c->cr4_fixed0 = rdmsr(MSR_IA32_VMX_CR4_FIXED0);
	c->cr4_fixed1 = rdmsr(MSR_IA32_VMX_CR4_FIXED1);
	c->vmcs_enum = rdmsr(MSR_IA32_VMX_VMCS_ENUM);
	/* SDM Vol. 3D A.1: the TRUE_* MSRs exist when IA32_VMX_BASIC[55] is 1. */
	if (c->basic & VMX_BASIC_TRUE_CTLS) {
		c->true_pinbased = rdmsr(MSR_IA32_VMX_TRUE_PINBASED_CTLS);
		c->true_procbased = rdmsr(MSR_IA32_VMX_TRUE_PROCBASED_CTLS);
		c->true_exit = rdmsr(MSR_IA32_VMX_TRUE_EXIT_CTLS);
		c->true_entry = rdmsr(MSR_IA32_VMX_TRUE_ENTRY_CTLS);
	}
	/* A.3.3: PROCBASED_CTLS2 exists only if secondary controls can be 1. */
	if ((c->procbased >> 32) & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS) {
		c->procbased2 = rdmsr(MSR_IA32_VMX_PROCBASED_CTLS2);
		/* A.10: EPT_VPID_CAP exists if EPT or VPID can be enabled. */
		if ((c->procbased2 >> 32) & (SECONDARY_EXEC_ENABLE_EPT | SECONDARY_EXEC_ENABLE_VPID))
			c->ept_vpid_cap = rdmsr(MSR_IA32_VMX_EPT_VPID_CAP);
		/* A.11: VMFUNC exists if "enable VM functions" can be 1. */
		if ((c->procbased2 >> 32) & SECONDARY_EXEC_ENABLE_VMFUNC)
			c->vmfunc = rdmsr(MSR_IA32_VMX_VMFUNC);
	}
}

/*
 * IA32_FEATURE_CONTROL must be locked with "VMXON outside SMX" set, or
 * VMXON faults (SDM Vol. 3C 24.7).  Firmware normally locks it; if it did
 * not, lock it ourselves as Linux does.
 */
static bool vmx_feature_control_ok(void)
{
	uint64_t fc = rdmsr(MSR_IA32_FEATURE_CONTROL);

	if (!(fc & FEAT_CTL_LOCKED)) {
		fc |= FEAT_CTL_LOCKED | FEAT_CTL_VMXON_OUTSIDE_SMX;
		wrmsr(MSR_IA32_FEATURE_CONTROL, fc);
		fc = rdmsr(MSR_IA32_FEATURE_CONTROL);
	}
	return (fc & FEAT_CTL_LOCKED) && (fc & FEAT_CTL_VMXON_OUTSIDE_SMX);
}

/* --- memory ------------------------------------------------------------ */

void *ept_alloc_table(void)
{
	return vmx_alloc_pages(1);
}

static inline uint64_t pa_of(const void *p)
{
	return virt_to_phys(p);
}

/* --- VMXON ------------------------------------------------------------- */

static bool vmx_enable(struct vmx_cpu *vc)
{
	const struct vmx_caps *caps = &vc->caps;
	uint32_t *region;

	/*
	 * SDM Vol. 3C 24.8: CR0 and CR4 must satisfy the fixed bits in VMX
	 * operation.  CR4.OSXSAVE too, when the CPU has XSAVE: XCR0 is not
	 * switched by VMX, and the XSETBV handler executes the guest's
	 * XSETBV, which needs it in the host.
	 */
	write_cr4((read_cr4() | caps->cr4_fixed0 | X86_CR4_VMXE |
		   ((caps->cpuid_1_ecx & CPUID_1_ECX_XSAVE) ? X86_CR4_OSXSAVE : 0)) &
		  caps->cr4_fixed1);
	write_cr0((read_cr0() | caps->cr0_fixed0) & caps->cr0_fixed1);

	region = vmx_alloc_pages(1);
	if (!region)
		return false;
	/* The VMXON region starts with the VMCS revision identifier (A.1). */
	region[0] = (uint32_t)(caps->basic & VMX_BASIC_REVISION_ID_MASK);
	vc->vmxon_region = region;
	vc->vmxon_pa = pa_of(region);
	if (!vmxon(vc->vmxon_pa)) {
		printk("exitplan: VMXON failed\n");
		return false;
	}
	return true;
}

/* --- VMCS: controls ---------------------------------------------------- */

/* One VMWRITE of a setup table. */
struct vmcs_init {
	enum vmcs_field f;
	uint64_t v;
};

static bool vmcs_write_all(const struct vmcs_init *w, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (!vmcs_write_checked(w[i].f, w[i].v)) {
			printk("exitplan: VMWRITE of VMCS field %#x failed (error %u)\n",
				  (unsigned int)w[i].f, vmcs_read32(VM_INSTRUCTION_ERROR));
			return false;
		}
	}
	return true;
}

#define VMCS_WRITES(name, ...)	const struct vmcs_init name[] = { __VA_ARGS__ }

static bool vmx_setup_msr_lists(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	unsigned int n = profile_msr_load_list_count;

	if (n) {
		a->entry_load = vmx_alloc_pages(1);
		a->exit_load = vmx_alloc_pages(1);
		a->exit_store = a->entry_load;
		if (!a->entry_load || !a->exit_load)
			return false;
	}
	/*
	 * The load list: the guest's value is loaded at VM entry, the host's
	 * at VM exit, and the guest's current value is stored at VM exit
	 * into the entry-load area itself, so the next entry reloads what
	 * the guest last wrote (SDM Vol. 3C 25.7.2, 25.8.2).
	 */
	for (unsigned int i = 0; i < n; i++) {
		uint32_t msr = profile_msr_load_list[i];

		a->entry_load[i] = (struct vmx_msr_entry){ .index = msr, .value = rdmsr(msr) };
		a->exit_load[i] = (struct vmx_msr_entry){ .index = msr, .value = rdmsr(msr) };
	}

	VMCS_WRITES(w,
		{ VM_ENTRY_MSR_LOAD_COUNT, n },
		{ VM_EXIT_MSR_LOAD_COUNT, n },
		{ VM_EXIT_MSR_STORE_COUNT, n },
		{ VM_ENTRY_MSR_LOAD_ADDR, n ? pa_of(a->entry_load) : 0 },
		{ VM_EXIT_MSR_LOAD_ADDR, n ? pa_of(a->exit_load) : 0 },
		{ VM_EXIT_MSR_STORE_ADDR, n ? pa_of(a->exit_store) : 0 },
	);
	return vmcs_write_all(w, ARRAY_SIZE(w));
}

static bool vmx_setup_controls(struct vcpu *vcpu, struct vmx_cpu *vc)
{
	struct vcpu_arch_state *a = vcpu->arch;
	const struct vmx_controls *ctl = &vc->controls;
	const struct vmx_caps *caps = &vc->caps;
	uint32_t proc2 = ctl->field[VMX_PROC_BASED2];

	a->msr_bitmap = vmx_alloc_pages(1);
	a->io_bitmap_a = vmx_alloc_pages(1);
	a->io_bitmap_b = vmx_alloc_pages(1);
	if (!a->msr_bitmap || !a->io_bitmap_a || !a->io_bitmap_b)
		return false;
	msr_bitmap_build(a->msr_bitmap, profile_msr_bitmap_rules, profile_msr_bitmap_rule_count);
	io_bitmap_build(a->io_bitmap_a, a->io_bitmap_b, profile_io_grant_ranges,
			profile_io_grant_range_count);

	/*
	 * CR0/CR4 bits the guest may not own: those VMX operation fixes (with
	 * unrestricted guest, PE and PG are the guest's, SDM Vol. 3C 26.3.1.1)
	 * and CR4.VMXE, which the guest must never see set.
	 */
	a->cr0_fixed0 = caps->cr0_fixed0;
	a->cr0_fixed1 = caps->cr0_fixed1;
	a->cr4_fixed0 = caps->cr4_fixed0;
	a->cr4_fixed1 = caps->cr4_fixed1;
	if (proc2 & SECONDARY_EXEC_UNRESTRICTED_GUEST)
		a->cr0_fixed0 &= ~(uint64_t)(X86_CR0_PE | X86_CR0_PG);
	/*
	 * CR0.PG is the host's too, though the guest may set it freely: its
	 * changes must exit so that the "IA-32e mode guest" entry control
	 * and EFER.LMA follow the guest into and out of long mode (as KVM
	 * keeps PG host-owned; Bochs 2.7 does not store LMA into the entry
	 * control on VM exit).
	 */
	a->cr0_mask = a->cr0_fixed0 | X86_CR0_PG | (~a->cr0_fixed1 & 0xffffffffull);
	a->cr4_mask = a->cr4_fixed0 | X86_CR4_VMXE | (~a->cr4_fixed1 & 0xffffffffull);

	a->preemption_rate = caps->misc & VMX_MISC_PREEMPTION_TIMER_RATE_MASK;
	a->preemption_timer_on = ctl->field[VMX_PIN_BASED] & PIN_BASED_VMX_PREEMPTION_TIMER;
	a->tsc_deadline_emulated = a->preemption_timer_on &&
				   (ctl->field[VMX_EXIT] & VM_EXIT_SAVE_VMX_PREEMPTION_TIMER);
	a->preemption_timer_borrowable = !a->preemption_timer_on &&
		vmx_feature_supported(caps, VMX_FEATURE_PREEMPTION_TIMER) &&
		vmx_feature_supported(caps, VMX_FEATURE_SAVE_PREEMPTION_TIMER);

	/* The control fields through their cache's owner (vmx_ctls.h). */
	if (!vcpu_ctls_init(vcpu, VMX_PIN_BASED, ctl->field[VMX_PIN_BASED]) ||
	    !vcpu_ctls_init(vcpu, VMX_PROC_BASED, ctl->field[VMX_PROC_BASED]) ||
	    !vcpu_ctls_init(vcpu, VMX_EXIT, ctl->field[VMX_EXIT]) ||
	    !vcpu_ctls_init(vcpu, VMX_ENTRY, ctl->field[VMX_ENTRY]))
		return false;
	vcpu->ctls[VMX_PROC_BASED2] = 0;
	VMCS_WRITES(w,
		{ EXCEPTION_BITMAP, 0 },
		{ PAGE_FAULT_ERROR_CODE_MASK, 0 },
		{ PAGE_FAULT_ERROR_CODE_MATCH, 0 },
		{ CR3_TARGET_COUNT, 0 },
		{ TSC_OFFSET, 0 },
		{ VM_ENTRY_INTR_INFO_FIELD, 0 },
		{ MSR_BITMAP, pa_of(a->msr_bitmap) },
		{ IO_BITMAP_A, pa_of(a->io_bitmap_a) },
		{ IO_BITMAP_B, pa_of(a->io_bitmap_b) },
		{ CR0_GUEST_HOST_MASK, a->cr0_mask },
		{ CR4_GUEST_HOST_MASK, a->cr4_mask },
		{ VMCS_LINK_POINTER, ~0ull },
	);
	if (!vmcs_write_all(w, ARRAY_SIZE(w)))
		return false;
	if (ctl->field[VMX_PROC_BASED] & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS) {
		if (!vcpu_ctls_init(vcpu, VMX_PROC_BASED2, proc2))
			return false;
	}
	/* The profile's table of CPUID answers, from the controls just set. */
	cpuid_fast_init(vcpu);
	if (proc2 & SECONDARY_EXEC_PAUSE_LOOP_EXITING) {
		VMCS_WRITES(ple, { PLE_GAP, PROFILE_PLE_GAP }, { PLE_WINDOW, PROFILE_PLE_WINDOW });
		if (!vmcs_write_all(ple, ARRAY_SIZE(ple)))
			return false;
	}
	/*
	 * "Enable XSAVES/XRSTORS" (spec/runtime.yaml) makes them consult the
	 * XSS-exiting bitmap (SDM Vol. 3C 26.1.3): all zero, they never exit.
	 */
	if ((proc2 & SECONDARY_EXEC_ENABLE_XSAVES) && !vmcs_write_checked(XSS_EXIT_BITMAP, 0))
		return false;
	if (a->preemption_timer_on &&
	    !vmcs_write_checked(VMX_PREEMPTION_TIMER_VALUE, PROFILE_PREEMPTION_TIMER_VALUE))
		return false;
	if (ctl->field[VMX_PROC_BASED] & CPU_BASED_TPR_SHADOW) {
		/* The virtual-APIC page; threshold 0 never exceeds the TPR shadow. */
		void *vapic = vmx_alloc_pages(1);

		if (!vapic)
			return false;
		VMCS_WRITES(tpr, { VIRTUAL_APIC_PAGE_ADDR, pa_of(vapic) }, { TPR_THRESHOLD, 0 });
		if (!vmcs_write_all(tpr, ARRAY_SIZE(tpr)))
			return false;
	}
	if (proc2 & SECONDARY_EXEC_ENABLE_VPID) {
		/* VPID 0 is the host's; each vCPU gets its own (id + 1). */
		a->vpid = (uint16_t)(vcpu->id + 1);
		if (!vmcs_write_checked(VIRTUAL_PROCESSOR_ID, a->vpid))
			return false;
	}
	return vmx_setup_msr_lists(vcpu);
}

/* --- VMCS: host state -------------------------------------------------- */

static uint16_t read_sel(int which)
{
	uint16_t s = 0;

	switch (which) {
	case 0: asm volatile("mov %%cs, %0" : "=r"(s)); break;
	case 1: asm volatile("mov %%ss, %0" : "=r"(s)); break;
	case 2: asm volatile("mov %%ds, %0" : "=r"(s)); break;
	case 3: asm volatile("mov %%es, %0" : "=r"(s)); break;
	case 4: asm volatile("mov %%fs, %0" : "=r"(s)); break;
	case 5: asm volatile("mov %%gs, %0" : "=r"(s)); break;
	case 6: asm volatile("str %0" : "=r"(s)); break;
	}
	return s;
}

/* Base of the 64-bit TSS descriptor at @sel in the GDT (SDM Vol. 3A 7.2.3). */
static uint64_t tss_base(const struct desc_ptr *gdt, uint16_t sel)
{
	const uint64_t *d = (const uint64_t *)(uintptr_t)(gdt->base + (sel & ~7u));
	uint64_t lo = d[0], hi = d[1];

	return ((lo >> 16) & 0xffffff) | (((lo >> 56) & 0xff) << 24) | ((hi & 0xffffffff) << 32);
}

static bool vmx_setup_host_state(struct vmx_cpu *vc, const struct vcpu *vcpu)
{
	const struct vmx_controls *ctl = &vc->controls;
	struct desc_ptr gdt, idt;
	uint16_t tr = read_sel(6);

	asm volatile("sgdt %0" : "=m"(gdt));
	asm volatile("sidt %0" : "=m"(idt));

	VMCS_WRITES(w,
		{ HOST_CR0, read_cr0() },
		{ HOST_CR3, read_cr3() },
		{ HOST_CR4, read_cr4() },
		/* Selector fields take RPL 0, TI 0 (SDM Vol. 3C 27.2.3). */
		{ HOST_CS_SELECTOR, read_sel(0) & ~7u },
		{ HOST_SS_SELECTOR, read_sel(1) & ~7u },
		{ HOST_DS_SELECTOR, read_sel(2) & ~7u },
		{ HOST_ES_SELECTOR, read_sel(3) & ~7u },
		{ HOST_FS_SELECTOR, read_sel(4) & ~7u },
		{ HOST_GS_SELECTOR, read_sel(5) & ~7u },
		{ HOST_TR_SELECTOR, tr & ~7u },
		{ HOST_FS_BASE, rdmsr(MSR_IA32_FS_BASE) },
		{ HOST_GS_BASE, rdmsr(MSR_IA32_GS_BASE) },
		{ HOST_TR_BASE, tss_base(&gdt, tr) },
		{ HOST_GDTR_BASE, gdt.base },
		{ HOST_IDTR_BASE, idt.base },
		{ HOST_IA32_SYSENTER_CS, rdmsr(MSR_IA32_SYSENTER_CS) },
		{ HOST_IA32_SYSENTER_ESP, rdmsr(MSR_IA32_SYSENTER_ESP) },
		{ HOST_IA32_SYSENTER_EIP, rdmsr(MSR_IA32_SYSENTER_EIP) },
		/* The exit stub PUSHes the guest's registers into vcpu->regs. */
		{ HOST_RSP, (uint64_t)(uintptr_t)vcpu + VCPU_PUSHED_END },
		{ HOST_RIP, (uint64_t)(uintptr_t)(vcpu->exit_hooks ? vmx_exit_stub_hooks
								  : vmx_exit_stub) },
	);
	if (!vmcs_write_all(w, ARRAY_SIZE(w)))
		return false;
	if ((ctl->field[VMX_EXIT] & VM_EXIT_LOAD_IA32_EFER) &&
	    !vmcs_write_checked(HOST_IA32_EFER, rdmsr(MSR_IA32_EFER)))
		return false;
	if ((ctl->field[VMX_EXIT] & VM_EXIT_LOAD_IA32_PAT) &&
	    !vmcs_write_checked(HOST_IA32_PAT, rdmsr(MSR_IA32_PAT)))
		return false;
	return true;
}

/* --- VMCS: guest state for a multiboot entry --------------------------- */

/*
 * The machine state the Multiboot Specification (3.2) promises at entry:
 * 32-bit protected mode, paging off, flat 4-GiB code and data segments,
 * EFLAGS.IF and VM clear, EAX = the magic, EBX = the info structure.
 */
static bool vmx_setup_guest_state(struct vcpu *vcpu, struct vmx_cpu *vc,
				  uint32_t entry, uint32_t mbi)
{
	struct vcpu_arch_state *a = vcpu->arch;
	const struct vmx_controls *ctl = &vc->controls;
	const uint32_t code_ar = VMX_AR_TYPE_CODE_XR_ACCESSED | VMX_AR_S | VMX_AR_P |
				 VMX_AR_DB | VMX_AR_G;
	const uint32_t data_ar = VMX_AR_TYPE_DATA_RW_ACCESSED | VMX_AR_S | VMX_AR_P |
				 VMX_AR_DB | VMX_AR_G;
	const uint64_t cr0_guest = X86_CR0_PE | X86_CR0_ET;
	uint64_t cr0 = (cr0_guest | a->cr0_fixed0) & a->cr0_fixed1;
	uint64_t cr4 = (a->cr4_fixed0 | X86_CR4_VMXE) & a->cr4_fixed1;

	vcpu->regs = (struct guest_regs){ 0 };
	vcpu->regs.rax = MULTIBOOT_BOOTLOADER_MAGIC;
	vcpu->regs.rbx = mbi;

	VMCS_WRITES(w,
		{ GUEST_CR0, cr0 },
		{ CR0_READ_SHADOW, cr0_guest },
		{ GUEST_CR3, 0 },
		{ GUEST_CR4, cr4 },
		{ CR4_READ_SHADOW, 0 },
		{ GUEST_DR7, X86_DR7_INIT },
		{ GUEST_RSP, 0 },
		{ GUEST_RIP, entry },
		{ GUEST_RFLAGS, X86_RFLAGS_FIXED },
		{ GUEST_CS_SELECTOR, GUEST_BOOT_CS_SELECTOR },
		{ GUEST_CS_BASE, 0 }, { GUEST_CS_LIMIT, 0xffffffff }, { GUEST_CS_AR_BYTES, code_ar },
		{ GUEST_SS_SELECTOR, GUEST_BOOT_DS_SELECTOR },
		{ GUEST_SS_BASE, 0 }, { GUEST_SS_LIMIT, 0xffffffff }, { GUEST_SS_AR_BYTES, data_ar },
		{ GUEST_DS_SELECTOR, GUEST_BOOT_DS_SELECTOR },
		{ GUEST_DS_BASE, 0 }, { GUEST_DS_LIMIT, 0xffffffff }, { GUEST_DS_AR_BYTES, data_ar },
		{ GUEST_ES_SELECTOR, GUEST_BOOT_DS_SELECTOR },
		{ GUEST_ES_BASE, 0 }, { GUEST_ES_LIMIT, 0xffffffff }, { GUEST_ES_AR_BYTES, data_ar },
		{ GUEST_FS_SELECTOR, GUEST_BOOT_DS_SELECTOR },
		{ GUEST_FS_BASE, 0 }, { GUEST_FS_LIMIT, 0xffffffff }, { GUEST_FS_AR_BYTES, data_ar },
		{ GUEST_GS_SELECTOR, GUEST_BOOT_DS_SELECTOR },
		{ GUEST_GS_BASE, 0 }, { GUEST_GS_LIMIT, 0xffffffff }, { GUEST_GS_AR_BYTES, data_ar },
		/* A usable TR is required even in protected mode (26.3.1.2): a busy 32-bit TSS. */
		{ GUEST_TR_SELECTOR, 0 },
		{ GUEST_TR_BASE, 0 }, { GUEST_TR_LIMIT, 0xffff },
		{ GUEST_TR_AR_BYTES, VMX_AR_P | VMX_AR_TYPE_TSS_BUSY },
		{ GUEST_LDTR_SELECTOR, 0 },
		{ GUEST_LDTR_BASE, 0 }, { GUEST_LDTR_LIMIT, 0 }, { GUEST_LDTR_AR_BYTES, VMX_AR_UNUSABLE },
		{ GUEST_GDTR_BASE, 0 }, { GUEST_GDTR_LIMIT, 0xffff },
		{ GUEST_IDTR_BASE, 0 }, { GUEST_IDTR_LIMIT, 0xffff },
		{ GUEST_SYSENTER_CS, 0 }, { GUEST_SYSENTER_ESP, 0 }, { GUEST_SYSENTER_EIP, 0 },
		{ GUEST_IA32_DEBUGCTL, 0 },
		{ GUEST_INTERRUPTIBILITY_INFO, 0 },
		{ GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE },
		{ GUEST_PENDING_DBG_EXCEPTIONS, 0 },
	);
	if (!vmcs_write_all(w, ARRAY_SIZE(w)))
		return false;
	if ((ctl->field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_EFER) &&
	    !vmcs_write_checked(GUEST_IA32_EFER, 0))
		return false;
	if ((ctl->field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_PAT) &&
	    !vmcs_write_checked(GUEST_IA32_PAT, rdmsr(MSR_IA32_PAT)))
		return false;
	return true;
}

/* --- EPT and VPID ------------------------------------------------------ */

/* The VM's EPT, one for all its vCPUs (guest-physical memory is the machine's). */
static struct ept vmx_vm_ept;
static uint64_t vmx_vm_eptp;
/*
 * The same map without the xAPIC page, for a vCPU whose guest APIC is
 * not in the physical APIC's mode (disabled, or xAPIC on an x2APIC):
 * its reads of the page exit too, and apic.c answers them.
 */
static struct ept vmx_vm_ept_apic_trap;
static uint64_t vmx_vm_eptp_apic_trap;

/*
 * The identity map of the guest's memory and firmware, and of the one
 * device page the runtime grants, the xAPIC page: read-only and never
 * executable, so that every write to it -- the ICR's above all -- exits
 * (apic.c).  Nothing else is mapped (ept.h).
 */
static bool vmx_build_vm_ept(struct vmx_cpu *vc, const struct boot_info *bi)
{
	const struct vmx_caps *caps = &vc->caps;
	static struct ept_range ranges[EPT_IDENTITY_MAX_RANGES];
	const struct ept_range grants[] = {
		{ vmx_xapic_page(), vmx_xapic_page() + PAGE_SIZE, EPT_RANGE_MMIO },
	};
	unsigned int n;

	if (!(vc->controls.field[VMX_PROC_BASED2] & SECONDARY_EXEC_ENABLE_EPT)) {
		printk("exitplan: EPT is not enabled by the controls; refusing to run a guest "
			  "that could reach the hypervisor\n");
		return false;
	}
	/* WB paging structures and a 4-level walk are what ept_pointer() uses. */
	if (!vmx_feature_supported(caps, VMX_FEATURE_EPT_WB) ||
	    !vmx_feature_supported(caps, VMX_FEATURE_EPT_4LEVEL)) {
		printk("exitplan: EPT without write-back or 4-level walks is not supported\n");
		return false;
	}
	vmx_vm_ept.use_2m = vmx_feature_supported(caps, VMX_FEATURE_EPT_2M_PAGES);
	vmx_vm_ept.use_1g = vmx_feature_supported(caps, VMX_FEATURE_EPT_1G_PAGES);
	vmx_vm_ept_apic_trap.use_2m = vmx_vm_ept.use_2m;
	vmx_vm_ept_apic_trap.use_1g = vmx_vm_ept.use_1g;
	n = ept_identity_ranges(bi, grants, ARRAY_SIZE(grants), ranges, ARRAY_SIZE(ranges));
	if (!n || !ept_build(&vmx_vm_ept, ranges, n) ||
	    /* apic: virtual: not mapped at all, its reads are the virtual APIC's too. */
	    !ept_set_4k(&vmx_vm_ept, vmx_xapic_page(),
			PROFILE_APIC_VIRTUAL ? 0 : EPT_READ | EPT_MEMTYPE_UC) ||
	    !vmx_hide_device_pages(&vmx_vm_ept) ||
	    (!PROFILE_APIC_VIRTUAL &&
	     (!ept_build(&vmx_vm_ept_apic_trap, ranges, n) ||
	      !ept_set_4k(&vmx_vm_ept_apic_trap, vmx_xapic_page(), 0) ||
	      !vmx_hide_device_pages(&vmx_vm_ept_apic_trap)))) {
		printk("exitplan: cannot build the EPT identity map\n");
		return false;
	}
	vmx_vm_eptp = ept_pointer(&vmx_vm_ept);
	vmx_vm_eptp_apic_trap = PROFILE_APIC_VIRTUAL ? vmx_vm_eptp
						     : ept_pointer(&vmx_vm_ept_apic_trap);
	printk("exitplan: EPT: %u table pages; %llu MiB in 1-GiB, %llu MiB in 2-MiB, "
		  "%llu KiB in 4-KiB pages; hypervisor [%#llx, %#llx) and MMIO test page %#x not mapped\n",
		  vmx_vm_ept.pages, (unsigned long long)(vmx_vm_ept.mapped[2] >> 20),
		  (unsigned long long)(vmx_vm_ept.mapped[1] >> 20),
		  (unsigned long long)(vmx_vm_ept.mapped[0] >> 10),
		  (unsigned long long)boot_info()->hv_start, (unsigned long long)boot_info()->hv_end,
		  (unsigned int)PLATFORM_MMIO_TEST_PAGE);
	return true;
}

/*
 * The current vCPU's xAPIC page: mapped read-only (reads go to the
 * physical APIC, writes exit) or not at all (every access exits, apic.c
 * emulates it).  Both maps are built once and never change, so the
 * switch needs no INVEPT: translations are tagged with the EPTP.
 */
void vmx_xapic_page_trap(struct vcpu *vcpu, bool trap)
{
	uint64_t eptp = trap ? vmx_vm_eptp_apic_trap : vmx_vm_eptp;

	if (vcpu->arch->eptp == eptp)
		return;
	vmcs_write(EPT_POINTER, eptp);
	vcpu->arch->eptp = eptp;
}

/*
 * Drop any translations cached for this EPTP and VPID before the first
 * entry: single-context where the CPU has it, else all-context (SDM Vol.
 * 3C 29.4.3.3 and 31.3).
 */
static void vmx_flush_tlbs(struct vcpu *vcpu, struct vmx_cpu *vc)
{
	const struct vcpu_arch_state *a = vcpu->arch;
	const struct vmx_caps *caps = &vc->caps;

	if (vmx_feature_supported(caps, VMX_FEATURE_INVEPT_SINGLE_CONTEXT))
		invept(INVEPT_SINGLE_CONTEXT, a->eptp);
	else if (vmx_feature_supported(caps, VMX_FEATURE_INVEPT_ALL_CONTEXT))
		invept(INVEPT_ALL_CONTEXT, 0);
	if (!a->vpid || !vmx_feature_supported(caps, VMX_FEATURE_INVVPID))
		return;
	if (vmx_feature_supported(caps, VMX_FEATURE_INVVPID_SINGLE_CONTEXT))
		invvpid(INVVPID_SINGLE_CONTEXT, a->vpid, 0);
	else if (vmx_feature_supported(caps, VMX_FEATURE_INVVPID_ALL_CONTEXT))
		invvpid(INVVPID_ALL_CONTEXT, 0, 0);
}

/* --- the exit summary -------------------------------------------------- */

/* A YAML double-quoted scalar's content: backslash and quote escaped. */
static void print_yaml_quoted(const char *s)
{
	printk("\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printk("\\%c", *s);
		else if (*s >= 0x20 && *s < 0x7f)
			printk("%c", *s);
	}
	printk("\"");
}

/*
 * The statistics document (docs/STATS.md): YAML between two marker
 * comment lines, which gen/exitplan-gen from-stats turns into a profile.
 * One section per vCPU in `vcpus:`.
 */
static void vmx_print_stats_document(struct vcpu *const *vcpus, unsigned int n,
				     uint64_t tsc_overhead)
{
	const struct vcpu_arch_state *a = vcpus[0]->arch;
	uint32_t brand[13] = { 0 }, max_ext, unused;
	const char *cpu = "unknown";

	cpuid_count(CPUID_LEAF_EXT_BASE, 0, &max_ext, &unused, &unused, &unused);
	if (max_ext >= CPUID_LEAF_BRAND_LAST) {
		for (uint32_t l = CPUID_LEAF_BRAND_FIRST, i = 0; l <= CPUID_LEAF_BRAND_LAST; l++, i += 4)
			cpuid_count(l, 0, &brand[i], &brand[i + 1], &brand[i + 2], &brand[i + 3]);
		cpu = (const char *)brand;
		while (*cpu == ' ')
			cpu++;
	}

	printk("# exitplan-stats-begin\n");
	printk("exitplan_stats:\n  version: 1\n  profile: %s\n  level: %s\n", PROFILE_NAME,
	       PROFILE_STATS_LEVEL == STATS_TIMING ? "timing" : "counts");
	printk("  cpu: ");
	print_yaml_quoted(cpu);
	printk("\n  guest: ");
	print_yaml_quoted(a->guest_name);
	printk("\n  guest_args: ");
	print_yaml_quoted(a->guest_args ? a->guest_args : "");
	printk("\n");
	if (PROFILE_STATS_LEVEL == STATS_TIMING)
		printk("  tsc_overhead: %llu\n", (unsigned long long)tsc_overhead);
	printk("  vcpus:\n");
	for (unsigned int v = 0; v < n; v++) {
		const struct exit_stats *st = &vcpus[v]->stats;
		uint64_t exits = 0;

		for (unsigned int i = 0; i < EXIT_STATS_SLOTS; i++)
			exits += st->count[i];
		printk("    - id: %u\n      exits: %llu\n      reasons:\n", vcpus[v]->id,
		       (unsigned long long)exits);
		for (unsigned int i = 0; i < EXIT_STATS_SLOTS; i++) {
			if (!st->count[i])
				continue;
			printk("        %s: {count: %llu", i == EXIT_STATS_OTHER ? "OTHER" :
			       vmx_exit_reason_name(i), (unsigned long long)st->count[i]);
			if (PROFILE_STATS_LEVEL == STATS_TIMING)
				printk(", ticks: %llu", (unsigned long long)st->ticks[i]);
			printk("}\n");
		}
		exit_stats_print_breakdowns(st);
	}
	printk("# exitplan-stats-end\n");
}

static void vmx_print_exit_table(const struct vcpu *vcpu, unsigned int n)
{
	uint64_t total = 0;

	if (n == 1)
		printk("exitplan: exits by reason (profile '%s'):\n", PROFILE_NAME);
	else
		printk("exitplan: exits by reason (profile '%s', vCPU %u):\n", PROFILE_NAME, vcpu->id);
	for (unsigned int i = 0; i < EXIT_STATS_SLOTS; i++) {
		uint64_t c = vcpu->stats.count[i];

		if (!c)
			continue;
		total += c;
		if (PROFILE_STATS_LEVEL == STATS_TIMING)
			printk("  %3u %-28s %10llu  %12llu ticks  %8llu ticks/exit\n", i,
			       i == EXIT_STATS_OTHER ? "(above the SDM's range)" :
			       vmx_exit_reason_name(i), (unsigned long long)c,
			       (unsigned long long)vcpu->stats.ticks[i],
			       (unsigned long long)(vcpu->stats.ticks[i] / c));
		else
			printk("  %3u %-28s %10llu\n", i,
			       i == EXIT_STATS_OTHER ? "(above the SDM's range)" :
			       vmx_exit_reason_name(i), (unsigned long long)c);
	}
	printk("      %-28s %10llu\n", "total", (unsigned long long)total);
}

/* How one vCPU ended, in words. */
static void vmx_print_vcpu_end(const struct vcpu *vcpu, int stopped_by)
{
	const struct vcpu_arch_state *a = vcpu->arch;
	enum vcpu_run_state s = vm_vcpu_state(vcpu->vv);

	if (s != VCPU_RUN_STOPPED) {
		/* vmx_wait_for_vcpus() said so: its statistics are as they were. */
		printk("exitplan: vCPU %u: hung, still %s; it never stopped\n", vcpu->id,
		       vm_vcpu_state_name(s));
		return;
	}
	s = vcpu->vv->state_at_stop;
	printk("exitplan: vCPU %u: %s%s when it stopped; ", vcpu->id, vm_vcpu_state_name(s),
	       a->halted_at_stop && s == VCPU_RUN_RUNNING ? " (in HLT)" : "");
	switch (a->stop) {
	case VCPU_STOP_STATUS:
	case VCPU_STOP_SHUTDOWN:
		printk("guest exit status %d\n", a->exit_status);
		break;
	case VCPU_STOP_VM:
		printk("stopped with the machine (vCPU %d stopped it)\n", stopped_by);
		break;
	default:
		printk("stopped: %s\n", a->stop_reason[0] ? a->stop_reason : "no reason recorded");
		break;
	}
}

/*
 * What the scheduler did, when CPUs were shared: per vCPU its turns on
 * its CPU and how they ended; per CPU its VMCS switches and spin yields
 * (each CPU's yields are the sum of its vCPUs').
 */
static void vmx_print_sched(const struct sched *s)
{
	for (unsigned int v = 0; v < s->nr_vcpus; v++) {
		const struct sched_vcpu *sv = &s->vcpu[v];

		printk("exitplan: scheduler: vCPU %u on CPU %u: %llu turns, %llu preemptions, "
		       "%llu blocks, %llu spin yields\n", v, sv->cpu,
		       (unsigned long long)sv->switched_in, (unsigned long long)sv->preemptions,
		       (unsigned long long)sv->blocks, (unsigned long long)sv->spin_yields);
	}
	for (unsigned int c = 0; c < s->nr_cpus; c++) {
		const struct sched_cpu *sc = &s->cpu[c];

		printk("exitplan: scheduler: CPU %u: %llu VMCS switches, %llu PAUSE-loop yields, "
		       "%llu plain-PAUSE yields\n", c, (unsigned long long)sc->switches,
		       (unsigned long long)sc->ple_yields, (unsigned long long)sc->pause_yields);
	}
}

/*
 * Every vCPU's statistics and end, then the machine's: the vCPU that
 * stopped it decides the exit status.  One vCPU prints what it always
 * did (the boot tests match those lines).
 */
static void vmx_print_summary(struct vcpu *const *vcpus, unsigned int n, int stopped_by,
			      uint64_t tsc_overhead)
{
	const struct vcpu *cause = vcpus[stopped_by >= 0 ? stopped_by : 0];
	const struct vcpu_arch_state *a = cause->arch;

	if (PROFILE_STATS_LEVEL == STATS_OFF) {
		printk("exitplan: exit statistics are off in profile '%s'\n", PROFILE_NAME);
	} else {
		for (unsigned int v = 0; v < n; v++)
			vmx_print_exit_table(vcpus[v], n);
		vmx_print_stats_document(vcpus, n, tsc_overhead);
	}
	if (n > 1) {
		for (unsigned int v = 0; v < n; v++)
			vmx_print_vcpu_end(vcpus[v], stopped_by);
	}
	if (n > vmx_sched.nr_cpus)
		vmx_print_sched(&vmx_sched);
	switch (a->stop) {
	case VCPU_STOP_STATUS:
	case VCPU_STOP_SHUTDOWN:
		if (n > 1)
			printk("exitplan: vCPU %u ended the run\n", cause->id);
		printk("exitplan: guest exit status %d\n", a->exit_status);
		break;
	default:
		if (n > 1)
			printk("exitplan: guest stopped: %s (vCPU %u)\n",
			       a->stop_reason[0] ? a->stop_reason : "no reason recorded", cause->id);
		else
			printk("exitplan: guest stopped: %s\n",
			       a->stop_reason[0] ? a->stop_reason : "no reason recorded");
		break;
	}
}

/* --- vmm_run ----------------------------------------------------------- */

/*
 * Does every exit need vmx_handle_exit() around the dispatch?  When the
 * profile times exits, or switches an MSR by hand on this CPU: always
 * for a manual MSR without a gate, and for a gated one when its gate
 * fell back to the choice named "manual".
 */
static bool vmx_exit_needs_hooks(const struct vmx_controls *ctl)
{
	unsigned int gated = 0, manual = PROFILE_MANUAL_MSR_COUNT;
	bool active = false;

	if (PROFILE_STATS_LEVEL >= STATS_TIMING)
		return true;
	for (unsigned int g = 0; g < profile_vmx_setup.n_gates; g++) {
		const struct vmx_gate *gate = &profile_vmx_setup.gates[g];

		for (unsigned int c = 0; c < gate->n_choices; c++) {
			if (!gate->choices[c].manual_msr_switch)
				continue;
			gated++;
			if (ctl->gate_choice[g] == c)
				active = true;
		}
	}
	return active || manual > gated;
}

static void vmx_print_gates(const struct vmx_controls *ctl)
{
	char line[160];

	for (unsigned int g = 0; g < profile_vmx_setup.n_gates; g++) {
		vmx_format_gate_decision(line, sizeof(line), &profile_vmx_setup, ctl, g);
		printk("%s\n", line);
	}
#ifndef PROFILE_GATE_PAUSE
	/*
	 * Without a pause gate (no fallback: one mode, required or none) the
	 * boot still says which PAUSE handling it got: the scheduler's spin
	 * yield depends on it (runtime/sched.h).
	 */
	printk("exitplan: pause: %s (the profile's only choice)\n",
	       (ctl->field[VMX_PROC_BASED2] & SECONDARY_EXEC_PAUSE_LOOP_EXITING) ?
	       "PAUSE-loop exiting" :
	       (ctl->field[VMX_PROC_BASED] & CPU_BASED_PAUSE_EXITING) ?
	       "plain PAUSE exiting" : "no PAUSE exiting");
#endif
}

/*
 * The runtime's own rules on the controls (spec/runtime.yaml): bits it
 * needs whatever the profile says, and bits whose VMCS state or exits it
 * does not provide.  The generator refuses a profile breaking either; this
 * is the check at boot of what was generated, before a VM entry could fail.
 */
static bool vmx_runtime_controls_ok(const struct vmx_controls *ctl)
{
	for (unsigned int i = 0; i < vmx_runtime_required_control_count; i++) {
		const struct vmx_runtime_control *c = &vmx_runtime_required_controls[i];

		if (!(ctl->field[c->field] & c->bit)) {
			printk("exitplan: profile '%s' does not set the '%s' control the runtime needs\n",
			       PROFILE_NAME, c->sdm);
			return false;
		}
	}
	for (unsigned int i = 0; i < vmx_runtime_unsupported_control_count; i++) {
		const struct vmx_runtime_control *c = &vmx_runtime_unsupported_controls[i];

		if (ctl->field[c->field] & c->bit) {
			printk("exitplan: profile '%s' sets the '%s' control, which this runtime does "
			       "not support\n", PROFILE_NAME, c->sdm);
			return false;
		}
	}
	return true;
}

/* --- the vCPUs ------------------------------------------------------------ */

/* The machine: one per boot, its vCPUs one per CPU (vCPU i on CPU i). */
static struct vm vmx_vm;
static struct vcpu *vmx_vcpus[VM_MAX_VCPUS];
/* vCPU 0's multiboot entry and info, for vmx_setup_cpu_vcpus(). */
static uint32_t vmx_boot_entry, vmx_boot_mbi;

struct vcpu *vmx_vcpu(unsigned int id)
{
	return id < VM_MAX_VCPUS ? vmx_vcpus[id] : NULL;
}

/*
 * A vCPU and its exit stack, the VMX_EXIT_STACK_PAGES just below it:
 * HOST_RSP points into the vcpu (vcpu_asm.h), the stub's PUSHes leave
 * RSP at the vcpu, which is then the stack's top -- page aligned, so the
 * stub's calls see the ABI's 16-byte alignment -- and no load is needed
 * to switch stacks or to come back.  A vCPU runs on one CPU at a time,
 * so a stack per vCPU is enough.
 */
static struct vcpu *vmx_alloc_vcpu(unsigned int id, struct vmx_cpu *vc)
{
	uint8_t *stack = vmx_alloc_pages(VMX_EXIT_STACK_PAGES +
					 (sizeof(struct vcpu) + PAGE_SIZE - 1) / PAGE_SIZE);
	struct vcpu *vcpu;

	if (!stack)
		return NULL;
	vcpu = (struct vcpu *)(stack + VMX_EXIT_STACK_PAGES * PAGE_SIZE);
	vcpu->arch = vmx_alloc_pages((sizeof(struct vcpu_arch_state) + PAGE_SIZE - 1) / PAGE_SIZE);
	vcpu->vmcs = vmx_alloc_pages(1);
	if (!vcpu->arch || !vcpu->vmcs)
		return NULL;
	vcpu->id = id;
	vcpu->vm = &vmx_vm;
	vcpu->vv = &vmx_vm.vcpu[id];
	vcpu->vv->arch = vcpu;
	vcpu->controls = &vc->controls;
	vcpu->vmcs_pa = pa_of(vcpu->vmcs);
	vcpu->arch->platform = &vmx_vm.platform;
	/* Its CPU carries other vCPUs: room for the state a switch saves (vcpu_switch.c). */
	vcpu->arch->shared = sched_cpu_vcpus(&vmx_sched, sched_vcpu_cpu(&vmx_sched, id)) > 1;
	if (vcpu->arch->shared && !(vcpu->arch->fpu_area = vmx_alloc_pages(1)))
		return NULL;
	vc->vcpu = vcpu;
	return vcpu;
}

/*
 * On each CPU once: VMXON.  Then, on the vCPU's own CPU, for each vCPU
 * it carries: a VMCS with the controls, this CPU's host state and the
 * VM's EPT; it is left current (the run loop VMPTRLDs the one it runs).
 * The guest state comes later: the multiboot entry for vCPU 0, real mode
 * at the STARTUP vector for the others (vmx_setup_guest_startup()).
 */
static bool vmx_setup_cpu(struct vmx_cpu *vc)
{
	this_cpu()->arch = vc;
	return vmx_enable(vc);
}

static bool vmx_setup_vcpu(struct vcpu *vcpu, struct vmx_cpu *vc)
{
	this_cpu()->vcpu = vcpu;
	vcpu->cpu = this_cpu();
	*(uint32_t *)vcpu->vmcs = (uint32_t)(vc->caps.basic & VMX_BASIC_REVISION_ID_MASK);
	if (!vmclear(vcpu->vmcs_pa) || !vmptrld(vcpu->vmcs_pa)) {
		printk("exitplan: CPU %u: VMCLEAR/VMPTRLD failed\n", this_cpu_id());
		vmxoff();
		return false;
	}
	vcpu->exit_hooks = vmx_exit_needs_hooks(&vc->controls);
	if (!vmx_setup_controls(vcpu, vc) || !vmx_setup_host_state(vc, vcpu) ||
	    !vmcs_write_checked(EPT_POINTER, vmx_vm_eptp)) {
		vmxoff();
		return false;
	}
	vcpu->arch->eptp = vmx_vm_eptp;
	vcpu->arch->ept = vmx_vm_ept;
	vcpu_setup_msrs(vcpu);
	vmx_flush_tlbs(vcpu, vc);
	return true;
}

/*
 * The state after INIT and STARTUP (SDM Vol. 3A 9.1.1, Table 9-1): real
 * mode at CS = vector << 8, IP 0, segments of 64 KiB, IF and paging off,
 * EFER 0, EDX the processor signature.  It runs as an unrestricted
 * guest.  CR0.CD and NW, which a reset sets and INIT keeps, start clear:
 * the guest's caching is EPT's write-back anyway.
 *
 * Bochs 2.7 bug (PLATFORM.md): a vCPU left in the VMX wait-for-SIPI
 * activity state comes out of its SIPI exit with interruptibility bit 2
 * set, and the next entry fails.  That state is never used here: the
 * vCPU waits in root operation (vmx_wait_for_startup()) and enters
 * active, with interruptibility 0.
 */
static bool vmx_setup_guest_startup(struct vcpu *vcpu, uint8_t vector)
{
	struct vcpu_arch_state *a = vcpu->arch;
	const struct vmx_controls *ctl = vcpu->controls;
	const uint32_t code_ar = VMX_AR_TYPE_CODE_XR_ACCESSED | VMX_AR_S | VMX_AR_P;
	const uint32_t data_ar = VMX_AR_TYPE_DATA_RW_ACCESSED | VMX_AR_S | VMX_AR_P;
	const uint64_t cr0_guest = X86_CR0_ET;
	uint64_t cr0 = (cr0_guest | a->cr0_fixed0) & a->cr0_fixed1;
	uint64_t cr4 = (a->cr4_fixed0 | X86_CR4_VMXE) & a->cr4_fixed1;
	uint32_t eax, ebx, ecx, edx;

	cpuid_count(1, 0, &eax, &ebx, &ecx, &edx);
	vcpu->regs = (struct guest_regs){ .rdx = eax };
	a->irr[0] = a->irr[1] = a->irr[2] = a->irr[3] = 0;
	a->irq_pending = false;
	a->xapic_icr_high = 0;
	a->halted_at_stop = false;
	VMCS_WRITES(w,
		{ GUEST_CR0, cr0 }, { CR0_READ_SHADOW, cr0_guest },
		{ GUEST_CR3, 0 }, { GUEST_CR4, cr4 }, { CR4_READ_SHADOW, 0 },
		{ GUEST_DR7, X86_DR7_INIT },
		{ GUEST_RSP, 0 }, { GUEST_RIP, 0 }, { GUEST_RFLAGS, X86_RFLAGS_FIXED },
		{ GUEST_CS_SELECTOR, (uint64_t)vector << 8 }, { GUEST_CS_BASE, (uint64_t)vector << 12 },
		{ GUEST_CS_LIMIT, 0xffff }, { GUEST_CS_AR_BYTES, code_ar },
		{ GUEST_SS_SELECTOR, 0 }, { GUEST_SS_BASE, 0 }, { GUEST_SS_LIMIT, 0xffff },
		{ GUEST_SS_AR_BYTES, data_ar },
		{ GUEST_DS_SELECTOR, 0 }, { GUEST_DS_BASE, 0 }, { GUEST_DS_LIMIT, 0xffff },
		{ GUEST_DS_AR_BYTES, data_ar },
		{ GUEST_ES_SELECTOR, 0 }, { GUEST_ES_BASE, 0 }, { GUEST_ES_LIMIT, 0xffff },
		{ GUEST_ES_AR_BYTES, data_ar },
		{ GUEST_FS_SELECTOR, 0 }, { GUEST_FS_BASE, 0 }, { GUEST_FS_LIMIT, 0xffff },
		{ GUEST_FS_AR_BYTES, data_ar },
		{ GUEST_GS_SELECTOR, 0 }, { GUEST_GS_BASE, 0 }, { GUEST_GS_LIMIT, 0xffff },
		{ GUEST_GS_AR_BYTES, data_ar },
		{ GUEST_TR_SELECTOR, 0 }, { GUEST_TR_BASE, 0 }, { GUEST_TR_LIMIT, 0xffff },
		{ GUEST_TR_AR_BYTES, VMX_AR_P | VMX_AR_TYPE_TSS_BUSY },
		{ GUEST_LDTR_SELECTOR, 0 }, { GUEST_LDTR_BASE, 0 }, { GUEST_LDTR_LIMIT, 0xffff },
		{ GUEST_LDTR_AR_BYTES, VMX_AR_UNUSABLE },
		{ GUEST_GDTR_BASE, 0 }, { GUEST_GDTR_LIMIT, 0xffff },
		{ GUEST_IDTR_BASE, 0 }, { GUEST_IDTR_LIMIT, 0xffff },
		{ GUEST_SYSENTER_CS, 0 }, { GUEST_SYSENTER_ESP, 0 }, { GUEST_SYSENTER_EIP, 0 },
		{ GUEST_IA32_DEBUGCTL, 0 },
		{ GUEST_INTERRUPTIBILITY_INFO, 0 },
		{ GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE },
		{ GUEST_PENDING_DBG_EXCEPTIONS, 0 },
		{ VM_ENTRY_INTR_INFO_FIELD, 0 },
	);
	if (!vmcs_write_all(w, ARRAY_SIZE(w)))
		return false;
	/* Out of IA-32e mode, no interrupt window open (vmx_ctls.h). */
	if (!vcpu_ctls_init(vcpu, VMX_ENTRY, ctl->field[VMX_ENTRY]) ||
	    !vcpu_ctls_init(vcpu, VMX_PROC_BASED, ctl->field[VMX_PROC_BASED]))
		return false;
	if ((ctl->field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_EFER) &&
	    !vmcs_write_checked(GUEST_IA32_EFER, 0))
		return false;
	for (unsigned int i = 0; i < PROFILE_MANUAL_MSR_SLOTS; i++)
		vcpu->msrs.guest[i] = 0;
	vcpu_setup_msrs(vcpu);
	return true;
}

/*
 * Wait in root operation, interrupts off, until @ready(vcpu) or the
 * machine stops: halted, woken by vmm_kick()'s NMI (ap_park.c drops it),
 * or polling where halting is not safe.  Returns false when the machine
 * stops first.
 */
static bool vmx_wait_in_root(struct vcpu *vcpu, bool (*ready)(struct vcpu *))
{
	bool ok;

	WRITE_ONCE(vcpu->arch->waiting_in_root, true);
	/* Pairs with vmm_kick(): the event is posted before it reads the flag. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (;;) {
		if (vm_stopping(vcpu->vm)) {
			ok = false;
			break;
		}
		if (ready(vcpu)) {
			ok = true;
			break;
		}
		asm volatile("cli; hlt" : : : "memory");
	}
	WRITE_ONCE(vcpu->arch->waiting_in_root, false);
	return ok;
}

static bool vmx_startup_posted(struct vcpu *vcpu)
{
	return READ_ONCE(vcpu->vv->sipi);
}

/*
 * Leave the guest on this CPU for a new VMLAUNCH: VMCLEAR keeps the
 * VMCS's content and makes its launch state clear (SDM Vol. 3C 25.11.3).
 */
static void vmx_relaunchable(struct vcpu *vcpu)
{
	vmclear(vcpu->vmcs_pa);
	vmptrld(vcpu->vmcs_pa);
	vcpu->launched = false;
}

/* Check the machine can still make progress; if not, stop it (as vCPU @vcpu). */
static void vmx_check_progress(struct vcpu *vcpu)
{
	if (!vm_stopping(vcpu->vm) && !vm_any_vcpu_runnable(vcpu->vm)) {
		vcpu_stop(vcpu, "no vCPU is left running: each waits for a STARTUP IPI or halted "
			  "with interrupts off");
		vm_stop(vcpu->vm, vcpu->id);
	}
}

static bool vmx_wakeup_posted(struct vcpu *vcpu)
{
	return vm_vcpu_wakeup_pending(vcpu->vv);
}

/*
 * HLT with interrupts off (SDM Vol. 3A 9.x: only NMI, SMI, INIT or a
 * reset end it).  Bochs 2.7 bug (PLATFORM.md): a guest halted with IF=0
 * is never woken in VMX non-root operation, not even by the preemption
 * timer's interrupt that would come after it; so the halt is done here,
 * in root operation, where vmm_kick()'s NMI wakes the CPU.  With one
 * vCPU, or none left running, nothing can come: the vCPU is stopped, as
 * before SMP.
 */
enum vmx_exit_action vmx_halt_interrupts_off(struct vcpu *vcpu)
{
	uint64_t rip = vmcs_read(GUEST_RIP);

	if (!vm_vcpu_set_halted(vcpu->vv, true))
		return vmx_take_events(vcpu);
	if (!vm_any_vcpu_runnable(vcpu->vm) && !vm_vcpu_wakeup_pending(vcpu->vv)) {
		vm_vcpu_set_halted(vcpu->vv, false);
		return vcpu_stop(vcpu, "HLT with interrupts disabled at RIP %#llx (the guest halted "
				 "for good)", (unsigned long long)rip);
	}
	vmx_skip_instruction();
	/* Sharing its CPU, it gives it up instead of halting it (vcpu_switch.c). */
	if (vcpu->arch->shared)
		return vmx_sched_block(vcpu, VCPU_BLOCK_HLT_IRQS_OFF);
	if (!vmx_wait_in_root(vcpu, vmx_wakeup_posted))
		vcpu->arch->halted_at_stop = true;	/* the machine stopped meanwhile */
	vm_vcpu_set_halted(vcpu->vv, false);
	return vmx_take_events(vcpu);
}

/* What a vCPU's turn on its CPU ended with. */
enum vmx_turn {
	VMX_TURN_SWITCH,	/* it gave the CPU up (blocked, yielded, preempted): it lives on */
	VMX_TURN_GONE,		/* it stopped for good */
};

/*
 * A shared vCPU woken from a block (its VMCS current): true when what it
 * waited for came, false when it blocked again (a wake for an event that
 * does not end its wait, e.g. a fixed interrupt while halted with IF=0).
 */
static bool vmx_vcpu_unblock(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	enum vcpu_block_reason why = a->block;

	if (vm_stopping(vcpu->vm))
		return true;
	switch (why) {
	case VCPU_BLOCK_HLT_IRQS_OFF:
		if (!vm_vcpu_wakeup_pending(vcpu->vv))
			break;
		vm_vcpu_set_halted(vcpu->vv, false);
		a->block = VCPU_BLOCK_NONE;
		return true;
	case VCPU_BLOCK_HLT:
		/* The 8254's IR0 is vCPU 0's (legacy_irq.c); its deadline may be what woke it. */
		if (a->pit_deadline && rdtsc() >= a->pit_deadline)
			vmx_legacy_irq_update(vcpu);
		if (!vm_vcpu_events_pending(vcpu->vv) && !vmx_vlapic_has_interrupt(vcpu)) {
			vmx_vlapic_sync(vcpu);		/* its timer's next deadline, for the siblings */
			break;
		}
		a->block = VCPU_BLOCK_NONE;
		return true;
	default:
		a->block = VCPU_BLOCK_NONE;
		return true;
	}
	vmx_sched_block(vcpu, why);
	return false;
}

/*
 * One turn of a vCPU on its CPU, its VMCS current: wait for STARTUP (not
 * vCPU 0, which starts at the multiboot entry), run the guest until it
 * stops, takes an INIT (back to the wait) or -- sharing its CPU -- gives
 * the CPU up; and stop the machine when it stops: the first vCPU to stop
 * decides the machine's end, the others are kicked out.  A vCPU alone on
 * its CPU has one turn, its whole life, as before there was a scheduler:
 * it waits for STARTUP and halts with interrupts off in root operation.
 */
static enum vmx_turn vmx_vcpu_turn(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	for (;;) {
		int r;

		if (a->shared && vm_stopping(vcpu->vm))
			break;
		if (vm_vcpu_state(vcpu->vv) == VCPU_RUN_WAIT_FOR_SIPI) {
			uint8_t vector;

			vmx_check_progress(vcpu);
			if (a->shared) {
				struct vm_events ev;

				/*
				 * What was posted before the INIT that put it here
				 * (the INIT itself among it) is not for the next run,
				 * and pending it would wake the block below at once.
				 */
				vm_vcpu_take_events(vcpu->vv, &ev);
				if (!vm_vcpu_take_startup(vcpu->vv, &vector)) {
					if (vm_stopping(vcpu->vm))
						break;
					vmx_sched_block(vcpu, VCPU_BLOCK_SIPI);
					return VMX_TURN_SWITCH;
				}
				a->block = VCPU_BLOCK_NONE;
			} else if (!vmx_wait_in_root(vcpu, vmx_startup_posted) ||
				   !vm_vcpu_take_startup(vcpu->vv, &vector)) {
				break;
			}
			if (!vmx_setup_guest_startup(vcpu, vector)) {
				vcpu_stop(vcpu, "cannot set up the STARTUP state (vector %#x)", vector);
				break;
			}
		} else if (a->shared && a->block != VCPU_BLOCK_NONE && !vmx_vcpu_unblock(vcpu)) {
			return VMX_TURN_SWITCH;
		}
		if (a->shared) {
			/* What was posted while it was switched out, then its virtual APIC's state. */
			if (vmx_take_events(vcpu) != VMX_EXIT_RESUME) {
				if (a->stop == VCPU_RUNNING &&
				    vm_vcpu_state(vcpu->vv) == VCPU_RUN_WAIT_FOR_SIPI) {
					vmx_relaunchable(vcpu);		/* INIT */
					continue;
				}
				break;
			}
			vmx_vlapic_sync(vcpu);
			vmx_sched_switch_in(vcpu);
			if (vcpu->nmi_pending)
				vmx_deliver_pending_nmi(vcpu);
		}
		profile_msrs_before_entry(vcpu);
		r = vmx_enter_guest(vcpu, vcpu->launched);
		if (r == VMX_ENTER_SWITCHED) {
			vcpu->launched = true;
			vmx_sched_switch_out(vcpu);
			return VMX_TURN_SWITCH;
		}
		if (r == VMX_ENTER_VMFAIL) {
			const char *insn = vcpu->launched ? "VMRESUME" : "VMLAUNCH";

			/* Nothing ran: give the host its MSRs back, then say why. */
			profile_msrs_on_exit(vcpu);
			printk("exitplan: vCPU %u: %s failed: VM-instruction error %u\n",
			       vcpu->id, insn, vmcs_read32(VM_INSTRUCTION_ERROR));
			vcpu_stop(vcpu, "%s failed: VM-instruction error %u", insn,
				  vmcs_read32(VM_INSTRUCTION_ERROR));
			break;
		}
		vcpu->launched = true;
		if (vmcs_read32(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
			a->halted_at_stop = true;
		vmx_relaunchable(vcpu);
		/* An INIT took it out (apic.c): back to wait-for-SIPI. */
		if (a->stop == VCPU_RUNNING && vm_vcpu_state(vcpu->vv) == VCPU_RUN_WAIT_FOR_SIPI)
			continue;
		if (a->stop == VCPU_RUNNING)
			vcpu_stop(vcpu, "left the guest without a reason");
		break;
	}
	if (a->stop == VCPU_RUNNING)
		a->stop = VCPU_STOP_VM;		/* the machine stopped while it waited */
	if (a->stop != VCPU_STOP_VM)
		vm_stop(vcpu->vm, vcpu->id);
	if (a->block == VCPU_BLOCK_HLT_IRQS_OFF || a->block == VCPU_BLOCK_HLT)
		a->halted_at_stop = true;
	vm_vcpu_set_stopped(vcpu->vv, a->halted_at_stop);
	sched_gone(&vmx_sched, vcpu->cpu->id);
	return VMX_TURN_GONE;
}

/* Every vCPU of @cpu is gone. */
static bool vmx_cpu_done(unsigned int cpu)
{
	for (unsigned int id = cpu; id < vmx_sched.nr_vcpus; id += vmx_sched.nr_cpus)
		if (sched_state(&vmx_sched, id) != SCHED_GONE)
			return false;
	return true;
}

/*
 * A CPU's life: run the vCPU the scheduler picks, one turn at a time,
 * until all of its vCPUs are gone.  The VMCS of the one picked is made
 * current (VMPTRLD) when it is another than the last one; with none
 * runnable the CPU waits in root operation, polling for a wake-up (a
 * vCPU posted to, or a blocked one's timer coming due: no host timer
 * is needed for it).
 */
static void vmx_cpu_run(unsigned int cpu)
{
	for (;;) {
		bool switched;
		int id = sched_pick_next(&vmx_sched, cpu, &switched);
		struct vcpu *vcpu;

		if (id == SCHED_NONE) {
			if (vmx_cpu_done(cpu))
				return;
			while (!sched_has_queued(&vmx_sched, cpu) && !vmx_sched_wake_due(cpu, NULL))
				cpu_relax();
			continue;
		}
		vcpu = vmx_vcpus[id];
		if (switched && !vmptrld(vcpu->vmcs_pa))
			panic("CPU %u: VMPTRLD of vCPU %u's VMCS failed", cpu, id);
		this_cpu()->vcpu = vcpu;
		vmx_vcpu_turn(vcpu);
	}
}

void vmm_kick(unsigned int vcpu_id)
{
	struct vcpu *target = vcpu_id < VM_MAX_VCPUS ? vmx_vcpus[vcpu_id] : NULL;
	unsigned int cpu;

	if (!target)
		return;
	/*
	 * The CPU that holds the vCPU (vmx_setup_vcpu() set it), never "CPU
	 * vcpu_id": with a scheduler the two differ (runtime/sched.h).
	 */
	cpu = target->cpu ? target->cpu->id : vcpu_id;
	if (target->arch->shared) {
		/*
		 * Blocked: runnable now.  Queued: it takes its events when it
		 * is switched in.  Running there: the kick makes it take them
		 * now (if it is being switched out meanwhile, another vCPU
		 * gets a spurious kick, which it ignores).
		 */
		sched_wake(&vmx_sched, vcpu_id);
		if (cpu != this_cpu_id() && sched_current(&vmx_sched, cpu) == (int)vcpu_id)
			vmx_kick_ipi(cpu);
		return;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (READ_ONCE(target->arch->waiting_in_root))
		vmx_kick_nmi(cpu);
	else
		vmx_kick_ipi(cpu);
}

/* What an AP reports back to the boot CPU before it runs its vCPUs. */
enum vmx_ap_state {
	VMX_AP_PENDING = 0,
	VMX_AP_READY,
	VMX_AP_FAILED,
};

struct vmx_ap_start {
	unsigned int cpu;
	struct vmx_cpu *vc;
	uint32_t state;		/* enum vmx_ap_state */
};

/* VMXON on this CPU and a VMCS for each of its vCPUs (allocated by the boot CPU). */
static bool vmx_setup_cpu_vcpus(unsigned int cpu, struct vmx_cpu *vc)
{
	if (!vmx_setup_cpu(vc))
		return false;
	for (unsigned int id = cpu; id < vmx_sched.nr_vcpus; id += vmx_sched.nr_cpus) {
		if (!vmx_setup_vcpu(vmx_vcpus[id], vc))
			return false;
		/* vCPU 0's entry state, with its VMCS still current. */
		if (id == 0 && !vmx_setup_guest_state(vmx_vcpus[0], vc, vmx_boot_entry, vmx_boot_mbi))
			return false;
	}
	return true;
}

/* Give up VMX on this CPU: no VMCS of it is left active. */
static void vmx_cpu_off(unsigned int cpu)
{
	for (unsigned int id = cpu; id < vmx_sched.nr_vcpus; id += vmx_sched.nr_cpus)
		vmclear(vmx_vcpus[id]->vmcs_pa);
}

/* Runs on the AP through smp_call_async(), interrupts off; never returns. */
static void vmx_ap_main(void *arg)
{
	struct vmx_ap_start *st = arg;

	if (!vmx_feature_control_ok() || !vmx_setup_cpu_vcpus(st->cpu, st->vc)) {
		__atomic_store_n(&st->state, VMX_AP_FAILED, __ATOMIC_RELEASE);
		vmx_park_this_cpu();
	}
	__atomic_store_n(&st->state, VMX_AP_READY, __ATOMIC_RELEASE);
	vmx_cpu_run(st->cpu);
	/* Stopped: stay in VMX root operation (INIT blocked), halted. */
	vmx_cpu_off(st->cpu);
	vmx_park_this_cpu();
}

/* How long the boot CPU waits for an AP's vCPUs to be ready, or to stop. */
#define VMX_AP_WAIT_US		200000
#define VMX_STOP_WAIT_US	2000000
#define VMX_POLL_US		100

/* The vCPUs and the per-CPU VT-x state of every CPU, allocated here on the boot CPU. */
static bool vmx_alloc_vcpus(struct vmx_cpu **vcs, unsigned int nr_cpus, unsigned int nr_vcpus)
{
	for (unsigned int cpu = 1; cpu < nr_cpus; cpu++) {
		vcs[cpu] = vmx_alloc_pages((sizeof(*vcs[cpu]) + PAGE_SIZE - 1) / PAGE_SIZE);
		if (!vcs[cpu])
			return false;
		vcs[cpu]->caps = vcs[0]->caps;
		vcs[cpu]->controls = vcs[0]->controls;
	}
	for (unsigned int id = 0; id < nr_vcpus; id++) {
		vmx_vcpus[id] = vmx_alloc_vcpu(id, vcs[sched_vcpu_cpu(&vmx_sched, id)]);
		if (!vmx_vcpus[id]) {
			printk("exitplan: vCPU %u: out of memory\n", id);
			return false;
		}
	}
	return true;
}

static bool vmx_start_aps(struct vmx_cpu **vcs, unsigned int nr_cpus)
{
	static struct vmx_ap_start start[HV_MAX_CPUS];
	bool ok = true;

	for (unsigned int cpu = 1; cpu < nr_cpus; cpu++) {
		unsigned int waited = 0;
		uint32_t st;

		start[cpu] = (struct vmx_ap_start){ .cpu = cpu, .vc = vcs[cpu] };
		if (!smp_call_async(cpu, vmx_ap_main, &start[cpu])) {
			printk("exitplan: CPU %u is busy: no vCPU there\n", cpu);
			return false;
		}
		while ((st = __atomic_load_n(&start[cpu].state, __ATOMIC_ACQUIRE)) == VMX_AP_PENDING &&
		       waited < VMX_AP_WAIT_US) {
			pit_delay_us(VMX_POLL_US);
			waited += VMX_POLL_US;
		}
		if (st != VMX_AP_READY) {
			printk("exitplan: CPU %u: %s: no vCPU there\n", cpu,
			       st == VMX_AP_FAILED ? "VMX setup failed" : "did not answer");
			ok = false;
		}
	}
	return ok;
}

/*
 * After vCPU 0 stopped: wait for the others, which the stop kicked out
 * of their guests.  One that does not come is reported as hung, with the
 * state it is in; its statistics are printed as they are.
 */
static void vmx_wait_for_vcpus(unsigned int n)
{
	for (unsigned int id = 1; id < n; id++) {
		struct vcpu *v = vmx_vcpus[id];
		unsigned int waited = 0;
		bool init_sent = false;

		while (vm_vcpu_state(&vmx_vm.vcpu[id]) != VCPU_RUN_STOPPED &&
		       waited < VMX_STOP_WAIT_US) {
			/*
			 * Half the wait without an answer, in its guest alone on
			 * its CPU: the kick did not reach it (interrupts off, no
			 * VMX-preemption timer to end its run).  INIT does.
			 */
			if (!init_sent && waited >= VMX_STOP_WAIT_US / 2 && v && !v->arch->shared &&
			    v->cpu && vm_vcpu_state(&vmx_vm.vcpu[id]) == VCPU_RUN_RUNNING) {
				printk("exitplan: vCPU %u did not stop in %u ms: INIT to CPU %u\n", id,
				       VMX_STOP_WAIT_US / 2000, v->cpu->id);
				vmx_kick_init(v->cpu->id);
				init_sent = true;
			}
			pit_delay_us(VMX_POLL_US);
			waited += VMX_POLL_US;
		}
		if (vm_vcpu_state(&vmx_vm.vcpu[id]) != VCPU_RUN_STOPPED)
			printk("exitplan: vCPU %u is hung: still %s %u ms after the machine stopped\n",
			       id, vm_vcpu_state_name(vm_vcpu_state(&vmx_vm.vcpu[id])),
			       VMX_STOP_WAIT_US / 1000);
	}
}

/*
 * How many vCPUs: the hypervisor's `vcpus=N` option (1 .. VM_MAX_VCPUS,
 * at least the CPUs: every CPU runs one), else one per CPU.  More than
 * the CPUs needs a virtual local APIC per vCPU (a physical one cannot be
 * shared): refused under any other `apic:` model.
 */
static bool vmx_vcpu_count(const struct boot_info *bi, unsigned int ncpus, unsigned int *n)
{
	char v[8];
	unsigned int want = 0;

	*n = ncpus;
	if (!cmdline_option(bi->cmdline, "vcpus", v, sizeof(v)))
		return true;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || want > VM_MAX_VCPUS) {
			want = 0;
			break;
		}
		want = want * 10 + (unsigned int)(*p - '0');
	}
	if (!want || want > VM_MAX_VCPUS) {
		printk("exitplan: vcpus=%s: not a vCPU count in 1..%u: refusing\n", v, VM_MAX_VCPUS);
		return false;
	}
	if (want < ncpus) {
		printk("exitplan: vcpus=%u is fewer than the %u CPUs, each of which runs a vCPU: "
		       "refusing\n", want, ncpus);
		return false;
	}
	if (want > ncpus && !PROFILE_APIC_VIRTUAL) {
		printk("exitplan: vcpus=%u on %u CPU%s needs `apic: virtual` (vCPUs that share a CPU "
		       "cannot own its local APIC); profile '%s' has apic: %s: refusing\n", want, ncpus,
		       ncpus == 1 ? "" : "s", PROFILE_NAME,
		       PROFILE_APIC_INTERCEPT_ICR ? "intercept-icr" : "passthrough");
		return false;
	}
	*n = want;
	return true;
}

int vmm_run(const struct boot_info *bi)
{
	struct vmx_cpu *vc;
	struct vcpu *vcpu;
	struct guest_start start;
	uint32_t apic_ids[VM_MAX_VCPUS];
	uint64_t tsc_overhead = 0, tsc_hz;
	uint16_t smi_cmd;
	uint8_t acpi_enable, acpi_disable;
	char line[160];
	unsigned int n, ncpus;
	struct vcpu *cause;
	struct vmx_cpu *vcs[HV_MAX_CPUS];

	vc = vmx_alloc_pages((sizeof(*vc) + PAGE_SIZE - 1) / PAGE_SIZE);
	if (!vc)
		return VMM_ERROR;
	vmx_read_caps(&vc->caps);
	if (!(vc->caps.cpuid_1_ecx & CPUID_1_ECX_VMX)) {
		printk("exitplan: VT-x not available: CPUID.1:ECX.VMX is 0 (this CPU lacks vmx)\n");
		return VMM_REFUSED;
	}
	if (!vmx_feature_control_ok()) {
		printk("exitplan: VT-x not available: IA32_FEATURE_CONTROL is locked without "
			  "VMXON outside SMX (this CPU lacks vmx)\n");
		return VMM_REFUSED;
	}
	printk("exitplan: VMX: revision %#llx, profile '%s' (%s)\n",
		  (unsigned long long)(vc->caps.basic & VMX_BASIC_REVISION_ID_MASK),
		  PROFILE_NAME, PROFILE_SOURCE);

	vmx_compute_controls(&profile_vmx_setup, &vc->caps, &vc->controls);
	if (vc->controls.status != VMX_CONTROLS_OK) {
		vmx_format_refusal(line, sizeof(line), &profile_vmx_setup, &vc->controls);
		printk("exitplan: %s\n", line);
		return VMM_REFUSED;
	}
	vmx_print_gates(&vc->controls);
	if (PROFILE_APIC_VIRTUAL) {
		/* The generator requires the timer; a CPU without it fails the controls above. */
		if (!(vc->controls.field[VMX_PIN_BASED] & PIN_BASED_VMX_PREEMPTION_TIMER) ||
		    !(vc->controls.field[VMX_EXIT] & VM_EXIT_SAVE_VMX_PREEMPTION_TIMER)) {
			printk("exitplan: apic: virtual needs the VMX-preemption timer, saved across "
			       "exits: refusing\n");
			return VMM_REFUSED;
		}
		printk("gate apic: virtual: a virtual local APIC per vCPU; x2APIC MSRs and the xAPIC "
		       "page at %#llx emulated, its timer on the VMX-preemption timer "
		       "(preemption_timer)\n",
		       (unsigned long long)(rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR_MASK));
	}
	if (!vmx_runtime_controls_ok(&vc->controls))
		return VMM_REFUSED;

	/*
	 * Every CPU runs a vCPU, or several (vCPU i on CPU i mod p); a CPU
	 * the MADT lists that did not come up would be outside VMX, the
	 * guest's for a physical INIT-SIPI: refuse.
	 */
	ncpus = smp_start_aps();
	if (smp_cpus_left_out()) {
		printk("exitplan: %u CPU%s not online: refusing to run a guest beside them\n",
		       smp_cpus_left_out(), smp_cpus_left_out() == 1 ? "" : "s");
		return VMM_ERROR;
	}
	if (ncpus > VM_MAX_VCPUS)
		ncpus = VM_MAX_VCPUS;
	if (!vmx_vcpu_count(bi, ncpus, &n))
		return VMM_REFUSED;
	if (!sched_init(&vmx_sched, ncpus, n, PROFILE_SCHED_PAUSE_YIELD_AFTER))
		return VMM_ERROR;
	/*
	 * One vCPU per CPU: the guest's APIC IDs are the CPUs'.  More: each
	 * vCPU's virtual APIC has its id as APIC ID, and the guest's MADT
	 * is rewritten to list them (runtime/acpi.c).
	 */
	for (unsigned int i = 0; i < n; i++)
		apic_ids[i] = n > ncpus ? i : percpu_area(i)->apic_id;
	if (n > ncpus && !acpi_guest_madt_set_cpus(apic_ids, n, bi->mmap, bi->mmap_count)) {
		printk("exitplan: cannot list %u vCPUs in the guest's MADT: refusing\n", n);
		return VMM_ERROR;
	}
	vm_init(&vmx_vm, n, apic_ids);
	vmx_apic_init(rdmsr(MSR_IA32_APIC_BASE));
	vmx_ap_park_init(ncpus);

	vcs[0] = vc;
	if (!vmx_alloc_vcpus(vcs, ncpus, n))
		return VMM_ERROR;
	vcpu = vmx_vcpus[0];
	/* Load the guest before VMXON: a bad module is reported without VMX on. */
	if (!guest_load(bi, &start))
		return VMM_ERROR;
	if (!vmx_build_vm_ept(vc, bi))
		return VMM_ERROR;
	tsc_hz = tsc_measure_hz();
	platform_init(&vmx_vm.platform, start.ram_bytes, n, tsc_hz);
	if (!platform_rtc_from_host(&vmx_vm.platform))
		printk("exitplan: the host's RTC did not answer: the guest's starts at 2000-01-01\n");
	cpuid_set_tsc_hz(tsc_hz);
	if (acpi_fadt_smi_cmd(&smi_cmd, &acpi_enable, &acpi_disable))
		platform_set_acpi_smi(&vmx_vm.platform, smi_cmd, acpi_enable, acpi_disable);
	printk("exitplan: TSC %llu Hz: CPUID 15H/16H say so\n", (unsigned long long)tsc_hz);
	vmx_boot_entry = start.entry;
	vmx_boot_mbi = start.mbi;
	if (!vmx_setup_cpu_vcpus(0, vc)) {
		vmxoff();
		return VMM_ERROR;
	}
	if (start.boot_params) {
		/*
		 * The Linux 32-bit boot protocol (boot.rst): the same flat
		 * protected mode, ESI = boot_params, EBP, EDI and EBX zero.
		 */
		vcpu->regs.rax = 0;
		vcpu->regs.rbx = 0;
		vcpu->regs.rsi = start.boot_params;
	}
	strlcpy(vcpu->arch->guest_name, start.name, sizeof(vcpu->arch->guest_name));
	vcpu->arch->guest_args = start.args;
	/* vCPU 0 runs from the multiboot entry; the others wait for STARTUP. */
	vmx_vm.vcpu[0].state = VCPU_RUN_RUNNING;
	/*
	 * In the scheduler: vCPU 0 runnable; a vCPU alone on its CPU too (it
	 * waits for STARTUP in its one turn); one that shares a CPU blocked
	 * until its STARTUP is posted.
	 */
	for (unsigned int id = 0; id < n; id++) {
		if (id == 0 || !vmx_vcpus[id]->arch->shared)
			sched_wake(&vmx_sched, id);
		else
			vmx_vcpus[id]->arch->block = VCPU_BLOCK_SIPI;
	}
	if (ncpus > 1 && !vmx_start_aps(vcs, ncpus)) {
		printk("exitplan: not every other CPU runs a vCPU: refusing to run a guest\n");
		vmxoff();
		return VMM_ERROR;
	}
	if (n > 1)
		printk("exitplan: %u vCPUs: vCPU 0 at the multiboot entry, %u waiting for STARTUP "
		       "(%s)\n", n, n - 1, n == ncpus ? "one per CPU" : "scheduled");
	if (n > ncpus)
		printk("exitplan: scheduler: %u vCPUs on %u CPU%s (vCPU i on CPU i mod %u), slice %u "
		       "ticks, yield after %u plain PAUSE exits\n", n, ncpus, ncpus == 1 ? "" : "s", ncpus,
		       (unsigned int)PROFILE_SCHED_SLICE_TICKS,
		       (unsigned int)PROFILE_SCHED_PAUSE_YIELD_AFTER);
	if (PROFILE_STATS_LEVEL >= STATS_TIMING) {
		/* What reading the TSC twice adds to every timed exit. */
		uint64_t t = rdtsc();

		tsc_overhead = rdtsc() - t;
	}
	printk("exitplan: launching the guest at %#x (multiboot info at %#x)\n",
		  start.entry, start.mbi);
	vmx_cpu_run(0);
	vmx_wait_for_vcpus(n);

	cause = vmx_vcpus[vmx_vm.stopped_by >= 0 ? vmx_vm.stopped_by : 0];
	vmx_print_summary(vmx_vcpus, n, vmx_vm.stopped_by, tsc_overhead);
	vmx_cpu_off(0);
	vmxoff();
	write_cr4(read_cr4() & ~(uint64_t)X86_CR4_VMXE);
	return cause->arch->stop == VCPU_STOP_FAULT ? VMM_GUEST_FAULT : cause->arch->exit_status;
}
