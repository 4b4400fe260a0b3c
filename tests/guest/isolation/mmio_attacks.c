// SPDX-License-Identifier: GPL-2.0-only
/*
 * The isolation guest's attacks through device MMIO on Bochs's machine:
 *
 *   - ioapic: I/O APIC redirection entries with delivery mode SMI, NMI,
 *     INIT, ExtINT and the reserved ones route a device interrupt into
 *     SMM (outside VMX and EPT) or reset a CPU.  Under exitplan each reads
 *     back masked.  The architectural parts (the version register, the
 *     IOREGSEL latch, a fixed-mode entry written and read back) pass on
 *     bare Bochs too (tests/guest/bochs-bare.sh);
 *   - lvt: local APIC LVT entries (thermal, performance counter) with
 *     delivery mode SMI, INIT and a reserved one: the event would put the
 *     guest's CPU in SMM or reset it after VMXOFF.  Under exitplan each
 *     reads back masked; a masked fixed entry reads back as written;
 *   - hpet: timer 0 in FSB delivery, its route register aimed at a word
 *     of the guest's own memory: a bare HPET writes the word when the
 *     comparator matches, as it would write the hypervisor's.  Under
 *     exitplan the HPET is absent: its registers read all ones and the
 *     word keeps its value;
 *   - unclaimed: loads and stores of every size to guest-physical
 *     addresses nothing claims (a hole in the PCI range) read all ones,
 *     8- and 16-bit loads merging into the register as hardware merges
 *     them, and a store there changes nothing: as on bare Bochs.  Device
 *     memory the guest is not granted (the VGA window, the VBE linear
 *     framebuffer) is such an address under exitplan: written, it still
 *     reads all ones;
 *   - apic-unaligned: XADD of 0 (a load and a store of the same value,
 *     so the load is the hypervisor's to answer: the store exits) of 1,
 *     2 and 4 bytes at xAPIC page offsets that are no register's: bytes
 *     4-15 of a 16-byte slot (0x84, 0x88, 0x8c, 0x24, ...) read 0 (SDM
 *     Vol. 3A 11.4.1), and the guest runs on.  Exitplan reads the
 *     physical APIC only at a register's own offset; Bochs's APIC panics
 *     on these, so the checks are exitplan's only (skipped bare);
 *   - apic-stack (fatal): the stack in the local APIC page (mapped
 *     read-only, so a push exits), then INT3: the exception's delivery
 *     pushes onto the page.  The access is the delivery's, not the
 *     instruction's at RIP: exitplan stops the guest with a report rather
 *     than emulate the instruction at RIP as an APIC write;
 *   - mmio-unemulated (fatal): CALL through a pointer in the PCI hole, an
 *     instruction exitplan does not emulate on MMIO: the guest is stopped
 *     with a report that names all its bytes;
 *   - ioapic-byte (fatal): a byte write to IOREGSEL, undefined in the
 *     82093AA datasheet (and a panic in some emulators): exitplan stops
 *     the guest with a report.
 *
 * Under exitplan the hypervisor reports the first refused entry and the
 * first HPET write on its own channel (tests/boot/test_vmx_isolation_mmio.py).
 * Without exitplan the parts that only exitplan contains are skipped in
 * attack=all-nonfatal, and FAIL when run alone.
 */
#include "acpi.h"
#include "console.h"
#include "exitplan.h"
#include "mmio_attacks.h"
#include "string.h"
#include "test.h"
#include "x86.h"

/* Intel 82093AA datasheet, 3.0. */
#define IOAPIC_BASE		0xfec00000u
#define IOAPIC_IOREGSEL		0x00
#define IOAPIC_IOWIN		0x10
#define IOAPIC_REG_ID		0x00
#define IOAPIC_REG_VER		0x01
#define IOAPIC_REG_REDTBL	0x10
#define IOREDTBL_MASKED		(1u << 16)
#define IOREDTBL_RO_BITS	((1u << 12) | (1u << 14))	/* delivery status, remote IRR */
#define IOREDTBL_DELMOD_SHIFT	8
#define DELMOD_FIXED		0
/* The pin the attacks rewrite: the last of Bochs's 24, which no ISA IRQ uses. */
#define ATTACK_PIN		23

