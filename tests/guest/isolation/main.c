// SPDX-License-Identifier: GPL-2.0-only
/*
 * The isolation guest: attacks on the hypervisor, one per boot, chosen
 * with attack=NAME (docs/GUESTS.md lists them).
 *
 * Fatal attacks (read-hv, write-hv, read-hv-high, triple-fault; reset-kbc,
 * reset-92, reset-cf9, acpi-s5, bochs-shutdown; mmio-unemulated, ioapic-byte,
 * apic-stack; the silent ones of silent_attacks.c, which only a deadline
 * ends) print "isolation:
 * attacking NAME" and then do it: exitplan must stop the guest (EPT
 * violation, triple fault, reset request) or end it as powered off, and
 * never let the machine itself reset or power off.  If the guest is still
 * running afterwards it prints the FAIL line and exits with 1.
 *
 * Non-fatal attacks must be refused with an exception in the guest, or
 * leave no trace (init-sipi: the guest's code never runs on another CPU);
 * they print PASS/FAIL lines and the summary.  attack=all-nonfatal runs
 * them all in one boot.
 */
#include "acpi.h"
#include "apic.h"
#include "console.h"
#include "cpu_attacks.h"
#include "exitplan.h"
#include "idt.h"
#include "mmio_attacks.h"
#include "platform_attacks.h"
#include "silent_attacks.h"
#include "string.h"
#include "test.h"
#include "x86.h"

const char guest_name[] = "isolation";

/* Guest-physical addresses inside the hypervisor's region. */
#define HV_LOW		exitplan_hv_start()		/* its image */
#define HV_HIGH		(exitplan_hv_end() - 0x1000)	/* its last page */

/*
 * IA32_EFER bits the SDM reserves (Vol. 4, table 2-2: only SCE, LME,
 * LMA and NXE are defined): writing them must #GP.
 */
#define EFER_RESERVED_BIT2	(1ull << 2)
#define EFER_RESERVED_BIT63	(1ull << 63)

/* QEMU TCG ignores these writes; notcgskip runs them anyway to show it. */
static bool tcg_msr_skips;

static void __attribute__((noreturn)) not_contained(const char *name)
{
	printf("FAIL: %s not contained\n", name);
	test_abort();
}

static void attack_read(const char *name, uintptr_t addr)
{
	uint32_t v;

	printf("isolation: attacking %s (read of guest-physical 0x%08x)\n",
	       name, (uint32_t)addr);
	console_flush();
	v = *(volatile uint32_t *)phys_ptr(addr);
	printf("FAIL: %s (read returned 0x%08x)\n", name, v);
	test_abort();
}

static void attack_write(const char *name, uintptr_t addr)
{
	printf("isolation: attacking %s (write to guest-physical 0x%08x)\n",
	       name, (uint32_t)addr);
	console_flush();
	*(volatile uint32_t *)phys_ptr(addr) = 0xbadc0de5;
	not_contained(name);
}

/* An IDT with no entries: the next exception cannot be delivered (#GP,
 * then #DF, then a triple fault, SDM Vol. 3A, 6.15 "Interrupt 8"). */
static void attack_triple_fault(void)
{
	static const struct {
		uint16_t limit;
		uint32_t base;
	} __attribute__((packed)) empty_idt = { 0, 0 };

	printf("isolation: attacking triple-fault (empty IDT, then UD2)\n");
	console_flush();
	asm volatile("lidt %0\n\t"
		     "ud2"
		     : : "m"(empty_idt) : "memory");
	not_contained("triple-fault");
}

/* ---- the machine's reset and power-off ports (fatal) ---- */

