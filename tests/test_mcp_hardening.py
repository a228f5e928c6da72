"""``veduta mcp`` under hostile input (issue 28): confined to its game root, every request with an
id answered, no echo of a huge argument, no hang on a FIFO, a NUL in a path a user mistake. The
real server as a subprocess, driven by the SDK's own client, or by raw JSON-RPC lines on its stdin
where the SDK's client could not send what a hostile client does."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tests import test_mcp  # noqa: E402
from tests.test_mcp import REPO, cli_json, serve, text_of  # noqa: E402

sample_game = test_mcp.sample_game  # the fixture: a game repo of the sample assets

CONFINED = "(veduta mcp reads and writes only files inside it)"


class Raw:
    """``veduta mcp`` over raw JSON-RPC lines: what any client may send, not only what the SDK's
    client can."""

    def __init__(self, root: Path):
        self.err = open(root / "raw.log", "wb")  # noqa: SIM115 - closed in close()
        self.p = subprocess.Popen(
            [sys.executable, "-m", "veduta", "mcp", "--root", str(root)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
        )
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        )
        assert self.reply()["id"] == 0
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str | bytes) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.p.stdin.flush()

    def reply(self, wait: float = 60) -> dict | None:
        """The next message from the server, or None when none comes within *wait* seconds."""
        assert self.p.stdout is not None
        if not select.select([self.p.stdout], [], [], wait)[0]:
            return None
        return json.loads(self.p.stdout.readline())

    def close(self) -> str:
        assert self.p.stdin is not None
        self.p.stdin.close()
        self.p.wait(60)
        self.err.close()
        return Path(self.err.name).read_text(errors="replace")


def call(rid, name: str, arguments: dict) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    )


def test_every_request_with_an_id_is_answered(sample_game):
    """A lone surrogate escape in any string, or array params: the SDK's parser dropped the
    request, and the client waited for ever. Now each gets a JSON-RPC error with its id; a line
    with no id gets nothing (no storm of replies to garbage); the server goes on."""
    raw = Raw(sample_game)
    try:
        raw.send(call(1, "inspect_model", {"model": "cr\\ud800te"}).replace("\\\\ud800", "\\ud800"))
        raw.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["inspect_model", {"model": "x"}]}')
        raw.send('{"jsonrpc": "2.0", "id": "three", "method": "tools/call", "params": {"name": "\\udc00"}}')
        raw.send('{"jsonrpc": "1.0", "id": 4, "method": "tools/list"}')
        raw.send('[{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}]')  # a batch, which MCP dropped
        raw.send("garbage, not JSON at all")
        raw.send('{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]}')  # no id: no reply
        raw.send(call(6, "inspect_model", {"model": "crate"}))
        got = {}
        while len(got) < 6:
            r = raw.reply()
            assert r is not None, f"no reply to {sorted(set(range(1, 7)) - set(got))}"
            got[r["id"]] = r
        assert raw.reply(wait=1) is None  # nothing for the lines without an id
    finally:
        log = raw.close()
    surrogate = "Parse error: a string holds a lone UTF-16 surrogate escape (such as \\ud800), which is no character"
    assert got[1]["error"] == {"code": -32700, "message": surrogate}
    assert got[2]["error"] == {
        "code": -32602,
        "message": "Invalid params: params must be an object (named arguments), not an array",
    }
    assert got["three"]["error"] == {"code": -32700, "message": surrogate}
    assert got[4]["error"]["code"] == -32600 and "jsonrpc" in got[4]["error"]["message"]
    assert got[5]["error"]["code"] == -32600 and "a batch" in got[5]["error"]["message"]
    assert got[6]["result"]["structuredContent"]["name"] == "crate"  # and the server went on
    assert "ignored a line of 25 characters that is no request with an id" in log
    assert "Traceback" not in log


def test_a_huge_argument_is_quoted_in_part_in_the_reply_and_in_the_log(sample_game):
    """A 5 MB name gave a 5 MB error reply, and the same again on the server's stderr."""
    big = "x" * 5_000_000

    async def body(s):
        out = {}
        for name, args in [
            ("inspect_model", {"model": big}),
            ("world_query", {"world": big, "cell": [0, 0]}),
            ("world_place", {"world": "valley", "name": big, "prefab": "well", "cell": [0, 0]}),
            ("world_remove", {"world": "valley", "name": "x" + big[:90]}),
            ("dump", {"path": big}),
            ("verify", {"paths": [big]}),
            ("cook", {"sources": [big]}),
            ("world_query", {"world": "valley", "cell": [big, 0]}),
        ]:
            out[name + str(len(out))] = await s.call_tool(name, args)
        return out

    replies = serve(sample_game, body)
    for name, res in replies.items():
        text = text_of(res)
        assert len(text) < 1000, (name, text[:300])
        if res.is_error:
            assert " characters)" in text or "input_value='xxx" in text, (name, text[:300])
    assert replies["inspect_model0"].is_error and text_of(replies["inspect_model0"]).endswith(
        'no model "' + "x" * 40 + '..." (5000000 characters) under assets/models/'
    )
    log = (sample_game / "server.log").read_text()
    assert len(log) < 20_000, log[:2000]


