# SPDX-License-Identifier: GPL-2.0-only
"""from-stats: a profile from the statistics exitplan prints (docs/STATS.md).

The statistics document is read from a serial log (between the lines
`# exitplan-stats-begin` and `# exitplan-stats-end`; every such block of
the log, exitplan printing one per vCPU, all of one run) or from a bare
YAML file.  The per-vCPU counts are summed and become the new profile's
exit mix (unit: count), with the measurement recorded in exit_mix.source.  Everything else is the base
profile's text, kept as written (comments included): only the value of
`profile:` and the exit_mix block are replaced.  The result is checked
like any profile before a byte is written.

Keys of the document that a profile does not use (the breakdowns by MSR,
port, leaf and hypercall, ticks, tsc_overhead) are read past, so the
document may grow without breaking this command.
"""

import datetime
import json
import os
import re
import sys
import textwrap

from .decide import decide
from .errors import GenError, suggest
from .loader import MAX_LOG_BYTES, load_text, read_source
from .profiles import profile_paths
from .schema import where
from .spec import Obj
from .validate import check_profile

BEGIN = "# exitplan-stats-begin"
END = "# exitplan-stats-end"
STATS_VERSION = 1
# The slot for reasons above VMX_EXIT_REASON_MAX (arch/vmx/exit_stats.h).
OTHER = "OTHER"
PROFILE_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
WRAP = 72


# --- reading the document ----------------------------------------------------
def read_documents(path):
    """The statistics documents in the file at path, as loader Documents
    whose marks are lines and columns of that file: every marked block of
    a serial log (exitplan prints one per vCPU when several ran), or the
    whole file when it is a bare YAML document."""
    raw = read_source(path, MAX_LOG_BYTES)
    text = raw.decode("utf-8", errors="replace")
    # Serial logs end lines with CR LF; a CR inside a line is noise too.
    lines = [line.replace("\r", "") for line in text.split("\n")]
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    docs = []
    for n, b in enumerate(begins):
        e = next((i for i in range(b + 1, len(lines)) if lines[i].strip() in (BEGIN, END)), None)
        if e is None or lines[e].strip() == BEGIN:
            raise GenError(path, b + 1, 1, f"'{BEGIN}' has no '{END}' after it: the log is cut short"
                                           if e is None else f"'{BEGIN}' has no '{END}' before the next one")
        # Blank lines in front keep the log's line numbers in every message.
        doc = load_text(path, "\n" * (b + 1) + "\n".join(lines[b + 1:e]) + "\n", int_keys=True)
        if doc.value is None:
            raise GenError(path, b + 1, 1, "the statistics document between the markers is empty")
        docs.append(doc)
    if docs:
        return docs
    # No markers: a bare YAML file holding the document, or no document.
    nodoc = GenError(path, 1, 1, f"no statistics document: no '{BEGIN}' line, and not a YAML file "
                                 "with exitplan_stats (was the profile's statistics level off?)")
    try:
        doc = load_text(path, "\n".join(lines), int_keys=True)
    except GenError:
        # A document someone edited by hand deserves its YAML error; any
        # other file (a log without statistics) is simply not one.
        if re.search(r"^exitplan_stats[ \t]*:", text, re.M):
            raise
        raise nodoc from None
    if not isinstance(doc.value, dict) or "exitplan_stats" not in doc.value:
        raise nodoc
    return [doc]


def _kind(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"the string '{value}'"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, dict):
        return "a mapping"
    return "a list"


class _Reader:
    """Typed access to the document, each failure one GenError at its node."""

    def __init__(self, doc):
        self.doc = doc

    def error(self, path, message, key=False):
        return self.doc.error(path, message, key=key)

    def mapping(self, value, path, what):
        if not isinstance(value, dict):
            raise self.error(path, f"{where(path)} must be {what}, not {_kind(value)}")
        return value

    def get(self, m, path, key, kind, optional=False):
        """m[key] checked to be kind: 'string', 'count' (whole number >= 0),
        'list' or 'mapping'."""
        if key not in m:
            if optional:
                return None
            raise self.error(path, f"{where(path) or 'the document'} has no '{key}'")
        v = m[key]
        at = path + (key,)
        if kind == "string" and not isinstance(v, str):
            raise self.error(at, f"{where(at)} must be a string, not {_kind(v)}")
        if kind == "count" and (type(v) is not int or v < 0):
            raise self.error(at, f"{where(at)} must be a whole number of at least 0, not {_kind(v)}")
        if kind == "list" and not isinstance(v, list):
            raise self.error(at, f"{where(at)} must be a list, not {_kind(v)}")
        if kind == "mapping" and not isinstance(v, dict):
            raise self.error(at, f"{where(at)} must be a mapping, not {_kind(v)}")
        return v


