# SPDX-License-Identifier: GPL-2.0-only
"""The file-level dependency graph of the hypervisor's objects (issue 8,
"clean boundaries"): inside arch/vmx/, and separately inside runtime/, no
two files reach each other, directly or round a circle.  Read from the
build's own objects with nm, so it sees what the compiler kept: a call a
profile's constants fold away (PROFILE_APIC_VIRTUAL, ...) is no edge of
that profile's graph.

An edge A -> B: A's object needs (nm "U") a symbol B's object defines.
That is every call and every address or variable taken from B, so a
variable shared both ways is a circle as much as a call is.

What is not a node, and why:
- The generated code (generated/PROFILE, generated/common): the dispatch
  layer above the handlers.  It calls into arch/vmx by design (every
  handler is reached from it) and nothing there should call it back but
  the exit stub.  It is outside both folders, so never in the graph.
- The assembly (.S): the entry points the CPU jumps to (boot, the IDT's
  stubs, the VM-exit stub, the AP trampoline).  They call the C above
  them, and the C names their labels as addresses it hands the hardware
  (HOST_RIP, IDT gates, the trampoline's copy in low memory, the stub's
  NMI-recheck window), which is no call back.

The graph is the union over PROFILES: default, plus apic-virtual for the
calls only `apic: virtual` keeps (the virtual APIC, the I/O APIC's
delivery); together they have every edge of the twelve shipped profiles
(checked 3 Dec: the union over all of them adds none).

Also: runtime/ includes no arch/vmx header, not even through a generated
header (the compiler's dependency files say what each object read);
tests/gen/test_layering.py checks the direct #includes without a build.
"""
import collections
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"
PROFILES = ("default", "apic-virtual")
FOLDERS = ("arch/vmx", "runtime")

# Edges left in, each with its reason: (from, to) -> why.  The test fails
# on a circle that remains without them, and on an entry whose edge is
# gone or which closes no circle (drop it).  Each is one edge of a circle
# still open (issue 8) or one the exit path's code pins; the comments say
# which piece would have to move where.
ALLOWED = {
    # The posted events: vmx_take_events() (apic.c) fans them out to every
    # model, and the models' exits take events; it wants a place above
    # them, without a call added where it inlines vmx_deliver_apic_irq()
    # (interrupts: direct's self IPI).
    ("arch/vmx/apic", "arch/vmx/vlapic_exits"):
        "vmx_take_events() posts fixed vectors to the virtual APIC, whose exits take events",
    # The kick: an ICR write kicks its targets (vmx_kick_vcpus() ->
    # vmm_kick(), ap_park.c, beside the idle halts it ends), which sends
    # apic.c's kick IPI or NMI.  The interrupt router (issue 26) takes it.
    ("arch/vmx/apic", "arch/vmx/ap_park"):
        "vmx_icr_write() kicks the targets other than itself (vmm_kick()), whose IPI or NMI is apic.c's",
    ("arch/vmx/apic", "arch/vmx/legacy_irq"):
        "vmx_take_events() updates the 8259s/8254 for a posted `legacy`; they kick (vmm_kick(), "
        "ap_park.c), which sends apic.c's IPIs, and under the passthrough models give the 8254's "
        "pin's vector to their own vCPU through its APIC (vmx_deliver_apic_irq())",
    ("arch/vmx/legacy_irq", "arch/vmx/ioapic_exits"):
        "the 8254's IRQ 0 goes through the guest's I/O APIC entry "
        "(vmx_ioapic_pit_route()), whose exits update the 8259s and the 8254",
}

# runtime/ objects that may read an arch/vmx header (file -> why).
INCLUDE_ALLOWED = {
    # Empty: runtime/vm/hypercall.c reads the statistics level from the
    # generated runtime_profile.h, which includes nothing of arch/vmx.
}