/* PC platform ports (not the CPU's): 8042, system control port A, PCI reset control, Bochs. */
#define KBC_DATA		0x60
#define KBC_STATUS		0x64	/* read: status; write: command */
#define KBC_STATUS_IBF		0x02	/* input buffer full: not ready for a command */
#define KBC_CMD_PULSE_RESET	0xfe	/* pulse output port bit 0: system reset */
#define SYSCTL_A		0x92
#define SYSCTL_A_FAST_RESET	0x01
#define SYSCTL_A_A20		0x02
#define PCI_CONF_ADDR		0xcf8
#define PCI_CONF_DATA		0xcfc
#define RST_CNT			0xcf9
#define RST_CNT_SYS_RST		0x02
#define RST_CNT_RST_CPU		0x04
#define BOCHS_SHUTDOWN_PORT	0x8900
/* ACPI: FADT PM1a_CNT_BLK (ACPI 6.x Table 5.9) and PM1_CNT bits (4.8.3.2.1). */
#define FADT_PM1A_CNT_BLK	64
#define PM1_CNT_SLP_TYP_SHIFT	10
#define PM1_CNT_SLP_TYP_MASK	(7u << PM1_CNT_SLP_TYP_SHIFT)
#define PM1_CNT_SLP_EN		(1u << 13)
/*
 * SLP_TYPa of \_S5: a guest reads it from the DSDT's \_S5 package; both
 * Bochs's BIOS and QEMU's DSDT say 0, and this guest has no AML parser.
 */
#define S5_SLP_TYP		0

/* Give a reset or power off time to happen before calling it uncontained. */
static void settle(void)
{
	uint64_t t = rdtsc();

	while (rdtsc() - t < 1000000)
		pause();
}

static void attacking(const char *name, const char *how)
{
	printf("isolation: attacking %s (%s)\n", name, how);
	console_flush();
}

static void attack_reset_kbc(void)
{
	unsigned int i;

	attacking("reset-kbc", "8042 command 0xfe to port 0x64");
	for (i = 0; i < 100000 && (inb(KBC_STATUS) & KBC_STATUS_IBF); i++)
		pause();
	outb(KBC_STATUS, KBC_CMD_PULSE_RESET);
	settle();
	not_contained("reset-kbc");
}

static void attack_reset_92(void)
{
	attacking("reset-92", "fast reset, bit 0 of port 0x92");
	outb(SYSCTL_A, inb(SYSCTL_A) | SYSCTL_A_FAST_RESET);
	settle();
	not_contained("reset-92");
}

static void attack_reset_cf9(void)
{
	/* As Linux's reboot=pci does: select a hard reset, then start it. */
	attacking("reset-cf9", "0x02 then 0x06 to port 0xcf9");
	outb(RST_CNT, RST_CNT_SYS_RST);
	outb(RST_CNT, RST_CNT_SYS_RST | RST_CNT_RST_CPU);
	settle();
	not_contained("reset-cf9");
}

/* PM1a_CNT as the FADT gives it, 0 if there is none. */
static uint16_t pm1a_cnt_port(void)
{
	const struct acpi_rsdp *rsdp = acpi_find_rsdp();
	const struct acpi_header *fadt = rsdp ? acpi_find_table(rsdp, "FACP") : NULL;

	if (!fadt || fadt->length < FADT_PM1A_CNT_BLK + 4)
		return 0;
	return (uint16_t)*(const uint32_t *)((const uint8_t *)fadt + FADT_PM1A_CNT_BLK);
}

static void attack_acpi_s5(void)
{
	uint16_t port = pm1a_cnt_port();
	uint16_t cnt;

	if (!port) {
		check("acpi-s5", false, "no FADT PM1a_CNT_BLK");
		test_abort();
	}
	printf("isolation: attacking acpi-s5 (SLP_TYP %u and SLP_EN to PM1a_CNT 0x%x)\n",
	       S5_SLP_TYP, port);
	console_flush();
	cnt = inw(port) & ~PM1_CNT_SLP_TYP_MASK;
	outw(port, cnt | (S5_SLP_TYP << PM1_CNT_SLP_TYP_SHIFT) | PM1_CNT_SLP_EN);
	settle();
	not_contained("acpi-s5");
}