# What every document of one run must agree on.
_RUN_KEYS = ("profile", "level", "cpu", "guest", "guest_args")


def parse_stats(docs, spec):
    """The measurement in the statistics documents of one run: Obj(profile,
    level, cpu, guest, guest_args, vcpus, counts {reason name: count summed
    over the vCPUs, zero counts and OTHER left out}, other, exits)."""
    st = None
    counts = {}
    ids = {}
    for doc in docs:
        one = _parse_document(doc, spec, counts, ids)
        if st is None:
            st = one
            continue
        for k in _RUN_KEYS:
            if getattr(one, k) != getattr(st, k):
                raise doc.error(one.paths[k], f"exitplan_stats.{k} is '{getattr(one, k)}' here but "
                                              f"'{getattr(st, k)}' in the document at line {st.line}: "
                                              "not one run")
    st.vcpus = len(ids)
    st.other = counts.pop(OTHER, 0)
    st.counts = {k: n for k, n in counts.items() if n}
    st.exits = sum(st.counts.values())
    if not st.counts:
        extra = f" other than {st.other} above VMX_EXIT_REASON_MAX (OTHER)" if st.other else ""
        raise docs[-1].error(("exitplan_stats", "vcpus"),
                             f"no exits counted{extra}: nothing to build an exit mix from")
    return st


def _parse_document(doc, spec, counts, ids):
    """One document: its run description, its vCPUs' counts added to
    counts, their ids to ids ({id: line})."""
    r = _Reader(doc)
    top = r.mapping(doc.value, (), "a mapping with the key exitplan_stats")
    if "exitplan_stats" not in top:
        raise r.error((), "the document has no exitplan_stats mapping")
    at = ("exitplan_stats",)
    s = r.mapping(top["exitplan_stats"], at, "a mapping")
    version = r.get(s, at, "version", "count")
    if version != STATS_VERSION:
        raise r.error(at + ("version",), f"exitplan_stats.version is {version}; "
                                         f"this generator reads version {STATS_VERSION}")
    level = r.get(s, at, "level", "string")
    if level not in ("counts", "timing"):
        raise r.error(at + ("level",), f"exitplan_stats.level must be counts or timing, not '{level}'")
    st = Obj(profile=r.get(s, at, "profile", "string"), level=level,
             cpu=" ".join(r.get(s, at, "cpu", "string").split()),
             guest=r.get(s, at, "guest", "string"),
             guest_args=r.get(s, at, "guest_args", "string", optional=True) or "",
             paths={k: at + (k,) for k in _RUN_KEYS}, cpu_doc=doc, line=doc.key_mark(at)[0])
    if not st.guest.strip():
        raise r.error(at + ("guest",), "exitplan_stats.guest is empty")
    vcpus = r.get(s, at, "vcpus", "list")
    if not vcpus:
        raise r.error(at + ("vcpus",), "exitplan_stats.vcpus is empty: no vCPU reported")
    for i, v in enumerate(vcpus):
        vat = at + ("vcpus", i)
        r.mapping(v, vat, "a mapping with id, exits and reasons")
        vid = r.get(v, vat, "id", "count")
        if vid in ids:
            raise r.error(vat + ("id",), f"vCPU {vid} is reported twice (first at line {ids[vid]})")
        ids[vid] = doc.mark(vat + ("id",))[0]
        exits = r.get(v, vat, "exits", "count")
        reasons = v.get("reasons")
        if reasons is None:		# `reasons:` with nothing under it: no exits
            reasons = {}
        r.mapping(reasons, vat + ("reasons",), "a mapping of exit reason names")
        total = 0
        for name, entry in reasons.items():
            rat = vat + ("reasons", name)
            if name != OTHER and name not in spec.reason:
                raise r.error(rat, f"unknown exit reason '{name}'{suggest(name, list(spec.reason) + [OTHER])}",
                              key=True)
            if not isinstance(entry, dict):
                raise r.error(rat, f"{where(rat)} must be a mapping like {{count: N}}, not {_kind(entry)}")
            n = r.get(entry, rat, "count", "count")
            total += n
            counts[name] = counts.get(name, 0) + n
        if total != exits:
            raise r.error(vat + ("exits",), f"{where(vat + ('exits',))} is {exits} but the counts of "
                                            f"its reasons add up to {total}")
    return st


