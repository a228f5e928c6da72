"""model/1 geometry: validated parts in, compiled mesh out (spec: model-format.md).

Stages, each callable alone:

1. `part_geometries` builds non-mirror parts (all in one numpy batch): local mesh -> scale ->
   winding -> smoothing groups, normals and UVs in the scaled local space -> rotate and
   translate. `mirror_geometry` reflects a built part; `build_part_sets` runs both in part order, for a
   model and its levels of detail at once.
2. `pivot_offset` finds the translation that puts the pivot point on the origin.
3. `assemble_many` moves every part by it, casts to float32, shares identical vertices within each
   part and concatenates the parts in part order.

`build_model` runs them for the model and every LOD level. Pure: no I/O, no global state, the
same spec always gives the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from veduta.compile.model import shapes
from veduta.compile.model.normals import edge_pairs, smooth_normals, smooth_sphere
from veduta.compile.model.transform import rotation_matrix
from veduta.compile.model.types import (
    INDEX_DTYPE,
    LOD_MIN_RINGS,
    LOD_MIN_SEGMENTS,
    VERTEX_DTYPE,
    Bounds,
    BuiltLevel,
    BuiltModel,
    BuiltPart,
    MeshPart,
    ModelSpec,
    PartSpec,
    Vec3,
)
from veduta.compile.model.uv import corner_uvs, mode_code

_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


@dataclass(eq=False, slots=True)
class PartGeometry:
    """One built part before the pivot, as triangle corners in model space: positions in
    float64 (the pivot is added to them before they are rounded), normals and UVs already
    rounded to the float32 of the compiled mesh (nothing but a sign change happens to them
    after the part is built, and a sign change commutes with rounding)."""

    corners: np.ndarray  # (t, 3, 3) float64 positions
    normals: np.ndarray  # (t, 3, 3) float32 unit corner normals
    uvs: np.ndarray  # (t, 3, 2) float32 metres
    uv_mode: str
    flip_normals: bool
    material: str

    @property
    def triangle_count(self) -> int:
        return len(self.corners)


# --- stage 1: parts ---------------------------------------------------------------------------

#: Parts are built, and their vertices shared, in chunks of about this many triangles: a
#: batch of small models is one chunk; a large model's parts go a few at a time, so the
#: temporaries of a build stay near this size (each part's result is the same in any chunk).
CHUNK_TRIANGLES = 1 << 16


def _chunks(triangles: list[int]) -> list[tuple[int, int]]:
    """Consecutive ranges [a, b) of items whose triangle counts add up to at most
    CHUNK_TRIANGLES (an item over it alone)."""
    limit = CHUNK_TRIANGLES
    out: list[tuple[int, int]] = []
    a = total = 0
    for i, n in enumerate(triangles):
        if i > a and total + n > limit:
            out.append((a, i))
            a, total = i, 0
        total += n
    if a < len(triangles):
        out.append((a, len(triangles)))
    return out


def local_mesh(part: PartSpec) -> shapes.Mesh:
    """(positions (v, 3) float64, triangles (t, 3) int64) of a non-mirror part before scale."""
    shape = part.shape
    if shape == "box":
        return shapes.box_mesh(part.size)
    if shape == "plane":
        return shapes.plane_mesh(part.size)
    if shape == "cylinder":
        return shapes.cylinder_mesh(part.radius, part.height, part.segments)
    if shape == "sphere":
        return shapes.sphere_mesh(part.radius, part.segments, part.rings)
    if shape == "extrude":
        return shapes.extrude_mesh(np.asarray(part.profile, dtype=np.float64), part.depth)
    if shape == "lathe":
        return shapes.lathe_mesh(np.asarray(part.profile, dtype=np.float64), part.segments)
    raise ValueError(f"part {part.index}: no local mesh for shape {shape!r}")


def local_meshes(parts: list[PartSpec]) -> list[shapes.Mesh]:
    """`local_mesh` of every part, the revolved shapes (cylinder, sphere, lathe) in one numpy
    pass (`shapes.revolve_many`): the same bits as one by one."""
    out: list[shapes.Mesh | None] = []
    revolved: list[tuple[list[float], list[float], int, bool]] = []
    for part in parts:
        shape = part.shape
        if shape == "cylinder":
            revolved.append((*shapes.cylinder_profile(part.radius, part.height), int(part.segments), False))
        elif shape == "sphere":
            revolved.append((*shapes.sphere_profile(part.radius, part.rings), int(part.segments), False))
        elif shape == "lathe":
            r, y, ring = shapes.lathe_profile(part.profile)
            revolved.append((r, y, int(part.segments), ring))
        else:
            out.append(local_mesh(part))
            continue
        out.append(None)
    built = iter(shapes.revolve_many(revolved))
    return [next(built) if m is None else m for m in out]


def _rows_differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a[i] != b[i] in any column, for (n, k) arrays (column by column: much faster than
    a reduction along a short last axis)."""
    out = a[:, 0] != b[:, 0]
    for j in range(1, a.shape[1]):
        out |= a[:, j] != b[:, j]
    return out


