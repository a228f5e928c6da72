"""Entities of a chunk with deterministic names (docs/world-generation.md, section 13).

Instance names:
  place                  <place name>                         e.g. capital
  site                   site_<tag>[_<k>]_<rx>_<rz>            e.g. site_village_n3_2
  scatter                chunk_<cx>_<cz>_scatter_<local>       e.g. chunk_n3_12_scatter_37
  vegetation prefab      chunk_<cx>_<cz>_veg_<rule>_<local>
  plant (model rule)     chunk_<cx>_<cz>_plant_<rule>_<local>
where negative numbers are written n3, k counts earlier site rules with the same tag (omitted for
the first), and local = (z mod chunk) * chunk + (x mod chunk) is the cell's index in its chunk.
A prefab with one entity gives it the instance name; a prefab with several names each
``<instance>_<entity name>`` (parents renamed the same way).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from veduta.world.cover import SCATTER, STRUCTURE, VEGETATION
from veduta.world.generator import Generator, chunk_name, metres
from veduta.world.structures import Structure

_ROT = {0: (1, 0), 90: (0, 1), 180: (-1, 0), 270: (0, -1)}  # (cos, sin)


def _vec(v: Iterable[float] | None, default: Iterable[float]) -> list[float]:
    return [float(c) for c in (v if v is not None else default)]


def prefab_instance(
    record: Any, instance: str, origin: tuple[float, float, float], rotation: int, source: dict
) -> list[dict]:
    """The entities of a prefab placed at ``origin`` (metres) turned by ``rotation`` degrees about
    +Y (x' = x cos + z sin, z' = -x sin + z cos). Entities with a parent inside the prefab keep
    their local transform."""
    ents = list(getattr(record, "entities", None) or [])
    names = {e.name for e in ents}
    cos, sin = _ROT[rotation % 360]
    out = []
    for e in ents:
        name = instance if len(ents) == 1 else f"{instance}_{e.name}"
        parent = getattr(e, "parent", "") or ""
        pos = _vec(getattr(e, "position", None), (0, 0, 0))
        rot = _vec(getattr(e, "rotation_deg", None), (0, 0, 0))
        if parent in names:
            parent = instance if len(ents) == 1 else f"{instance}_{parent}"
        else:
            lx, ly, lz = pos
            pos = [origin[0] + lx * cos + lz * sin, origin[1] + ly, origin[2] - lx * sin + lz * cos]
            rot = [rot[0], (rot[1] + rotation) % 360, rot[2]]
        hitbox = getattr(e, "hitbox", None)
        out.append(
            {
                "name": name,
                "kind": getattr(e, "kind", ""),
                "model": getattr(e, "model", ""),
                "material": getattr(e, "material", ""),
                "position": pos,
                "rotation_deg": rot,
                "scale": _vec(getattr(e, "scale", None), (1, 1, 1)),
                "tags": list(getattr(e, "tags", None) or []),
                "parent": parent,
                "visible": bool(getattr(e, "visible", True)),
                "hitbox": None if hitbox is None else [_vec(hitbox[0], ()), _vec(hitbox[1], ())],
                "layer": int(getattr(e, "layer", 0)),
                "frame": int(getattr(e, "frame", 0)),
                "anim": getattr(e, "anim", ""),
                "source": source,
            }
        )
    return out


def structure_entities(gen: Generator, s: Structure) -> list[dict]:
    pf = gen.prefabs.get(s.prefab)
    if pf is None:  # a place whose prefab is missing owns its cell and spawns nothing
        return []
    cm = gen.p.cell_mm
    origin = ((2 * s.x0 + s.fw) * cm / 2000.0, metres(s.level_mm), (2 * s.z0 + s.fd) * cm / 2000.0)
    source = {"kind": s.kind, "name": s.name, "prefab": s.prefab}
    if s.kind == "site":
        source["rule"] = gen.p.sites[s.rule].tag
    return prefab_instance(pf.record, s.name, origin, s.rotation, source)


def chunk_entities(gen: Generator, cx: int, cz: int) -> list[dict]:
    lay = gen.chunk_layers(cx, cz)
    p = gen.p
    c = p.chunk
    x0, z0 = cx * c, cz * c
    base = chunk_name(cx, cz)
    out: list[dict] = []
    for s in lay.structures:
        if s.x0 < x0 + c and s.x1 > x0 and s.z0 < z0 + c and s.z1 > z0:
            out.extend(structure_entities(gen, s))
    cm = p.cell_mm
    for j in range(c):
        for i in range(c):
            x, z = x0 + i, z0 + j
            local = j * c + i
            kind = int(lay.owner_kind[j, i])
            if kind in (SCATTER, VEGETATION):
                idx = int(lay.owner_index[j, i])
                source: dict[str, Any]
                if kind == SCATTER:
                    prefab = p.scatter[idx].prefab
                    inst = f"{base}_scatter_{local}"
                    source = {"kind": "scatter", "name": inst, "prefab": prefab, "rule": idx}
                else:
                    veg = p.vegetation[idx]
                    prefab = veg.prefab
                    inst = f"{base}_veg_{veg.name}_{local}"
                    source = {"kind": "vegetation", "name": inst, "prefab": prefab, "rule": veg.name}
                origin = ((2 * x + 1) * cm / 2000.0, metres(lay.centre[j, i]), (2 * z + 1) * cm / 2000.0)
                out.extend(prefab_instance(gen.prefabs[prefab].record, inst, origin, 0, source))
            if kind == STRUCTURE:
                continue
            for pa in lay.plants:
                if not pa.mask[j, i]:
                    continue
                rule = p.vegetation[pa.rule]
                size = metres(pa.scale[j, i])
                name = f"{base}_plant_{rule.name}_{local}"
                out.append(
                    {
                        "name": name,
                        "kind": "flora",
                        "model": rule.model,
                        "material": "",
                        "position": [metres(pa.x_mm[j, i]), metres(pa.y_mm[j, i]), metres(pa.z_mm[j, i])],
                        "rotation_deg": [0.0, float(pa.rotation[j, i]), 0.0],
                        "scale": [-size if pa.mirror[j, i] else size, size, size],
                        "tags": ["flora"],
                        "parent": "",
                        "visible": True,
                        "hitbox": None,
                        "layer": 0,
                        "frame": 0,
                        "anim": "",
                        "source": {"kind": "plant", "name": name, "model": rule.model, "rule": rule.name},
                    }
                )
    return out
