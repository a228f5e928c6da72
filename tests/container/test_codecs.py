"""Byte round trips and reader checks of every body chunk."""

from __future__ import annotations

import struct

import pytest

from tests.container import samples
from veduta.base.errors import VdaError
from veduta.formats import BODIES, decode, encode


@pytest.mark.parametrize("ctype", sorted(samples.BODIES))
def test_round_trip(ctype):
    rec = samples.BODIES[ctype]()
    data = encode(rec)
    back = decode(BODIES[ctype], data)
    assert back == rec
    assert encode(back) == data
    assert encode(samples.BODIES[ctype]()) == data  # deterministic


@pytest.mark.parametrize("ctype", sorted(samples.BODIES))
def test_trailing_and_missing_bytes_are_errors(ctype):
    data = encode(samples.BODIES[ctype]())
    with pytest.raises(VdaError, match="trailing bytes"):
        decode(BODIES[ctype], data + b"\0")
    with pytest.raises(VdaError, match="payload too short|count"):
        decode(BODIES[ctype], data[:-1])


def test_empty_lists_read_back_empty():
    rec = samples.material()
    assert decode(type(rec), encode(rec)) == rec
    s = samples.scene().replace(entities=[])
    assert decode(type(s), encode(s)).entities == []
    assert samples.scene().replace(entities=None) == s  # absent and empty are the same list


def test_material_exact_bytes():
    # MATL fields in order: str name, color, str texture, bool, str alpha, f32, u8, u8, u32 x 2
    data = encode(samples.material())
    want = (
        struct.pack("<I", 4)
        + b"wood"
        + bytes([0xC0, 0x40, 0x80, 0xFF])
        + struct.pack("<I", 5)
        + b"sheet"
        + b"\0"
        + struct.pack("<I", 6)
        + b"cutout"
        + struct.pack("<f", 0.5)
        + b"\x01\x01"
        + struct.pack("<II", 2, 2)
    )
    assert data == want


def test_f32_keeps_every_bit_pattern():
    m = samples.material()
    data = bytearray(encode(m))
    at = 4 + 4 + 4 + 4 + 5 + 1 + 4 + 6
    for bits in (0x7FA00001, 0xFFC00000, 0x80000000, 0x00000001):  # signalling NaN, NaN, -0, denormal
        data[at : at + 4] = struct.pack("<I", bits)
        assert encode(decode(type(m), bytes(data))) == bytes(data)


def _bad(rec, match):
    with pytest.raises(VdaError, match=match):
        decode(type(rec), encode(rec))


def test_mesh_reader_checks():
    m = samples.mesh()
    _bad(m.replace(indices=m.indices[:4]), "not a multiple of 3")
    idx = m.indices.copy()
    idx[5] = 9
    _bad(m.replace(indices=idx), "not below the vertex count 4")
    _bad(m.replace(mesh_parts=[samples.MeshPart(3, 6, 0)]), "mesh part 0 range")
    _bad(m.replace(mesh_parts=[samples.MeshPart(0, 6, 2)]), "material 2 is not an index")
    _bad(m.replace(materials=[], mesh_parts=[samples.MeshPart(0, 6, 1)]), "not an index into 0 materials")
    _bad(m.replace(parts=[samples.Part(0, "box", 0, 4, "", "box", False, -1)]), "part 0 range")
    _bad(m.replace(parts=[samples.Part(0, "mirror", 0, 6, "", "box", False, -2)]), "below -1")
    _bad(m.replace(draw_distance=-1.0), "below 0")
    _bad(m.replace(draw_distance=float("nan")), "below 0")
    _bad(m.replace(lods=list(reversed(m.lods))), "does not increase")
    _bad(m.replace(lods=[m.lods[0].replace(mesh_parts=[])]), "0 mesh parts, the base mesh 2")
    _bad(m.replace(lods=[m.lods[1].replace(vertices=m.vertices)]), "has its own geometry")
    # zero materials and material 0 is fine
    ok = m.replace(materials=[], mesh_parts=[samples.MeshPart(0, 6, 0)], lods=[])
    assert decode(type(ok), encode(ok)) == ok


