"""``veduta deps``: the reference graph of the sample game checked against hand-written
expectations, the cook's own META deps, the CLI (text, --json, --dot, exit codes) and bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from veduta import api
from veduta.base.errors import UsageError
from veduta.base.project import Project


def veduta(root, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "veduta", *args], cwd=root, capture_output=True, text=True, timeout=120
    )


def _at(project: Project, ref: dict) -> str:
    """The text of the file at a reference's line and column (an independent look at the file)."""
    lines = Path(ref["file"]).read_text(encoding="utf-8").split("\n")
    return lines[ref["line"] - 1][ref["col"] - 1 :]


def _pairs(result: dict, side: str) -> list[tuple[str, str, str]]:
    return sorted((r[side]["kind"], r[side]["name"], r["path"]) for r in result["references"])


def test_material_used_by_models_and_a_world(sample):
    got = api.deps(sample, "bark", reverse=True)
    assert got["asset"] == {"kind": "material", "name": "bark", "source": "materials/bark.vmaterial"}
    assert got["direction"] == "used_by"
    # written by hand from the sample's sources
    assert _pairs(got, "from") == [
        ("model", "oak", "parts[0].material"),
        ("model", "oak", "parts[1].material"),
        ("model", "tree", "parts[0].material"),
        ("model", "tree_far", "parts[0].material"),
        ("world", "valley", "biomes[2].ground"),
    ]
    for r in got["references"]:
        assert _at(sample, r).startswith('"bark"'), r  # line and column point at the name's opening quote
        assert r["file"] == f"assets/{r['from']['source']}"
        assert r["level"] == 1
    assert [(a["kind"], a["name"]) for a in got["assets"]] == [
        ("model", "oak"),
        ("model", "tree"),
        ("model", "tree_far"),
        ("world", "valley"),
    ]


def test_material_used_by_two_models_and_an_entity(game, monkeypatch):
    game.write("materials/paint.vmaterial", '{ "veduta": "material/1", "albedo": "#cc3333" }\n')
    box = '{\n  "veduta": "model/1",\n  "parts": [ { "shape": "box", "size": [1, 1, 1], "material": "paint" } ]\n}\n'
    game.write("models/box_a.vmodel", box)
    game.write("models/box_b.vmodel", box.replace("[1, 1, 1]", "[2, 1, 1]"))
    game.write(
        "scenes/yard.vscene",
        '{\n  "veduta": "scene/1",\n  "entities": [\n'
        '    { "name": "sign", "kind": "prop", "material": "paint", "position": [0, 0, 0] },\n'
        '    { "name": "box", "kind": "prop", "model": "box_a", "position": [1, 0, 0] }\n  ]\n}\n',
    )
    monkeypatch.chdir(game.root)
    project = Project.find(".")
    got = api.deps(project, "paint", reverse=True)
    assert [
        (r["from"]["kind"], r["from"]["name"], r["file"], r["line"], r["col"], r["path"]) for r in got["references"]
    ] == [
        ("model", "box_a", "assets/models/box_a.vmodel", 3, 63, "parts[0].material"),
        ("model", "box_b", "assets/models/box_b.vmodel", 3, 63, "parts[0].material"),
        ("scene", "yard", "assets/scenes/yard.vscene", 4, 51, "entities[0].material"),
    ]
    # two levels up: the scene reaches it again through box_a; each reference once, each asset once
    up = api.deps(project, "paint", reverse=True, depth=2)
    assert [(r["level"], r["from"]["name"], r["to"]["name"]) for r in up["references"]] == [
        (1, "box_a", "paint"),
        (1, "box_b", "paint"),
        (1, "yard", "paint"),
        (2, "yard", "box_a"),
    ]
    assert [(a["name"], a["level"]) for a in up["assets"]] == [("box_a", 1), ("box_b", 1), ("yard", 1)]
    down = api.deps(project, "yard")
    assert _pairs(down, "to") == [
        ("material", "paint", "entities[0].material"),
        ("model", "box_a", "entities[1].model"),
    ]