/* IA-PC HPET Specification 1.0a, 2.3. */
#define HPET_DEFAULT_BASE	0xfed00000u
#define HPET_GCAP_ID		0x000
#define HPET_GEN_CONF		0x010
#define HPET_MAIN_COUNTER	0x0f0
#define HPET_T0_CONF		0x100
#define HPET_T0_COMPARATOR	0x108
#define HPET_T0_FSB_ROUTE	0x110	/* bits 31:0 the value, 63:32 the address */
#define HPET_ENABLE_CNF		(1u << 0)
#define HPET_TN_INT_ENB_CNF	(1u << 2)
#define HPET_TN_FSB_EN_CNF	(1u << 14)
#define HPET_TN_FSB_INT_DEL_CAP	(1u << 15)
#define HPET_ACPI_BASE_OFFSET	44	/* the GAS's address in the ACPI HPET table */
#define FSB_CANARY		0x600dc0deu
#define FSB_VALUE		0xbadc0de5u
#define FSB_WAIT_TICKS		20000000ull

static volatile uint32_t *mmio32(uint32_t addr)
{
	return phys_ptr(addr);
}

static uint32_t ioapic_read(uint8_t index)
{
	*mmio32(IOAPIC_BASE + IOAPIC_IOREGSEL) = index;
	return *mmio32(IOAPIC_BASE + IOAPIC_IOWIN);
}

static void ioapic_write(uint8_t index, uint32_t value)
{
	*mmio32(IOAPIC_BASE + IOAPIC_IOREGSEL) = index;
	*mmio32(IOAPIC_BASE + IOAPIC_IOWIN) = value;
}

static void announce(const char *name, const char *how)
{
	printf("isolation: attacking %s (%s)\n", name, how);
	console_flush();
}

/*
 * Parts only exitplan contains: in attack=all-nonfatal on a bare machine,
 * whose summary must say 0 failed (tests/guest/qemu-check.sh), skipped;
 * run alone (attack=NAME under bochs-bare.sh) they show what the device
 * does when nobody filters it.  None harms the machine: the rewritten
 * pin never sees an edge, the FSB message lands in the guest's memory.
 */
static bool contained_here(const char *name)
{
	char attack[32];

	if (exitplan_detected() || !cmdline_value("attack", attack, sizeof(attack)) ||
	    strcmp(attack, "all-nonfatal"))
		return true;
	skip(name, "not under exitplan: nothing filters the device");
	return false;
}

