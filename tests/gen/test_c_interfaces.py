# SPDX-License-Identifier: GPL-2.0-only
"""The C the generated code builds on, compiled and run on the host:
runtime/host/nospec.h (the speculation-safe index clamp, 64- and 32-bit, and
branch-free), PROFILE_DIRECT_REASONS_LIST() in every profile.h,
VMX_EXIT_HANDLER_FUNCTIONS() in exit_handlers.h, and the statistics
table of arch/vmx/exit_stats.h against the slots the generator claims in
it."""

import re
import shutil
import subprocess

import pytest

from conftest import ROOT, i386_runner

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")

PROFILES = sorted(p.stem for p in (ROOT / "profiles").glob("*.yaml"))
CFLAGS = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"]
INC = ["-iquote", str(ROOT),
       "-iquote", str(ROOT / "generated" / "common")]


def build_and_run(tmp_path, source, flags=(), inc=INC, runner=()):
    src = tmp_path / "t.c"
    exe = tmp_path / "t"
    src.write_text(source)
    r = subprocess.run(["gcc", *CFLAGS, *flags, *inc, str(src), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return subprocess.run([*runner, str(exe)], capture_output=True, text=True, timeout=60)


# Every (index, size) pair around the interesting edges, checked against
# the plain comparison.  CHECK_BODY returns 0 when all agree, else the
# first failing case's number.
NOSPEC_CHECK = r"""
#include "runtime/host/nospec.h"

static int check(void)
{
	static const unsigned long sizes[] = { 1, 2, 3, 69, 70, 71, 255, 256, 65536, 65537 };
	int n = 0;

	for (unsigned int s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned long size = sizes[s];
		unsigned long idx[] = { 0, 1, size - 1, size, size + 1, 2 * size, 65535, 65536,
					~0UL, ~0UL >> 1, (~0UL >> 1) + 1 };

		for (unsigned int i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
			unsigned long want = idx[i] < size ? idx[i] : 0;
			unsigned long mask = idx[i] < size ? ~0UL : 0;

			n++;
			if (array_index_nospec(idx[i], size) != want ||
			    array_index_mask_nospec(idx[i], size) != mask)
				return n;
		}
	}
	return 0;
}
"""


def test_nospec_64bit(tmp_path):
    r = build_and_run(tmp_path, NOSPEC_CHECK + "int main(void) { return check(); }\n")
    assert r.returncode == 0, f"case {r.returncode} wrong"


def test_nospec_32bit(tmp_path):
    """With a 32-bit long (no 32-bit libc here: a bare _start and the
    i386 exit system call); under qemu-i386 where the host kernel runs
    no 32-bit programs."""
    runner = i386_runner(tmp_path)
    body = NOSPEC_CHECK + ('void _start(void)\n{\n\tint bad = check();\n\n'
                           '\tasm volatile("int $0x80" :: "a"(1), "b"(bad));\n\tfor (;;)\n\t\t;\n}\n')
    r = build_and_run(tmp_path, body, flags=("-m32", "-ffreestanding", "-nostdlib", "-static", "-no-pie"),
                      runner=runner)
    assert r.returncode == 0, f"case {r.returncode} wrong"


@pytest.mark.skipif(shutil.which("objdump") is None, reason="no objdump")
@pytest.mark.parametrize("bits", ["-m64", "-m32"])
def test_nospec_is_branch_free(tmp_path, bits):
    """At -O2 the clamp compiles to arithmetic: no conditional jump, no
    CMOV, no SETcc (all of which the CPU may predict or the compiler may
    have derived from a comparison)."""
    src = tmp_path / "f.c"
    obj = tmp_path / "f.o"
    src.write_text('#include "runtime/host/nospec.h"\n'
                   'unsigned long clamp(unsigned long i, unsigned long n) { return array_index_nospec(i, n); }\n'
                   'unsigned long clamp70(unsigned long i) { return array_index_nospec(i, 70); }\n')
    r = subprocess.run(["gcc", *CFLAGS, bits, "-fno-pie", "-c", *INC, str(src), "-o", str(obj)],
                       capture_output=True, text=True)
    if r.returncode != 0 and bits == "-m32":
        pytest.skip("no 32-bit compiler support: " + r.stderr.strip().splitlines()[-1])
    assert r.returncode == 0, r.stderr
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)],
                         capture_output=True, text=True, check=True).stdout
    insns = [line.split("\t", 1)[1].split()[0] for line in dis.splitlines() if re.match(r"\s+[0-9a-f]+:\t", line)]
    assert "sar" in insns or "sarq" in insns or "sarl" in insns, dis
    bad = [i for i in insns if re.fullmatch(r"j(?!mp)\w+|cmov\w+|set\w+", i)]
    assert not bad, dis


