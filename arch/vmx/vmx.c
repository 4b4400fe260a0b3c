// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bringing up VMX on a CPU and setting up a vCPU's VMCS: VMXON, the
 * controls, host state, guest state for a multiboot entry or a STARTUP,
 * the VM's EPT and VPID, the MSR and I/O bitmaps.  The capability MSRs
 * and the boot's gate lines are in vmx_caps.c, the exit summary in
 * vmx_report.c, the run loop and vmm_run() in vmx_run.c.
 */

#include "runtime/host/spinlock.h"
#include "lib/multiboot.h"
#include "arch/vmx/vcpu_asm.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/profile_values.h"
#include "arch/vmx/msr.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/vcpu_switch.h"
#include "arch/vmx/vmx_setup.h"
#include "arch/vmx/eptp.h"
#include "arch/vmx/vmx_ctls.h"
#include "arch/vmx/vmcs_init.h"
#include "arch/vmx/mmio.h"
#include "vmx_controls_bits.h"
#include "runtime/host/console.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/percpu.h"

#define VMX_EXIT_STACK_PAGES	4

/*
 * Selectors the guest starts with.  Multiboot leaves their values
 * undefined (the guest must load its own GDT before reloading a segment);
 * these are the ones GRUB happens to use.
 */
#define GUEST_BOOT_CS_SELECTOR	0x10
#define GUEST_BOOT_DS_SELECTOR	0x18

/* --- memory ------------------------------------------------------------ */

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
	if (!region) {
		printk("exitplan: CPU %u: out of memory for the VMXON region\n", this_cpu_id());
		return false;
	}
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

/* A control field through its cache (vmx_ctls.h); a failure reported (vmcs_init.h). */
static bool ctls_init(struct vcpu *vcpu, enum vmx_ctl_field f, uint32_t value)
{
	return vcpu_ctls_init(vcpu, f, value) || vmcs_setup_failed(vcpu->id, vmx_ctl_encoding(f));
}

