// SPDX-License-Identifier: GPL-2.0-only
/*
 * The isolation guest: attacks on the hypervisor, one per boot, chosen
 * with attack=NAME (docs/GUESTS.md lists them).
 *
 * Fatal attacks (read-hv, write-hv, read-hv-high, triple-fault) print
 * "isolation: attacking NAME" and then do it: exitplan must stop the guest
 * (EPT violation, triple fault).  If the guest is still running afterwards
 * it prints the FAIL line and exits with 1.
 *
 * Non-fatal attacks must be refused with an exception in the guest; they
 * print PASS/FAIL lines and the summary.  attack=all-nonfatal runs them
 * all in one boot.
 */
#include "console.h"
#include "exitplan.h"
#include "idt.h"
#include "string.h"
#include "test.h"
#include "x86.h"

const char guest_name[] = "isolation";

/* Guest-physical addresses inside the hypervisor's region. */
#define HV_LOW		EXITPLAN_HV_START		/* its image */
#define HV_HIGH		(EXITPLAN_HV_END - 0x1000)	/* its last page */

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

/* ---- non-fatal: each must raise an exception in the guest ---- */

static uint64_t vmxon_region_pa;
static struct { uint64_t eptp, reserved; } invept_desc;

#define EXPECT_UD(name, insn, ...)						\
	do {									\
		expect_fault(X86_EXC_UD);					\
		asm volatile(ASM_TRY("1f") insn "\n\t1:" : : __VA_ARGS__ : "memory"); \
		check(name, fault_happened(), "got %s",			\
		      vector_name(last_fault_vector()));			\
	} while (0)

static void attack_vmx(void)
{
	uint32_t field = 0, value = 0, type = 2;	/* all-context INVEPT */

	printf("isolation: attacking vmx\n");
	/* The region address points at the hypervisor: VMXON must not get far. */
	vmxon_region_pa = HV_LOW;
	EXPECT_UD("vmx-vmxon", "vmxon %0", "m"(vmxon_region_pa));
	EXPECT_UD("vmx-vmread", "vmread %0, %1", "r"(field), "r"(value));
	EXPECT_UD("vmx-vmwrite", "vmwrite %0, %1", "r"(value), "r"(field));
	EXPECT_UD("vmx-vmptrld", "vmptrld %0", "m"(vmxon_region_pa));
	EXPECT_UD("vmx-invept", "invept %0, %1", "m"(invept_desc), "r"(type));
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
	{ "vmx", attack_vmx, false },
	{ "feature-control", attack_feature_control, false },
	{ "vmx-caps-write", attack_vmx_caps_write, false },
	{ "cr4-vmxe", attack_cr4_vmxe, false },
	{ "efer-reserved", attack_efer_reserved, false },
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