void attack_ioapic(void)
{
	static const struct {
		const char *name;
		unsigned int mode;
	} modes[] = {
		{ "ioapic-smi-masked", 2 }, { "ioapic-init-masked", 5 },
		{ "ioapic-nmi-masked", 4 }, { "ioapic-extint-masked", 7 },
		{ "ioapic-reserved-masked", 3 },
	};
	uint8_t low = IOAPIC_REG_REDTBL + 2 * ATTACK_PIN;
	uint32_t ver, saved_low, saved_high, v, want, id;

	announce("ioapic", "SMI, INIT, NMI and ExtINT redirection entries");
	/* Architectural: a version the 82093AA family gives, enough entries for the attack pin. */
	ver = ioapic_read(IOAPIC_REG_VER);
	check("ioapic-version", (ver & 0xff) >= 0x10 && (ver & 0xff) <= 0x2f &&
	      ((ver >> 16) & 0xff) >= ATTACK_PIN, "IOAPICVER reads 0x%x", ver);
	*mmio32(IOAPIC_BASE + IOAPIC_IOREGSEL) = IOAPIC_REG_VER;
	v = *mmio32(IOAPIC_BASE + IOAPIC_IOREGSEL);
	check("ioapic-ioregsel", (v & 0xff) == IOAPIC_REG_VER, "IOREGSEL reads 0x%x", v);

	saved_low = ioapic_read(low);
	saved_high = ioapic_read(low + 1);
	/* A fixed, masked entry (nothing fires): written as given. */
	want = IOREDTBL_MASKED | (DELMOD_FIXED << IOREDTBL_DELMOD_SHIFT) | 0x45;
	ioapic_write(low + 1, 0);
	ioapic_write(low, want);
	v = ioapic_read(low);
	check("ioapic-fixed-entry", (v & ~IOREDTBL_RO_BITS) == want,
	      "a fixed entry written 0x%x reads 0x%x", want, v);

	for (unsigned int i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!contained_here(modes[i].name))
			continue;
		/* Unmasked, edge, physical destination APIC ID 0: the boot CPU. */
		want = (modes[i].mode << IOREDTBL_DELMOD_SHIFT) | 0x46;
		ioapic_write(low, want);
		v = ioapic_read(low);
		check(modes[i].name, (v & ~IOREDTBL_RO_BITS) == (want | IOREDTBL_MASKED),
		      "delivery mode %u written 0x%x reads 0x%x", modes[i].mode, want, v);
	}
	if (contained_here("ioapic-id-kept")) {
		id = ioapic_read(IOAPIC_REG_ID);
		ioapic_write(IOAPIC_REG_ID, id ^ (0xfu << 24));
		v = ioapic_read(IOAPIC_REG_ID);
		check("ioapic-id-kept", v == id, "IOAPICID 0x%x became 0x%x", id, v);
	}
	ioapic_write(low, saved_low | IOREDTBL_MASKED);
	ioapic_write(low + 1, saved_high);
	ioapic_write(low, saved_low);
}

/*
 * The guest's APIC in either mode (an earlier attack in all-nonfatal may
 * have left it in x2APIC mode): the xAPIC page, or MSR 800H + reg / 16.
 */
static bool lvt_x2apic;
static uint32_t lvt_base;

static uint32_t lvt_read(uint32_t reg)
{
	return lvt_x2apic ? (uint32_t)rdmsr(MSR_IA32_X2APIC_FIRST + reg / 16) : *mmio32(lvt_base + reg);
}

static void lvt_write(uint32_t reg, uint32_t v)
{
	if (lvt_x2apic)
		wrmsr(MSR_IA32_X2APIC_FIRST + reg / 16, v);
	else
		*mmio32(lvt_base + reg) = v;
}

/*
 * The LVT entries no event on Bochs's machine drives (no thermal sensor,
 * no performance counters): rewritten, they never fire, filtered or not.
 */
void attack_lvt(void)
{
	static const struct {
		const char *name;
		uint32_t reg, mode;
	} cases[] = {
		{ "lvt-thermal-smi-masked", XAPIC_REG_LVT_THERMAL, APIC_LVT_DELIVERY_MODE_SMI },
		{ "lvt-perf-init-masked", XAPIC_REG_LVT_PERF, APIC_LVT_DELIVERY_MODE_INIT },
		{ "lvt-perf-reserved-masked", XAPIC_REG_LVT_PERF, 3u << APIC_LVT_DELIVERY_MODE_SHIFT },
	};
	uint64_t apic_base = rdmsr(MSR_IA32_APIC_BASE);
	uint32_t saved_thermal, saved_perf, v, want;

	lvt_x2apic = apic_base & APIC_BASE_EXTD;
	lvt_base = (uint32_t)(apic_base & APIC_BASE_ADDR_MASK);
	announce("lvt", lvt_x2apic ? "LVT entries with delivery mode SMI, INIT and a reserved one, "
		 "x2APIC MSRs" : "LVT entries with delivery mode SMI, INIT and a reserved one, "
		 "xAPIC page");
	saved_thermal = lvt_read(XAPIC_REG_LVT_THERMAL);
	saved_perf = lvt_read(XAPIC_REG_LVT_PERF);
	/* Architectural: a masked fixed entry reads back as written (delivery status aside). */
	want = APIC_LVT_MASKED | APIC_LVT_DELIVERY_MODE_FIXED | 0x47;
	lvt_write(XAPIC_REG_LVT_PERF, want);
	v = lvt_read(XAPIC_REG_LVT_PERF);
	check("lvt-fixed-entry", (v & ~APIC_LVT_PENDING) == want,
	      "a fixed LVT entry written 0x%x reads 0x%x", want, v);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!contained_here(cases[i].name))
			continue;
		want = cases[i].mode | 0x47;
		lvt_write(cases[i].reg, want);
		v = lvt_read(cases[i].reg);
		lvt_write(cases[i].reg, APIC_LVT_MASKED);
		check(cases[i].name, (v & ~APIC_LVT_PENDING) == (want | APIC_LVT_MASKED),
		      "LVT %#x written 0x%x reads 0x%x", cases[i].reg, want, v);
	}
	lvt_write(XAPIC_REG_LVT_THERMAL, saved_thermal);
	lvt_write(XAPIC_REG_LVT_PERF, saved_perf);
}

