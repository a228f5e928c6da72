"""veduta world place|terrain|vegetation|remove on a copy of the sample game (veduta.tools.world_edit)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.games import sample_game
from veduta import api
from veduta.base.errors import VedutaError
from veduta.base.project import Project
from veduta.faces.cli.main import load_world, main
from veduta.source.jsonedit import JsonDoc
from veduta.tools.world_edit import EditRefused, place_problems
from veduta.world.query import query

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def game(tmp_path):
    """A copy of the sample game's sources (no cooked files), and its Project."""
    root = tmp_path / "game"
    sample_game(root)
    return Project.at(str(root))


def _valley(project) -> Path:
    return Path(project.source_path("worlds/valley.vworld"))


def _outside(text: str, key: str) -> tuple[str, str]:
    doc = JsonDoc(text)
    a, b = doc.span(doc.root.get(key))
    return text[:a], text[b:]


def _only_array_changed(old: str, new: str, key: str) -> None:
    """Every byte outside the array root[key] is the same."""
    if key in JsonDoc(old).root.value:
        assert _outside(new, key) == _outside(old, key)


def _cooked(project, world="valley"):
    """A generator of the world as the cook writes it (cooking what is stale)."""
    from veduta.world.generator import Generator

    return Generator(*load_world(project, world))


# -- place ---------------------------------------------------------------------------------------


def test_place_at_a_cell(game):
    path = _valley(game)
    old = path.read_text()
    r = api.world_place(game, "valley", "inn", "cottage", cell=(-74, 0))
    assert r["written"] and r["action"] == "added" and r["cell"] == [-74, 0] and r["old"] is None
    assert r["new"] == {"name": "inn", "prefab": "cottage", "cell": [-74, 0]}
    new = path.read_text()
    _only_array_changed(old, new, "places")
    assert '              { "name": "inn", "prefab": "cottage", "cell": [-74, 0] } ],' in new
    # the cooked world has it where the report says, on the reported pad
    gen = _cooked(game)
    q = query(gen, -74, 0)
    assert q["owner"] == {"kind": "place", "name": "inn", "prefab": "cottage"}
    assert q["height"] == r["height"]
    s = next(s for s in gen.structs.places if s.name == "inn")
    assert [s.x0, s.z0] == r["footprint"]["cell"] and [s.fw, s.fd] == r["footprint"]["size"]
    assert place_problems(gen, "inn", "cottage", -74, 0) == []
    # and inspect world, on the edited world, has nothing against it
    report = api.inspect_world(game, "valley")
    assert report["status"] == "ok"
    assert not [f for f in report["findings"] if f.get("place") == "inn" and f["severity"] == "error"]
    # the site the place displaced is gone, as reported
    dropped = [c["name"] for c in r["changes"] if c["change"] == "dropped"]
    assert dropped and all(not any(st.name == n for st in gen.structures_in(-120, -40, 100, 100)) for n in dropped)


@pytest.mark.parametrize(
    "cell, prefab, code",
    [
        ((-40, 12), "cottage", "WORLD_PLACE_BIOME"),  # the forest: cottages want meadow or heath
        ((-35, 40), "well", "WORLD_PLACE_WATER"),  # mill_pond's centre
        ((-70, 1), "well", "WORLD_PLACE_OVERLAP"),  # on village_well
        ((-67, 0), "oak", "WORLD_PLACE_DISTANCE"),  # an oak keeps 3 m from a well (2 here)
        ((1022, 0), "cottage", "WORLD_PLACE_OUTSIDE"),  # the footprint leaves the world (cells -1024..1023)
        ((0, 0), "castle", "WORLD_PREFAB_MISSING"),
    ],
)
def test_place_refused(game, cell, prefab, code):
    path = _valley(game)
    old = path.read_bytes()
    with pytest.raises(EditRefused) as e:
        api.world_place(game, "valley", "inn", prefab, cell=cell)
    assert code in str(e.value) and "nothing was written" in str(e.value)
    assert code in [f["code"] for f in e.value.findings]
    assert path.read_bytes() == old


def test_place_dry_run_reports_the_same_and_writes_nothing(game):
    path = _valley(game)
    old = path.read_bytes()
    dry = api.world_place(game, "valley", "inn", "cottage", near=(-70, 0), dry_run=True)
    assert path.read_bytes() == old and dry["dry_run"] and not dry["written"]
    real = api.world_place(game, "valley", "inn", "cottage", near=(-70, 0))
    assert real["written"]
    assert {k: v for k, v in dry.items() if k not in ("dry_run", "written")} == {
        k: v for k, v in real.items() if k not in ("dry_run", "written")
    }


