"""The source tree's layering: runtime/, the architecture-neutral core,
reaches arch/vmx only through runtime/vm/vmm.h, so it includes none of
arch/vmx's headers; every include names its room from the repository root
(runtime/ROOM/x.h, arch/vmx/x.h, lib/x.h), only generated headers go by
their bare name; the EPT code needs nothing of the guest loader nor of the
VMCS setup; arch/vmx has no header that every file includes, and the
bring-up files' own interface stays theirs."""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def sources(folder):
    """The C and assembly sources of @folder and the rooms below it."""
    out = []
    for d, _, names in os.walk(os.path.join(ROOT, folder)):
        out += [os.path.join(d, n) for n in names if n.endswith((".c", ".h", ".S", ".ld"))]
    return sorted(out)


def test_runtime_includes_no_arch_vmx_header():
    bad = [f"{os.path.relpath(p, ROOT)}: {h}"
           for p in sources("runtime") for h in includes(p) if h.startswith("arch/")]
    assert not bad, "runtime/ includes arch/vmx headers (use runtime/vm/vmm.h):\n" + "\n".join(bad)


def test_includes_name_their_room():
    """A quoted include is a path from the repository root to a file that
    exists (runtime/vm/sched.h), or the bare name of a generated header (the
    profile's folder is chosen by the build).  lib/ names its own headers
    bare: the test guests build it too, with their own include path."""
    generated = set()
    for d in ("generated/common", "generated/default"):
        generated |= set(os.listdir(os.path.join(ROOT, d)))
    generated |= {"asm-offsets.h", "version.h"}
    bad = []
    for folder in ("runtime", "arch/vmx"):
        for p in sources(folder):
            for h in includes(p):
                if h in generated or os.path.exists(os.path.join(ROOT, h)):
                    continue
                bad.append(f"{os.path.relpath(p, ROOT)}: {h}")
    assert not bad, "includes that do not name their room:\n" + "\n".join(bad)



def test_ept_does_not_include_the_guest_loader():
    """The EPT map takes the guest's RAM from runtime/loader/guest_ram.h, not the loader."""
    for f in ("arch/vmx/ept.c", "arch/vmx/ept.h"):
        assert "runtime/loader/guest_loader.h" not in includes(os.path.join(ROOT, f)), f


def test_ept_needs_nothing_of_the_vmcs_setup():
    """ept.c allocates its tables itself (page_alloc()): no call back into vmx.c."""
    for f in ("arch/vmx/ept.c", "arch/vmx/ept.h"):
        bad = {"arch/vmx/vmx_setup.h", "arch/vmx/vcpu_arch.h", "arch/vmx/vcpu.h"} & \
            set(includes(os.path.join(ROOT, f)))
        assert not bad, f"{f} includes {sorted(bad)}"


def test_no_header_every_arch_vmx_file_includes():
    """vmx.h, which every file included, is split by concern (docs/VMX.md)."""
    assert not os.path.exists(os.path.join(ROOT, "arch/vmx/vmx.h"))
    cs = [p for p in sources("arch/vmx") if p.endswith(".c")]
    counts = {}
    for p in cs:
        for h in set(includes(p)):
            counts[h] = counts.get(h, 0) + 1
    local = {os.path.relpath(p, ROOT) for p in sources("arch/vmx") if p.endswith(".h")}
    every = sorted(h for h, n in counts.items() if n == len(cs) and h in local)
    assert not every, f"every arch/vmx/*.c includes {every}"


def test_vmx_setup_h_is_the_bring_up_files_own():
    users = sorted(os.path.basename(p) for d in ("arch/vmx", "runtime")
                   for p in sources(d) if "arch/vmx/vmx_setup.h" in includes(p))
    assert users == ["vmx.c", "vmx_caps.c", "vmx_report.c", "vmx_run.c"], users