static bool vmx_setup_msr_lists(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	unsigned int n = profile_msr_load_list_count;

	if (n) {
		a->entry_load = vmcs_setup_alloc(vcpu->id, "VM-entry MSR-load area", 1);
		a->exit_load = vmcs_setup_alloc(vcpu->id, "VM-exit MSR-load area", 1);
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
	return vmcs_setup_write_all(vcpu->id, w, ARRAY_SIZE(w));
}

static bool vmx_setup_controls(struct vcpu *vcpu, struct vmx_cpu *vc)
{
	struct vcpu_arch_state *a = vcpu->arch;
	const struct vmx_controls *ctl = &vc->controls;
	const struct vmx_caps *caps = &vc->caps;
	uint32_t proc2 = ctl->field[VMX_PROC_BASED2];

	a->msr_bitmap = vmcs_setup_alloc(vcpu->id, "MSR bitmap", 1);
	a->io_bitmap_a = vmcs_setup_alloc(vcpu->id, "I/O bitmap A", 1);
	a->io_bitmap_b = vmcs_setup_alloc(vcpu->id, "I/O bitmap B", 1);
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
	if (!ctls_init(vcpu, VMX_PIN_BASED, ctl->field[VMX_PIN_BASED]) ||
	    !ctls_init(vcpu, VMX_PROC_BASED, ctl->field[VMX_PROC_BASED]) ||
	    !ctls_init(vcpu, VMX_EXIT, ctl->field[VMX_EXIT]) ||
	    !ctls_init(vcpu, VMX_ENTRY, ctl->field[VMX_ENTRY]))
		return false;
	vcpu->ctls[VMX_PROC_BASED2] = 0;
	a->intr_window_ctls = CPU_BASED_INTR_WINDOW_EXITING |
		(ctl->field[VMX_PROC_BASED] & CPU_BASED_HLT_EXITING ? 0 : CPU_BASED_HLT_EXITING);
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
	if (!vmcs_setup_write_all(vcpu->id, w, ARRAY_SIZE(w)))
		return false;
	if (ctl->field[VMX_PROC_BASED] & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS) {
		if (!ctls_init(vcpu, VMX_PROC_BASED2, proc2))
			return false;
	}
	/* The profile's table of CPUID answers, from the controls just set. */
	cpuid_fast_init(vcpu);
	/*
	 * The breakdown slots the fast handlers count in (profile.h), before
	 * the first exit: the stats are zero until then.
	 */
	profile_stats_claim_fast_keys(&vcpu->stats);
	/* The MSR write a tickless kernel makes per timer (exit_stats.h). */
	exit_stats_table_claim(&vcpu->stats.msr_write, MSR_IA32_TSC_DEADLINE);
	if (proc2 & SECONDARY_EXEC_PAUSE_LOOP_EXITING) {
		VMCS_WRITES(ple, { PLE_GAP, exitplan_profile.ple_gap },
			    { PLE_WINDOW, exitplan_profile.ple_window });
		if (!vmcs_setup_write_all(vcpu->id, ple, ARRAY_SIZE(ple)))
			return false;
	}
	/*
	 * "Enable XSAVES/XRSTORS" (spec/runtime.yaml) makes them consult the
	 * XSS-exiting bitmap (SDM Vol. 3C 26.1.3): all zero, they never exit.
	 */
	if ((proc2 & SECONDARY_EXEC_ENABLE_XSAVES) && !vmcs_setup_write(vcpu->id, XSS_EXIT_BITMAP, 0))
		return false;
	if (a->preemption_timer_on &&
	    !vmcs_setup_write(vcpu->id, VMX_PREEMPTION_TIMER_VALUE,
			      exitplan_profile.preemption_timer_value))
		return false;
	if (ctl->field[VMX_PROC_BASED] & CPU_BASED_TPR_SHADOW) {
		/* The virtual-APIC page; threshold 0 never exceeds the TPR shadow. */
		void *vapic = vmcs_setup_alloc(vcpu->id, "virtual-APIC page", 1);

		if (!vapic)
			return false;
		VMCS_WRITES(tpr, { VIRTUAL_APIC_PAGE_ADDR, pa_of(vapic) }, { TPR_THRESHOLD, 0 });
		if (!vmcs_setup_write_all(vcpu->id, tpr, ARRAY_SIZE(tpr)))
			return false;
	}
	if (proc2 & SECONDARY_EXEC_ENABLE_VPID) {
		/* VPID 0 is the host's; each vCPU gets its own (id + 1). */
		a->vpid = (uint16_t)(vcpu->id + 1);
		if (!vmcs_setup_write(vcpu->id, VIRTUAL_PROCESSOR_ID, a->vpid))
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
	if (!vmcs_setup_write_all(vcpu->id, w, ARRAY_SIZE(w)))
		return false;
	if ((ctl->field[VMX_EXIT] & VM_EXIT_LOAD_IA32_EFER) &&
	    !vmcs_setup_write(vcpu->id, HOST_IA32_EFER, rdmsr(MSR_IA32_EFER)))
		return false;
	if ((ctl->field[VMX_EXIT] & VM_EXIT_LOAD_IA32_PAT) &&
	    !vmcs_setup_write(vcpu->id, HOST_IA32_PAT, rdmsr(MSR_IA32_PAT)))
		return false;
	return true;
}

/* --- VMCS: guest state for a multiboot entry --------------------------- */

/*
 * What the multiboot entry and the STARTUP state share: a usable TR, which
 * VM entry requires even in protected and real mode (SDM Vol. 3C
 * 26.3.1.2), a busy 32-bit TSS; empty descriptor tables, no SYSENTER, no
 * debug state; active and interruptible; EFER 0 where VM entry loads it.
 */
static const struct vmcs_init vmx_guest_common[] = {
	{ GUEST_TR_SELECTOR, 0 }, { GUEST_TR_BASE, 0 }, { GUEST_TR_LIMIT, 0xffff },
	{ GUEST_TR_AR_BYTES, VMX_AR_P | VMX_AR_TYPE_TSS_BUSY },
	{ GUEST_GDTR_BASE, 0 }, { GUEST_GDTR_LIMIT, 0xffff },
	{ GUEST_IDTR_BASE, 0 }, { GUEST_IDTR_LIMIT, 0xffff },
	{ GUEST_SYSENTER_CS, 0 }, { GUEST_SYSENTER_ESP, 0 }, { GUEST_SYSENTER_EIP, 0 },
	{ GUEST_IA32_DEBUGCTL, 0 },
	{ GUEST_INTERRUPTIBILITY_INFO, 0 },
	{ GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE },
	{ GUEST_PENDING_DBG_EXCEPTIONS, 0 },
};

static bool vmx_setup_guest_common(struct vcpu *vcpu, const struct vmx_controls *ctl)
{
	if (!vmcs_setup_write_all(vcpu->id, vmx_guest_common, ARRAY_SIZE(vmx_guest_common)))
		return false;
	return !(ctl->field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_EFER) ||
	       vmcs_setup_write(vcpu->id, GUEST_IA32_EFER, 0);
}

/*
 * The machine state the Multiboot Specification (3.2) promises at entry:
 * 32-bit protected mode, paging off, flat 4-GiB code and data segments,
 * EFLAGS.IF and VM clear, EAX = the magic, EBX = the info structure.
 */
bool vmx_setup_guest_state(struct vcpu *vcpu, struct vmx_cpu *vc, uint32_t entry, uint32_t mbi)
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
		{ GUEST_LDTR_SELECTOR, 0 },
		{ GUEST_LDTR_BASE, 0 }, { GUEST_LDTR_LIMIT, 0 }, { GUEST_LDTR_AR_BYTES, VMX_AR_UNUSABLE },
	);
	if (!vmcs_setup_write_all(vcpu->id, w, ARRAY_SIZE(w)) || !vmx_setup_guest_common(vcpu, ctl))
		return false;
	if ((ctl->field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_PAT) &&
	    !vmcs_setup_write(vcpu->id, GUEST_IA32_PAT, rdmsr(MSR_IA32_PAT)))
		return false;
	return true;
}