# --- writing the profile -------------------------------------------------------
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def yaml_scalar(s):
    """s as a YAML scalar: plain when that reads back as the same string in
    any YAML reader, else double-quoted (a JSON string is one)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.+-]*", s) and s.lower() not in _YAML_WORDS:
        return s
    return json.dumps(s, ensure_ascii=False)


def _printable(s):
    return "".join(c if c.isprintable() else "?" for c in " ".join(s.split()))


def basis_text(st, base_shown, log_shown, note, same_name):
    args = f" (arguments '{_printable(st.guest_args)}')" if st.guest_args.strip() else ""
    vcpus = "one vCPU" if st.vcpus == 1 else f"{st.vcpus} vCPUs, summed"
    # Regenerated under its own name, the profile keeps its own settings:
    # naming the file it was read from would only record a path.
    kept = "every other setting kept as it was" if same_name else f"every other setting is {base_shown}'s"
    text = (f"exitplan's exit statistics (level {st.level}) of guest {_printable(st.guest)}{args} "
            f"run under profile '{_printable(st.profile)}' on {vcpus}; CPU '{_printable(st.cpu)}'. "
            f"Read from {log_shown} by exitplan-gen from-stats; {kept}.")
    if note:
        text += " " + _printable(note)
    return text


def exit_mix_block(st, spec, cpu, date, basis, zero_listed):
    """The YAML lines of the new exit_mix block (no trailing newline)."""
    out = ["exit_mix:",
           "  # Measured, not estimated: written by `exitplan-gen from-stats` (make profile)",
           "  # from the statistics exitplan printed; measure again rather than edit it.",
           "  source:",
           "    kind: measured",
           "    basis: >-"]
    out += ["      " + line for line in textwrap.wrap(basis, WRAP - 6, break_on_hyphens=False)]
    out += [f"    guest: {yaml_scalar(_printable(st.guest))}",
            f"    cpu: {yaml_scalar(_printable(cpu))}",
            f"    date: {date}",
            f"    exits: {st.exits}",
            "  unit: count"]
    if st.other:
        out.append(f"  # Left out: {st.other} exit{'s' if st.other != 1 else ''} with a reason above "
                   "VMX_EXIT_REASON_MAX (OTHER), which no profile can name.")
    out.append("  reasons:")
    # Frequency order, ties by reason number: the order the chain is built in.
    for name in sorted(st.counts, key=lambda k: (-st.counts[k], spec.reason[k].number)):
        out.append(f"    {name}: {st.counts[name]}")
    for name in zero_listed:
        out.append(f"    {name}: 0".ljust(32) + "# named by dispatch.direct.order; not seen in this run")
    return "\n".join(out)


def _top_level_lines(base):
    """{key: 1-based line} of the base profile's top-level keys."""
    lines = {}
    for key in base.doc.value:
        line, col = base.doc.key_mark((key,))
        if col != 1:
            raise base.doc.error((key,), "from-stats rewrites the profile's exit_mix block in place: "
                                         "write the top-level keys in block style, at column 1", key=True)
        lines[key] = line
    return lines


HEADER = "# from-stats: "


def header_lines(base_shown, name, base_name):
    """Comment lines opening a profile derived from another one."""
    if name == base_name:
        return []
    return [f"{HEADER}profile '{name}' is {base_shown} with the exit mix measured by a run",
            f"{HEADER}(exit_mix.source); regenerate it with `make profile`, do not edit the mix."]