def test_place_near_finds_the_nearest_valid_cell(game):
    r = api.world_place(game, "valley", "inn", "cottage", near=(-70, 0), dry_run=True)
    x, z = r["cell"]
    d = (x + 70) ** 2 + z**2
    assert r["searched"] >= 2  # [-70, 0] itself is the well
    # every nearer cell (and every cell as near tried before it) is refused
    ws_gen = _cooked(game)
    for cx in range(-70 - 10, -70 + 11):
        for cz in range(-10, 11):
            dd = (cx + 70) ** 2 + cz**2
            if dd < d or (dd == d and (cz, cx) < (z, x)):
                assert place_problems(ws_gen, "inn", "cottage", cx, cz), (cx, cz)
    assert place_problems(ws_gen, "inn", "cottage", x, z) == []
    # the same answer every time
    assert api.world_place(game, "valley", "inn", "cottage", near=(-70, 0), dry_run=True)["cell"] == [x, z]


def test_place_near_gives_up_clearly(game):
    old = _valley(game).read_bytes()
    with pytest.raises(
        EditRefused,
        match=r"no valid cell for place \"inn\" .* within 3 cells of \[-600, 0\]: 29 "
        r"cells tried \(.*WORLD_PLACE_WATER 29\)",
    ):
        api.world_place(game, "valley", "inn", "cottage", near=(-600, 0), search=3)
    assert _valley(game).read_bytes() == old
    with pytest.raises(VedutaError, match="search 999 out of range"):
        api.world_place(game, "valley", "inn", "cottage", near=(0, 0), search=999)
    with pytest.raises(VedutaError, match="either cell"):
        api.world_place(game, "valley", "inn", "cottage", cell=(0, 0), near=(0, 0))


def test_place_replaces_a_place_of_the_same_name(game):
    path = _valley(game)
    old = path.read_text()
    r = api.world_place(game, "valley", "keeper_cottage", "cottage", cell=(-59, -8), rotation=90)
    assert r["action"] == "replaced"
    assert r["old"] == {"name": "keeper_cottage", "prefab": "cottage", "cell": [-59, -7], "rotation": 90}
    assert r["new"] == {"name": "keeper_cottage", "prefab": "cottage", "cell": [-59, -8], "rotation": 90}
    new = path.read_text()
    _only_array_changed(old, new, "places")
    assert new.count('"keeper_cottage"') == 1
    assert '{ "name": "village_well", "prefab": "well", "cell": [-70, 0] },' in new  # the other place as it was


# -- terrain -------------------------------------------------------------------------------------


def test_terrain_lake_reports_water_and_cooks_as_reported(game):
    path = _valley(game)
    old = path.read_text()
    r = api.world_terrain(game, "valley", "pond2", "lake", (-75, 5), 6)
    assert r["written"] and r["action"] == "added"
    new = path.read_text()
    _only_array_changed(old, new, "features")
    assert r["before"]["centre"] == -0.095 and r["after"]["centre"] == r["after"]["min"] < r["before"]["min"]
    assert r["places_in_water"] == ["village_well"] and r["places_newly_in_water"] == ["village_well"]
    changes = {(c["name"], c["change"]) for c in r["changes"]}
    assert ("village_well", "in water") in changes
    assert any(c["kind"] == "site" and c["change"] == "dropped" and c["reason"] == "water" for c in r["changes"])
    gen = _cooked(game)
    assert gen.heights(-75, 5, 1, 1)[0, 0] / 1000 == r["after"]["centre"]
    assert query(gen, -75, 5)["water"]["wet"] is True
    assert [s.name for s in gen.structs.places if s.wet] == r["places_in_water"]
    # inspect world reports the place the tool said is now in water
    report = api.inspect_world(game, "valley")
    wet = sorted(f["place"] for f in report["findings"] if f["code"] == "WORLD_PLACE_WATER")
    assert wet == r["places_in_water"]