def _column_bounds(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of each column of (n, 3) points."""
    lo = np.array([points[:, 0].min(), points[:, 1].min(), points[:, 2].min()])
    hi = np.array([points[:, 0].max(), points[:, 1].max(), points[:, 2].max()])
    return lo, hi


#: Multipliers of the 64-bit mix equal rows are first grouped by (see _first_equal): one per
#: 64-bit word of a row (up to 4), and the owner's.
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93], dtype=np.uint64)
_OWNER_MIX = np.uint64(0xFF51AFD7ED558CCD)


def _first_equal(keys: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """For each row of *keys* ((n, k) uint64, k <= 4), the index of the first row bitwise equal
    to it with the same owner (part).  The result is canonical, so how equal rows are found
    does not matter: sort by 32 bits of a mix of the row and its owner, and fall back to a
    lexicographic sort of the rows themselves if two different rows collide there."""
    n, k = keys.shape
    # word by word, each step a bijection of the state: xor the word in, xorshift (a change in the
    # top bits, a sign, reaches the low ones; by 33, as 32 would move one float's sign onto the
    # other's), multiply by an odd constant (the low bits reach every higher one)
    mixed = owner.astype(np.uint64) * _OWNER_MIX
    shift = np.uint64(33)
    for j in range(k):
        mixed ^= keys[:, j]
        mixed ^= mixed >> shift
        mixed *= _MIX[j]
    # sorted by the mix's high 32 bits (which depend on every bit of the row) in two radix passes
    # of 16 bits (numpy sorts 16-bit keys by radix: several times faster than any 64-bit sort)
    high = (mixed >> np.uint64(32)).astype(np.uint32)
    order = np.argsort(high.astype(np.uint16), kind="stable")
    order = order[np.argsort((high[order] >> np.uint32(16)).astype(np.uint16), kind="stable")]
    shigh = high[order]
    new = np.ones(n, dtype=bool)
    np.not_equal(shigh[1:], shigh[:-1], out=new[1:])
    same = np.flatnonzero(~new[1:])  # neighbours of equal mix: equal rows, unless they collide
    a, b = order[same], order[same + 1]
    if (keys.take(a, axis=0) != keys.take(b, axis=0)).any() or (owner[a] != owner[b]).any():  # sort by the
        order = np.lexsort([keys[:, j] for j in reversed(range(k))] + [owner])  # full key
        sk = keys.take(order, axis=0)
        so = owner[order]
        new[1:] = _rows_differ(sk[1:], sk[:-1]) | (so[1:] != so[:-1])
    first = np.minimum.reduceat(order, np.flatnonzero(new)) if n else order
    out = np.empty(n, dtype=np.int64)
    out[order] = first[np.cumsum(new) - 1]
    return out


#: Topologies of shared (read-only) triangle arrays, by (id, flipped): (triangles, which of
#: its vertices share a position, edge_pairs); the entry holds the array, so its id stays its own.
_TOPOLOGY: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
#: The cache is emptied when it would hold more entries or bytes than this (a 256 x 128 sphere's
#: pairs take about 5 MB; the bench's small shapes a few KB).
_TOPOLOGY_MAX = 1024
_TOPOLOGY_MAX_BYTES = 64 << 20
_topology_bytes = 0


def _part_topology(tris: np.ndarray, flip: bool, canon: np.ndarray) -> np.ndarray:
    """``edge_pairs`` of a part: its local triangles (reversed when *flip*) numbered by *canon*
    (for each of its vertices, the first vertex at the same position).  A function of the
    triangles and the canon alone: cached for read-only triangle arrays (shared by every part
    of one shape topology) with the canon they were found with."""
    global _topology_bytes
    pairs = edge_pairs(canon[tris[:, [0, 2, 1]] if flip else tris])
    size = pairs.nbytes + canon.nbytes
    if not tris.flags.writeable and size <= _TOPOLOGY_MAX_BYTES:
        if len(_TOPOLOGY) >= _TOPOLOGY_MAX or _topology_bytes + size > _TOPOLOGY_MAX_BYTES:
            _TOPOLOGY.clear()
            _topology_bytes = 0
        _TOPOLOGY[(id(tris), flip)] = (tris, canon.copy(), pairs)
        _topology_bytes += size
    return pairs


def _parts_edge_pairs(
    tris: list[np.ndarray], flip: list[bool], canon: np.ndarray, vstart: list[int], nv: list[int], nt: np.ndarray
) -> np.ndarray:
    """``edge_pairs`` of a batch of parts (each part's local triangles, whether reversed, and
    the canon of all their vertices, part by part), numbered in the batch."""
    get = _TOPOLOGY.get
    found = [None if t.flags.writeable else get((id(t), f)) for t, f in zip(tris, flip, strict=True)]
    hits = [h for h in found if h is not None]
    if len(hits) == len(found) and np.array_equal(np.concatenate([h[1] for h in hits]), canon):
        each = [h[2] for h in hits]  # the common case: every part's topology seen before, checked at once
    else:  # part by part: a cached topology where it holds, else the part's own pairs
        each = []
        for t, f, a, n, hit in zip(tris, flip, vstart, nv, found, strict=True):
            part_canon = canon[a : a + n]
            each.append(
                hit[2] if hit is not None and np.array_equal(hit[1], part_canon) else _part_topology(t, f, part_canon)
            )
    pairs = np.concatenate(each, axis=1)
    pairs += np.repeat(3 * (np.cumsum(nt) - nt), [p.shape[1] for p in each])
    return pairs


def _rotate(rot: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per-triangle rotation: rot (t, 3, 3), v (t, 3, 3) corners -> rot[t] · v[t, c]."""
    r = rot[:, None]
    return v[..., 0:1] * r[..., 0] + v[..., 1:2] * r[..., 1] + v[..., 2:3] * r[..., 2]


def part_geometries(parts: list[PartSpec], smooth_angle_deg: float | list[float]) -> list[PartGeometry]:
    """Build non-mirror parts in model space (before the pivot), all in one batch.

    Per part: local mesh, scale, winding (a negative scale determinant reverses it, and
    flip_normals reverses it again), then for all parts at once: smoothing groups and UVs in the
    scaled local space, rotation and translation.  *smooth_angle_deg* is one angle for every
    part or one per part (parts of several models in one batch): every step is element-wise
    or confined to one part, so a part comes out with the same bits in any batch.
    """
    if not parts:
        return []
    angles = (
        [float(smooth_angle_deg)] * len(parts)
        if isinstance(smooth_angle_deg, (int, float))
        else [float(a) for a in smooth_angle_deg]
    )
    meshes = local_meshes(parts)
    # (rows are gathered with take(..., axis=0) here and below: the same copy as fancy indexing,
    # several times faster on arrays of short rows)
    nv = np.array([len(local) for local, _ in meshes])
    nt = np.array([len(tris) for _, tris in meshes])
    owner_v = np.repeat(np.arange(len(parts)), nv)
    owner_t = np.repeat(np.arange(len(parts)), nt)
    scaled = (
        np.concatenate([local for local, _ in meshes]) * np.array([p.scale for p in parts]).take(owner_v, axis=0) + 0.0
    )
    tris = np.concatenate([tris for _, tris in meshes]) + (np.cumsum(nv) - nv)[owner_t][:, None]
    # winding: a negative scale determinant reverses it, and flip_normals reverses it again
    flip = [((p.scale[0] < 0) ^ (p.scale[1] < 0) ^ (p.scale[2] < 0)) != bool(p.flip_normals) for p in parts]
    if any(flip):
        flip_t = np.array(flip)[owner_t]
        tris[flip_t] = tris[flip_t][:, [0, 2, 1]]

    # which edges of a part meet depends only on its triangles and which of its vertices share
    # a position: cached per shape topology, checked against the positions found here
    vstart = np.cumsum(nv) - nv
    canon = _first_equal(np.ascontiguousarray(scaled).view(np.uint64).reshape(-1, 3), owner_v) - vstart[owner_v]
    pairs = _parts_edge_pairs([t for _, t in meshes], flip, canon, vstart.tolist(), nv.tolist(), nt)
    spheres = np.array(
        [p.shape == "sphere" and smooth_sphere(p.segments, p.rings, a) for p, a in zip(parts, angles, strict=True)]
    )
    angle_t = angles[0] if len(set(angles)) == 1 else np.array(angles)[owner_t]
    normals, face_n = smooth_normals(
        None, None, angle_t, spheres[owner_t] if spheres.any() else None, pairs, scaled, tris
    )

    starts = np.cumsum(nv) - nv
    columns = np.ascontiguousarray(scaled.T)
    lo = np.minimum.reduceat(columns, starts, axis=1).T.take(owner_t, axis=0)
    hi = np.maximum.reduceat(columns, starts, axis=1).T.take(owner_t, axis=0)
    modes = np.array([mode_code(p.uv_mode) for p in parts])[owner_t]
    uvs = corner_uvs(modes, scaled, tris, face_n, lo, hi)

    # rotation and translation: positions per vertex (the same operations as per corner), then
    # gathered to the corners; normals per corner
    points = scaled
    if any(any(p.rotation_deg) for p in parts):
        eye = np.eye(3)
        rot = np.array([rotation_matrix(p.rotation_deg) if any(p.rotation_deg) else eye for p in parts])
        points = _rotate(rot.take(owner_v, axis=0), scaled[:, None])[:, 0]
        normals = _rotate(rot.take(owner_t, axis=0), normals)
    points = points + np.array([p.position for p in parts], dtype=np.float64).take(owner_v, axis=0)
    points += 0.0
    corners = points.take(tris, axis=0)
    normals += 0.0

    normals32 = normals.astype(np.float32)
    del normals
    uvs32 = uvs.astype(np.float32)
    del uvs
    ends = np.cumsum(nt).tolist()
    return [
        PartGeometry(corners[a:b], normals32[a:b], uvs32[a:b], p.uv_mode, bool(p.flip_normals), p.material)
        for p, a, b in zip(parts, [0] + ends[:-1], ends, strict=True)
    ]


def mirror_geometry(source: PartGeometry, axis: str, material: str = "") -> PartGeometry:
    """Reflect a built part across the model-space plane through the origin perpendicular to
    `axis`, reversing the winding so it faces outwards; UVs are copied. `material` "" inherits."""
    a = _AXIS_INDEX[axis]
    rev = [0, 2, 1]
    corners = source.corners[:, rev]
    normals = source.normals[:, rev]
    corners[..., a] = 0.0 - corners[..., a]
    normals[..., a] = 0.0 - normals[..., a]
    return PartGeometry(
        corners,
        normals,
        source.uvs[:, rev],
        source.uv_mode,
        source.flip_normals,
        material or source.material,
    )


def build_part_sets(sets: list[tuple[PartSpec, ...]], smooth_angle_deg: float) -> list[list[PartGeometry]]:
    """Build several part lists (a model and its levels of detail) with one numpy batch.

    A part spec that occurs in more than one list (a box is the same at every level) is
    built once. Parts never influence each other, so the batch changes no result.
    """
    return _build_sets([(parts, smooth_angle_deg, 0) for parts in sets])


def _build_sets(sets: list[tuple[tuple[PartSpec, ...], float, int]]) -> list[list[PartGeometry]]:
    """`build_part_sets` for part lists of several models: (parts, smooth angle, model number).

    Equal part specs are shared within a model only (the model number is in the key).
    """
    unique: dict[tuple[int, PartSpec], int] = {}
    angles: list[float] = []
    where: list[list[int]] = []  # each set's parts: their number in unique (-1: a mirror)
    for parts, angle, model in sets:
        numbers = []
        for p in parts:
            if p.shape == "mirror":
                numbers.append(-1)
                continue
            k = unique.setdefault((model, p), len(unique))  # (a part spec is hashed once)
            if k == len(angles):
                angles.append(angle)
            numbers.append(k)
        where.append(numbers)
    specs = [p for _, p in unique]
    built: list[PartGeometry] = []
    for a, b in _chunks([part_triangle_counts((p,))[0] for p in specs]):
        built += part_geometries(specs[a:b], angles[a:b])
    out: list[list[PartGeometry]] = []
    for (parts, _, _), numbers in zip(sets, where, strict=True):
        geoms: list[PartGeometry] = []
        for part, k in zip(parts, numbers, strict=True):
            if k < 0:
                geoms.append(mirror_geometry(geoms[part.of], part.axis, part.material))
            else:
                geoms.append(built[k])
        out.append(geoms)
    return out


# --- stage 2: pivot ---------------------------------------------------------------------------


def pivot_offsets(models: list[tuple[list[PartGeometry], str]]) -> list[Vec3]:
    """`pivot_offset` of several models (geoms, pivot), their bounds in one numpy pass."""
    counts = [sum(3 * g.triangle_count for g in geoms) for geoms, _ in models]
    if len(models) < 2 or not all(counts):
        return [pivot_offset(geoms, pivot) for geoms, pivot in models]
    points = np.concatenate([g.corners.reshape(-1, 3) for geoms, _ in models for g in geoms])
    sizes = np.array(counts, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    lo = np.minimum.reduceat(points, starts, axis=0)
    hi = np.maximum.reduceat(points, starts, axis=0)
    centre = (lo + hi) * 0.5
    point = centre.copy()
    point[:, 1] = np.where([pivot == "bottom-center" for _, pivot in models], lo[:, 1], centre[:, 1])
    off = (0.0 - point + 0.0).tolist()
    out: list[Vec3] = []
    for (_, pivot), (x, y, z) in zip(models, off, strict=True):
        if pivot not in ("origin", "center", "bottom-center"):
            raise ValueError(f"unknown pivot {pivot!r}")
        out.append((0.0, 0.0, 0.0) if pivot == "origin" else (x, y, z))
    return out


def pivot_offset(geoms: list[PartGeometry], pivot: str) -> Vec3:
    """Translation that moves the pivot point of all parts' bounding box onto the origin."""
    if pivot == "origin":
        return (0.0, 0.0, 0.0)
    points = np.concatenate([g.corners.reshape(-1, 3) for g in geoms])
    lo, hi = _column_bounds(points)
    centre = (lo + hi) * 0.5
    if pivot == "center":
        point = centre
    elif pivot == "bottom-center":
        point = np.array([centre[0], lo[1], centre[2]])
    else:
        raise ValueError(f"unknown pivot {pivot!r}")
    off = 0.0 - point + 0.0
    return (float(off[0]), float(off[1]), float(off[2]))


# --- stage 3: assemble ------------------------------------------------------------------------


def _dedupe(rows: np.ndarray, owner: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Share identical rows ((n, 8) float32, compared as bytes) of the same owner (part).

    Rows are kept in first-occurrence order. Returns (unique rows (k, 8), inverse (n,) int64,
    the row number of each unique row's first occurrence (k,), ascending); equal rows are found
    by :func:`_first_equal`.
    """
    n = len(rows)
    first_of = _first_equal(np.ascontiguousarray(rows).view(np.uint64).reshape(n, 4), owner)
    is_first = first_of == np.arange(n)
    # a unique row's number is the count of first occurrences before it (no sort needed)
    inverse = (np.cumsum(is_first) - 1)[first_of]
    first = np.flatnonzero(is_first)
    return rows.take(first, axis=0), inverse, first


def materials_of(geoms: list[PartGeometry]) -> tuple[str, ...]:
    """Material slots in order of first use ("" = parts without a material)."""
    seen: dict[str, int] = {}
    for g in geoms:
        seen.setdefault(g.material, len(seen))
    return tuple(seen)


@dataclass(eq=False, slots=True)
class Assembled:
    vertices: np.ndarray
    indices: np.ndarray
    mesh_parts: tuple[MeshPart, ...]
    bounds: Bounds


def _rows(geoms: list[PartGeometry], offsets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(n, 8) float32 rows of every corner of *geoms*: position moved by its part's offset
    (in float64, then cast), normal, uv; -0.0 folded into 0.0."""
    rows = np.empty((int(counts.sum()), 8), dtype=np.float32)
    if len(rows):
        rows[:, 0:3] = np.concatenate([g.corners.reshape(-1, 3) for g in geoms]) + np.repeat(offsets, counts, axis=0)
        rows[:, 3:6] = np.concatenate([g.normals.reshape(-1, 3) for g in geoms])
        rows[:, 6:8] = np.concatenate([g.uvs.reshape(-1, 2) for g in geoms])
        rows += np.float32(0.0)  # fold -0.0 into 0.0 so equal values have equal bytes
    return rows


def assemble_many(jobs: list[tuple[list[PartGeometry], Vec3, tuple[str, ...]]]) -> list[Assembled]:
    """Assemble several meshes (geoms, offset, materials) in one numpy batch.

    Vertices are shared within a part only, so one mesh's rows and their first occurrences
    stay in its own range of the batch: each mesh comes out with the same bits as alone.
    """
    geoms = [g for job in jobs for g in job[0]]
    offsets = np.array([job[1] for job in jobs for _ in job[0]], dtype=np.float64).reshape(-1, 3)
    counts = np.array([3 * g.triangle_count for g in geoms], dtype=np.int64)
    # vertices are shared within a part only: the parts go in chunks, each chunk's rows and
    # unique rows following the last's (the same result as all at once, in less memory)
    pieces = []
    unique_base = row_base = 0
    for a, b in _chunks([g.triangle_count for g in geoms]):
        rows = _rows(geoms[a:b], offsets[a:b], counts[a:b])
        unique, inverse, firsts = _dedupe(rows, np.repeat(np.arange(b - a), counts[a:b]))
        del rows
        pieces.append(
            (unique, inverse + unique_base if unique_base else inverse, firsts + row_base if row_base else firsts)
        )
        unique_base += len(unique)
        row_base += int(counts[a:b].sum())
    if len(pieces) == 1:
        unique, inverse, firsts = pieces[0]
    elif pieces:
        unique, inverse, firsts = (np.concatenate(p) for p in zip(*pieces, strict=True))
    else:
        unique, inverse, firsts = _dedupe(np.empty((0, 8), dtype=np.float32), np.zeros(0, dtype=np.int64))
    del pieces
    vertices = np.empty(len(unique), dtype=VERTEX_DTYPE)
    vertices["position"] = unique[:, 0:3]
    vertices["normal"] = unique[:, 3:6]
    vertices["uv"] = unique[:, 6:8]
    # each mesh's rows, and (first occurrences being sorted) its unique rows, are one range
    row_ends = np.cumsum([3 * sum(g.triangle_count for g in job[0]) for job in jobs]).tolist()
    unique_ends = np.searchsorted(firsts, row_ends).tolist()
    # each mesh's bounds: the min and max of its unique positions (float32), all in one pass
    starts = sorted(set([0] + unique_ends[:-1]) - {len(unique)}) if len(unique) else []
    lo_all = np.minimum.reduceat(unique[:, 0:3], starts, axis=0).tolist() if starts else []
    hi_all = np.maximum.reduceat(unique[:, 0:3], starts, axis=0).tolist() if starts else []
    bounds_of = iter(zip(lo_all, hi_all, strict=True))
    # every mesh's indices (each counted from its first unique row) in one pass; each mesh
    # keeps a slice of them and of the vertices
    row_counts = np.diff(row_ends, prepend=0)
    all_indices = (inverse - np.repeat([0] + unique_ends[:-1], row_counts)).astype(INDEX_DTYPE)
    out = []
    row0 = u0 = 0
    geom0 = 0
    counts_list = counts.tolist()
    for (job_geoms, _, materials), row1, u1 in zip(jobs, row_ends, unique_ends, strict=True):
        slot = {m: i for i, m in enumerate(materials)}
        mesh_parts = []
        first = 0
        for g, c in zip(job_geoms, counts_list[geom0 : geom0 + len(job_geoms)], strict=True):
            mesh_parts.append(MeshPart(first, c, slot[g.material]))
            first += c
        if u1 > u0:
            lo, hi = next(bounds_of)
            bounds: Bounds = ((lo[0], lo[1], lo[2]), (hi[0], hi[1], hi[2]))
        else:
            bounds = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        out.append(Assembled(vertices[u0:u1], all_indices[row0:row1], tuple(mesh_parts), bounds))
        row0, u0, geom0 = row1, u1, geom0 + len(job_geoms)
    return out


# --- LOD and counts ---------------------------------------------------------------------------


def lod_count(count: int, level: int, minimum: int) -> int:
    """count halved `level` times, rounded to nearest (half up), never below `minimum`."""
    return max(minimum, math.floor(count / 2**level + 0.5))


def lod_part(part: PartSpec, level: int) -> PartSpec:
    """The part as LOD level `level` (1-based) rebuilds it; level 0 is the part itself."""
    if level <= 0 or part.shape not in ("cylinder", "sphere", "lathe"):
        return part
    segments = lod_count(part.segments, level, LOD_MIN_SEGMENTS)
    rings = lod_count(part.rings, level, LOD_MIN_RINGS) if part.shape == "sphere" else part.rings
    if segments == part.segments and rings == part.rings:
        return part
    return replace(part, segments=segments, rings=rings)


def _lathe_triangles(profile: tuple[tuple[float, float], ...], segments: int) -> int:
    total = 0
    for (r0, _), (r1, _) in zip(profile[:-1], profile[1:], strict=True):
        total += segments * ((r0 > 0) + (r1 > 0))
    return total


def part_triangle_counts(parts: tuple[PartSpec, ...], level: int = 0) -> list[int]:
    """Triangles of every part at LOD level `level` (0 = the model), from the spec's formulas."""
    counts: list[int] = []
    for part in parts:
        p = lod_part(part, level)
        shape = p.shape
        if shape == "box":
            n = 12
        elif shape == "plane":
            n = 2
        elif shape == "cylinder":
            n = 4 * p.segments
        elif shape == "sphere":
            n = 2 * p.segments * (p.rings - 1)
        elif shape == "extrude":
            n = 2 * (len(p.profile) - 2) + 2 * len(p.profile)
        elif shape == "lathe":
            n = _lathe_triangles(p.profile, p.segments)
        elif shape == "mirror":
            n = counts[p.of]
        else:
            raise ValueError(f"part {p.index}: unknown shape {shape!r}")
        counts.append(n)
    return counts


def triangle_count(spec: ModelSpec) -> int:
    """Triangles of the model (LOD level 0), without building it."""
    return sum(part_triangle_counts(spec.parts))


def lod_triangle_counts(spec: ModelSpec) -> list[int | None]:
    """Triangles of every LOD level in order; None for a level drawn by another model."""
    return [
        None if level.model else sum(part_triangle_counts(spec.parts, k)) for k, level in enumerate(spec.lod, start=1)
    ]


# --- the whole model --------------------------------------------------------------------------


def _part_records(parts: tuple[PartSpec, ...], geoms: list[PartGeometry], asm: Assembled) -> tuple[BuiltPart, ...]:
    return tuple(
        BuiltPart(
            index=i,
            shape=p.shape,
            first=mp.first,
            count=mp.count,
            material=mp.material,
            uv=g.uv_mode,
            flip_normals=g.flip_normals,
            of=p.of if p.shape == "mirror" else -1,
        )
        for i, (p, g, mp) in enumerate(zip(parts, geoms, asm.mesh_parts, strict=True))
    )


def build_model(spec: ModelSpec) -> BuiltModel:
    """Compile a validated model: mesh, materials, parts, pivot, bounds and LOD levels."""
    return build_models([spec])[0]


def build_models(specs: list[ModelSpec]) -> list[BuiltModel]:
    """`build_model` of several models, their parts in one numpy batch (for small models the
    cost of a numpy call, not the arithmetic, dominates).  Each model comes out with the same
    bits as built alone: parts never influence each other."""
    sets: list[tuple[tuple[PartSpec, ...], float, int]] = []
    levels_of: list[list[int]] = []
    for m, spec in enumerate(specs):
        own = [k for k, lod in enumerate(spec.lod, start=1) if not lod.model]  # levels with own geometry
        levels_of.append(own)
        sets += [
            (parts, spec.smooth_angle_deg, m)
            for parts in [spec.parts] + [tuple(lod_part(p, k) for p in spec.parts) for k in own]
        ]
    built = _build_sets(sets)
    geoms_of, offsets, materials_list = [], [], []
    jobs: list[tuple[list[PartGeometry], Vec3, tuple[str, ...]]] = []
    firsts = [0]  # each model's first set in built (its level 0), then its own levels
    for own in levels_of[:-1]:
        firsts.append(firsts[-1] + 1 + len(own))
    pivots = pivot_offsets([(built[first], spec.pivot) for first, spec in zip(firsts, specs, strict=True)])
    at = 0
    for own, offset in zip(levels_of, pivots, strict=True):
        geoms = built[at]
        materials = materials_of(geoms)
        geoms_of.append(geoms)
        offsets.append(offset)
        materials_list.append(materials)
        jobs += [(g, offset, materials) for g in built[at : at + 1 + len(own)]]
        at += 1 + len(own)
    assembled = assemble_many(jobs)
    out = []
    at = 0
    for spec, own, geoms, offset, materials in zip(specs, levels_of, geoms_of, offsets, materials_list, strict=True):
        lod_asm = dict(zip(own, assembled[at + 1 : at + 1 + len(own)], strict=True))
        out.append(_finish_model(spec, geoms, offset, materials, assembled[at], lod_asm))
        at += 1 + len(own)
    return out


def _finish_model(
    spec: ModelSpec,
    geoms: list[PartGeometry],
    offset: Vec3,
    materials: tuple[str, ...],
    asm: Assembled,
    lod_asm: dict[int, Assembled],
) -> BuiltModel:
    levels: list[BuiltLevel] = []
    for k, lod in enumerate(spec.lod, start=1):
        if lod.model:
            levels.append(
                BuiltLevel(
                    float(lod.distance),
                    lod.model,
                    asm.bounds,
                    np.zeros(0, dtype=VERTEX_DTYPE),
                    np.zeros(0, dtype=INDEX_DTYPE),
                    (),
                )
            )
            continue
        lasm = lod_asm[k]
        levels.append(BuiltLevel(float(lod.distance), "", lasm.bounds, lasm.vertices, lasm.indices, lasm.mesh_parts))
    return BuiltModel(
        name=spec.name,
        vertices=asm.vertices,
        indices=asm.indices,
        mesh_parts=asm.mesh_parts,
        materials=materials,
        parts=_part_records(spec.parts, geoms, asm),
        pivot_offset=offset,
        bounds=asm.bounds,
        lods=tuple(levels),
        smooth_angle_deg=float(spec.smooth_angle_deg),
        symmetry=spec.symmetry,
        triangle_budget=int(spec.triangle_budget),
        draw_distance=float(spec.draw_distance),
    )