/* XADD of 0 at @addr: the value loaded (the store writes it back unchanged). */
static uint32_t xadd_zero(uint32_t addr, unsigned int size)
{
	void *p = phys_ptr(addr);

	if (size == 1) {
		uint8_t v = 0;

		asm volatile("xaddb %0, %1" : "+q"(v), "+m"(*(volatile uint8_t *)p) : : "memory");
		return v;
	}
	if (size == 2) {
		uint16_t v = 0;

		asm volatile("xaddw %0, %1" : "+r"(v), "+m"(*(volatile uint16_t *)p) : : "memory");
		return v;
	}
	uint32_t v = 0;

	asm volatile("xaddl %0, %1" : "+r"(v), "+m"(*(volatile uint32_t *)p) : : "memory");
	return v;
}

void attack_apic_unaligned(void)
{
	/* Bytes 4-15 of TPR's slot (TPR set non-zero below) and of ID's, and a load reaching them. */
	static const struct {
		unsigned int offset, size;
	} loads[] = {
		{ 0x84, 4 }, { 0x88, 4 }, { 0x8c, 4 }, { 0x84, 1 }, { 0x86, 2 }, { 0x8f, 1 },
		{ 0x24, 4 }, { 0x28, 2 }, { 0x2d, 1 }, { 0x82, 4 }, { 0x83, 2 },
	};
	uint64_t apic_base = rdmsr(MSR_IA32_APIC_BASE);
	uint32_t base = (uint32_t)(apic_base & APIC_BASE_ADDR_MASK), saved_tpr, v;
	unsigned int bad = 0, bad_offset = 0, bad_size = 0;
	uint32_t bad_value = 0;

	announce("apic-unaligned", "XADD loads of xAPIC page bytes no register holds");
	if (!exitplan_detected()) {
		/* Bochs's APIC panics on these offsets: only exitplan answers them. */
		skip("apic-unaligned-reads-zero", "not under exitplan: bare Bochs panics there");
		return;
	}
	if (apic_base & APIC_BASE_EXTD) {
		skip("apic-unaligned-reads-zero", "the APIC is in x2APIC mode: no xAPIC page");
		return;
	}
	saved_tpr = *mmio32(base + XAPIC_REG_TPR);
	*mmio32(base + XAPIC_REG_TPR) = 0x20;	/* below every vector in use, but not 0 */
	for (unsigned int i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		v = xadd_zero(base + loads[i].offset, loads[i].size);
		if (v && !bad++) {
			bad_offset = loads[i].offset;
			bad_size = loads[i].size;
			bad_value = v;
		}
	}
	v = *mmio32(base + XAPIC_REG_TPR);
	*mmio32(base + XAPIC_REG_TPR) = saved_tpr;
	check("apic-unaligned-reads-zero", !bad, "%u load(s) read non-zero, the first %u byte(s) at "
	      "%#x: %#x", bad, bad_size, bad_offset, bad_value);
	/* The stores of the XADDs (none at a register's offset with 4 bytes) changed nothing. */
	check("apic-unaligned-tpr-kept", (v & 0xff) == 0x20, "TPR reads %#x after the loads", v);
}