def test_terrain_hill_and_dry_run(game):
    path = _valley(game)
    old = path.read_bytes()
    dry = api.world_terrain(game, "valley", "bump", "hill", (-60, 10), 20, height=3, dry_run=True)
    assert path.read_bytes() == old
    assert dry["after"]["centre"] == pytest.approx(dry["before"]["centre"] + 3, abs=0.002)
    assert dry["before"]["min"] <= dry["before"]["centre"] <= dry["before"]["max"]
    pads = {c["name"]: c for c in dry["changes"] if c["change"] == "pad"}
    assert "village_well" in pads and pads["village_well"]["after"] > pads["village_well"]["before"]
    real = api.world_terrain(game, "valley", "bump", "hill", (-60, 10), 20, height=3)
    assert {k: v for k, v in dry.items() if k not in ("dry_run", "written")} == {
        k: v for k, v in real.items() if k not in ("dry_run", "written")
    }
    gen = _cooked(game)
    well = next(s for s in gen.structs.places if s.name == "village_well")
    assert well.level_mm / 1000 == pads["village_well"]["after"]
    # replacing it reports old and new
    r = api.world_terrain(game, "valley", "bump", "hill", (-60, 10), 20, height=1.5)
    assert r["action"] == "replaced" and r["old"]["height"] == 3 and r["new"]["height"] == 1.5
    assert path.read_text().count('"bump"') == 1


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(kind="hill", cell=(0, 0), radius=5, depth=2), "not used by a hill"),
        (dict(kind="lake", cell=(5000, 0), radius=5), "outside the world"),
        (dict(kind="hill", cell=(0, 0), radius=0), "out of range"),
    ],
)
def test_terrain_refused(game, kw, message):
    path = _valley(game)
    old = path.read_bytes()
    with pytest.raises(EditRefused, match=message) as e:
        api.world_terrain(game, "valley", "bad", **kw)
    assert path.read_bytes() == old
    assert e.value.findings and e.value.findings[0]["path"].startswith("features[5].")


# -- vegetation ----------------------------------------------------------------------------------


def test_vegetation_area_rule_counts_what_the_cook_plants(game):
    path = _valley(game)
    old = path.read_text()
    dry = api.world_vegetation(
        game, "valley", "daisies", 0.5, model="poppy", cell=(-20, -20), radius=8, scale=(0.5, 1), dry_run=True
    )
    assert path.read_text() == old and not dry["written"]
    r = api.world_vegetation(game, "valley", "daisies", 0.5, model="poppy", cell=(-20, -20), radius=8, scale=(0.5, 1))
    assert r["written"]
    assert {k: v for k, v in dry.items() if k not in ("dry_run", "written")} == {
        k: v for k, v in r.items() if k not in ("dry_run", "written")
    }
    new = path.read_text()
    _only_array_changed(old, new, "vegetation")
    assert r["new"] == {
        "name": "daisies",
        "model": "poppy",
        "density": 0.5,
        "cell": [-20, -20],
        "radius": 8,
        "scale": [0.5, 1],
    }
    assert r["area"] == {"cell": [-20, -20], "radius": 8}
    gen = _cooked(game)
    # the cooked world's plants, cell by cell on the scalar path
    n = sum(1 for x in range(-28, -12) for z in range(-28, -12) for p in gen.plants(x, z) if p["rule"] == "daisies")
    assert r["plants"] == n > 0
    assert r["triangles_full"] == r["triangles_each"] * n and r["triangles_each"] > 0
    # drawn in a view at the area's centre: every poppy there is within its draw_distance, but a
    # poppy has a coarser level from 8 m (thinned to one in two, with fewer triangles), so the view
    # draws fewer than all of them at full detail
    v = r["view"]
    assert v["focus"] == [-20, -20] and v["budget"] == 1200
    assert 0 < r["triangles"] == v["triangles"] - v["without_rule"] < r["triangles_full"]
    # the only warning: the view at their area is over the budget, and the poppies add more than a
    # tenth of it
    assert v["triangles"] > v["budget"] and r["triangles"] * 10 >= v["budget"]
    assert [w["code"] for w in r["warnings"]] == ["WORLD_CHUNK_BUDGET"]