# An external function's definition: not static, a name and its parameters, then the body.
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{]*\)\s*\{", re.M)


def code(path):
    """@path without its comments and string literals."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def calls_into(caller, callee):
    """The external functions defined in @callee that @caller calls."""
    mine = set(DEFINITION.findall(code(caller)))
    theirs = set(DEFINITION.findall(code(callee))) - mine
    text = code(caller)
    return sorted(n for n in theirs if re.search(r"\b" + n + r"\s*\(", text))


@pytest.mark.parametrize("lower,upper", [
    # The guest's MSRs reach the guest's APIC (the ICR, IA32_APIC_BASE's
    # mode, TSC deadline's vector), never the other way: the faulting
    # RDMSR/WRMSR apic.c needs is msr_safe.c's.
    ("arch/vmx/apic.c", "arch/vmx/msr.c"),
    # msr.c injects #GP with events.c; events.c needs nothing of msr.c.
    ("arch/vmx/events.c", "arch/vmx/msr.c"),
])
def test_one_way_calls(lower, upper):
    """@upper may call @lower; @lower calls nothing of @upper's nor includes its header."""
    assert calls_into(upper, lower), f"{upper} no longer calls {lower}: drop the pair"
    assert not calls_into(lower, upper), f"{lower} calls {upper}: a dependency circle"
    header = upper[:-2] + ".h"
    assert header not in includes(os.path.join(ROOT, lower)), f"{lower} includes {header}"


def test_events_and_msrs_do_not_call_each_other():
    """msr.c reaches events.c (injecting #GP), never the other way: the
    physical APIC's EOI and IRR that events.c needs are apic.c's, and the
    register accessors are phys_apic.h's alone."""
    assert "arch/vmx/msr.h" not in includes(os.path.join(ROOT, "arch/vmx/events.c"))
    accessor = re.compile(r"^static\b[^;{]*\b\w*apic_(read|write)\s*\(unsigned int reg", re.M)
    defining = []
    for p in sources("arch/vmx") + sources("runtime"):
        with open(p, encoding="utf-8") as f:
            if accessor.search(f.read()):
                defining.append(os.path.basename(p))
    # lapic.c: the host's own accessors at boot, before any guest.
    assert defining == ["lapic.c", "phys_apic.h"], defining


def test_vmcs_setup_writes_are_reported():
    """Every VMWRITE of the VMCS setup goes through vmcs_init.h, which
    reports a failure with its vCPU and field (tests/unit/test_vmcs_init.c):
    none in vmx.c is a bare vmcs_write_checked() whose false is silent."""
    with open(os.path.join(ROOT, "arch/vmx/vmx.c"), encoding="utf-8") as f:
        assert "vmcs_write_checked(" not in f.read()


ARRAY_COUNT = re.compile(r"sizeof\s*\(?\s*(\w+)\s*\)?\s*/\s*sizeof\s*\(?\s*\(?\1\)?\s*\[0\]")


def test_one_array_size():
    """ARRAY_SIZE() is runtime/host/compiler.h's alone: the runtime, arch/vmx
    and the unit tests (which include it from the host) neither define
    their own nor spell the division out."""
    bad = []
    for folder in ("runtime", "arch/vmx", "tests/unit"):
        for p in sources(folder):
            with open(p, encoding="utf-8") as f:
                text = f.read()
            rel = os.path.relpath(p, ROOT)
            if rel == "runtime/host/compiler.h":
                continue
            if re.search(r"^\s*#\s*define\s+\w+(\(\w+\))?\s+\(?" + ARRAY_COUNT.pattern, text, re.M):
                bad.append(f"{rel}: defines its own")
            elif ARRAY_COUNT.search(text):
                bad.append(f"{rel}: spells sizeof(a) / sizeof(a[0]) out")
    assert not bad, "use ARRAY_SIZE() of compiler.h:\n" + "\n".join(bad)


def test_lib_is_shared_and_freestanding():
    """lib/ is the freestanding code the hypervisor (64-bit) and the test
    guests (32-bit, "outside" code) share: it includes only its own
    headers, the generated spec/ headers both sides build on
    (generated/common) and the compiler's, so a guest takes nothing of
    runtime/ or arch/vmx through it, and neither side keeps a copy of a
    lib/ file."""
    lib = sources("lib")
    names = {os.path.basename(p) for p in lib}
    generated = set(os.listdir(os.path.join(ROOT, "generated", "common")))
    assert {"port_io.h", "string.h", "string.c", "multiboot.h", "exceptions.c",
            "format.h", "format.c"} <= names, sorted(names)
    for p in lib:
        with open(p, encoding="utf-8") as f:
            text = f.read()
        quoted = set(INCLUDE.findall(text)) - generated
        assert quoted <= names, f"{os.path.relpath(p, ROOT)} includes {sorted(quoted - names)}"
        angled = set(re.findall(r'^\s*#\s*include\s+<([^>]+)>', text, re.M))
        assert angled <= {"stdarg.h", "stdbool.h", "stddef.h", "stdint.h"}, (p, angled)
    for folder in ("runtime", "arch/vmx", "tests/guest/lib"):
        again = sorted(names & {os.path.basename(p) for p in sources(folder)})
        assert not again, f"{folder} has its own {again} (lib/ has them)"