def test_world_pulls_in_prefabs_models_materials_and_textures(sample):
    got = api.deps(sample, "valley", depth=None)
    by_kind: dict[str, set[str]] = {}
    for a in got["assets"]:
        by_kind.setdefault(a["kind"], set()).add(a["name"])
    # written by hand from valley.vworld, its prefabs, their models, their materials and textures
    assert by_kind == {
        "prefab": {"oak", "tree", "cottage", "camp", "well"},
        "model": {
            "grass_tuft",
            "grass_blade",
            "poppy",
            "hero",
            "oak",
            "tree",
            "tree_far",
            "house",
            "barrel",
            "lamp_post",
            "camp_crate",
            "well",
        },
        "material": {
            "grass",
            "leaf",
            "bark",
            "water",
            "poppy_stem",
            "poppy_petal",
            "poppy_center",
            "tunic",
            "belt",
            "skin",
            "hair",
            "trousers",
            "boots",
            "oak_leaf",
            "plaster",
            "roof_tiles",
            "door_wood",
            "brick",
            "barrel_wood",
            "barrel_iron",
            "iron_dark",
            "lamp_glass",
            "crate_wood",
        },
        "texture": {"water", "crate"},
        "image": {"textures/water.png", "textures/crate.png"},
    }
    level = {(a["kind"], a["name"]): a["level"] for a in got["assets"]}
    assert level[("prefab", "camp")] == 1 and level[("model", "camp_crate")] == 2
    assert level[("material", "crate_wood")] == 3 and level[("texture", "crate")] == 4
    assert level[("image", "textures/crate.png")] == 5
    assert got["missing"] == []
    one = api.deps(sample, "valley")
    assert {a["level"] for a in one["assets"]} == {1}
    assert ("prefab", "camp", "sites[1].prefabs[0]") in _pairs(one, "to")


def test_the_graph_holds_every_file_the_cook_read(sample):
    """Each cooked file's META deps (the files its compile read) are assets the graph reaches."""
    assert api.cook(sample)["ok"]
    from veduta.formats.asset import read_asset_file

    for src in sample.sources():
        meta = read_asset_file(sample.cooked_path(src.kind, src.name)).meta
        reached = {a["source"] for a in api.deps(sample, src.rel, depth=None)["assets"]}
        assert set(meta.deps) <= reached, src.rel


def test_whole_graph_and_orphans(sample):
    whole = api.deps(sample)
    assert len(whole["assets"]) == len(sample.sources())
    bark = next(a for a in whole["assets"] if a["name"] == "bark")
    assert bark["uses"] == [] and bark["used_by"] == 4  # oak, tree, tree_far, valley (sources)
    assert whole["reference_count"] == sum(len(a["uses"]) for a in whole["assets"])
    orphans = api.deps(sample, orphans=True)
    assert orphans == {
        "missing": [],
        "roots": ["world", "scene"],
        "unused": [{"kind": "material", "name": "ground", "source": "materials/ground.vmaterial"}],
    }
    # break a reference, leave a PNG and a model unused
    crate = Path(sample.assets) / "models" / "crate.vmodel"
    crate.write_text(crate.read_text().replace('"crate_wood"', '"crate_wod"'))
    (Path(sample.assets) / "textures" / "spare.png").write_bytes(
        (Path(sample.assets) / "textures/crate.png").read_bytes()
    )
    (Path(sample.assets) / "models" / "spare.vmodel").write_text(
        '{ "veduta": "model/1", "parts": [ { "shape": "box", "size": [1, 1, 1] } ] }\n'
    )
    orphans = api.deps(sample, orphans=True)
    (m,) = orphans["missing"]
    assert (m["from"]["name"], m["to"], m["path"]) == (
        "crate",
        {"kind": "material", "name": "crate_wod", "source": None},
        "parts[0].material",
    )
    assert m["message"] == 'material "crate_wod" does not exist (did you mean crate_wood or barrel_wood?)'
    assert _at(sample, m).startswith('"crate_wod"')
    assert [(u["kind"], u["name"]) for u in orphans["unused"]] == [
        ("model", "spare"),
        ("material", "ground"),
        ("image", "textures/spare.png"),
    ]
    # the users of the missing name are still found
    assert [r["from"]["name"] for r in api.deps(sample, "crate_wod", reverse=True)["references"]] == ["crate"]


def test_names_paths_and_mistakes(sample):
    assert api.deps(sample, "models/crate.vmodel")["asset"]["kind"] == "model"
    png = api.deps(sample, "textures/crate.png", reverse=True)
    assert [r["from"]["name"] for r in png["references"]] == ["crate"]
    for spelled in ("./textures/crate.png", "textures//crate.png", "textures/../textures/crate.png"):
        assert api.deps(sample, spelled, reverse=True) == png, spelled  # one PNG, however written
    outside = Path(sample.root).resolve().parent / "outside.png"
    outside.write_bytes(b"not looked at")
    for out_of_assets in ("../../outside.png", "../../nothing.png", str(outside)):
        # refused alike whether the file exists out there or not (no oracle over MCP)
        with pytest.raises(UsageError, match=r"is not a path under .*assets/$"):
            api.deps(sample, out_of_assets)
    assert api.deps(sample, "crate", kind="texture")["asset"]["kind"] == "texture"
    said = r'"crate" names a model and a texture; say which kind \(model or texture: --kind, or the tool\'s kind\)'
    with pytest.raises(UsageError, match=said):
        api.deps(sample, "crate")
    with pytest.raises(UsageError, match=r'no asset "barkk" \(did you mean bark or brick\?\)'):
        api.deps(sample, "barkk")
    with pytest.raises(UsageError, match=r'no material "barkk" \(did you mean bark or brick\?\)'):
        api.deps(sample, "barkk", kind="material")
    with pytest.raises(UsageError, match="no asset kind"):
        api.deps(sample, "bark", kind="materil")
    with pytest.raises(UsageError, match="depth 0 is below 1"):
        api.deps(sample, "bark", depth=0)
    with pytest.raises(UsageError, match="give no NAME"):
        api.deps(sample, "bark", orphans=True)