/* The HPET's base from the ACPI HPET table, or the usual one. */
static uint32_t hpet_base(void)
{
	const struct acpi_rsdp *rsdp = acpi_find_rsdp();
	const struct acpi_header *t = rsdp ? acpi_find_table(rsdp, "HPET") : NULL;
	uint32_t base;

	if (!t || t->length < HPET_ACPI_BASE_OFFSET + 8)
		return HPET_DEFAULT_BASE;
	memcpy(&base, (const uint8_t *)t + HPET_ACPI_BASE_OFFSET, sizeof(base));
	return base;
}

void attack_hpet(void)
{
	static volatile uint32_t canary;
	uint32_t base = hpet_base(), cap, conf;
	uint64_t t;

	announce("hpet", "timer 0 in FSB delivery aimed at guest memory");
	cap = *mmio32(base + HPET_GCAP_ID);
	conf = *mmio32(base + HPET_T0_CONF);
	if (exitplan_detected())
		check("hpet-absent", cap == 0xffffffffu && conf == 0xffffffffu,
		      "the HPET at 0x%x reads capabilities 0x%x, timer 0 0x%x", base, cap, conf);
	else if (!(conf & HPET_TN_FSB_INT_DEL_CAP))
		printf("isolation: hpet: timer 0 has no FSB delivery (0x%x)\n", conf);
	if (!contained_here("hpet-fsb-no-write"))
		return;
	canary = FSB_CANARY;
	*mmio32(base + HPET_GEN_CONF) = 0;
	*mmio32(base + HPET_MAIN_COUNTER) = 0;
	*mmio32(base + HPET_MAIN_COUNTER + 4) = 0;
	*mmio32(base + HPET_T0_FSB_ROUTE) = FSB_VALUE;
	*mmio32(base + HPET_T0_FSB_ROUTE + 4) = (uint32_t)(uintptr_t)&canary;
	*mmio32(base + HPET_T0_COMPARATOR) = 100;
	*mmio32(base + HPET_T0_COMPARATOR + 4) = 0;
	*mmio32(base + HPET_T0_CONF) = HPET_TN_FSB_EN_CNF | HPET_TN_INT_ENB_CNF;
	*mmio32(base + HPET_GEN_CONF) = HPET_ENABLE_CNF;
	t = rdtsc();
	while (rdtsc() - t < FSB_WAIT_TICKS && canary == FSB_CANARY)
		pause();
	*mmio32(base + HPET_GEN_CONF) = 0;
	check("hpet-fsb-no-write", canary == FSB_CANARY,
	      "the HPET's FSB message wrote 0x%x over the word at 0x%x", canary,
	      (uint32_t)(uintptr_t)&canary);
}

/* Nothing on Bochs's i440FX decodes this part of the PCI hole (no BAR, no chipset window). */
#define UNCLAIMED_PCI_HOLE	0xd0000000u
#define VGA_WINDOW		0xa0000u
#define VBE_LFB			0xe0000000u	/* Bochs's VBE framebuffer, PCI BAR 0 of its VGA */
#define UNCLAIMED_STORE		0x5a5a5a5au

/* Every load size at @addr reads all ones; the merges keep the register's other bits. */
static bool all_ones(uint32_t addr, char *why, unsigned int len)
{
	volatile uint8_t *p = phys_ptr(addr);
	uint32_t d, b = 0x12345678, w = 0x12345678, h = 0x12345678;

	d = *mmio32(addr);
	asm volatile("movb %1, %b0" : "+q"(b) : "m"(*p));
	asm volatile("movw %1, %w0" : "+r"(w) : "m"(*(volatile uint16_t *)p));
	asm volatile("movb %1, %h0" : "+Q"(h) : "m"(p[1]));
	snprintf(why, len, "at 0x%x: dword 0x%x, byte into AL 0x%x, word into AX 0x%x, "
		 "byte into AH 0x%x", addr, d, b, w, h);
	return d == 0xffffffffu && b == 0x123456ffu && w == 0x1234ffffu && h == 0x1234ff78u;
}