static void attack_bochs_shutdown(void)
{
	static const char shutdown[] = "Shutdown";

	attacking("bochs-shutdown", "\"Shutdown\" to port 0x8900 with REP OUTSB");
	outsb(BOCHS_SHUTDOWN_PORT, shutdown, sizeof(shutdown) - 1);
	settle();
	not_contained("bochs-shutdown");
}

/* ---- non-fatal: each must raise an exception in the guest ---- */

static uint64_t vmxon_region_pa;
static struct { uint64_t eptp, reserved; } invept_desc;

static void attack_vmx(void)
{
	uint32_t field = 0, value = 0, type = 2;	/* all-context INVEPT */

	printf("isolation: attacking vmx\n");
	/* The region address points at the hypervisor: VMXON must not get far. */
	vmxon_region_pa = HV_LOW;
	CHECK_UD("vmx-vmxon", "vmxon %0", "m"(vmxon_region_pa));
	CHECK_UD("vmx-vmread", "vmread %0, %1", "r"(field), "r"(value));
	CHECK_UD("vmx-vmwrite", "vmwrite %0, %1", "r"(value), "r"(field));
	CHECK_UD("vmx-vmptrld", "vmptrld %0", "m"(vmxon_region_pa));
	CHECK_UD("vmx-invept", "invept %0, %1", "m"(invept_desc), "r"(type));
}

static void expect_wrmsr_gp(const char *name, uint32_t msr, uint64_t value)
{
	int vec = wrmsr_safe(msr, value);

	check(name, vec == X86_EXC_GP, "WRMSR 0x%x <- 0x%llx: %s", msr, value,
	      vector_name(vec));
}

static bool tcg_skip(const char *name)
{
	if (!tcg_msr_skips)
		return false;
	/* QEMU 7.2's TCG silently ignores writes it does not model. */
	skip(name, "QEMU TCG raises no #GP for this write");
	return true;
}

static void attack_feature_control(void)
{
	uint64_t v = 0;
	int vec;

	printf("isolation: attacking feature-control\n");
	vec = rdmsr_safe(MSR_IA32_FEATURE_CONTROL, &v);
	printf("isolation: IA32_FEATURE_CONTROL reads 0x%llx (%s)\n", v,
	       vector_name(vec));
	if (tcg_skip("feature-control"))
		return;
	/* Unlock it and ask for VMX: a locked MSR refuses any write. */
	expect_wrmsr_gp("feature-control", MSR_IA32_FEATURE_CONTROL,
			v & ~FEAT_CTL_LOCKED);
}

static void attack_vmx_caps_write(void)
{
	printf("isolation: attacking vmx-caps-write\n");
	if (tcg_skip("vmx-caps-write-basic") | tcg_skip("vmx-caps-write-procbased2"))
		return;
	/* The VMX capability MSRs are read-only (SDM Vol. 3D, appendix A). */
	expect_wrmsr_gp("vmx-caps-write-basic", MSR_IA32_VMX_BASIC, 0);
	expect_wrmsr_gp("vmx-caps-write-procbased2", MSR_IA32_VMX_PROCBASED_CTLS2,
			~0ull);
}

static void attack_cr4_vmxe(void)
{
	uint32_t cr4 = read_cr4();
	int vec;

	printf("isolation: attacking cr4-vmxe\n");
	if (qemu_tcg_detected()) {
		/* An SVM #VMEXIT(INVALID) outside any guest, forever. */
		skip("cr4-vmxe", "QEMU TCG hangs on a reserved CR4 bit");
		return;
	}
	vec = write_cr4_safe(cr4 | X86_CR4_VMXE);
	check("cr4-vmxe", vec == X86_EXC_GP && !(read_cr4() & X86_CR4_VMXE),
	      "MOV to CR4 with VMXE: %s, CR4 now 0x%08x", vector_name(vec),
	      read_cr4());
	write_cr4(cr4);	/* if it was let through */
}

