# SPDX-License-Identifier: GPL-2.0-only
"""exitplan-gen: the command line.

  exitplan-gen gen [PROFILE...]     regenerate generated/ (all profiles when none named)
  exitplan-gen check                list stale, missing and extra files; exit 1 if any
  exitplan-gen explain PROFILE      the profile's decisions in words
  exitplan-gen diff A B             unified diff of two profiles' generated code
  exitplan-gen from-stats LOG --base PROFILE --name NAME [--cpu MODEL] [--date YYYY-MM-DD]
               [--note TEXT] [--out FILE|-]
                                    a profile from the statistics a run printed (docs/STATS.md)

A PROFILE is a name (profiles/NAME.yaml) or a path to a .yaml file.
Exit status: 0 done, 1 check found differences, 2 invalid input (one line,
FILE:LINE:COL: message; FILE: message when a file cannot be read or
written), 3 an internal error of the generator (a bug: the traceback).
"""

import argparse
import difflib
import os
import sys
import traceback

from .decide import decide
from .errors import GenError
from .explain import explain
from .fromstats import cmd_from_stats
from .profiles import profile_paths, source_name
from .render import render_common, render_profile
from .schema import load_schema
from .spec import Spec
from .validate import load_profile
from . import output


class Generator:
    def __init__(self, root):
        self.root = root
        self.spec = Spec(root)
        self.schema = load_schema(os.path.join(root, "spec", "profile.schema.json"))

    def plan(self, shown, fs_path):
        p = load_profile(fs_path, self.spec, self.schema)
        p.path = shown
        p.doc.path = shown
        p.source_rel = source_name(self.root, fs_path)
        return decide(p, self.spec)

    def plans(self, names):
        plans = []
        seen = {}
        for shown, fs_path in profile_paths(self.root, names):
            try:
                plan = self.plan(shown, fs_path)
            except GenError as e:
                if e.path == fs_path:
                    e.path = shown
                raise
            if plan.profile.name in seen:
                raise plan.profile.doc.error(("profile",), f"profile '{plan.profile.name}' is also "
                                                          f"{seen[plan.profile.name]}")
            seen[plan.profile.name] = shown
            plans.append(plan)
        return plans

    def render(self, plans):
        """{relative output path: content} of common/ and each profile."""
        files = {}
        for name, text in render_common(self.spec).items():
            files[os.path.join("common", name)] = text
        for plan in plans:
            for name, text in render_profile(plan).items():
                files[os.path.join(plan.profile.name, name)] = text
        return files


def cmd_gen(args):
    g = Generator(args.root)
    plans = g.plans(args.profiles)
    files = g.render(plans)
    # Directories this run owns: common/ and each profile generated; with
    # no profile named, every directory under the output dir.
    owned = ["common"] + [p.profile.name for p in plans]
    changed = output.write_tree(args.out, files, owned, prune_dirs=not args.profiles)
    for path in changed:
        if not args.quiet:
            print(f"exitplan-gen: {path}")
    return 0


def cmd_check(args):
    g = Generator(args.root)
    plans = g.plans([])
    files = g.render(plans)
    problems = output.compare_tree(args.out, files)
    for kind, path in problems:
        print(f"{os.path.join(args.out, path)}: {kind}")
    if problems:
        print("exitplan-gen: generated/ is out of date; run `make gen`", file=sys.stderr)
        return 1
    return 0


def cmd_explain(args):
    g = Generator(args.root)
    plan, = g.plans([args.profile])
    sys.stdout.write(explain(plan))
    return 0


def _normalise(text, plan):
    p = plan.profile
    for old, new in ((p.sha256, "<sha256 of the profile>"),
                     (p.source_rel, "profiles/<PROFILE>.yaml"),
                     (f'"{p.name}"', '"<PROFILE>"'),
                     (f"'{p.name}'", "'<PROFILE>'")):
        text = text.replace(old, new)
    return text


def cmd_diff(args):
    g = Generator(args.root)
    a, = g.plans([args.a])
    b, = g.plans([args.b])
    fa, fb = render_profile(a), render_profile(b)
    out = []
    for name in sorted(set(fa) | set(fb)):
        la = _normalise(fa.get(name, ""), a).splitlines(keepends=True)
        lb = _normalise(fb.get(name, ""), b).splitlines(keepends=True)
        out.extend(difflib.unified_diff(la, lb, f"generated/{a.profile.name}/{name}",
                                        f"generated/{b.profile.name}/{name}"))
    sys.stdout.write("".join(out))
    return 0


def cmd_from_stats_args(args):
    return cmd_from_stats(Generator(args.root), args)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="exitplan-gen", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=".", help="the exitplan checkout (default: .)")
    ap.add_argument("--out", default=None, help="output directory (default: ROOT/generated)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("gen", help="regenerate generated/")
    s.add_argument("profiles", nargs="*")
    s.add_argument("-q", "--quiet", action="store_true", help="do not list the files written")
    s.set_defaults(func=cmd_gen)
    s = sub.add_parser("check", help="fail when generated/ is stale")
    s.set_defaults(func=cmd_check)
    s = sub.add_parser("explain", help="a profile's decisions in words")
    s.add_argument("profile")
    s.set_defaults(func=cmd_explain)
    s = sub.add_parser("diff", help="diff two profiles' generated code")
    s.add_argument("a")
    s.add_argument("b")
    s.set_defaults(func=cmd_diff)
    s = sub.add_parser("from-stats", help="a profile from the statistics a run printed",
                       description="Read the statistics document (docs/STATS.md) from a serial log or a "
                                   "YAML file, sum it over the vCPUs, and write the base profile with "
                                   "that measured exit mix as profiles/NAME.yaml.  A log with several "
                                   "documents (one per vCPU) is summed over them all.")
    s.add_argument("log", metavar="LOG", help="serial log or YAML file with the statistics document")
    s.add_argument("--base", required=True, metavar="PROFILE",
                   help="the profile whose policies the new one keeps (a name or a .yaml path)")
    s.add_argument("--name", required=True, help="the new profile's name")
    s.add_argument("--cpu", metavar="MODEL",
                   help="the CPU model to record (default: the document's CPUID brand string)")
    s.add_argument("--date", metavar="YYYY-MM-DD", help="the date to record (default: today)")
    s.add_argument("--note", metavar="TEXT", help="a sentence added to exit_mix.source.basis")
    s.add_argument("--out", dest="output", metavar="FILE",
                   help="where to write it (default: ROOT/profiles/NAME.yaml; - for stdout)")
    s.set_defaults(func=cmd_from_stats_args)
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = os.path.join(args.root, "generated") if args.root != "." else "generated"
    try:
        return args.func(args)
    except GenError as e:
        print(str(e), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception:		# noqa: BLE001: a bug, not bad input: not status 1 or 2
        traceback.print_exc()
        print("exitplan-gen: internal error (a bug in the generator; the traceback is above)",
              file=sys.stderr)
        return 3