def test_a_nul_in_a_path_is_a_user_mistake(sample_game):
    """It was "internal error in veduta (ValueError: embedded null byte); please report it"."""

    async def body(s):
        return [
            await s.call_tool(name, args)
            for name, args in (
                ("dump", {"path": "assets/.cooked/models/crate\0.vda"}),
                ("verify", {"paths": ["a\0b.vda"]}),
                ("export_gltf", {"model": "crate", "out": "crate\0.glb"}),
                ("preview_model", {"model": "crate", "out": "x\0.png"}),
                ("cook", {"sources": ["models/cr\0ate.vmodel"]}),
                ("check", {"sources": ["models/cr\0ate.vmodel"]}),
                ("world_query", {"world": "val\0ley", "cell": [0, 0]}),
            )
        ]

    for res in serve(sample_game, body):
        assert res.is_error and "internal error" not in text_of(res), text_of(res)
        assert "\\x00" in text_of(res), text_of(res)  # shown, not swallowed
    dump = text_of(serve(sample_game, lambda s: s.call_tool("dump", {"path": "a\0b.vda"})))
    assert dump.endswith('path "a\\x00b.vda" holds a NUL character, which no file name can hold'), dump


def test_a_fifo_named_to_dump_or_verify_ties_up_no_thread(sample_game):
    os.mkfifo(sample_game / "pipe.vda")

    async def body(s):
        t0 = time.monotonic()
        out = [await s.call_tool("dump", {"path": "pipe.vda"}), await s.call_tool("verify", {"paths": ["pipe.vda"]})]
        return out, time.monotonic() - t0

    (dump, verify), took = serve(sample_game, body)
    assert took < 30
    assert dump.is_error and text_of(dump).endswith(
        "pipe.vda: cannot read: it is a FIFO (a named pipe), not a regular file"
    )
    assert verify.structured_content["files"] == [
        {
            "file": "pipe.vda",
            "ok": False,
            "error": "pipe.vda: cannot read: it is a FIFO (a named pipe), not a regular file",
        }
    ]


def _move_out(sample_game: Path, rel: str, outside: Path) -> Path:
    """Move *rel* (under the game) to *outside* and leave a symlink to it in its place."""
    target = outside / Path(rel).name
    (sample_game / rel).rename(target)
    (sample_game / rel).symlink_to(target)
    return target


