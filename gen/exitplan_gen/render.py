# SPDX-License-Identifier: GPL-2.0-only
"""Rendering: Jinja2 templates in gen/templates/ -> file contents, in memory.

Templates use C-comment-like block delimiters (/*% ... %*/) so that they
still read as C; StrictUndefined makes a typo in a template an error.
"""

import os
import re
import textwrap
import unicodedata

import jinja2

from .validate import pct

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "templates")
TAB = 8

COMMON_FILES = {
    # output file: (template, spec files it is generated from)
    "vmx_exit_reasons.h": ("common/vmx_exit_reasons.h.j2", ("exit_reasons.yaml",)),
    "vmx_exit_reasons.c": ("common/vmx_exit_reasons.c.j2", ("exit_reasons.yaml",)),
    "vmx_controls_bits.h": ("common/vmx_controls_bits.h.j2", ("vmx_controls.yaml",)),
    "vmcs_fields.h": ("common/vmcs_fields.h.j2", ("vmcs_fields.yaml",)),
    "msr_index.h": ("common/msr_index.h.j2", ("msrs.yaml",)),
    "msr_table.h": ("common/msr_table.h.j2", ("msrs.yaml", "vmcs_fields.yaml")),
    "msr_table.c": ("common/msr_table.c.j2", ("msrs.yaml", "vmcs_fields.yaml")),
    "arch_bits.h": ("common/arch_bits.h.j2", ("arch.yaml",)),
    "vmx_features.h": ("common/vmx_features.h.j2", ("features.yaml",)),
    "vmx_features.c": ("common/vmx_features.c.j2", ("features.yaml", "vmx_controls.yaml")),
    "exit_handlers.h": ("common/exit_handlers.h.j2", ("handlers.yaml", "exit_reasons.yaml")),
    "hypercalls.h": ("common/hypercalls.h.j2", ("hypercalls.yaml",)),
    "runtime_controls.c": ("common/runtime_controls.c.j2", ("runtime.yaml", "vmx_controls.yaml")),
}

PROFILE_FILES = {
    "profile.h": ("profile/profile.h.j2", ()),
    "runtime_profile.h": ("profile/runtime_profile.h.j2", ()),
    "exit_dispatch.c": ("profile/exit_dispatch.c.j2", ("exit_reasons.yaml", "handlers.yaml")),
    "cpuid_fast.c": ("profile/cpuid_fast.c.j2", ("handlers.yaml", "arch.yaml")),
    "msr_io_fast.c": ("profile/msr_io_fast.c.j2", ("handlers.yaml", "msrs.yaml", "arch.yaml")),
    "vmcs_setup.c": ("profile/vmcs_setup.c.j2",
                     ("vmx_controls.yaml", "features.yaml", "msrs.yaml", "runtime.yaml")),
    "msr_policy.h": ("profile/msr_policy.h.j2", ("msrs.yaml", "runtime.yaml")),
    "msr_policy.c": ("profile/msr_policy.c.j2", ("msrs.yaml", "runtime.yaml")),
    "msr_switch.h": ("profile/msr_switch.h.j2", ("msrs.yaml",)),
}


def tab_to(text, column):
    """text followed by tabs up to column (at least one tab), kernel style."""
    width = len(text.expandtabs(TAB))
    tabs = max(1, (column - width + TAB - 1) // TAB)
    return text + "\t" * tabs


def hexnum(n, digits=0):
    return f"0x{n:0{digits}x}"


def c_string(s):
    """s as a C string literal: printable ASCII as is (but a backslash, a
    double quote and the second ? of a trigraph), every other byte of its
    UTF-8 as a three-digit octal escape, which nothing after it extends."""
    try:
        data = str(s).encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = str(s).encode("utf-8", "surrogatepass")
    out = []
    for i, b in enumerate(data):
        c = chr(b)
        if c in '\\"' or (c == "?" and i > 0 and data[i - 1] == ord("?")):
            out.append("\\" + c)
        elif 0x20 <= b < 0x7f:
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


# Characters a comment must not hold as they are: control and format
# characters (GCC's -Wbidi-chars rejects unpaired bidirectional controls),
# surrogates, private-use and unassigned code points, line and paragraph
# separators.
_INVISIBLE = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
# "/*" inside a comment is -Wcomment's error, "*/" ends it early, and a
# trigraph is -Wtrigraphs' (??/ at the end of a line would splice it).
_COMMENT_BREAK = re.compile(r"/(?=\*)|\*(?=/)|\?(?=\?[=(/)'<!>-])")


def comment_safe(s):
    """s safe inside a C block comment, its spacing kept: invisible
    characters written as <U+XXXX>; a space between / and * (and in any
    trigraph)."""
    s = "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) in _INVISIBLE else c
                for c in str(s))
    return _COMMENT_BREAK.sub(lambda m: m.group(0) + " ", s)