def test_vegetation_world_wide_rule_and_warnings(game):
    r = api.world_vegetation(game, "valley", "ferns", 0.2, model="grass_tuft", biomes=["forest"], dry_run=True)
    assert r["chunks"] == {"first": [-2, -2], "count": 25} and r["plants"] > 0
    assert r["per_chunk"] == round(r["plants"] / 25, 2)
    assert r["view"]["focus"] == [0, 0]
    # grass_tuft is drawn up to 20 m: the view at the start cell (on heath) draws some of the
    # plants of the 25 chunks, not all
    r = api.world_vegetation(game, "valley", "ferns", 0.2, model="grass_tuft", dry_run=True)
    assert 0 < r["triangles"] < r["triangles_full"]
    assert r["triangles"] == r["view"]["triangles"] - r["view"]["without_rule"]
    assert api.world_vegetation(game, "valley", "ferns", 0.2, model="grass_tuft", biomes="forest", dry_run=True)["new"][
        "biomes"
    ] == ["forest"]
    r = api.world_vegetation(game, "valley", "ghosts", 0.2, model="ghost", dry_run=True)
    assert [w["code"] for w in r["warnings"]] == ["WORLD_MODEL_MISSING"]  # once (not also MISSING_REFERENCE)
    assert r["triangles_full"] is None and r["triangles"] == 0
    # a prefab rule that wins no cell: forest trees asked to grow on the meadow only
    r = api.world_vegetation(
        game, "valley", "meadow_pines", 0.5, prefab="tree", biomes=["meadow"], cell=(-100, -24), radius=5, dry_run=True
    )
    codes = [w["code"] for w in r["warnings"]]
    assert r["plants"] == 0 and "WORLD_VEGETATION_EMPTY" in codes
    # flora without draw_distance
    model = Path(game.source_path("models/grass_tuft.vmodel"))
    model.write_text(model.read_text().replace('  "draw_distance": 20,\n', ""))
    r = api.world_vegetation(game, "valley", "ferns", 0.2, model="grass_tuft", dry_run=True)
    assert "WORLD_FLORA_NO_DRAW_DISTANCE" in [w["code"] for w in r["warnings"]]


def test_vegetation_refused(game):
    path = _valley(game)
    old = path.read_bytes()
    with pytest.raises(EditRefused, match=r'"swamp" is not a biome of this world'):
        api.world_vegetation(game, "valley", "reeds", 0.3, model="grass_tuft", biomes=["swamp"])
    with pytest.raises(EditRefused, match="out of range"):
        api.world_vegetation(game, "valley", "reeds", 1.5, model="grass_tuft")
    with pytest.raises(VedutaError, match="not both"):
        api.world_vegetation(game, "valley", "reeds", 0.3, model="grass_tuft", prefab="oak")
    assert path.read_bytes() == old


# -- remove --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, section", [("mill_pond", "features"), ("poppies", "vegetation"), ("keeper_cottage", "places")]
)
def test_remove(game, name, section):
    path = _valley(game)
    old = path.read_text()
    dry = api.world_remove(game, "valley", name, dry_run=True)
    assert path.read_text() == old
    r = api.world_remove(game, "valley", name)
    assert r["list"] == section and r["action"] == "removed" and r["old"]["name"] == name
    assert {k: v for k, v in dry.items() if k not in ("dry_run", "written")} == {
        k: v for k, v in r.items() if k not in ("dry_run", "written")
    }
    new = path.read_text()
    _only_array_changed(old, new, section)
    assert f'"{name}"' not in new
    gen = _cooked(game)
    assert name not in [x.name for x in getattr(gen.world, section)]
    if section == "features":
        assert query(gen, -35, 40)["water"]["wet"] is False
        assert r["after"]["centre"] == gen.heights(-35, 40, 1, 1)[0, 0] / 1000
    if section == "vegetation":
        assert r["plants_before"] > 0


def test_remove_fails_without_such_name(game):
    old = _valley(game).read_bytes()
    with pytest.raises(VedutaError, match='has no feature, vegetation rule or place named "nowhere"'):
        api.world_remove(game, "valley", "nowhere")
    with pytest.raises(VedutaError, match='has no place named "mill_pond"'):
        api.world_remove(game, "valley", "mill_pond", section="places")
    assert _valley(game).read_bytes() == old


def test_a_world_with_errors_is_not_edited(game):
    path = _valley(game)
    broken = path.read_text().replace('"view": 2', '"veiw": 2')
    path.write_text(broken)
    for call in (
        lambda: api.world_remove(game, "valley", "poppies"),
        lambda: api.world_place(game, "valley", "inn", "cottage", near=(-70, 0)),
    ):
        with pytest.raises(EditRefused, match=r"(?s)world valley has errors, so it is not edited.*veiw: unknown field"):
            call()
    assert path.read_text() == broken
    with pytest.raises(VedutaError, match='no world "atlantis"'):
        api.world_remove(game, "atlantis", "x")


