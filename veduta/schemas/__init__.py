"""JSON Schemas (Draft 2020-12) of the source formats, made from the validators' own field
declarations (``ObjectSpec``, ``Field`` and the specs in :mod:`veduta.source.fields`), so a schema
cannot say something the cook does not check.

``generate()`` returns ``{file name: schema}``; the same files are shipped in this package
(``veduta/schemas/*.schema.json``, kept equal to a fresh generation by a test) for editors that
point at the installed package. ``veduta schema --out DIR`` writes them (docs/schemas.md).

Rules between the fields of one object that a schema can say are said (``fields.schema_rules``,
``fields.unused``: a ``not`` with the cook's message, located at the field).  What a schema
cannot say stays the validator's job: rules between assets (references exist,
frames inside a texture's grid, footprints fit), rules between values (near < far, lod
distances increasing, parents acyclic, names unique in a list, a world inside 8192 m, a
``name`` equal to the file name), integers written as ``3.0`` (the schema's ``integer`` accepts
them, the cook does not), duplicate keys and f32 rounding.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from importlib import resources

from veduta.base.kinds import KINDS

__all__ = ["SCHEMA_DIALECT", "SOURCES", "generate", "schema_of", "render", "write", "file_name", "shipped_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: Where each kind's top-level ObjectSpec is declared ("module:attribute"), from the table of kinds.
SOURCES = {k.name: k.spec for k in KINDS}


#: Where each field table of docs/formats/<kind>.md applies: section heading -> the object
#: schemas (paths into the kind's schema; ``*`` walks every item of an ``allOf``).
DOC_TABLES: dict[str, dict[str, list[str]]] = {
    "model": {
        "Top-level fields": [""],
        "Common fields (every shape except mirror)": ["parts.items.allOf.*.then"],
        "Levels of detail": ["lod.items"],
    },
    "texture": {
        "Top-level fields": [""],
        "Layers": ["layers.items.allOf.*.then"],
        "Frames and clips": ["", "clips.additionalProperties"],
        "Edge": ["edge"],
    },
    "material": {"Fields": [""]},
    "scene": {"Top-level fields": [""], "Camera": ["camera"], "Light": ["light"], "Entities": ["entities.items"]},
    "prefab": {"Fields": [""], "scene.md#Entities": ["entities.items"]},
    "world": {
        "Top-level fields": [""],
        "Biomes": ["biomes.items"],
        "Terrain": ["terrain"],
        "Features": ["features.items"],
        "Vegetation": ["vegetation.items"],
        "Scatter": ["scatter.items"],
        "Sites": ["sites.items"],
        "Places": ["places.items"],
        "scene.md#Camera": ["camera"],
        "scene.md#Light": ["light"],
        "scene.md#Entities": ["entities.items"],
    },
    "map": {
        "Top-level fields": [""],
        "Terrains": ["terrains.items"],
        "Layers": ["layers.items"],
        "Objects": ["objects.items"],
    },
}
_DOCS_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "formats"
)


_LITERAL = re.compile(r'[-\d.]+|"[^"]*"|true|false|\[.*\]|\{\}')  # a default the schema states itself
_JSON_TYPES = ("string", "number", "integer", "boolean", "enum", "array", "object", "colour")


def _plain(md: str) -> str:
    """Table cell markdown as hover text: links and code marks dropped."""
    md = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", md)
    return md.replace("`", "").replace("\\|", "|").strip()


def doc_tables(kind: str, docs_dir: str = _DOCS_DIR) -> dict[str, dict[str, str]]:
    """The field tables of docs/formats/<kind>.md: section -> field -> hover text (the rules
    column, and the default when it is not a plain value)."""
    with open(os.path.join(docs_dir, f"{kind}.md"), encoding="utf-8") as f:
        text = f.read()
    out: dict[str, dict[str, str]] = {}
    section = ""
    header = False
    for line in text.splitlines():
        if line.startswith("#"):
            section, header = line.lstrip("#").strip(), False
        elif line.startswith("| field |"):
            header = True
        elif header and line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            name = cells[0].strip("`")
            default, rules = _plain(cells[2]), _plain(cells[3]) if len(cells) > 3 else ""
            what = _plain(cells[1])
            desc = rules if what in _JSON_TYPES else f"{what}: {rules}" if rules else what
            if default and default != "required" and not _LITERAL.fullmatch(default):
                desc += f" (default: {default})"
            out.setdefault(section, {})[name] = desc[0].upper() + desc[1:] if desc else desc
        elif not line.startswith("|"):
            header = False
    return out


def _objects(schema: dict, path: str):
    """The object schemas at a DOC_TABLES path."""
    nodes = [schema]
    for step in path.split(".") if path else []:
        nxt: list[dict] = []
        for n in nodes:
            if step == "*":
                nxt.extend(n)
            elif step in ("items", "additionalProperties", "then", "allOf"):
                nxt.append(n[step])
            else:
                nxt.append(n["properties"][step])
        nodes = nxt
    return nodes


def _describe(kind: str, schema: dict, docs_dir: str) -> None:
    """Give every documented field its hover text (fields described in the code keep theirs)."""
    tables = {}
    for section, paths in DOC_TABLES[kind].items():
        doc_kind, _, name = section.rpartition(".md#") if ".md#" in section else (kind, "", section)
        if doc_kind not in tables:
            tables[doc_kind] = doc_tables(doc_kind, docs_dir)
        rows = tables[doc_kind][name]
        for path in paths:
            for obj in _objects(schema, path):
                for field, sub in obj["properties"].items():
                    if field in rows and "description" not in sub and sub is not False:
                        obj["properties"][field] = {"description": rows[field], **sub}


def file_name(kind: str) -> str:
    return f"{kind}.schema.json"


def schema_of(kind: str, docs_dir: str = _DOCS_DIR) -> dict:
    """The JSON Schema of one kind's sources: the rules from the declarations, the hover
    texts from the field tables in *docs_dir* (the repo's docs/formats)."""
    mod, _, attr = SOURCES[kind].partition(":")
    record = getattr(importlib.import_module(mod), attr)
    k = next(k for k in KINDS if k.name == kind)
    body = record.schema()
    body["properties"]["veduta"] = {"description": f'The source format: always "{k.format}".', "const": k.format}
    body["required"] = ["veduta", *[r for r in body.get("required", []) if r != "veduta"]]
    _describe(kind, body, docs_dir)
    return {
        "$schema": SCHEMA_DIALECT,
        "title": f"Veduta {k.format} source ({k.folder}/*{k.suffix})",
        "description": f"A {k.suffix} source: {k.title}. Reference: docs/formats/{kind}.md. "
        "Rules between assets and between values are checked by `veduta check`.",
        **body,
    }


def render(schema: dict) -> str:
    """The text of a schema file (deterministic: declaration order, two-space indent)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def generate() -> dict[str, str]:
    """Every kind's schema file: ``{"model.schema.json": text, ...}`` in kind order."""
    return {file_name(k.name): render(schema_of(k.name)) for k in KINDS}


def shipped() -> dict[str, str]:
    """The schema files shipped in this package."""
    return {file_name(k.name): shipped_schema(k.name) for k in KINDS}


def shipped_schema(kind: str) -> str:
    """The schema file of *kind* shipped in this package."""
    return resources.files(__package__).joinpath(file_name(kind)).read_text(encoding="utf-8")


def write(out_dir: str) -> list[str]:
    """Write every schema into *out_dir* (created when missing); the paths written."""
    from veduta.base.fsutil import atomic_write

    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, text in generate().items():
        path = os.path.join(out_dir, name)
        atomic_write(path, text.encode("utf-8"))
        paths.append(path)
    return paths