/* --- EPT and VPID ------------------------------------------------------ */

/* The VM's EPT, one for all its vCPUs (guest-physical memory is the machine's). */
static struct ept vmx_vm_ept;
/*
 * The same map without the xAPIC page, for a vCPU whose guest APIC is
 * not in the physical APIC's mode (disabled, or xAPIC on an x2APIC):
 * its reads of the page exit too, and apic.c answers them.
 */
static struct ept vmx_vm_ept_apic_trap;

/*
 * The identity map of the guest's memory and firmware, and of the one
 * device page the runtime grants, the xAPIC page: read-only and never
 * executable, so that every write to it -- the ICR's above all -- exits
 * (apic.c).  Nothing else is mapped (ept.h).
 */
bool vmx_build_vm_ept(struct vmx_cpu *vc, const struct boot_info *bi)
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
			exitplan_profile.apic_virtual ? 0 : EPT_READ | EPT_MEMTYPE_UC) ||
	    !vmx_hide_device_pages(&vmx_vm_ept) ||
	    (!exitplan_profile.apic_virtual &&
	     (!ept_build(&vmx_vm_ept_apic_trap, ranges, n) ||
	      !ept_set_4k(&vmx_vm_ept_apic_trap, vmx_xapic_page(), 0) ||
	      !vmx_hide_device_pages(&vmx_vm_ept_apic_trap)))) {
		printk("exitplan: cannot build the EPT identity map\n");
		return false;
	}
	vmx_vm_eptp = ept_pointer(&vmx_vm_ept);
	vmx_vm_eptp_apic_trap = exitplan_profile.apic_virtual ? vmx_vm_eptp
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

/* --- the vCPUs: exit stubs, allocation, VMCS setup ------------------- */

/*
 * Does every exit need vmx_handle_exit() around the dispatch?  When the
 * profile times exits, or switches an MSR by hand on this CPU: always
 * for a manual MSR without a gate, and for a gated one when its gate
 * fell back to the choice named "manual".
 */