def comment_text(s):
    """Text safe inside a C block comment, its white space collapsed."""
    return comment_safe(" ".join(str(s).split()))


def comment_block(text, indent=""):
    """A C comment holding text, on one line when it fits in 80 columns."""
    text = comment_text(text)
    if len(indent.expandtabs(TAB)) + len(text) + 6 <= 80:
        return f"{indent}/* {text} */"
    lines = textwrap.wrap(text, width=76 - len(indent.expandtabs(TAB)))
    return "\n".join([f"{indent}/*"] + [f"{indent} * {line}" for line in lines] + [f"{indent} */"])


def _bytecode_cache():
    """The compiled templates, where EXITPLAN_GEN_CACHE says (the build's).

    Compiling the templates is a third of a generator run, and make check
    runs the generator a hundred times.  Jinja keys each entry by the
    template's name, checks its source's hash and Jinja's and Python's
    versions, and writes it to a temporary file renamed into place, so
    runs side by side and edited templates are safe.  Unset: every run
    compiles, and the generator writes nothing but its output.
    """
    directory = os.environ.get("EXITPLAN_GEN_CACHE")
    if not directory:
        return None
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(directory, "%s.jinja")


def _env():
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        bytecode_cache=_bytecode_cache(),
        undefined=jinja2.StrictUndefined,
        block_start_string="/*%",
        block_end_string="%*/",
        comment_start_string="/*#",
        comment_end_string="#*/",
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["tab_to"] = tab_to
    env.filters["hex"] = hexnum
    env.filters["pct"] = pct
    env.filters["c_string"] = c_string
    env.filters["ct"] = comment_text
    env.filters["comment"] = comment_block
    return env


_ENV = None


def env():
    global _ENV
    if _ENV is None:
        _ENV = _env()
    return _ENV


def banner(sources):
    lines = ["/* SPDX-License-Identifier: GPL-2.0-only */",
             "/*",
             " * Generated by gen/exitplan-gen from:"]
    for rel, sha in sources:
        lines.append(f" *   {comment_safe(rel)} (sha256: {sha})")
    lines += [" * Do not edit: change the sources and regenerate with `make gen`.",
              " */"]
    return "\n".join(lines) + "\n"


def _render(template, **context):
    text = env().get_template(template).render(**context)
    # One trailing newline, no trailing blanks: generated code is reviewed.
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    out = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue		# no double blank lines from template logic
        out.append(line)
    return "\n".join(out) + "\n"


def render_common(spec):
    files = {}
    for name, (template, sources) in sorted(COMMON_FILES.items()):
        files[name] = _render(template, spec=spec, banner=banner(spec.sources(*sources)),
                              guard="EXITPLAN_GEN_" + name.upper().replace(".", "_"))
    return files


def render_profile(plan):
    p = plan.profile
    files = {}
    for name, (template, sources) in sorted(PROFILE_FILES.items()):
        src = [(p.source_rel, p.sha256)] + plan.spec.sources(*sources)
        files[name] = _render(template, plan=plan, p=p, spec=plan.spec, banner=banner(src),
                              guard="EXITPLAN_GEN_PROFILE_" + name.upper().replace(".", "_"))
    return files
