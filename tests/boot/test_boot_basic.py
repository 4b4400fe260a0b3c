# SPDX-License-Identifier: GPL-2.0-only
"""The boot runtime on its own: the image boots from GRUB on Bochs and on
QEMU, prints its banner, the memory map and the modules, moves the
modules into the hypervisor region, and stops by itself.  The runtime's
self-tests (selftest=NAME on the hypervisor command line) check printk's
formatter, the page allocator, and that exceptions and panics are
reported and power the machine off instead of hanging it."""
import re
import subprocess

import pytest

import bootlib

HV_LOAD_ADDR = 0x4000000     # where GRUB loads the image; it moves to the top of RAM
PAGE = 4096
LARGE_PAGE = 2 << 20

# A module with a size that is not a multiple of a page, and content that
# would show if it were truncated or misplaced.
BLOB_SIZE = 3 * PAGE + 123
BLOB_ARGS = "blob answer=42"


@pytest.fixture(scope="module")
def blob(boot_out):
    p = boot_out / "blob.bin"
    p.write_bytes(bytes((i * 7 + 3) & 0xff for i in range(BLOB_SIZE)))
    return p


@pytest.fixture(scope="module")
def basic_iso(hv_elf, blob, boot_out):
    return bootlib.build_iso(hv_elf, blob, boot_out / "basic.iso",
                             hv_args="console=both", guest_args=BLOB_ARGS)


@pytest.fixture(scope="module")
def basic_runs(basic_iso, boot_out):
    """Bochs twice (determinism) and QEMU once, in parallel."""
    cpu = bootlib.DEFAULT_CPU
    return bootlib.run_parallel([
        lambda: bootlib.run_bochs(basic_iso, cpu, boot_out / "basic-bochs-1.serial"),
        lambda: bootlib.run_bochs(basic_iso, cpu, boot_out / "basic-bochs-2.serial"),
        lambda: bootlib.run_qemu(basic_iso, boot_out / "basic-qemu.serial"),
    ])


def check_boot_output(r):
    """What every boot prints before the VMM runs."""
    r.expect(r"^exitplan \S+ \(profile [A-Za-z0-9_-]+\)$")
    r.expect(r"^exitplan: boot loader 'GRUB [^']*', command line 'console=both'$")

    # The memory map: the announced number of entries follows, and the
    # hypervisor region lies at the top of the highest available range
    # below 4 GiB, up to its end (issue 9 item 2).
    m = r.expect(r"^exitplan: memory map \((\d+) entries\):$")
    entries = re.findall(r"^  mem \[([0-9a-f]{16})-([0-9a-f]{16})\] (.+)$", r.serial, re.M)
    assert len(entries) == int(m.group(1)) > 0, r.describe()
    ram = [(int(a, 16), int(b, 16) + 1) for a, b, t in entries if t == "available"]
    top = max(b for a, b in ram if a < 1 << 32)

    m = r.expect(r"^exitplan: hypervisor region \[([0-9a-f]+), ([0-9a-f]+)\), "
                 r"image \[([0-9a-f]+), ([0-9a-f]+)\) \(moved from ([0-9a-f]+)\)$")
    start, end, img_start, img_end, loaded = (int(x, 16) for x in m.groups())
    assert end == top and start % LARGE_PAGE == 0 and loaded == HV_LOAD_ADDR, r.describe()
    assert any(a <= start and end <= b for a, b in ram), r.describe()
    assert img_start == start and start < img_end < end, r.describe()

    # The module: whole, after the image, inside the region.
    r.expect(r"^exitplan: 1 module$")
    m = r.expect(r"^  module 0 \[([0-9a-f]+), ([0-9a-f]+)\) (\d+) bytes '([^']*)'"
                 r"(?: \(moved from ([0-9a-f]+)\))?$")
    mod_start, mod_end, size = int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))
    assert size == BLOB_SIZE == mod_end - mod_start, r.describe()
    assert m.group(4) == BLOB_ARGS
    assert img_end <= mod_start and mod_end <= end and mod_start % PAGE == 0, r.describe()

    # The page pool starts after the module and runs to the region's end.
    m = r.expect(r"^exitplan: page pool \[([0-9a-f]+), ([0-9a-f]+)\): (\d+) pages free$")
    pool_start, pool_end, free = int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))
    assert pool_start >= mod_end and pool_start % PAGE == 0 and pool_end == end
    assert free == (pool_end - pool_start) // PAGE