def test_texture_reader_checks():
    t = samples.texture()
    _bad(t.replace(levels=5, images=t.images + [t.images[-1]]), "5 levels, more than the 4")
    _bad(t.replace(images=[t.images[0], t.images[0], t.images[2], t.images[3]]), "level 1 measures 8 x 4, want 4 x 2")
    _bad(t.replace(wrap=2), "not 0 \\(repeat\\) or 1")
    _bad(t.replace(grid=(0, 3)), "grid 0 x 3")
    _bad(t.replace(grid=(257, 1)), "grid 257 x 1")
    _bad(t.replace(clips=list(reversed(t.clips))), "not in name order")
    _bad(t.replace(clips=[samples.Clip("a", [4], 1.0, False, "")]), "frame 4 is outside the 4 frames")
    _bad(t.replace(clips=[samples.Clip("a", [], 1.0, False, "")]), "has no frames")
    _bad(t.replace(clips=[samples.Clip("a", [0], 0.0, False, "")]), "fps 0.0 is not above 0")
    _bad(t.replace(edge=samples.Edge(0, 1.0, 0.5, 0)), "priority 0")
    _bad(t.replace(edge=samples.Edge(1, 0.0, 0.5, 0)), "width 0.0")
    _bad(t.replace(edge=samples.Edge(1, 1.0, 1.5, 0)), "roughness 1.5")
    _bad(t.replace(width=0, height=0, levels=0, images=[]).replace(width=3), "must be 0 when levels is 0")
    empty = t.replace(width=0, height=0, levels=0, images=[])
    assert decode(type(t), encode(empty)) == empty


def test_material_reader_checks():
    m = samples.material()
    _bad(m.replace(alpha="glass"), "not opaque, blend or cutout")
    _bad(m.replace(cull=2), "cull")
    _bad(m.replace(filter=7), "filter")
    _bad(m.replace(grid=(1, 0)), "grid 1 x 0")


def test_entity_reader_checks():
    s = samples.scene()
    _bad(s.replace(entities=[samples.entity(hitbox=((1.0, 0.0, 0.0), (0.0, 1.0, 1.0)))]), "hitbox min")
    _bad(s.replace(entities=[samples.entity(layer=1001)]), "1001 out of range")
    _bad(s.replace(entities=[samples.entity(frame=65536)]), "65536 out of range")
    # the first entity's visible bool: the one byte where visible=True and visible=False differ
    shown = encode(s.replace(entities=[samples.entity(visible=True)]))
    hidden = encode(s.replace(entities=[samples.entity(visible=False)]))
    diff = [i for i, (a, b) in enumerate(zip(shown, hidden, strict=True)) if a != b]
    assert len(diff) == 1 and shown[diff[0]] == 1 and hidden[diff[0]] == 0
    bad = bytearray(shown)
    bad[diff[0]] = 2
    with pytest.raises(VdaError, match=r"bad bool 2 in .*visible.* \(want 0 or 1\)"):
        decode(type(s), bytes(bad))


def test_prefab_world_tilemap_reader_checks():
    p = samples.prefab()
    _bad(p.replace(footprint=(0.0, 1.0)), "footprint")
    _bad(p.replace(distances=list(reversed(p.distances))), "not sorted by tag")
    w = samples.world()
    _bad(w.replace(cell=0.0), "cell")
    _bad(w.replace(extent=1024), "over 8192")
    _bad(w.replace(view=5), "5 out of range \\[1, 4\\]")
    _bad(w.replace(biomes=[]), "at least one biome")
    _bad(w.replace(places=[samples.Place("x", "city", 8192, 0, 0)]), "outside the world")
    _bad(w.replace(places=[samples.Place("x", "city", 0, 0, 45)]), "rotation 45")
    _bad(
        w.replace(vegetation=[samples.Vegetation("g", "a", "b", 0.5, [], False, 0, 0, 0, 1.0, 1.0)]),
        "exactly one of prefab and model",
    )
    _bad(w.replace(vegetation=[samples.Vegetation("g", "", "b", 0.5, [], False, 0, 0, 0, 2.0, 1.0)]), "scale")
    t = samples.tilemap()
    bad_cells = t.layers[0].cells.copy()
    bad_cells[0, 0] = 3
    _bad(t.replace(layers=[t.layers[0].replace(cells=bad_cells)]), "cell 0 is 3")
    _bad(t.replace(objects=[t.objects[0].replace(x=3)]), "is not on the 3 x 2 map")
    _bad(t.replace(terrains=[t.terrains[0].replace(variants=0)]), "variants")
    _bad(t.replace(terrains=[t.terrains[0].replace(material="stone")]), "exactly one of texture and material")