def test_dot(sample):
    dot = api.deps(sample, "tree_far", reverse=True, dot=True)["dot"]
    assert dot == (
        'digraph deps {\n  rankdir=LR;\n  node [shape=box, fontname="Helvetica"];\n'
        '  "model:oak" [label="model\\noak"];\n  "model:tree" [label="model\\ntree"];\n'
        '  "model:tree_far" [label="model\\ntree_far"];\n'
        '  "model:oak" -> "model:tree_far" [label="lod[1].model"];\n'
        '  "model:tree" -> "model:tree_far" [label="lod[1].model"];\n}\n'
    )
    if shutil.which("dot"):  # Graphviz reads it (when installed)
        subprocess.run(["dot", "-Tsvg"], input=dot, text=True, check=True, capture_output=True)


def test_cli_faces(sample):
    root = sample.root
    out = veduta(root, "deps", "bark", "--reverse", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == api.deps(sample, "bark", reverse=True)
    text = veduta(root, "deps", "valley", "--depth", "2")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0] == "world valley (worlds/valley.vworld) uses:"
    camp = next(i for i, ln in enumerate(lines) if ln.startswith("  prefab camp "))
    assert lines[camp].endswith("assets/worlds/valley.vworld:32:43: sites[1].prefabs[0]")
    assert (
        lines[camp + 1].startswith("    model camp_crate ")
        and "assets/prefabs/camp.vprefab:8:49: entities[0].model" in lines[camp + 1]
    )
    assert any(ln.startswith("  prefab oak ") and ln.endswith("(see above)") for ln in lines)  # named twice
    dot = veduta(root, "deps", "tree_far", "--reverse", "--dot")
    assert dot.stdout == api.deps(sample, "tree_far", reverse=True, dot=True)["dot"]
    orphans = veduta(root, "deps", "--orphans")
    assert orphans.returncode == 0 and orphans.stdout == "unused: material ground (materials/ground.vmaterial)\n"
    bad = veduta(root, "deps", "barkk")
    assert bad.returncode == 2 and bad.stderr == 'veduta: no asset "barkk" (did you mean bark or brick?)\n'
    bad = veduta(root, "deps", "barkk", "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["message"] == 'no asset "barkk" (did you mean bark or brick?)'
    depth = veduta(root, "deps", "bark", "--depth", "0")
    assert depth.returncode == 2 and "0 out of range [1, 1000000]" in depth.stderr
    crate = Path(sample.assets) / "models" / "crate.vmodel"
    crate.write_text(crate.read_text().replace('"crate_wood"', '"nope"'))
    orphans = veduta(root, "deps", "--orphans")
    assert orphans.returncode == 1
    assert "assets/models/crate.vmodel:" in orphans.stdout and 'material "nope" does not exist' in orphans.stdout


def test_a_png_named_in_any_case(sample):
    """Texture layers take ``.PNG`` in any case: so does ``veduta deps`` of the PNG by its path
    (before: ``no source "textures/wall.PNG" (did you mean textures/water.vtexture?)``, exit 2)."""
    assets = Path(sample.assets)
    (assets / "textures/crate.png").rename(assets / "textures/wall.PNG")
    vtex = assets / "textures/crate.vtexture"
    vtex.write_text(vtex.read_text().replace("textures/crate.png", "textures/wall.PNG"))
    got = api.deps(sample, "textures/wall.PNG", reverse=True)
    assert got["asset"]["kind"] == "image" and got["asset"]["name"] == "textures/wall.PNG"
    assert [(r["from"]["kind"], r["from"]["name"], r["path"]) for r in got["references"]] == [
        ("texture", "crate", "layers[0].path")
    ]
    out = veduta(sample.root, "deps", "textures/wall.PNG", "--reverse")
    assert out.returncode == 0, out.stderr
    assert out.stdout == (
        "image textures/wall.PNG (textures/wall.PNG) is used by:\n"
        "  texture crate  assets/textures/crate.vtexture:4:32: layers[0].path\n"
    )
    # the whole graph lists it once, as the PNG the texture reads (not as an unused file)
    orphans = veduta(sample.root, "deps", "--orphans")
    assert "wall.PNG" not in orphans.stdout
