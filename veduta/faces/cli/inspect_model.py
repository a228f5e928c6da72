"""The `inspect model` command line, light to import (the inspection itself loads on use)."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO


def add_inspect_model(subparsers) -> argparse.ArgumentParser:
    """Register `model NAME [--json]` on the subparsers of `inspect`; sets `func` (call
    `args.func(args)`, it returns the exit status)."""
    p = subparsers.add_parser(
        "model",
        help="triangles, levels of detail and findings of a model",
        description="Report a model's triangles per part and in total, the triangles "
        "of every level of detail, bounds, materials and findings.",
    )
    p.add_argument("name", metavar="NAME", help="model name (the .vmodel file name without the suffix)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run_inspect_model)
    return p


def format_text(report: dict) -> str:
    from veduta.tools.inspect_model import fmt_number

    """The human-readable report (for a model that built)."""
    lines = [f"model {report['name']} ({report['source']})"]
    budget = report["triangle_budget"]
    lines.append(
        f"triangles: {report['triangles']}"
        + (f" of a budget of {budget}" if budget else "")
        + f", vertices: {report['vertices']}"
    )
    width = max(len(p["shape"]) for p in report["parts"])
    mwidth = max(len(p["material"] or "-") for p in report["parts"])
    for p in report["parts"]:
        extra = f"  (mirror of {p['of']})" if "of" in p else ""
        lines.append(
            f"  part {p['index']:>3}  {p['shape']:<{width}}  {p['material'] or '-':<{mwidth}}  "
            f"{p['triangles']:>6}{extra}"
        )
    if report["lods"]:
        shown = []
        for lv in report["lods"]:
            tris = "?" if lv["triangles"] is None else str(lv["triangles"])
            via = f" ({lv['model']})" if lv["model"] else ""
            shown.append(f"{tris} from {fmt_number(lv['distance'])} m{via}")
        lines.append("lod_triangles: " + ", ".join(shown))
    else:
        lines.append("lod_triangles: none")
    dd = report["draw_distance"]
    lines.append(f"draw_distance: {fmt_number(dd) + ' m' if dd else 'no limit'}")
    b = report["bounds"]
    lo, hi = (", ".join(map(fmt_number, b[k])) for k in ("min", "max"))
    lines.append(f"bounds: ({lo}) .. ({hi})")
    lines.append("materials: " + (", ".join(m or '""' for m in report["materials"]) or "none"))
    if report["symmetry"]:
        lines.append(f"symmetry: {report['symmetry']}")
    if report["findings"]:
        lines.append("findings:")
        lines += [f"  {f['severity']}: {f['code']}: {f['message']}" for f in report["findings"]]
    else:
        lines.append("findings: none")
    return "\n".join(lines) + "\n"


def run_inspect_model(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The `inspect model` command; returns the exit status."""
    from veduta.base.project import Project
    from veduta.tools.inspect_model import exit_status, inspect_model

    out = out or sys.stdout
    err = err or sys.stderr
    project = getattr(args, "project", None) or Project.find(getattr(args, "root", None))
    report = inspect_model(project, args.name)
    if args.json:
        from veduta.faces.cli.inspect import report_json

        out.write(report_json(report))
    elif report["status"] == "missing":
        err.write(f"veduta: {report['errors'][0]['message']}\n")
    elif report["status"] == "invalid":
        err.write("".join(e["text"] + "\n" for e in report["errors"]))
    else:
        out.write(format_text(report))
    return exit_status(report)