static bool vmx_exit_needs_hooks(const struct vmx_controls *ctl)
{
	unsigned int gated = 0, manual = exitplan_profile.manual_msr_count;
	bool active = false;

	if (exitplan_profile.stats_level >= STATS_TIMING)
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

/*
 * A vCPU and its exit stack, the VMX_EXIT_STACK_PAGES just below it:
 * HOST_RSP points into the vcpu (vcpu_asm.h), the stub's PUSHes leave
 * RSP at the vcpu, which is then the stack's top -- page aligned, so the
 * stub's calls see the ABI's 16-byte alignment -- and no load is needed
 * to switch stacks or to come back.  A vCPU runs on one CPU at a time,
 * so a stack per vCPU is enough.
 */
struct vcpu *vmx_alloc_vcpu(struct vm *vm, unsigned int id, struct vmx_cpu *vc)
{
	uint8_t *stack = vmcs_setup_alloc(id, "exit stack", VMX_EXIT_STACK_PAGES +
					  (sizeof(struct vcpu) + PAGE_SIZE - 1) / PAGE_SIZE);
	struct vcpu *vcpu;

	if (!stack)
		return NULL;
	vcpu = (struct vcpu *)(stack + VMX_EXIT_STACK_PAGES * PAGE_SIZE);
	vcpu->arch = vmcs_setup_alloc(id, "VT-x state",
				      (sizeof(struct vcpu_arch_state) + PAGE_SIZE - 1) / PAGE_SIZE);
	vcpu->vmcs = vmcs_setup_alloc(id, "VMCS", 1);
	if (!vcpu->arch || !vcpu->vmcs)
		return NULL;
	vcpu->id = id;
	vcpu->vm = vm;
	vcpu->vv = &vm->vcpu[id];
	vcpu->vv->arch = vcpu;
	vcpu->controls = &vc->controls;
	vcpu->vmcs_pa = pa_of(vcpu->vmcs);
	vcpu->arch->platform = &vm->platform;
	/* Its CPU carries other vCPUs: room for the state a switch saves (vcpu_switch.c). */
	vcpu->arch->shared = sched_cpu_vcpus(&vmx_sched, sched_vcpu_cpu(&vmx_sched, id)) > 1;
	if (vcpu->arch->shared &&
	    !(vcpu->arch->fpu_area = vmcs_setup_alloc(id, "x87/SSE/AVX save area", 1)))
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
bool vmx_setup_cpu(struct vmx_cpu *vc)
{
	this_cpu()->arch = vc;
	return vmx_enable(vc);
}

bool vmx_setup_vcpu(struct vcpu *vcpu, struct vmx_cpu *vc)
{
	this_cpu()->vcpu = vcpu;
	vcpu->cpu = this_cpu();
	*(uint32_t *)vcpu->vmcs = (uint32_t)(vc->caps.basic & VMX_BASIC_REVISION_ID_MASK);
	if (!vmclear(vcpu->vmcs_pa) || !vmptrld(vcpu->vmcs_pa)) {
		printk("exitplan: CPU %u: vCPU %u: VMCLEAR/VMPTRLD of its VMCS failed\n",
		       this_cpu_id(), vcpu->id);
		vmxoff();
		return false;
	}
	vcpu->exit_hooks = vmx_exit_needs_hooks(&vc->controls);
	if (!vmx_setup_controls(vcpu, vc) || !vmx_setup_host_state(vc, vcpu) ||
	    !vmcs_setup_write(vcpu->id, EPT_POINTER, vmx_vm_eptp)) {
		vmxoff();
		return false;
	}
	vcpu->arch->eptp = vmx_vm_eptp;
	vcpu->arch->ept = vmx_vm_ept;
	vcpu_setup_msrs(vcpu);
	vmx_resident_msrs_setup(vcpu);
	/* DR0-DR3 and DR6 at reset (SDM Vol. 3A Table 10-1), for a shared vCPU's first turn. */
	vcpu->arch->dr[0] = vcpu->arch->dr[1] = vcpu->arch->dr[2] = vcpu->arch->dr[3] = 0;
	vcpu->arch->dr6 = X86_DR6_INIT;
	vcpu->arch->regs_saved = true;
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
bool vmx_setup_guest_startup(struct vcpu *vcpu, uint8_t vector)
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
	a->storm_hold_until = a->storm_last_tsc = 0;
	a->last_inject_valid = false;
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
		{ GUEST_LDTR_SELECTOR, 0 }, { GUEST_LDTR_BASE, 0 }, { GUEST_LDTR_LIMIT, 0xffff },
		{ GUEST_LDTR_AR_BYTES, VMX_AR_UNUSABLE },
		{ VM_ENTRY_INTR_INFO_FIELD, 0 },
	);
	if (!vmcs_setup_write_all(vcpu->id, w, ARRAY_SIZE(w)) || !vmx_setup_guest_common(vcpu, ctl))
		return false;
	/* Out of IA-32e mode, no interrupt window open (vmx_ctls.h). */
	if (!ctls_init(vcpu, VMX_ENTRY, ctl->field[VMX_ENTRY]) ||
	    !ctls_init(vcpu, VMX_PROC_BASED, ctl->field[VMX_PROC_BASED]))
		return false;
	for (unsigned int i = 0; i < MSR_MANUAL_MAX; i++)
		vcpu->msrs.guest[i] = 0;
	vcpu_setup_msrs(vcpu);
	return true;
}