def splice(base, base_text, name, block, header):
    """The base profile's text with `profile:` set to name and the exit_mix
    block replaced by block, and header (comment lines) in front.  Returns
    (text, a function mapping a line of text to the base's line)."""
    lines = base_text.split("\n")
    tops = _top_level_lines(base)
    start = tops["exit_mix"]
    later = sorted(line for line in tops.values() if line > start)
    end = later[0] if later else len(lines) + 1
    # Blank lines and column-0 comments just above the next key are that
    # key's, not exit_mix's: keep them.
    while end - 1 > start and (not lines[end - 2].strip() or lines[end - 2].startswith("#")):
        end -= 1
    new_block = block.split("\n")
    lines[start - 1:end - 1] = new_block
    delta = len(new_block) - (end - start)

    pline, pcol = base.doc.mark(("profile",))
    if pline >= start:
        pline += delta
    old = lines[pline - 1]
    token = re.match(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[^\s#]+", old[pcol - 1:])
    lines[pline - 1] = old[:pcol - 1] + name + old[pcol - 1 + token.end():]

    # The header of an earlier from-stats goes; this run's comes first.
    # Regenerated under its own name, a profile keeps the header it has.
    skip = 0
    while header and skip < len(lines) and lines[skip].startswith(HEADER):
        skip += 1
    lines[:skip] = header
    shift = len(header) - skip
    first, after = start + shift, start + shift + len(new_block)

    def base_line(line):
        """The base's line of line in text; None inside the new block."""
        if line < first:
            return line - shift
        if line < after:
            return None
        return line - shift - delta
    return "\n".join(lines), base_line


def _check_arguments(gen, name, cpu, date, out):
    """from-stats' arguments checked: (date, path as shown, path to write)."""
    if not PROFILE_NAME.match(name):
        raise GenError("exitplan-gen from-stats", None, None,
                       f"--name '{name}' must be lower-case letters, digits and dashes, starting with a letter")
    if date is None:
        date = datetime.date.today().isoformat()
    else:
        try:
            ok = DATE.match(date) and datetime.date.fromisoformat(date)
        except ValueError:
            ok = False
        if not ok:
            raise GenError("exitplan-gen from-stats", None, None,
                           f"--date '{date}' is not a date written YYYY-MM-DD")
    if cpu is not None and not cpu.strip():
        raise GenError("exitplan-gen from-stats", None, None, "--cpu is empty")
    if out is None:
        out_shown = os.path.join("profiles", name + ".yaml")
        out_fs = os.path.join(gen.root, out_shown)
    else:
        out_shown = out_fs = out
    if out != "-":
        stem = os.path.basename(out_shown)
        if stem != name + ".yaml":
            raise GenError(out_shown, None, None, f"a profile named '{name}' must be written to {name}.yaml "
                                                  "(the file name is the profile's name)")
    return date, out_shown, out_fs


def _check_result(gen, text, name, out, out_shown, base_shown, base_line, log):
    """Check the profile text as `gen` will.  A policy of the base that
    the measured mix cannot honour (direct count above the reasons seen,
    coverage out of reach) is reported at the base's own line."""
    spec = gen.spec
    check_path = out_shown if out != "-" else os.path.join("profiles", name + ".yaml")
    try:
        new = check_profile(load_text(check_path, text), text.encode("utf-8"), spec, gen.schema)
        new.path = new.doc.path = check_path
        new.source_rel = "profiles/" + name + ".yaml"
        decide(new, spec)
    except GenError as e:
        if e.path != check_path or e.line is None:
            raise
        line = base_line(e.line)
        if line is None:
            e.message += " (in the exit_mix from-stats built; nothing written)"
            raise
        e.path, e.line = base_shown, line
        e.message += f" (with the exit mix measured in {log})"
        raise


def from_stats(gen, log, base_name, name, cpu=None, date=None, out=None, note=None):
    """(path as shown, path to write, text) of the profile from-stats would
    write; out is a path, "-" (stdout), or None for ROOT/profiles/NAME.yaml."""
    spec = gen.spec
    date, out_shown, out_fs = _check_arguments(gen, name, cpu, date, out)

    st = parse_stats(read_documents(log), spec)
    if cpu is None:
        # exitplan prints "unknown" when CPUID has no brand string.
        if st.cpu in ("", "unknown"):
            what = "empty" if not st.cpu else "'unknown' (the CPU has no brand string)"
            raise st.cpu_doc.error(st.paths["cpu"],
                                   f"exitplan_stats.cpu is {what}: name the CPU model with --cpu")
        cpu = st.cpu

    (base_shown, base_fs), = profile_paths(gen.root, [base_name])
    try:
        base = gen.plan(base_shown, base_fs).profile
    except GenError as e:
        if e.path == base_fs:
            e.path = base_shown
        if e.line is None:
            e.message += f" (--base {base_name})"
        raise
    base_text = read_source(base_fs).decode("utf-8")

    zero_listed = []
    if base.direct_mode == "order":
        # The chain's reasons must be in the mix: keep them, at 0, when the
        # run never saw them, so the base's explicit order stays valid.
        zero_listed = [n for n in base.direct_value if n not in st.counts]
    basis = basis_text(st, base_shown, log, note, name == base.name)
    block = exit_mix_block(st, spec, cpu, date, basis, zero_listed)
    text, base_line = splice(base, base_text, name, block, header_lines(base_shown, name, base.name))
    if not text.endswith("\n"):
        text += "\n"

    _check_result(gen, text, name, out, out_shown, base_shown, base_line, log)
    return out_shown, out_fs, text


def write_profile(out_fs, text):
    """Write text to out_fs (FILE.tmp + rename) unless it already holds it.
    True when written."""
    try:
        with open(out_fs, "rb") as f:
            if f.read() == text.encode("utf-8"):
                return False
    except FileNotFoundError:
        pass
    except OSError as e:
        raise GenError(out_fs, None, None, f"cannot read: {e.strerror}") from None
    tmp = out_fs + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(text.encode("utf-8"))
        os.replace(tmp, out_fs)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise GenError(out_fs, None, None, f"cannot write: {e.strerror}") from None
    return True


def cmd_from_stats(gen, args):
    out_shown, out_fs, text = from_stats(gen, args.log, args.base, args.name, cpu=args.cpu,
                                         date=args.date, out=args.output, note=args.note)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    if write_profile(out_fs, text):
        print(f"exitplan-gen: {out_shown}")
    return 0