def test_files_found_by_name_must_resolve_inside_the_root(sample_game, tmp_path):
    """A world source that is a symlink out of the root was rewritten by world_place (and terrain,
    vegetation, remove), which reported success: the root check covered path arguments only."""
    outside = tmp_path / "outside"
    outside.mkdir()
    world = _move_out(sample_game, "assets/worlds/valley.vworld", outside)
    model = _move_out(sample_game, "assets/models/crate.vmodel", outside)
    before = {p: p.read_bytes() for p in (world, model)}
    root = str(sample_game.resolve())

    async def body(s):
        edits = [
            await s.call_tool(name, args)
            for name, args in (
                ("world_place", {"world": "valley", "name": "tower", "prefab": "well", "near": [-66, 4]}),
                ("world_terrain", {"world": "valley", "name": "knoll", "kind": "hill", "cell": [0, 0], "radius": 4}),
                ("world_vegetation", {"world": "valley", "name": "ferns", "model": "tree", "density": 0.1}),
                ("world_remove", {"world": "valley", "name": "village_well"}),
                (
                    "write_source",
                    {
                        "kind": "world",
                        "name": "valley",
                        "text": '{"veduta": "world/1", "seed": 1, "biomes": [{"name": "plain", "ground": "grass"}]}',
                    },
                ),
            )
        ]
        reads = [
            await s.call_tool(name, args)
            for name, args in (
                ("inspect_world", {"world": "valley"}),
                ("world_query", {"world": "valley", "cell": [0, 0]}),
                ("inspect_model", {"model": "crate"}),
                ("export_gltf", {"model": "crate", "out": "crate.glb"}),
            )
        ]
        cook = await s.call_tool("cook", {"jobs": 1})
        try:
            source = await s.read_resource("veduta://source/world/valley")
        except Exception as exc:  # noqa: BLE001 - the SDK's client raises the resource error
            source = exc
        return edits, reads, cook, source

    edits, reads, cook, source = serve(sample_game, body)
    assert isinstance(source, Exception) and f"resolves to {world}, outside the game root" in str(source), source
    for res in edits + reads[:2]:
        assert res.is_error, text_of(res)
        assert text_of(res).endswith(
            f"assets/worlds/valley.vworld resolves to {world}, outside the game root {root} {CONFINED}"
        ), text_of(res)
    for res in reads[2:]:
        assert res.is_error and f"assets/models/crate.vmodel resolves to {model}, outside the game root" in text_of(
            res
        ), text_of(res)
    assert {p: p.read_bytes() for p in before} == before  # nothing written through the links
    got = cook.structured_content
    assert got["ok"] is False
    errors = {d["file"]: d["message"] for d in got["diagnostics"] if d["severity"] == "error"}
    assert (
        errors["assets/models/crate.vmodel"] == f"resolves to {model}, outside the game root {root} {CONFINED}; skipped"
    )
    assert errors["assets/worlds/valley.vworld"].startswith(f"resolves to {world}, outside the game root")
    assert not (sample_game / "assets/.cooked/worlds/valley.vda").exists()
    # the command line follows the link, as an editor does (docs/mcp.md): the user's own files
    out = cli_json(sample_game, "world", "place", "valley", "tower", "well", "--near", "-66,4")
    assert (
        out["written"] is True
        and b'"tower"' in world.read_bytes()
        and (sample_game / "assets/worlds/valley.vworld").is_symlink()
    )


def test_a_dependency_linked_out_of_the_root_is_an_error_of_its_source(sample_game, tmp_path):
    """An image a texture names (a dependency, read while compiling) that links out of the root."""
    outside = tmp_path / "outside"
    outside.mkdir()
    textures = sorted((sample_game / "assets/textures").glob("*.png"))
    assert textures, "the sample game has texture images"
    image = _move_out(sample_game, str(textures[0].relative_to(sample_game)), outside)
    users = [p for p in (sample_game / "assets/textures").glob("*.vtexture") if image.name in p.read_text()]
    assert users

    async def body(s):
        return await s.call_tool("check", {"jobs": 1}), await s.call_tool("cook", {"jobs": 1})

    for res in serve(sample_game, body):
        got = res.structured_content
        assert got["ok"] is False, text_of(res)
        msgs = [d["message"] for d in got["diagnostics"] if d["file"] == str(users[0].relative_to(sample_game))]
        assert any(
            m.startswith(f"assets/textures/{image.name} resolves to {image}, outside the game root") for m in msgs
        ), msgs