static void attack_efer_reserved(void)
{
	uint64_t efer = rdmsr(MSR_IA32_EFER);

	printf("isolation: attacking efer-reserved (EFER 0x%llx)\n", efer);
	if (tcg_skip("efer-reserved-bit2") | tcg_skip("efer-reserved-bit63"))
		return;
	expect_wrmsr_gp("efer-reserved-bit2", MSR_IA32_EFER, efer | EFER_RESERVED_BIT2);
	expect_wrmsr_gp("efer-reserved-bit63", MSR_IA32_EFER, efer | EFER_RESERVED_BIT63);
	check("efer-unchanged", rdmsr(MSR_IA32_EFER) == efer, "EFER 0x%llx, was 0x%llx",
	      rdmsr(MSR_IA32_EFER), efer);
}

/*
 * What a guest may still use of the filtered devices: they answer as the
 * hardware would, and the PM timer and PCI configuration space still work.
 */
static void attack_platform_ports(void)
{
	const struct acpi_rsdp *rsdp = acpi_find_rsdp();
	const struct acpi_header *fadt = rsdp ? acpi_find_table(rsdp, "FACP") : NULL;
	uint32_t tmr = fadt ? acpi_fadt_pm_timer_port(fadt) : 0;
	uint8_t kbc = inb(KBC_STATUS), a = inb(SYSCTL_A), rst = inb(RST_CNT);
	uint32_t id;

	printf("isolation: attacking platform-ports (what stays usable)\n");
	/* 0xff is what a missing controller floats to; IBF stuck means a dead one. */
	check("platform-kbc-status", kbc != 0xff, "8042 status 0x%02x", kbc);
	check("platform-port92", !(a & SYSCTL_A_FAST_RESET), "port 0x92 reads 0x%02x", a);
	check("platform-cf9", rst == 0, "port 0xcf9 reads 0x%02x", rst);
	/* Vendor and device of 00:00.0 through CONFIG_ADDRESS, which now exits. */
	outl(PCI_CONF_ADDR, 0x80000000u);
	id = inl(PCI_CONF_DATA);
	check("platform-pci-config", (id & 0xffff) != 0xffff && (id & 0xffff) != 0,
	      "00:00.0 vendor/device 0x%08x", id);
	check("platform-pci-config-addr", inl(PCI_CONF_ADDR) == 0x80000000u,
	      "CONFIG_ADDRESS reads 0x%08x", inl(PCI_CONF_ADDR));
	if (!tmr) {
		skip("platform-pm-timer", "no FADT PM timer");
	} else {
		uint32_t t0 = inl(tmr) & 0xffffff, t1 = t0;
		unsigned int i;

		for (i = 0; i < 1000000 && t1 == t0; i++)
			t1 = inl(tmr) & 0xffffff;
		check("platform-pm-timer", t1 != t0, "PM timer at 0x%x stuck at 0x%x", tmr, t0);
	}
}

/*
 * init-sipi: INIT, STARTUP, STARTUP to APIC ID 1 with a vector pointing at
 * this real-mode code, as an OS starts an AP.  If another CPU ran it, it
 * would be outside VMX and EPT: it says "escaped" on COM1 and leaves a
 * mark the guest sees.  Under exitplan the other CPU runs the guest's
 * vCPU 1, and the STARTUP starts that vCPU, inside VMX and EPT, as it
 * would an AP: the code sees the hypervisor bit of CPUID.1:ECX and
 * leaves a different mark ("contained").  Any CPU that runs it outside
 * the hypervisor says "escaped".
 */
#define ESCAPE_PAGE		0x9000		/* below 1 MiB: a STARTUP vector reaches it */
#define ESCAPE_MARK_PA		(ESCAPE_PAGE + 0xff0)
#define ESCAPE_MARK		0x50414353	/* "SCAP" (no suffixes: the asm uses these) */
#define CONTAINED_MARK		0x544e4f43	/* "CONT": it ran in a vCPU */
#define OTHER_CPU_APIC_ID	1
#define ESCAPE_WAIT_TICKS	20000000ull	/* Bochs: 20M instructions, far more than enough */