@pytest.fixture(scope="module")
def objdirs():
    """Each profile's object folder, built (incrementally) first."""
    dirs = {}
    for p in PROFILES:
        r = subprocess.run(["make", "-s", "--no-print-directory", "build", f"PROFILE={p}"],
                           cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode == 0, r.stdout[-4000:]
        dirs[p] = BUILD / p / "obj"
    return dirs


def symbols(obj):
    """(defined, undefined) global symbols of @obj."""
    out = subprocess.run(["nm", str(obj)], check=True, stdout=subprocess.PIPE, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in "BCDGRTVW":
            defined.add(f[2])
    return defined, undefined


def c_objects(objdir, folder):
    """folder/room/name -> object, for the C files of @folder and its rooms
    (see the docstring for .S)."""
    objs = {}
    for src in sorted((REPO / folder).rglob("*.c")):
        rel = src.relative_to(REPO).with_suffix("")
        name = str(rel)
        o = objdir / rel.with_suffix(".o")
        if o.exists():
            objs[name] = o
    return objs


def add_edges(edges, info):
    """Into @edges ({from: {to: {symbol}}}): who needs what from whom among
    @info's objects ({name: (defined, undefined)})."""
    owner = {s: n for n, (d, _) in info.items() for s in d}
    for n, (_, undefined) in info.items():
        for s in undefined:
            if owner.get(s, n) != n:
                edges[n][owner[s]].add(s)


def graph(dirs, folder):
    """{from: {to: {symbol, ...}}} over every profile, and the nodes."""
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    nodes = set()
    for objdir in dirs.values():
        info = {n: symbols(o) for n, o in c_objects(objdir, folder).items()}
        nodes |= set(info)
        add_edges(edges, info)
    return nodes, edges


def circles(nodes, edges):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def describe(comp, edges):
    lines = ["circle of " + ", ".join(comp) + ":"]
    for a in comp:
        for b in comp:
            if b in edges.get(a, ()):
                lines.append(f"  {a} -> {b}: {', '.join(sorted(edges[a][b]))}")
    return "\n".join(lines)


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_circle(objdirs, folder):
    nodes, edges = graph(objdirs, folder)
    assert len(nodes) > 5, f"no objects found for {folder}"
    pruned = {a: {b: s for b, s in bs.items() if (a, b) not in ALLOWED}
              for a, bs in edges.items()}
    found = circles(nodes, pruned)
    assert not found, "files that reach each other (move the shared piece to the file " \
        "whose concern it is, or to a small file of its own):\n" + \
        "\n".join(describe(c, pruned) for c in found)


def test_allowed_edges_are_needed(objdirs):
    """An entry of ALLOWED whose edge is gone, or which closes no circle
    (the graph without it still has none), is stale."""
    stale = []
    for folder in FOLDERS:
        nodes, edges = graph(objdirs, folder)
        mine = {e for e in ALLOWED if e[0].startswith(folder + "/")}
        for e in sorted(mine):
            if e[1] not in edges.get(e[0], ()):
                stale.append(f"{e}: no such edge")
                continue
            others = mine - {e}
            pruned = {a: {b: s for b, s in bs.items() if (a, b) not in others}
                      for a, bs in edges.items()}
            if not circles(nodes, pruned):
                stale.append(f"{e}: closes no circle")
    assert not stale, "ALLOWED entries to drop:\n" + "\n".join(stale)


def dependencies(dfile):
    """The files a .d file says its object was built from."""
    text = dfile.read_text().replace("\\\n", " ")
    first = text.split("\n", 1)[0]
    return first.split(":", 1)[1].split()


def test_runtime_reads_no_arch_vmx_header(objdirs):
    """runtime/ reaches arch/vmx only through runtime/vm/vmm.h: no runtime
    object is compiled from an arch/vmx header, directly or through a
    generated header."""
    bad = []
    for p, objdir in objdirs.items():
        for src in sorted((REPO / "runtime").rglob("*.c")):
            name = str(src.relative_to(REPO).with_suffix(""))
            d = objdir / f"{name}.d"
            if not d.exists():
                continue
            if name in INCLUDE_ALLOWED:
                continue
            arch = sorted({f for f in dependencies(d) if f.startswith("arch/vmx/")})
            if arch:
                bad.append(f"{p}: {name}: {' '.join(arch)}")
    assert not bad, "runtime/ reads arch/vmx headers (use runtime/vm/vmm.h):\n" + "\n".join(bad)


def test_include_allowed_is_needed(objdirs):
    stale = []
    for name in INCLUDE_ALLOWED:
        d = objdirs["default"] / f"{name}.d"
        if not any(f.startswith("arch/vmx/") for f in dependencies(d)):
            stale.append(name)
    assert not stale, f"INCLUDE_ALLOWED names files that no longer need it: {stale}"


def test_circles_names_each_circle():
    """The finder itself: two circles and a file outside both."""
    edges = {"a": {"b": {"f"}}, "b": {"a": {"g"}, "c": {"h"}}, "c": {},
             "d": {"e": {"i"}}, "e": {"f": {"j"}}, "f": {"d": {"k"}}}
    assert circles(set("abcdef"), edges) == [["a", "b"], ["d", "e", "f"]]
    assert circles({"a", "b"}, {"a": {"b": {"f"}}}) == []


# --- The house: circles between folders, read from the whole image ---------
#
# Every object of the image is a node: runtime/'s rooms, arch/vmx, lib/ and
# the profile's generated code (one folder, "generated"), assembly
# included.  A folder edge A -> B: some object of A needs a symbol one of
# B defines.  The exit path's own seam is the one circle that is meant:
# the exit stub (arch/vmx) calls the profile's generated dispatch, which
# calls the handlers back.  The other edges that close a circle today are
# listed with the step of the rebuild that removes them; the test fails on
# any other, and on an entry no longer needed.

SEAM = {("arch/vmx", "generated"), ("generated", "arch/vmx")}

FOLDER_EDGES_TO_GO = {}

# The largest set of objects that all reach each other, across folders:
# it may only shrink (the rebuild's aim is at most 8).
MAX_FILE_CIRCLE = 5


def folder_of(rel):
    parts = rel.split("/")
    return "generated" if parts[0] == "generated" else "/".join(parts[:-1])


def image_graph(objdir):
    """{object: {object: {symbol}}} over every object of one build, by its
    path from the repository root without .o."""
    info = {}
    for o in sorted(objdir.rglob("*.o")):
        rel = str(o.relative_to(objdir).with_suffix(""))
        if not any((REPO / f"{rel}{ext}").exists() for ext in (".c", ".S")):
            continue            # stale: its source moved or is gone
        info[rel] = symbols(o)
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    add_edges(edges, info)
    return set(info), edges


def folder_graph(nodes, edges):
    fnodes = {folder_of(n) for n in nodes}
    fedges = collections.defaultdict(lambda: collections.defaultdict(set))
    for a, bs in edges.items():
        for b, syms in bs.items():
            if folder_of(a) != folder_of(b):
                fedges[folder_of(a)][folder_of(b)] |= {f"{a.split('/')[-1]}->{s}" for s in syms}
    return fnodes, fedges


def folder_circles(fnodes, fedges, allowed):
    pruned = {a: {b: s for b, s in bs.items() if (a, b) not in allowed}
              for a, bs in fedges.items()}
    return [describe(c, pruned) for c in circles(fnodes, pruned)]


@pytest.fixture(scope="module")
def image_graphs(objdirs):
    return {p: image_graph(d) for p, d in objdirs.items()}


def test_no_circle_between_folders(image_graphs):
    for p, (nodes, edges) in image_graphs.items():
        fnodes, fedges = folder_graph(nodes, edges)
        found = folder_circles(fnodes, fedges, SEAM | set(FOLDER_EDGES_TO_GO))
        assert not found, f"{p}: folders that call each other:\n" + "\n".join(found)


def test_folder_edges_to_go_are_needed(image_graphs):
    stale = []
    for e in FOLDER_EDGES_TO_GO:
        needed = False
        for nodes, edges in image_graphs.values():
            fnodes, fedges = folder_graph(nodes, edges)
            if e[1] in fedges.get(e[0], ()) and \
                    folder_circles(fnodes, fedges, SEAM | (set(FOLDER_EDGES_TO_GO) - {e})):
                needed = True
        if not needed:
            stale.append(f"{e}: gone, or closes no circle")
    assert not stale, "FOLDER_EDGES_TO_GO entries to drop:\n" + "\n".join(stale)


def test_largest_file_circle_does_not_grow(image_graphs):
    for p, (nodes, edges) in image_graphs.items():
        big = max((len(c) for c in circles(nodes, edges)), default=1)
        assert big <= MAX_FILE_CIRCLE, \
            f"{p}: {big} objects reach each other (at most {MAX_FILE_CIRCLE}; lower it as it shrinks)"


def test_a_planted_circle_between_folders_is_found():
    """The checker itself: a call from the host back up into a device model
    closes a circle between folders that no entry allows."""
    edges = {"runtime/devices/vpic": {"runtime/host/console": {"printk"}},
             "runtime/host/console": {"runtime/devices/vpic": {"vpic_init"}},
             "arch/vmx/exit": {"generated/default/exit_dispatch": {"vmx_dispatch_exit"}},
             "generated/default/exit_dispatch": {"arch/vmx/exit": {"handle_hlt"}}}
    nodes = set(edges)
    fnodes, fedges = folder_graph(nodes, edges)
    found = folder_circles(fnodes, fedges, SEAM)
    assert len(found) == 1 and "runtime/devices, runtime/host" in found[0], found
    del edges["runtime/host/console"]
    assert folder_circles(*folder_graph(nodes, edges), SEAM) == []