def test_a_project_folder_outside_the_root_is_refused(sample_game, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (sample_game / "assets/.cooked").symlink_to(elsewhere)

    res = serve(sample_game, lambda s: s.call_tool("cook", {"jobs": 1}))
    assert res.is_error and text_of(res).endswith(
        f"the cooked folder assets/.cooked resolves to {elsewhere}, outside the game root "
        f"{sample_game.resolve()}: veduta mcp reads and writes only files inside it"
    ), text_of(res)
    assert list(elsewhere.iterdir()) == []


def test_where_a_link_out_of_the_root_resolves_is_shown_escaped(game, tmp_path):
    """The real path a link out of the root resolves to was printed as the file system has it: a
    target folder named with a right-to-left override and a newline split ``veduta check``'s line
    in two and reordered it. It is shown escaped, as every other file name in a message is."""
    bad = tmp_path / "out\u202eevil\nx"
    bad.mkdir()
    shown = str(bad).replace("\u202e", "\\u202e").replace("\n", "\\n")
    root = str(game.root.resolve())
    barrel = game.root / "assets/models/props/barrel.vmodel"
    (bad / "barrel.vmodel").write_bytes(barrel.read_bytes())
    barrel.unlink()
    barrel.symlink_to(bad / "barrel.vmodel")
    (bad / "wall.png").write_bytes(b"not looked at")
    game.write(
        "textures/wall.vtexture", '{"veduta": "texture/1", "layers": [{"type": "image", "path": "textures/wall.png"}]}'
    )
    (game.root / "assets/textures/wall.png").symlink_to(bad / "wall.png")
    # the confinement veduta mcp sets for itself and the processes it starts
    env = {"VEDUTA_CONFINE": root}
    cp = game.veduta("check", env=env)
    lines = cp.stdout.splitlines()
    assert cp.returncode == 1 and lines[:2] == [
        f"assets/models/props/barrel.vmodel:1:1: $: resolves to {shown}/barrel.vmodel, outside the game root "
        f"{root} {CONFINED}; skipped",
        f"assets/textures/wall.vtexture:1:1: $: assets/textures/wall.png resolves to {shown}/wall.png, outside the "
        f"game root {root} {CONFINED}",
    ], cp.stdout
    cp = game.veduta("inspect", "model", "barrel", env=env)
    assert cp.stderr == (
        f"veduta: assets/models/props/barrel.vmodel resolves to {shown}/barrel.vmodel, outside the game root "
        f"{root} {CONFINED}\n"
    )
    (game.root / "assets/.cooked").symlink_to(bad)
    res = serve(game.root, lambda s: s.call_tool("cook", {"jobs": 1}))
    assert res.is_error and text_of(res).endswith(
        f"the cooked folder assets/.cooked resolves to {shown}, outside the game root {root}: veduta mcp reads "
        "and writes only files inside it"
    ), text_of(res)


def test_arguments_must_have_the_json_type_and_bounds_the_schema_says(sample_game):
    """The SDK's argument model is lax: it took ``true`` for the integer 1 (world_query at cell
    [true, false] answered for cell [1, 0]), "3" for 3, 1 for true, and any deps depth. Each is now
    refused, naming the argument, before anything runs; the bounds are the command line's."""
    world = sample_game / "assets/worlds/valley.vworld"
    before = world.read_bytes()
    calls = {
        "bool_cell": ("world_query", {"world": "valley", "cell": [True, False]}),
        "text_cell": ("world_query", {"world": "valley", "cell": ["1", 2]}),
        "float_cell": ("world_query", {"world": "valley", "cell": [1.5, 2]}),
        "bool_depth": ("deps", {"name": "bark", "depth": True}),
        "float_depth": ("deps", {"name": "bark", "depth": 2.5}),
        "negative_depth": ("deps", {"name": "bark", "depth": -1}),
        "huge_depth": ("deps", {"name": "bark", "depth": 10**30}),
        "int_flag": ("deps", {"name": "bark", "reverse": 1}),
        "bool_rotation": (
            "world_place",
            {"world": "valley", "name": "tower", "prefab": "well", "cell": [-66, 4], "rotation": False},
        ),
        "bool_place": ("world_place", {"world": "valley", "name": "tower", "prefab": "well", "cell": [True, 4]}),
        "bool_radius": (
            "world_terrain",
            {"world": "valley", "name": "knoll", "kind": "hill", "cell": [0, 0], "radius": True},
        ),
        "bool_height": (
            "world_terrain",
            {"world": "valley", "name": "knoll", "kind": "hill", "cell": [0, 0], "radius": 4, "height": True},
        ),
        "bool_jobs": ("check", {"jobs": True}),
        "export_radius": ("export_gltf", {"out": "v.glb", "world": "valley", "chunk": [0, 0], "radius": 100}),
        "export_lod": ("export_gltf", {"out": "c.glb", "model": "crate", "lod": 65}),
        "many_foci": ("inspect_world", {"world": "valley", "at": [[0, 0]] * 1025}),
        "depth_2": ("deps", {"name": "valley", "depth": 2}),
        # whole floats too large for an integer (hostile4 #6: was pydantic's own text)
        "huge_float_cell": ("world_query", {"world": "valley", "cell": [1e20, 0]}),
        "huge_float_near": ("world_place", {"world": "valley", "name": "p", "prefab": "well", "near": [1e19, 0]}),
        "huge_float_at": ("inspect_world", {"world": "valley", "at": [[-1e308, 0]]}),
        "huge_float_jobs": ("cook", {"jobs": 1e20}),
        "whole_float_cell": ("world_query", {"world": "valley", "cell": [2.0, -3.0]}),
    }

    async def body(s):
        return {key: await s.call_tool(name, args) for key, (name, args) in calls.items()}

    r = serve(sample_game, body)
    wrong = {
        "bool_cell": "invalid arguments of world_query: cell[0]: true is not an integer; "
        "cell[1]: false is not an integer",
        "text_cell": 'invalid arguments of world_query: cell[0]: "1" is not an integer',
        "float_cell": "invalid arguments of world_query: cell[0]: 1.5 is not an integer",
        "bool_depth": "invalid arguments of deps: depth: true is not an integer",
        "float_depth": "invalid arguments of deps: depth: 2.5 is not an integer",
        "negative_depth": "invalid arguments of deps: depth: -1 out of range [0, 1000000]",
        "huge_depth": f"invalid arguments of deps: depth: {10**30} out of range [0, 1000000]",
        "int_flag": "invalid arguments of deps: reverse: 1 is not true or false",
        "bool_place": "invalid arguments of world_place: cell[0]: true is not an integer",
        "bool_radius": "invalid arguments of world_terrain: radius: true is not an integer",
        "bool_height": "invalid arguments of world_terrain: height: true is not a number",
        "bool_jobs": "invalid arguments of check: jobs: true is not an integer",
        "export_radius": "invalid arguments of export_gltf: radius: 100 out of range [0, 4]",
        "export_lod": "invalid arguments of export_gltf: lod: 65 out of range [0, 64]",
        "many_foci": "invalid arguments of inspect_world: at: 1,025 items, more than the limit of 1,024",
        "huge_float_cell": "invalid arguments of world_query: cell[0]: 1e+20 is not an integer (a whole number "
        "written as a float must be below 2**63 in magnitude)",
        "huge_float_near": "invalid arguments of world_place: near[0]: 1e+19 is not an integer (a whole number "
        "written as a float must be below 2**63 in magnitude)",
        "huge_float_at": "invalid arguments of inspect_world: at[0][0]: -1e+308 is not an integer (a whole number "
        "written as a float must be below 2**63 in magnitude)",
        "huge_float_jobs": "invalid arguments of cook: jobs: 1e+20 out of range [1, 1024]",
    }
    for key, text in wrong.items():
        assert r[key].is_error and text_of(r[key]) == text, (key, text_of(r[key]))
    assert r["bool_rotation"].is_error and text_of(r["bool_rotation"]).startswith(
        "invalid arguments of world_place: rotation: false is not"
    )
    assert world.read_bytes() == before and not (sample_game / "v.glb").exists()
    assert not r["depth_2"].is_error
    assert not r["whole_float_cell"].is_error  # a whole float within range is the integer it is
    assert r["whole_float_cell"].structured_content == cli_json(sample_game, "world", "query", "valley", "--at", "2,-3")
    assert r["depth_2"].structured_content == cli_json(sample_game, "deps", "valley", "--depth", "2")


def test_a_source_past_its_kinds_size_limit_is_an_error_of_every_tool(sample_game):
    """A world and a material past their kinds' limits (docs/authoring-tools.md, "Source sizes"):
    the check's diagnostic, the world tools' and the resource's error, write_source's refusal; never
    read whole."""
    from veduta.base.kinds import BY_NAME

    world_limit, material_limit = BY_NAME["world"].max_bytes, BY_NAME["material"].max_bytes
    valley = sample_game / "assets/worlds/valley.vworld"
    text = valley.read_bytes().rstrip()
    valley.write_bytes(text[:-1] + b" " * (world_limit + 1 - len(text)) + b"}")
    size = valley.stat().st_size
    assert size == world_limit + 1
    too = f"too large ({size:,} bytes; a world source is at most {world_limit:,})"
    big_material = '{"veduta": "material/1"' + " " * material_limit + "}"

    async def body(s):
        r = {
            "check": await s.call_tool("check", {"sources": ["assets/worlds/valley.vworld"], "jobs": 1}),
            "query": await s.call_tool("world_query", {"world": "valley", "cell": [0, 0]}),
            "place": await s.call_tool(
                "world_place", {"world": "valley", "name": "tower", "prefab": "well", "near": [-66, 4]}
            ),
            "write": await s.call_tool("write_source", {"kind": "material", "name": "huge", "text": big_material}),
        }
        try:
            r["resource"] = await s.read_resource("veduta://source/world/valley")
        except Exception as exc:  # noqa: BLE001 - the SDK raises the server's error
            r["resource"] = exc
        return r

    r = serve(sample_game, body)
    check = r["check"].structured_content
    assert not check["ok"] and [(d["file"], d["line"], d["col"], d["message"]) for d in check["diagnostics"]] == [
        ("assets/worlds/valley.vworld", 1, 1, too)
    ]
    for key in ("query", "place"):
        assert r[key].is_error and f"assets/worlds/valley.vworld:1:1: $: {too}" in text_of(r[key]), text_of(r[key])
    assert valley.stat().st_size == size
    write = r["write"].structured_content
    assert write["refused"] and f"too large ({len(big_material):,} bytes; a material source is at most" in (
        json.dumps(write)
    )
    assert not (sample_game / "assets/materials/huge.vmaterial").exists()
    assert too in str(r["resource"])