def _chain(profile):
    text = (ROOT / "generated" / profile / "exit_dispatch.c").read_text()
    return re.findall(r"^\tif \(basic_reason == (EXIT_REASON_\w+)\)", text, re.M)


@pytest.mark.parametrize("profile", PROFILES)
def test_direct_reasons_list(tmp_path, profile):
    """PROFILE_DIRECT_REASONS_LIST() expands to the dispatch's chain, in its
    order, with PROFILE_DIRECT_REASONS entries."""
    src = r"""
#include <stdio.h>
#include "profile.h"

#define X(reason) { #reason, reason },
static const struct { const char *name; int number; } chain[] = {
	PROFILE_DIRECT_REASONS_LIST(X)
	{ "end", -1 }
};
#undef X

_Static_assert(sizeof(chain) / sizeof(chain[0]) == PROFILE_DIRECT_REASONS + 1,
	       "PROFILE_DIRECT_REASONS_LIST has PROFILE_DIRECT_REASONS entries");

int main(void)
{
	for (unsigned int i = 0; chain[i].number >= 0; i++)
		printf("%s %d\n", chain[i].name, chain[i].number);
	return 0;
}
"""
    r = build_and_run(tmp_path, src, inc=INC + ["-iquote", str(ROOT / "generated" / profile)])
    assert r.returncode == 0, r.stderr
    got = [line.split() for line in r.stdout.splitlines()]
    assert [name for name, _ in got] == _chain(profile)
    numbers = dict(re.findall(r"^\t(EXIT_REASON_\w+) = (\d+),", (ROOT / "generated" / "common" /
                                                                   "vmx_exit_reasons.h").read_text(), re.M))
    assert all(numbers[name] == n for name, n in got)