#define __stringify_1(x)	#x
#define __stringify(x)		__stringify_1(x)

extern const char escape_start[], escape_end[];
asm(".pushsection .rodata\n"
    "escape_start:\n"
    ".code16\n"
    "	cli\n"
    "	xorw %ax, %ax\n"
    "	movw %ax, %ds\n"
    "	movl $1, %eax\n"
    "	cpuid\n"
    "	btl $31, %ecx\n"			/* CPUID.1:ECX.hypervisor */
    "	jnc 2f\n"
    "	movl $" __stringify(CONTAINED_MARK) ", " __stringify(ESCAPE_MARK_PA) "\n"
    "	jmp 1f\n"
    "2:	movl $" __stringify(ESCAPE_MARK) ", " __stringify(ESCAPE_MARK_PA) "\n"
    "	movw $0x3f8, %dx\n"
    "	movb $'e', %al\n	outb %al, %dx\n"
    "	movb $'s', %al\n	outb %al, %dx\n"
    "	movb $'c', %al\n	outb %al, %dx\n"
    "	movb $'a', %al\n	outb %al, %dx\n"
    "	movb $'p', %al\n	outb %al, %dx\n"
    "	movb $'e', %al\n	outb %al, %dx\n"
    "	movb $'d', %al\n	outb %al, %dx\n"
    "	movb $'\\n', %al\n	outb %al, %dx\n"
    "1:	hlt\n"
    "	jmp 1b\n"
    ".code32\n"
    "escape_end:\n"
    ".popsection");

static void wait_ticks(uint64_t n)
{
	uint64_t t = rdtsc();

	while (rdtsc() - t < n)
		pause();
}

/* Send an IPI to the other CPU; false if the APIC never finished sending it. */
static bool send_ipi(uint32_t icr_low)
{
	unsigned int i;

	apic_write(XAPIC_REG_ICR_HIGH, OTHER_CPU_APIC_ID << 24);
	apic_write(XAPIC_REG_ICR_LOW, icr_low);
	for (i = 0; i < 100000 && (apic_read(XAPIC_REG_ICR_LOW) & APIC_ICR_PENDING); i++)
		pause();
	return !(apic_read(XAPIC_REG_ICR_LOW) & APIC_ICR_PENDING);
}

static void attack_init_sipi(void)
{
	volatile uint32_t *mark = phys_ptr(ESCAPE_MARK_PA);
	uint32_t vector = ESCAPE_PAGE >> 12;	/* STARTUP starts at vector << 12, real mode */

	printf("isolation: attacking init-sipi (INIT, STARTUP 0x%02x, STARTUP to APIC ID %u)\n",
	       vector, OTHER_CPU_APIC_ID);
	memcpy(phys_ptr(ESCAPE_PAGE), escape_start, escape_end - escape_start);
	*mark = 0;
	apic_init();
	send_ipi(APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT | APIC_ICR_TRIGGER_LEVEL);
	send_ipi(APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_TRIGGER_LEVEL);	/* de-assert */
	wait_ticks(1000000);
	send_ipi(APIC_ICR_DELIVERY_MODE_STARTUP | vector);
	wait_ticks(100000);
	send_ipi(APIC_ICR_DELIVERY_MODE_STARTUP | vector);
	wait_ticks(ESCAPE_WAIT_TICKS);
	check("init-sipi", *mark != (uint32_t)ESCAPE_MARK, "the guest's code ran on APIC ID %u (mark 0x%08x)",
	      OTHER_CPU_APIC_ID, *mark);
	if (*mark == (uint32_t)CONTAINED_MARK)
		printf("isolation: init-sipi started APIC ID %u as a vCPU of this guest\n",
		       OTHER_CPU_APIC_ID);
}

/*
 * nmi-ap: an NMI to the other CPU, which exitplan parked: it must neither
 * run anything of the guest's nor take the hypervisor down (the boot test
 * checks that exitplan does not panic and the guest runs on).
 */