def _record_classes():
    from veduta.formats import codec, material, mesh, prefab, scene, texture, tilemap, world

    out = set()
    for mod in (material, mesh, prefab, scene, texture, tilemap, world):
        for v in vars(mod).values():
            if isinstance(v, type) and issubclass(v, codec.Struct) and v is not codec.Struct:
                out.add(v)
    return sorted(out, key=lambda c: (c.__module__, c.__name__))


@pytest.mark.parametrize("cls", _record_classes(), ids=lambda c: f"{c.__module__.rsplit('.', 1)[-1]}.{c.__name__}")
def test_smallest_records_fit_their_list_bounds(cls):
    """A list's count is bounded by the bytes left and the smallest encoded item: a list
    of the smallest items must still decode (min_size derived from the declaration)."""
    from veduta.container.binary import Reader, Writer
    from veduta.formats.codec import List, StructType

    t = List(StructType(cls))
    smallest = cls()
    w = Writer()
    t.write(w, [smallest, smallest])
    data = w.getvalue()
    assert len(data) == 4 + 2 * StructType(cls).min_size or cls.__name__ in {"Texture", "Layer", "Prop"}
    r = Reader(data)
    r.stack.append({"columns": 0, "rows": 0, "levels": 0, "width": 0, "height": 0})
    try:
        back = t.read(r, {}, "x")
    except VdaError as exc:  # only a reader check may refuse a default record, never the count bound
        assert "needs at least" not in str(exc)
        return
    assert back == [smallest, smallest]


def test_more_reader_checks():
    m = samples.mesh()
    _bad(m.replace(lods=[m.lods[0].replace(distance=float("nan"))]), "not a finite distance")
    _bad(m.replace(lods=[m.lods[0].replace(distance=-1.0)]), "not a finite distance")
    t = samples.texture()
    _bad(
        t.replace(clips=[samples.Clip("a", [0], 1.0, False, ""), samples.Clip("a", [1], 1.0, False, "")]),
        "without repeats",
    )
    p = samples.prefab()
    _bad(p.replace(distances=[samples.Distance("a", 1.0), samples.Distance("a", 2.0)]), "without repeats")
    w = samples.world()
    far = samples.Vegetation("g", "", "b", 0.5, [], True, 10**12, 0, 5, 1.0, 1.0)
    _bad(w.replace(vegetation=[far]), "centre \\[1000000000000, 0\\] is outside the world")


@pytest.mark.parametrize("name", ["u8", "u16", "u32", "i64", "u64"])
def test_a_list_of_integers_is_read_in_one_step_as_item_by_item(name):
    """List(U32) (a clip's frames: up to a million in a texture) is read with one unpack: the
    same Python ints as a Reader call per item, and the same errors for a damaged count."""
    import random

    from veduta.container.binary import Reader
    from veduta.formats import codec

    kind = getattr(codec, name.upper())
    rnd = random.Random(8)
    values = [rnd.randint(kind.lo, kind.hi) for _ in range(1000)] + [kind.lo, kind.hi]
    w = codec.Writer()
    codec.List(kind).write(w, values)
    data = b"".join(w.parts)
    one_by_one = Reader(data)
    n = one_by_one.count(kind.min_size, "frames")
    slow = [getattr(one_by_one, name)("frames") for _ in range(n)]
    r = Reader(data)
    got = codec.List(kind).read(r, {}, "frames")
    assert got == slow == values and all(type(v) is int for v in got)
    assert r.pos == one_by_one.pos == len(data)
    for cut in (len(data) - 1, 4, 3):  # a run short of its count, then no count at all
        with pytest.raises(VdaError) as fast_err:
            codec.List(kind).read(Reader(data[:cut]), {}, "frames")
        with pytest.raises(VdaError) as count_err:
            Reader(data[:cut]).count(kind.min_size, "frames")
        assert (str(fast_err.value), fast_err.value.offset) == (str(count_err.value), count_err.value.offset)