static void check_all_ones(const char *name, uint32_t addr)
{
	char why[160];
	bool ok = all_ones(addr, why, sizeof(why));

	check(name, ok, "%s", why);
}

/* Stores of each size and kind (MOV r, MOV imm), then every load: all ones still. */
static void store_and_check(const char *name, uint32_t addr)
{
	volatile uint8_t *p = phys_ptr(addr);
	uint32_t at4, at8;
	char why[160];
	bool ok;

	*mmio32(addr) = UNCLAIMED_STORE;
	p[4] = 0xa5;
	*(volatile uint16_t *)(p + 6) = 0x1234;
	asm volatile("movl $0x600dc0de, %0" : "=m"(*(volatile uint32_t *)(p + 8)));
	ok = all_ones(addr, why, sizeof(why));
	at4 = *mmio32(addr + 4);
	at8 = *mmio32(addr + 8);
	check(name, ok && at4 == 0xffffffffu && at8 == 0xffffffffu,
	      "after stores %s; +4 reads 0x%x, +8 reads 0x%x", why, at4, at8);
}

void attack_unclaimed(void)
{
	announce("unclaimed", "loads and stores where no device the guest owns answers");
	/* Architectural: an address nothing decodes, as bare Bochs (and a PC) answers it. */
	if (qemu_tcg_detected() && !cmdline_has("notcgskip")) {
		/* QEMU's unassigned memory reads 0 where a PC's master abort reads all ones. */
		skip("unclaimed-read", "QEMU reads unassigned memory as 0");
		skip("unclaimed-write", "QEMU reads unassigned memory as 0");
	} else {
		check_all_ones("unclaimed-read", UNCLAIMED_PCI_HOLE + 0x100);
		store_and_check("unclaimed-write", UNCLAIMED_PCI_HOLE);
	}
	/* Device memory exitplan does not grant: absent for the guest. */
	if (contained_here("vga-not-granted"))
		store_and_check("vga-not-granted", VGA_WINDOW);
	if (contained_here("lfb-not-granted"))
		store_and_check("lfb-not-granted", VBE_LFB);
}

void attack_apic_stack(void)
{
	announce("apic-stack", "INT3 with the stack in the local APIC page");
	/* INT3's delivery pushes EFLAGS, CS and EIP below 0xfee00400, into the page. */
	asm volatile("movl %%esp, %%ebx\n\t"
		     "movl $0xfee00400, %%esp\n\t"
		     "int3\n\t"
		     "movl %%ebx, %%esp"
		     : : : "ebx", "memory");
	printf("FAIL: apic-stack not contained\n");
	test_abort();
}

/*
 * MUL with its operand where no device answers: hardware multiplies by
 * all ones; exitplan does not emulate MUL on MMIO (docs/GUESTS.md) and
 * stops the guest, its report naming the instruction's bytes.
 */
void attack_mmio_unemulated(void)
{
	announce("mmio-unemulated", "CALL through a pointer where no device answers");
	/* Paging is off: the absolute address is the physical one (CALL m32, FF /2 with a disp32). */
	asm volatile("call *%c0" : : "i"(UNCLAIMED_PCI_HOLE) : "memory");
	printf("FAIL: mmio-unemulated not contained\n");
	test_abort();
}

void attack_ioapic_byte(void)
{
	announce("ioapic-byte", "a byte write to IOREGSEL");
	*(volatile uint8_t *)phys_ptr(IOAPIC_BASE + IOAPIC_IOREGSEL) = IOAPIC_REG_VER;
	printf("FAIL: ioapic-byte not contained\n");
	test_abort();
}
