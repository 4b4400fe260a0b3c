"""The source tree's layering (issue 8): runtime/, the architecture-neutral
core, reaches arch/vmx only through runtime/vmm.h, so it includes none of
arch/vmx's headers; the EPT code needs nothing of the guest loader."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def sources(folder):
    d = os.path.join(ROOT, folder)
    return sorted(os.path.join(d, n) for n in os.listdir(d)
                  if n.endswith((".c", ".h", ".S")))


def test_runtime_includes_no_arch_vmx_header():
    arch = {os.path.basename(p) for p in sources("arch/vmx") if p.endswith(".h")}
    bad = [f"{os.path.relpath(p, ROOT)}: {h}"
           for p in sources("runtime") for h in includes(p) if h in arch]
    assert not bad, "runtime/ includes arch/vmx headers (use runtime/vmm.h):\n" + "\n".join(bad)



def test_ept_does_not_include_the_guest_loader():
    """The EPT map takes the guest's RAM from runtime/guest_ram.h, not the loader."""
    for f in ("arch/vmx/ept.c", "arch/vmx/ept.h"):
        assert "guest_loader.h" not in includes(os.path.join(ROOT, f)), f