def test_handler_functions_once_each(tmp_path, generator):
    """VMX_EXIT_HANDLER_FUNCTIONS() names every handler of VMX_EXIT_HANDLERS()
    exactly once: defining an object per function would not compile with a
    duplicate, and the names match spec/handlers.yaml's, first use first."""
    src = r"""
#include <stdio.h>
#include "exit_handlers.h"

#define X(fn) static enum vmx_exit_action (*const ptr_##fn)(struct vcpu *) = fn;
VMX_EXIT_HANDLER_FUNCTIONS(X)
#undef X

/* Every function of VMX_EXIT_HANDLERS() is one of the above. */
#define X(reason, fn) (void)ptr_##fn;
static void uses(void) { VMX_EXIT_HANDLERS(X) }
#undef X

#define X(fn) #fn,
static const char *const names[] = { VMX_EXIT_HANDLER_FUNCTIONS(X) };
#undef X

int main(void)
{
	uses();
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		puts(names[i]);
	return 0;
}
"""
    # The handlers are only declared: compile and assemble, do not link.
    c = tmp_path / "h.c"
    c.write_text(src)
    r = subprocess.run(["gcc", *CFLAGS, "-c", *INC, str(c), "-o", str(tmp_path / "h.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["gcc", "-E", "-P", *INC, str(c)], capture_output=True, text=True, check=True)
    listed = re.search(r"names\[\] = \{(.*?)\};", r.stdout, re.S).group(1)
    names = re.findall(r'"(\w+)"', listed)
    expected = []
    for _, fn in generator.spec.handler_list:
        if fn not in expected:
            expected.append(fn)
    assert names == expected
    assert len(set(names)) == len(names)


# A VM entry without "load IA32_EFER" sets EFER.LME and .LMA from "IA-32e
# mode guest", a VM exit from "host address-space size" (1: a 64-bit host).
# The test plays that part of the CPU around the generated switch code and
# checks that no WRMSR ever changes LME or LMA in the host (it would #GP),
# that the other bits are switched, and that a difference in LME/LMA alone
# costs no WRMSR.  The fake CPU is the unit tests' (tests/unit/fakes).
EFER_SWITCH = r"""
#include <stdio.h>
#include "msr_switch.h"

#define HOST_OWNED	(EFER_LME | EFER_LMA)

static struct vmx_controls ctl;
static struct vcpu vcpu;
static unsigned int wrmsrs;

static int check_log(void)
{
	for (unsigned int i = 0; i < fake_cpu.n_log; i++) {
		if (fake_cpu.log[i].op != FAKE_WRMSR || fake_cpu.log[i].index != MSR_IA32_EFER)
			continue;
		wrmsrs++;
		if ((fake_cpu.log[i].value & HOST_OWNED) != HOST_OWNED)
			return 1;	/* would clear LME/LMA in the 64-bit host */
	}
	fake_cpu.n_log = 0;
	return 0;
}

/* One round trip; returns EFER as the guest ran with it. */
static int round_trip(uint64_t guest, int ia32e_guest, uint64_t *in_guest)
{
	uint64_t efer;

	vcpu.msrs.guest[PROFILE_MANUAL_MSR_IA32_EFER] = guest;
	profile_msrs_before_entry(&vcpu);
	if (check_log())
		return 1;
	fake_msr_get(MSR_IA32_EFER, &efer);
	efer = (efer & ~HOST_OWNED) | (ia32e_guest ? HOST_OWNED : 0);	/* VM entry */
	fake_msr_set(MSR_IA32_EFER, efer);
	*in_guest = efer;
	fake_msr_set(MSR_IA32_EFER, efer | HOST_OWNED);			/* VM exit */
	profile_msrs_on_exit(&vcpu);
	if (check_log())
		return 1;
	fake_msr_get(MSR_IA32_EFER, &efer);
	return efer != (EFER_SCE | EFER_NXE | HOST_OWNED);			/* the host's again */
}

int main(void)
{
	uint64_t g;

	fake_cpu_reset();
	ctl.gate_choice[PROFILE_GATE_EFER] = PROFILE_GATE_EFER_MANUAL;
	vcpu.controls = &ctl;
	fake_msr_set(MSR_IA32_EFER, EFER_SCE | EFER_NXE | HOST_OWNED);
	fake_msr_set(MSR_IA32_KERNEL_GS_BASE, 0);
	profile_msrs_save_host(&vcpu);

	/* A 32-bit guest without NX: SCE and NXE go, LME/LMA are the entry's. */
	if (round_trip(0, 0, &g) || g != 0 || wrmsrs != 2)
		return 10;
	/* Guest and host differ only in LME/LMA: no WRMSR at all. */
	wrmsrs = 0;
	if (round_trip(EFER_SCE | EFER_NXE, 0, &g) || g != (EFER_SCE | EFER_NXE) || wrmsrs != 0)
		return 11;
	/* A 64-bit guest without NX. */
	wrmsrs = 0;
	if (round_trip(EFER_SCE | HOST_OWNED, 1, &g) || g != (EFER_SCE | HOST_OWNED) || wrmsrs != 2)
		return 12;
	return fake_cpu.gp_faults ? 13 : 0;
}
"""


def test_manual_efer_switch_leaves_lme_lma_to_the_cpu(tmp_path):
    fakes = ROOT / "tests" / "unit" / "fakes"
    if not (fakes / "fake_cpu.c").exists():
        pytest.skip("no tests/unit/fakes")
    src = tmp_path / "efer.c"
    src.write_text(EFER_SWITCH)
    inc = ["-iquote", str(fakes), *INC, "-iquote", str(ROOT / "generated" / "default")]
    exe = tmp_path / "efer"
    r = subprocess.run(["gcc", *CFLAGS, *inc, str(src), str(fakes / "fake_cpu.c"), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"case {r.returncode} failed"


# The statistics table's claim rule, in C: each line of stdin is a case
# ("c k1 k2 ...": count the keys in order in an empty table; "p k:s ...":
# claim key k at slot s as PROFILE_STATS_CLAIM_FAST_KEYS does, then count
# each key once).  Prints, for each key, the slot that holds it and that
# slot's count.
STATS_CLAIMS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/vmx/exit_stats.h"

static int slot_of(const struct exit_stats_table *t, unsigned long long key)
{
	for (int i = 0; i < EXIT_STATS_KEYS; i++)
		if (t->key[i] == key + 1)
			return i;
	return -1;
}

int main(void)
{
	char line[8192];

	printf("keys %d x2apic %#x %#x\n", EXIT_STATS_KEYS, MSR_IA32_X2APIC_FIRST,
	       MSR_IA32_X2APIC_LAST);
	while (fgets(line, sizeof(line), stdin)) {
		struct exit_stats_table t;
		unsigned long long keys[EXIT_STATS_KEYS];
		int n = 0;
		char *tok = strtok(line + 1, " \n");

		memset(&t, 0, sizeof(t));
		for (; tok && n < EXIT_STATS_KEYS; tok = strtok(NULL, " \n")) {
			char *colon = strchr(tok, ':');

			keys[n] = strtoull(tok, NULL, 0);
			if (line[0] == 'p')
				t.key[strtoul(colon + 1, NULL, 0)] = keys[n] + 1;
			else
				exit_stats_table_count(&t, keys[n]);
			n++;
		}
		for (int i = 0; line[0] == 'p' && i < n; i++)
			exit_stats_table_count(&t, keys[i]);
		for (int i = 0; i < n; i++) {
			int s = slot_of(&t, keys[i]);

			printf(" %d/%lld", s, s < 0 ? -1 : (long long)t.count[s]);
		}
		printf(" other %llu\n", (unsigned long long)t.other);
	}
	return 0;
}
"""


def stats_claim_cases(spec):
    import random
    from exitplan_gen import decide

    fast = [e.msr.index for e in spec.msr_fast.values()
            if not decide.X2APIC_FIRST <= e.msr.index <= decide.X2APIC_LAST]
    rng = random.Random(8)
    cases = [fast, sorted(spec.io_fast_ports), fast + sorted(spec.io_fast_ports),
             [0x10, 0x30, 0x50, 0x70, 0x11],		# one home slot, then its neighbour's
             [0x1f, 0x3f, 0x5f, 0x00],			# round the end of the table
             list(range(0x100, 0x100 + decide.EXIT_STATS_KEYS)),	# full
             [0xc0000080, 0xc0000100, 0x3a, 0x1b, 0x6e0, 0x48, 0x10a, 0xc0000103]]
    for _ in range(40):
        n = rng.randint(1, decide.EXIT_STATS_KEYS)
        keys = rng.sample(range(0, 0x200), n) if rng.random() < 0.5 else \
            [rng.getrandbits(32) for _ in range(n)]
        cases.append(list(dict.fromkeys(keys)))
    return [c for c in cases if c]


def test_stats_claims_match_the_table(tmp_path, generator):
    """decide.py's _claim() puts the fast handlers' keys (profile.h,
    PROFILE_STATS_CLAIM_FAST_KEYS) where arch/vmx/exit_stats.h's table
    would claim them, for the same table size and x2APIC range: counted
    in C, a claimed key lands in its generated slot, never in a second
    one, and the C claims an empty table's slots as _claim() says."""
    from exitplan_gen import decide

    cases = stats_claim_cases(generator.spec)
    lines = []
    for keys in cases:
        slots = decide._claim(keys)
        lines.append("c " + " ".join(f"{k:#x}" for k in keys))
        lines.append("p " + " ".join(f"{k:#x}:{slots[k]}" for k in keys))
    src = tmp_path / "t.c"
    exe = tmp_path / "t"
    src.write_text(STATS_CLAIMS)
    inc = [*INC, "-iquote", str(ROOT / "generated" / "default")]
    r = subprocess.run(["gcc", *CFLAGS, *inc, str(src), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=60, check=True)
    out = r.stdout.splitlines()
    assert out[0] == (f"keys {decide.EXIT_STATS_KEYS} x2apic {decide.X2APIC_FIRST:#x} "
                      f"{decide.X2APIC_LAST:#x}")
    for i, keys in enumerate(cases):
        want = " " + " ".join(f"{decide._claim(keys)[k]}/1" for k in keys) + " other 0"
        claimed, counted = out[1 + 2 * i], out[2 + 2 * i]
        # Counted in an empty table: each key where _claim() puts it, once.
        assert claimed == want, (keys, claimed)
        # Claimed by the generator, then counted: in its own slot, once.
        assert counted == want, (keys, counted)


def test_stats_claims_refuse_more_keys_than_slots():
    from exitplan_gen import decide

    with pytest.raises(ValueError):
        decide._claim(list(range(decide.EXIT_STATS_KEYS + 1)))