def test_an_empty_world_file_is_refused_with_the_compilers_error_and_bad_utf8_as_such(game):
    # an empty file used to be reported as "not UTF-8" (its empty text stood for a failed decode)
    path = _valley(game)
    path.write_bytes(b"")
    with pytest.raises(EditRefused, match=r"(?s)not edited.*empty file: expected a JSON object") as exc:
        api.world_remove(game, "valley", "poppies")
    assert "UTF-8" not in str(exc.value)
    assert [f["path"] for f in exc.value.findings] == ["$"]
    path.write_bytes(b'{"veduta": "world/1", "name": "caf\xe9"}')
    with pytest.raises(EditRefused, match=r"(?s)not edited.*valley.vworld: not UTF-8"):
        api.world_remove(game, "valley", "poppies")
    assert path.read_bytes() == b'{"veduta": "world/1", "name": "caf\xe9"}'


# -- the command line ------------------------------------------------------------------------------


def test_cli_json_keys_and_refusal(game, monkeypatch, capsys):
    monkeypatch.chdir(game.root)
    assert main(["world", "place", "valley", "inn", "cottage", "--near", "-70,0", "--dry-run", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["cell"] == [-74, 0] and r["dry_run"] is True
    assert (
        main(
            [
                "world",
                "terrain",
                "valley",
                "bump",
                "--kind",
                "hill",
                "--cell",
                "-60,10",
                "--radius",
                "20",
                "--height",
                "3",
                "--json",
            ]
        )
        == 0
    )
    r = json.loads(capsys.readouterr().out)
    assert {"before", "after", "places_in_water"} <= set(r) and r["new"]["height"] == 3
    assert (
        main(
            [
                "world",
                "vegetation",
                "valley",
                "ferns",
                "--model",
                "grass_tuft",
                "--density",
                "0.2",
                "--biomes",
                "forest,heath",
                "--scale",
                "0.5,1.5",
                "--json",
            ]
        )
        == 0
    )
    r = json.loads(capsys.readouterr().out)
    assert {"plants", "triangles", "warnings"} <= set(r) and r["new"]["biomes"] == ["forest", "heath"]
    assert main(["world", "remove", "valley", "ferns"]) == 0
    out = capsys.readouterr().out
    assert "vegetation rule ferns removed" in out and "wrote assets/worlds/valley.vworld" in out.replace("\\", "/")
    assert main(["world", "place", "valley", "inn", "cottage", "--cell", "-40,12", "--json"]) == 1
    r = json.loads(capsys.readouterr().out)
    assert r["refused"] is True and r["findings"][0]["code"] == "WORLD_PLACE_BIOME"
    assert main(["world", "remove", "valley", "nowhere"]) == 2  # a usage mistake
    assert 'named "nowhere"' in capsys.readouterr().err


def test_cli_text_report(game, monkeypatch, capsys):
    monkeypatch.chdir(game.root)
    assert (
        main(["world", "terrain", "valley", "pond2", "--kind", "lake", "--cell", "-75,5", "--radius", "6", "--dry-run"])
        == 0
    )
    out = capsys.readouterr().out
    assert "feature pond2 added" in out and "places in water: village_well" in out
    assert "before: centre -0.095 m" in out and "dry run:" in out


def test_the_near_prescreen_agrees_with_the_place_checks(game):
    """--near rules cells out from arrays computed once; each such cell's first finding is the same
    code, and the cells it passes are left to the full check."""
    from veduta.tools.world_edit import _prescreen, _with_prefab, load_world_source

    ws = load_world_source(game, "valley")
    for prefab, rotation in (("cottage", 90), ("well", 0)):
        gen = _with_prefab(ws, prefab)
        # the mill pond's shore, forest and meadow, and the west edge of the world
        cells = [(x, z) for x in range(-48, -20, 3) for z in range(26, 56, 3)] + [
            (x, z) for x in range(-1026, -1016) for z in (0, 5)
        ]
        quick = _prescreen(gen, prefab, rotation, cells)
        seen = set()
        for x, z in cells:
            code = quick(x, z)
            full = place_problems(gen, "x", prefab, x, z, rotation)
            if code is not None:
                assert full and full[0]["code"] == code, (x, z, code, full)
                seen.add(code)
        assert {"WORLD_PLACE_WATER", "WORLD_PLACE_OUTSIDE"} <= seen


def test_a_file_saved_meanwhile_is_not_overwritten(game, monkeypatch):
    from veduta.tools import world_edit as edit

    path = _valley(game)
    real = edit._compile_new

    def save_meanwhile(ws, text, what):  # the author saves between our read and our write
        path.write_text(ws.text.replace('"seed": 20240611', '"seed": 5'))
        return real(ws, text, what)

    monkeypatch.setattr(edit, "_compile_new", save_meanwhile)
    with pytest.raises(EditRefused, match="changed while the edit was prepared"):
        api.world_remove(game, "valley", "poppies")
    assert '"seed": 5' in path.read_text() and '"poppies"' in path.read_text()


def test_an_edit_waits_for_another_process_editing_the_same_world_only(game):
    """The edit lock is per world and holds across processes: a ``veduta world place`` of valley
    waits while another process holds valley's edit lock (then edits its result); an edit of
    another world goes ahead meanwhile."""
    import subprocess
    import sys
    import time

    from veduta.tools.world_edit import edit_lock

    root = Path(game.root)
    shutil.copy(_valley(game), root / "assets/worlds/dale.vworld")
    before = _valley(game).read_text()

    def place(world: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "veduta", "world", "place", world, "tower", "well", "--near", "40,40", "--json"],
            cwd=root,
            stdout=subprocess.PIPE,
            text=True,
            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        )

    with edit_lock(Project.at(str(root)), "valley"):
        waiting = place("valley")
        other = place("dale")
        assert other.wait(timeout=120) == 0  # another world: not held up
        assert json.loads(other.stdout.read())["written"] is True
        time.sleep(0.5)
        assert waiting.poll() is None and _valley(game).read_text() == before
    assert waiting.wait(timeout=120) == 0
    assert json.loads(waiting.stdout.read())["written"] is True
    assert '"tower"' in _valley(game).read_text()


_ONE_LINE = '{"veduta": "world/1", "biomes": [{"name": "meadow", "ground": "grass"}]}\n'
_SPREAD = """{
  "veduta": "world/1",
  "seed": 3,
  "biomes": [ { "name": "meadow", "ground": "grass" } ],
  "terrain": { "relief": 1 }
}
"""


@pytest.mark.parametrize("source", ["valley", "one line", "spread"])
def test_removing_what_a_tool_added_leaves_the_file_as_it_was(game, source):
    """world remove of the last item of a list a tool created takes the list out too: the file is
    byte for byte what it was before the add (an empty list means no list)."""
    path = _valley(game)
    if source == "valley":  # without places and vegetation: the tools add them back
        doc = json.loads(path.read_text())
        text = path.read_text()
        for key in ("places", "vegetation"):
            a, b = _outside(text, key)
            text = a.rstrip().rstrip(":").rstrip()[: -len(f'"{key}"')].rstrip().rstrip(",") + b
        assert json.loads(text) == {k: v for k, v in doc.items() if k not in ("places", "vegetation")}
    else:
        text = _ONE_LINE if source == "one line" else _SPREAD
    path.write_text(text)
    edits = [
        ("home", lambda: api.world_place(game, "valley", "home", "well", near=(-70, 0))),
        ("bump", lambda: api.world_terrain(game, "valley", "bump", "hill", (5, 5), 6, height=2)),
        ("daisies", lambda: api.world_vegetation(game, "valley", "daisies", 0.2, model="poppy", cell=(0, 0), radius=4)),
    ]
    for name, add in edits:
        before = path.read_bytes()
        assert add()["written"]
        assert path.read_bytes() != before
        assert api.world_remove(game, "valley", name)["written"]
        assert path.read_bytes() == before, (name, path.read_text())
    # all three added, then all taken out again
    for _, add in edits:
        add()
    for name, _ in edits:
        api.world_remove(game, "valley", name)
    assert path.read_text() == text


def test_world_remove_help_says_what_remove_does(capsys):
    from veduta.faces.cli.main import main

    with pytest.raises(SystemExit):
        main(["world", "remove", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "the name of the feature, vegetation rule or place to take out" in out
    assert "replaced" not in out
