"""Generated code flows one way: a generated file (generated/*/*.c, *.h)
includes generated headers, the compiler's <std*.h> and one hand-written
header, arch/vmx/generated_api.h, the contract between the generated code
and the runtime (docs/INTERFACES.md).  arch/vmx's other headers may change
without the generator knowing."""
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
API = "arch/vmx/generated_api.h"
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^">]+)[">]', re.M)
# The per-profile generated headers: common objects read the interface header.
PER_PROFILE = {"profile.h", "msr_policy.h", "msr_switch.h", "runtime_profile.h"}


def generated_names():
    names = set()
    for d in glob.glob(os.path.join(ROOT, "generated", "*")):
        if os.path.isdir(d):
            names |= {n for n in os.listdir(d) if n.endswith(".h")}
    return names


def bad_includes(text, generated):
    """The includes of @text that break the rule, as written."""
    bad = []
    for kind, name in INCLUDE.findall(text):
        if kind == "<":
            if not re.fullmatch(r"std[a-z0-9_]*\.h", name):
                bad.append(f"<{name}>")
        elif name != API and name not in generated:
            bad.append(f'"{name}"')
    return bad


def generated_files():
    files = sorted(glob.glob(os.path.join(ROOT, "generated", "*", "*.[ch]")))
    assert len(files) > 20, "no generated files found"
    return files


def test_generated_files_include_only_the_interface_header():
    generated = generated_names()
    bad = []
    for p in generated_files():
        with open(p, encoding="utf-8") as f:
            bad += [f"{os.path.relpath(p, ROOT)}: {h}" for h in bad_includes(f.read(), generated)]
    assert not bad, (f"generated files include hand-written headers other than {API}:\n"
                     + "\n".join(bad))


def test_the_check_catches_a_planted_include():
    generated = generated_names()
    planted = ('#include <stdint.h>\n#include "profile.h"\n'
               f'#include "{API}"\n#include "arch/vmx/vcpu_arch.h"\n#include <string.h>\n')
    assert bad_includes(planted, generated) == ['"arch/vmx/vcpu_arch.h"', "<string.h>"]


def test_templates_include_only_the_interface_header():
    """The templates name it, so the rule holds for a profile not yet generated."""
    generated = generated_names()
    bad = []
    for p in sorted(glob.glob(os.path.join(ROOT, "gen", "templates", "*", "*.j2"))):
        with open(p, encoding="utf-8") as f:
            bad += [f"{os.path.relpath(p, ROOT)}: {h}" for h in bad_includes(f.read(), generated)]
    assert not bad, "templates include hand-written headers:\n" + "\n".join(bad)


def test_interface_header_reads_no_per_profile_header():
    """Its guarded part is read by common objects (through exit_handlers.h)."""
    with open(os.path.join(ROOT, API), encoding="utf-8") as f:
        text = f.read()
    guarded = text[:text.index("#endif /* EXITPLAN_GENERATED_API_H */")]
    names = {os.path.basename(n) for _, n in INCLUDE.findall(guarded)}
    assert not names & PER_PROFILE, sorted(names & PER_PROFILE)