def test_bochs_boots(basic_runs):
    r = basic_runs[0]
    check_boot_output(r)
    # Whatever the VMM did with a module that is no guest, the run ended
    # with a status line, without a panic or a hang.
    r.expect_clean_exit()


def test_bochs_is_deterministic(basic_runs):
    """clock: sync=none makes two runs of one image print the same bytes."""
    a, b = basic_runs[0], basic_runs[1]
    assert a.serial and a.serial == b.serial, a.describe() + "\n" + b.describe()


def test_qemu_boots(basic_runs):
    r = basic_runs[2]
    check_boot_output(r)
    r.expect_clean_exit()


def test_module_moved_intact(basic_runs):
    """GRUB 2.06 loads modules at 1 MiB; the runtime copies them into its
    region.  Both emulators agree on where they ended up."""
    where = [r.expect(r"^  module 0 .*$").group(0) for r in (basic_runs[0], basic_runs[2])]
    assert "moved from" in where[0]
    assert re.sub(r" \(moved from.*", "", where[0]) == re.sub(r" \(moved from.*", "", where[1])


# (format, Python arguments formatting to what C must print), in the order
# of selftest_format() in runtime/host/selftest.c.
FORMAT_CASES = [
    ("%d %i %d", (0, -1, 2147483647)),
    ("%d", (-2147483648,)),
    ("%u %u", (0, 4294967295)),
    ("%x %X", (0xdeadbeef, 0xdeadbeef)),
    ("%lx %lu", (0xffffffffffffffff, 18446744073709551615)),
    ("%016llx", (0x1234abcd,)),
    ("%lld %ld", (-9223372036854775808, -42)),
    ("%llu", (12345678901234567890,)),
    ("[%5d|%-5d|%05d]", (42, 42, 42)),
    ("[%05d|%-5d]", (-42, -42)),
    ("[%8s|%-8s|%.3s]", ("abc", "abc", "abcdef")),
    ("[%c%c%c]", ("x", "y", "z")),
    ("%p", (0x4000000,)),
    ("%s %%", ("100",)),
    ("%hhu %hd", (0xff, -32768)),      # C truncates 0x1ff and 0x18000
    ("[%*d|%-*d]", (4, 7, 4, 7)),
    ("%zu %zx", (4096, 4096)),
    ("[%#x|%#llx|%#X|%#x|%#010x]", (255, 0x4000000, 0xab, 0, 0x1f)),
]

# Where C and Python disagree, C's answer, written out: "%#x" of zero is
# "0" in C (no prefix) but "0x0" in Python.
FORMAT_C_ONLY = {
    "[%#x|%#llx|%#X|%#x|%#010x]": "[0xff|0x4000000|0XAB|0|0x0000001f]",
}


def python_format(fmt, args):
    fmt = re.sub(r"(hh|h|ll|l|z)([diuxX])", r"\2", fmt)
    fmt = fmt.replace("%p", "0x%016x")
    return fmt % args


# The self-tests that return share one boot; each that ends in a panic
# needs its own.
PASSING_SELFTESTS = "format,modules,alloc,smp"
FATAL_SELFTESTS = ["pagefault", "ud", "panic", "doublefree", "stackoverflow", "writetext",
                   "writerelro"]


@pytest.fixture(scope="module")
def selftest_runs(hv_elf, blob, boot_out):
    names = ["passing"] + FATAL_SELFTESTS
    args = {"passing": PASSING_SELFTESTS, **{n: n for n in FATAL_SELFTESTS}}
    isos = {n: bootlib.build_iso(hv_elf, blob, boot_out / f"selftest-{n}.iso",
                                 hv_args=f"selftest={args[n]}", guest_args=BLOB_ARGS)
            for n in names}
    jobs = [(lambda n=n: bootlib.run_bochs(isos[n], bootlib.DEFAULT_CPU,
                                           boot_out / f"selftest-{n}.serial"))
            for n in names]
    return dict(zip(names, bootlib.run_parallel(jobs)))


def test_passing_selftests_all_ran(selftest_runs):
    r = selftest_runs["passing"]
    assert r.findall(r"^selftest: (\w+)$") == PASSING_SELFTESTS.split(","), r.describe()
    r.expect_clean_exit(0)


def test_smp_with_one_cpu(selftest_runs):
    """With one CPU, starting the APs finds none and changes nothing."""
    r = selftest_runs["passing"]
    r.expect(r"^exitplan: the MADT lists 1 CPU$")
    r.expect(r"^exitplan: 1 CPU online$")
    r.expect(r"^selftest: smp cpu 0: id 0 apic \d+ tr 18 gs \w+ rsp \w+ ok$")
    r.expect(r"^selftest: smp ok: 1 CPUs$")