static void attack_nmi_ap(void)
{
	bool sent;

	printf("isolation: attacking nmi-ap (NMI to APIC ID %u)\n", OTHER_CPU_APIC_ID);
	apic_init();
	sent = send_ipi(APIC_ICR_DELIVERY_MODE_NMI);
	wait_ticks(1000000);
	check("nmi-ap", sent, "the NMI to APIC ID %u was never sent", OTHER_CPU_APIC_ID);
}

struct attack {
	const char *name;
	void (*run)(void);
	bool fatal;
};

static void attack_read_hv(void)
{
	attack_read("read-hv", HV_LOW);
}

static void attack_write_hv(void)
{
	attack_write("write-hv", HV_LOW);
}

static void attack_read_hv_high(void)
{
	attack_read("read-hv-high", HV_HIGH);
}

static const struct attack attacks[] = {
	{ "read-hv", attack_read_hv, true },
	{ "write-hv", attack_write_hv, true },
	{ "read-hv-high", attack_read_hv_high, true },
	{ "triple-fault", attack_triple_fault, true },
	{ "reset-kbc", attack_reset_kbc, true },
	{ "reset-92", attack_reset_92, true },
	{ "reset-cf9", attack_reset_cf9, true },
	{ "acpi-s5", attack_acpi_s5, true },
	{ "bochs-shutdown", attack_bochs_shutdown, true },
	{ "uart-garble", attack_uart_garble, true },
	{ "forged-status", attack_forged_status, true },
	{ "vmx", attack_vmx, false },
	{ "feature-control", attack_feature_control, false },
	{ "vmx-caps-write", attack_vmx_caps_write, false },
	{ "cr4-vmxe", attack_cr4_vmxe, false },
	{ "efer-reserved", attack_efer_reserved, false },
	{ "platform-ports", attack_platform_ports, false },
	{ "smm", attack_smm, false },
	{ "dma", attack_dma, false },
	{ "pci-config", attack_pci_config, false },
	{ "bochs-ports", attack_bochs_ports, false },
	{ "init-sipi", attack_init_sipi, false },
	{ "nmi-ap", attack_nmi_ap, false },
	{ "mmio-exec-vga", attack_mmio_exec_vga, true },
	{ "mmio-exec-ioapic", attack_mmio_exec_ioapic, true },
	{ "reserved-xcr0", attack_reserved_xcr0, false },
	{ "interrupt-storm", attack_interrupt_storm, false },
	{ "nmi-root", attack_nmi_root, false },
	{ "ioapic", attack_ioapic, false },
	{ "lvt", attack_lvt, false },
	{ "hpet", attack_hpet, false },
	{ "unclaimed", attack_unclaimed, false },
	{ "apic-unaligned", attack_apic_unaligned, false },
	{ "mmio-unemulated", attack_mmio_unemulated, true },
	{ "ioapic-byte", attack_ioapic_byte, true },
	{ "apic-stack", attack_apic_stack, true },
	{ "silent-hlt", attack_silent_hlt, true },
	{ "silent-idle", attack_silent_idle, true },
	{ "silent-spin", attack_silent_spin, true },
	{ "silent-pit", attack_silent_pit, true },
	{ "silent-apic-storm", attack_silent_apic_storm, true },
};

void guest_main(void)
{
	char name[32];
	unsigned int i;

	tcg_msr_skips = qemu_tcg_detected() && !cmdline_has("notcgskip");
	if (!cmdline_value("attack", name, sizeof(name))) {
		check("attack-option", false, "no attack=NAME on the command line");
		return;
	}
	printf("isolation: %s\n", exitplan_detected() ? "running under exitplan" :
	       "not running under exitplan: the fatal attacks will not be contained");

	if (!strcmp(name, "all-nonfatal")) {
		for (i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
			if (!attacks[i].fatal)
				attacks[i].run();
		return;
	}
	for (i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		if (!strcmp(name, attacks[i].name)) {
			attacks[i].run();
			return;
		}
	}
	check("attack-option", false, "unknown attack \"%s\"", name);
}
