"""The orphan sweep (``cook:_orphans``, veduta/cook/cook.py ``orphans``): which cooked files it
removes and which it keeps, judged by the META a file starts with (its body never read), found once
per cook (the action removes what the task pass found, reading nothing again), at the top of the
cooked folder too."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.gamerepo import BARREL, CRATE, Game, memory_limit
from veduta.container.chunks import MAGIC, put_chunk, read_chunks, write_chunks


def cook(game: Game, *args: str) -> str:
    cp = game.cook(*args)
    assert cp.returncode == 0 and "Traceback" not in cp.stderr, cp.stdout + cp.stderr
    return cp.stdout


def gone_output(game: Game, rel: str, text: str) -> bytes:
    """The cooked bytes of source *rel* (made with *text*, cooked, then removed with its cooked
    file): a cooked file whose source is gone."""
    game.write(rel, text)
    cook(game)
    name = rel.rsplit("/", 1)[-1].removesuffix(".vmodel")
    data = game.cooked(f"models/{name}.vda").read_bytes()
    (game.root / "assets" / rel).unlink()
    assert f"removed assets/.cooked/models/{name}.vda (its source is gone)" in cook(game)
    return data


def flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def test_a_stray_is_judged_by_the_meta_it_starts_with_never_its_body(game):
    gone = gone_output(game, "models/gone.vmodel", CRATE.replace("[1, 1, 1]", "[3, 1, 1]"))
    meta, body = read_chunks(gone)
    assert (meta.type, body.type) == ("META", "MESH")
    first = MAGIC + put_chunk("META", meta.payload)
    models = game.cooked("models")
    (models / "old").mkdir()
    strays = {
        # META then a body that is no chunk at all, or one that fails its CRC: a cook wrote the META
        "old/garbage.vda": first + b"\xff" * 5000,
        "old/bad_crc.vda": flipped(gone, len(gone) - 1),
        "old/cut.vda": gone[: len(first) + 20],  # cut short inside the body
        "gone.vda": first + b"not a chunk",  # at the top of the kind's folder too
    }
    # the spec lets META come anywhere: a file whose first chunk is another is read whole, and
    # judged as a reader takes it (whole, every CRC right, one META and one body of the kind)
    strays["old/body_first.vda"] = write_chunks([("MESH", body.payload), ("META", meta.payload)])
    kept = {
        "old/meta_crc.vda": flipped(first, len(first) - 1) + b"\0" * 100,  # META's own CRC wrong
        "old/meta_cut.vda": first[:-6],  # META overruns the file
        "old/no_magic.vda": b"VDA2" + first[4:],
        "old/body_first_bad.vda": flipped(write_chunks([("MESH", body.payload), ("META", meta.payload)]), 20),
        "old/other_kind.vda": MAGIC + put_chunk("META", meta.payload.replace(b'"kind":"model"', b'"kind":"scene"')),
        "old/empty.vda": b"",
    }
    for rel, data in {**strays, **kept}.items():
        (models / rel).write_bytes(data)
    out = cook(game)
    for rel in strays:
        assert f"removed assets/.cooked/models/{rel} (its source is gone)\n" in out, (rel, out)
        assert not (models / rel).exists(), rel
    for rel, data in kept.items():
        assert (models / rel).read_bytes() == data, rel
    assert out.count("removed") == len(strays), out


def test_a_strays_body_is_never_read_even_past_memory(game):
    """A stray of 400 MB (a sparse file: META, then a MESH chunk header announcing the rest) swept
    by a cook whose memory is capped below what reading it whole takes: only its first bytes are
    read, and it is removed as any stray is."""
    gone = gone_output(game, "models/gone.vmodel", CRATE.replace("[1, 1, 1]", "[3, 1, 1]"))
    meta = read_chunks(gone)[0]
    length = 400 << 20
    first = MAGIC + put_chunk("META", meta.payload) + b"MESH" + length.to_bytes(4, "little")
    big = game.cooked("models/old/big.vda")
    big.parent.mkdir()
    with open(big, "wb") as f:
        f.write(first)
        f.truncate(len(first) + length + 4)  # (a hole: no disk used)
    assert big.stat().st_size > 400 << 20
    cp = subprocess.run(
        [sys.executable, "-m", "doit", "cook"],
        cwd=game.root,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=memory_limit(700 << 20),  # (reading it whole, then its chunk, takes 800 MB)
    )
    assert cp.returncode == 0 and "Traceback" not in cp.stderr, cp.stdout + cp.stderr
    assert "removed assets/.cooked/models/old/big.vda (its source is gone)\n" in cp.stdout, cp.stdout
    assert not big.exists() and not big.parent.exists()


def test_the_action_removes_what_the_pass_found_without_reading_it_again(game, monkeypatch):
    """prune_orphans is given the strays and their signatures: it lists no folder and reads no
    file, and leaves one that changed since it was judged (the next cook judges it again)."""
    from veduta.cook import cook as cookmod

    gone = gone_output(game, "models/gone.vmodel", CRATE.replace("[1, 1, 1]", "[3, 1, 1]"))
    models = game.cooked("models")
    (models / "old").mkdir()
    (models / "old/a.vda").write_bytes(gone)
    (models / "old/b.vda").write_bytes(gone)
    seen: dict = {}
    stray = cookmod.orphans(str(game.cooked("")), {"models": {"crate", "barrel", "tree", "tree_far"}}, seen=seen)
    assert stray == [str(models / "old/a.vda"), str(models / "old/b.vda")]
    (models / "old/b.vda").write_bytes(gone + b"")  # rewritten in place: another file now
    os.utime(models / "old/b.vda", ns=(1, 1))

    def no(*a, **k):
        raise AssertionError("listed or read again")

    monkeypatch.setattr(cookmod, "orphans", no)
    monkeypatch.setattr(cookmod, "_sweep_meta", no)
    monkeypatch.setattr(cookmod.os, "listdir", no)
    got = cookmod.prune_orphans(str(game.cooked("")), [(f, seen[f]) for f in stray])
    assert got == {"outcome": "pruned", "removed": [str(models / "old/a.vda")]}
    assert (models / "old/b.vda").exists()
    monkeypatch.undo()
    assert "removed assets/.cooked/models/old/b.vda (its source is gone)\n" in cook(game)


def test_a_stray_at_the_top_of_the_cooked_folder_is_swept(game):
    gone = gone_output(game, "models/gone.vmodel", CRATE.replace("[1, 1, 1]", "[3, 1, 1]"))
    top = game.cooked("")
    crate = game.cooked("models/crate.vda").read_bytes()
    (top / "gone.vda").write_bytes(gone)  # META names models/gone.vmodel: gone
    (top / "renamed.vda").write_bytes(gone)  # named after nothing: judged by its META alone
    kept = {
        "crate.vda": crate,  # a copy of a current source's output
        "mine.vda": b"not a veduta file",  # not the cook's
        ".hidden.vda": gone,  # dot files are never looked at
        "notes.txt": b"mine",
        "backup/gone.vda": gone,  # no folder at the top but the kinds' is entered
        # META naming a source outside its kind's folder: not one a cook writes
        "elsewhere.vda": gone.replace(b'"source":"models/', b'"source":"modelz/'),
    }
    for rel, data in kept.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_bytes(data)
    out = cook(game)
    assert "removed assets/.cooked/gone.vda (its source is gone)\n" in out, out
    assert "removed assets/.cooked/renamed.vda (its source is gone)\n" in out, out
    assert out.count("removed") == 2, out
    assert not (top / "gone.vda").exists() and not (top / "renamed.vda").exists()
    for rel, data in kept.items():
        assert (top / rel).read_bytes() == data, rel
    assert top.is_dir() and game.cooked("models/crate.vda").read_bytes() == crate


def test_a_stray_dropped_at_the_top_after_a_clean_sweep_is_found(game):
    """The cooked folder's own signature is kept with its kinds' folders: a file made at its top
    changes it, so the next cook sweeps again (kept listings, veduta/cook/scancache.py)."""
    from tests.cook.test_scancache import settle
    from veduta.cook.scancache import ScanCache

    gone = gone_output(game, "models/gone.vmodel", BARREL.replace("0.4", "0.3"))
    settle()
    cook(game)
    settle()
    assert "removed" not in cook(game)
    kept = ScanCache(str(game.root / "cache")).cooked_old
    assert {"assets/.cooked", str(game.cooked(""))} & set(kept), kept
    (game.cooked("") / "gone.vda").write_bytes(gone)
    assert "removed assets/.cooked/gone.vda (its source is gone)\n" in cook(game)


@pytest.mark.parametrize("kind_folder", ["models", "textures"])
def test_a_top_stray_is_kept_while_a_source_of_its_kind_has_its_name(game, kind_folder):
    # the name is what counts (as in a folder under a kind's): models/props/gone.vmodel made
    # again elsewhere keeps the copy at the top; a texture of that name does not
    gone = gone_output(game, "models/gone.vmodel", CRATE.replace("[1, 1, 1]", "[3, 1, 1]"))
    (game.cooked("") / "gone.vda").write_bytes(gone)
    if kind_folder == "models":
        game.write("models/props/gone.vmodel", CRATE)
        assert "removed" not in cook(game)
        assert (game.cooked("") / "gone.vda").read_bytes() == gone
    else:
        game.write(
            "textures/gone.vtexture",
            '{"veduta": "texture/1", "size": [4, 4], "layers": [{"type": "fill", "color": "#ff0000"}]}',
        )
        out = cook(game)
        assert "removed assets/.cooked/gone.vda (its source is gone)\n" in out, out