def test_printk_format(selftest_runs):
    r = selftest_runs["passing"]
    got = re.findall(r"^selftest: format (\d+) '(.*)' \[(.*)\]$", r.serial, re.M)
    assert len(got) == len(FORMAT_CASES), r.describe()
    for (i, fmt, out), (want_fmt, args) in zip(got, FORMAT_CASES):
        assert fmt == want_fmt, f"case {i}: C and Python tables out of step"
        want = FORMAT_C_ONLY.get(fmt) or python_format(fmt, args)
        assert out == want, f"case {i}: {fmt!r}"
    r.expect(r"^selftest: snprintf truncation ret=10 buf=\[abcdefg\]$")
    r.expect_clean_exit(0)


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def test_module_contents(selftest_runs, blob):
    """The module the hypervisor holds is byte for byte the file on the ISO."""
    r = selftest_runs["passing"]
    got = int(r.expect(r"^selftest: module 0 fnv1a64 ([0-9a-f]{16})$").group(1), 16)
    assert got == fnv1a64(blob.read_bytes()), r.describe()
    r.expect_clean_exit(0)


def test_page_allocator(selftest_runs):
    r = selftest_runs["passing"]
    m = r.expect(r"^selftest: alloc ok: (\d+) pages, pool \[([0-9a-f]+), ([0-9a-f]+)\)$")
    assert int(m.group(1)) == (int(m.group(3), 16) - int(m.group(2), 16)) // PAGE
    r.expect_clean_exit(0)


def check_panic_stops(r):
    """A panic prints its line and the state, and powers off: no hang, no
    exit-status line, nothing after the report."""
    assert not r.timed_out, r.describe()
    assert r.panicked, r.describe()
    assert r.exit_status is None, r.describe()
    r.expect(r"^  on CPU 0, called from 0x[0-9a-f]{16}, RSP [0-9a-f]{16}$")
    r.expect(r"^  CR0 [0-9a-f]{16}  CR3 [0-9a-f]{16}  CR4 [0-9a-f]{16}$")
    # The report ends with the code addresses found on the stack.
    tail = r.serial[r.serial.rindex("exitplan: PANIC: "):].splitlines()
    assert tail[3] == "  code addresses on the stack (? = maybe stale):", r.describe()
    assert all(re.fullmatch(r"   (?: \? [0-9a-f]+)+", l) for l in tail[4:]), r.describe()


def functions_of(r, elf, return_addresses):
    """The functions that contain the calls these return addresses follow
    (address - 1: a call to a noreturn function may be the last
    instruction of its function).  The image ran moved from its link
    address (runtime/host/reloc.c): the addresses are taken back by as much."""
    moved = r.hv_region()[0] - HV_LOAD_ADDR
    out = subprocess.run(["addr2line", "-f", "-e", str(elf)] +
                         ["%#x" % (a - 1 - moved) for a in return_addresses],
                         stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines()
    return out[0::2]


def stack_functions(r, elf):
    """The functions addr2line names for the panic's stack words."""
    tail = r.serial[r.serial.rindex("exitplan: PANIC: "):]
    return functions_of(r, elf, [int(a, 16) for a in re.findall(r"\? ([0-9a-f]+)", tail)])


def test_page_fault_is_reported(selftest_runs):
    r = selftest_runs["pagefault"]
    check_panic_stops(r)
    r.expect(r"^exitplan: EXCEPTION #PF \(vector 14\) on CPU 0, error code 0x0$")
    r.expect(r"^  CR0 [0-9a-f]{16}  CR2 0000000100000000  CR3 [0-9a-f]{16}  CR4 [0-9a-f]{16}$")
    rip = int(r.expect(r"^  RIP ([0-9a-f]{16})  CS 0008  RFLAGS").group(1), 16)
    start, end = r.hv_region()
    assert start <= rip < end
    r.expect(r"^exitplan: PANIC: unhandled exception #PF at RIP %016x$" % rip)


def test_invalid_opcode_is_reported(selftest_runs):
    r = selftest_runs["ud"]
    check_panic_stops(r)
    r.expect(r"^exitplan: EXCEPTION #UD \(vector 6\) on CPU 0, error code 0x0$")
    # The frame: every general register, three to a line, in this order.
    for names in (("RAX", "RBX", "RCX"), ("RDX", "RSI", "RDI"), ("RBP", "R8 ", "R9 "),
                  ("R10", "R11", "R12"), ("R13", "R14", "R15")):
        r.expect(r"^  " + "  ".join(n + r" [0-9a-f]{16}" for n in names) + "$")
    r.expect(r"^exitplan: PANIC: unhandled exception #UD at RIP [0-9a-f]{16}$")


def test_panic(selftest_runs, hv_elf):
    r = selftest_runs["panic"]
    check_panic_stops(r)
    r.expect(r"^exitplan: PANIC: selftest panic 42$")
    # The caller and the stack words lead back to where it came from.
    caller = int(r.expect(r"^  on CPU 0, called from 0x([0-9a-f]{16}),").group(1), 16)
    assert functions_of(r, hv_elf, [caller]) == ["selftest_one"], r.describe()
    assert "hv_main" in stack_functions(r, hv_elf), r.describe()


def test_double_free_panics(selftest_runs):
    r = selftest_runs["doublefree"]
    check_panic_stops(r)
    r.expect(r"^exitplan: PANIC: page_free: page 0x[0-9a-f]{16} is not allocated "
             r"\(double free\?\)$")


@pytest.fixture(scope="module")
def no_long_mode_runs(basic_iso, boot_out):
    """CPUs without long mode: Bochs's Core Duo (Yonah) and QEMU's qemu32."""
    return bootlib.run_parallel([
        lambda: bootlib.run_bochs(basic_iso, "core_duo_t2400_yonah",
                                  boot_out / "nolm-bochs.serial", timeout=60),
        lambda: bootlib.run_qemu(basic_iso, boot_out / "nolm-qemu.serial", timeout=60,
                                 cpu="qemu32"),
    ])


@pytest.mark.parametrize("which", [0, 1], ids=["bochs-yonah", "qemu32"])
def test_no_long_mode_is_reported(no_long_mode_runs, which):
    """The 32-bit entry refuses such a CPU on the serial port itself, with
    no console yet, and powers off instead of triple-faulting."""
    r = no_long_mode_runs[which]
    assert not r.timed_out, r.describe()
    assert r.lines == ["exitplan: PANIC: this CPU has no long mode "
                       "(CPUID.80000001H:EDX.LM = 0)"], r.describe()


def test_stack_overflow_hits_the_guard_page(selftest_runs):
    """Runaway recursion faults on the unmapped page under the stack; the
    #PF cannot be delivered on that stack, so it becomes a #DF, which runs
    on its own IST stack and names the cause."""
    r = selftest_runs["stackoverflow"]
    check_panic_stops(r)
    r.expect(r"^exitplan: EXCEPTION #DF \(vector 8\) on CPU 0, error code 0x0$")
    r.expect(r"^exitplan: CR2 is in a stack guard page: stack overflow$")
    r.expect(r"^exitplan: PANIC: unhandled exception #DF at RIP [0-9a-f]{16}$")


def test_code_is_write_protected(selftest_runs):
    """A write to the hypervisor's code is a #PF (present, write: error
    code 3) at the address written, not a silent patch."""
    r = selftest_runs["writetext"]
    check_panic_stops(r)
    target = r.expect(r"^selftest: writing to 0x([0-9a-f]{16})$").group(1)
    r.expect(r"^exitplan: EXCEPTION #PF \(vector 14\) on CPU 0, error code 0x3$")
    r.expect(r"^  CR0 [0-9a-f]{16}  CR2 %s  CR3" % target)


def test_relro_is_write_protected(selftest_runs, hv_elf):
    """const data that holds pointers (.data.rel.ro: the exit dispatch
    table, the name tables) is written by the relocations alone, then
    write-protected with .rodata: a write is a #PF (present, write)."""
    r = selftest_runs["writerelro"]
    check_panic_stops(r)
    target = r.expect(r"^selftest: writing to 0x([0-9a-f]{16})$").group(1)
    r.expect(r"^exitplan: EXCEPTION #PF \(vector 14\) on CPU 0, error code 0x3$")
    r.expect(r"^  CR0 [0-9a-f]{16}  CR2 %s  CR3" % target)
    # The probe is where the dispatch table is: in .data.rel.ro, inside the read-only segment.
    out = subprocess.run(["readelf", "-SW", str(hv_elf)], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    m = re.search(r"\.data\.rel\.ro\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", out)
    assert m, out
    start, size = int(m.group(1), 16), int(m.group(2), 16)
    linked = int(target, 16) - (r.hv_region()[0] - HV_LOAD_ADDR)
    assert start <= linked < start + size, r.describe()
