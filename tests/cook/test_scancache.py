"""The folder listings a cook keeps (veduta/cook/scancache.py), end to end through doit: a folder
whose signature is unchanged is not listed again, and no source made, removed or renamed, no
link and no stray cooked file is ever missed for it.  Each step waits out the racy window
(a listing taken less than 2 s after its folder changed is never reused), so that the next cook
does reuse the listings it may."""

from __future__ import annotations

import json
import os
import time

from tests.gamerepo import BARREL, CRATE, Game
from veduta.cook.scancache import ScanCache
from veduta.cook.state import RACY_NS


def settle() -> None:
    time.sleep(RACY_NS / 1e9 + 0.2)


def cook(game: Game) -> str:
    cp = game.cook()
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return cp.stdout


def kept(game: Game) -> dict:
    """The kept listings, by folder relative to the game root: (reused next time?, files)."""
    cache = ScanCache(str(game.root / "cache"))
    base = str(game.root) + os.sep
    out = {}
    for d, (sig, files, _) in cache.old.items():
        rel = os.path.relpath(d if os.path.isabs(d) else os.path.join(str(game.root), d), str(game.root))
        out[rel.removeprefix(base)] = (sig is not None, tuple(files.split("\0")) if files else ())
    return out


def nothing_stale_and_counted(game: Game, n: int) -> None:
    cp = game.veduta("why", "--json")
    got = json.loads(cp.stdout)
    assert got["stale"] == [] and got["checked"] == n, got


def removed_and_swept(game: Game, rel: str, cooked: str, left: int) -> None:
    """Remove source *rel* after a cook that kept what it could: its cooked file goes."""
    settle()
    cook(game)
    (game.root / "assets" / rel).unlink()
    out = cook(game)
    assert f"removed assets/.cooked/{cooked}" in out, out
    nothing_stale_and_counted(game, left)


def test_kept_listings_see_every_source_made_removed_or_renamed(game):
    cook(game)
    settle()
    assert "0 cooked, 4 up to date" in cook(game)
    listings = kept(game)
    assert listings["assets/models"] == (True, ("crate.vmodel", "tree.vmodel", "tree_far.vmodel")), listings
    assert listings["assets/models/props"] == (True, ("barrel.vmodel",))
    settle()
    assert "0 cooked, 4 up to date" in cook(game)  # (listed from what was kept)

    game.write("models/props/box.vmodel", CRATE.replace("[1, 1, 1]", "[2, 1, 1]"))  # made
    assert "1 cooked, 4 up to date" in cook(game)
    nothing_stale_and_counted(game, 5)
    settle()
    cook(game)
    os.rename(game.root / "assets/models/props/box.vmodel", game.root / "assets/models/props/chest.vmodel")
    out = cook(game)
    assert "removed assets/.cooked/models/box.vda" in out and game.cooked("models/chest.vda").exists(), out
    nothing_stale_and_counted(game, 5)
    settle()
    cook(game)

    # a source made, then its folder's mtime put back: its ctime moved, so it is listed again
    props = game.root / "assets/models/props"
    st = props.stat()
    game.write("models/props/lid.vmodel", CRATE.replace("[1, 1, 1]", "[3, 1, 1]"))
    os.utime(props, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert props.stat().st_mtime_ns == st.st_mtime_ns
    assert "1 cooked, 5 up to date" in cook(game)
    settle()
    cook(game)

    # a new sub-folder, then a source removed from a folder below an unchanged one
    game.write("models/props/deep/nail.vmodel", BARREL.replace("0.4", "0.05"))
    assert "1 cooked, 6 up to date" in cook(game)
    removed_and_swept(game, "models/props/deep/nail.vmodel", "models/nail.vda", 6)


def test_kept_listings_yield_to_links(game, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "rock.vmodel").write_text(CRATE)
    os.symlink(outside / "rock.vmodel", game.root / "assets/models/rock.vmodel")
    assert "5 cooked" in cook(game)
    settle()
    cook(game)
    assert "assets/models" not in kept(game)  # a folder holding a link is listed every time
    # the link's target turns into a folder of sources: the link's own folder did not change
    (outside / "rock.vmodel").unlink()
    (outside / "rock.vmodel").mkdir()
    (outside / "rock.vmodel" / "pebble.vmodel").write_text(CRATE.replace("[1, 1, 1]", "[0.2, 0.2, 0.2]"))
    out = cook(game)
    assert "1 cooked, 4 up to date" in out and "removed assets/.cooked/models/rock.vda" in out, out
    assert game.cooked("models/pebble.vda").exists()
    nothing_stale_and_counted(game, 5)


def test_the_orphan_sweep_skips_only_an_unchanged_clean_cooked_folder(game):
    cook(game)
    settle()
    cook(game)  # sweeps and finds nothing stray: kept
    assert ScanCache(str(game.root / "cache")).cooked_old
    settle()
    cook(game)
    # a temp file an interrupted cook left an hour ago: the cooked folder changed, so it is swept
    temp = game.cooked("models/.crate.vda.somehost.4242.0.tmp")
    temp.write_bytes(b"half a file")
    hour_ago = time.time() - 3600
    os.utime(temp, (hour_ago, hour_ago))
    out = cook(game)
    assert "(left by an interrupted cook)" in out and not temp.exists(), out
    # a source removed: the cooked folder did not change, the sources did: swept
    removed_and_swept(game, "models/props/barrel.vmodel", "models/barrel.vda", 3)


def test_stray_cooked_files_in_a_folder_under_a_kinds_folder_are_swept(game, tmp_path):
    # the sweep listed only a kind's cooked folder itself: cooked/models/old/ left from a removed
    # folder (or an older layout) kept its files for ever, with or without the kept listings
    game.write("models/gone.vmodel", CRATE.replace("[1, 1, 1]", "[3, 1, 1]"))
    game.write("models/gone2.vmodel", BARREL)
    cook(game)
    models = game.cooked("models")
    gone, gone2 = models.joinpath("gone.vda").read_bytes(), models.joinpath("gone2.vda").read_bytes()
    (game.root / "assets/models/gone.vmodel").unlink()
    (game.root / "assets/models/gone2.vmodel").unlink()
    cook(game)  # (their cooked files swept from the top)
    (models / "old/deeper").mkdir(parents=True)
    (models / "old/deeper/gone.vda").write_bytes(gone)  # META names models/gone.vmodel: gone
    (models / "old/gone2.vda").write_bytes(gone2)
    kept_files = {
        "old/crate.vda": game.cooked("models/crate.vda").read_bytes(),  # its source is there: a copy
        "old/notes.txt": b"mine",  # not a cooked file
        "old/junk.vda": b"not a veduta file",  # no META: not the cook's
        ".hidden/gone.vda": gone,  # dot folders are never looked at
    }
    for rel, data in kept_files.items():
        (models / rel).parent.mkdir(parents=True, exist_ok=True)
        (models / rel).write_bytes(data)
    (models / "mine").mkdir()  # an empty folder: kept (the sweep removes only folders it emptied)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "gone.vda").write_bytes(gone)
    os.symlink(outside, models / "linked")  # a link to a folder: never followed
    listed = game.doit("list", "--all", "--status", check=True).stdout
    assert "R cook:_orphans " in listed, listed
    out = cook(game)
    assert "removed assets/.cooked/models/old/deeper/gone.vda (its source is gone)\n" in out, out
    assert "removed assets/.cooked/models/old/gone2.vda (its source is gone)\n" in out, out
    assert not (models / "old/deeper").exists()  # emptied by the sweep: gone too
    for rel, data in kept_files.items():
        assert (models / rel).read_bytes() == data, rel
    assert (models / "mine").is_dir() and (outside / "gone.vda").read_bytes() == gone
    assert "U cook:_orphans " in game.doit("list", "--all", "--status", check=True).stdout
    # a stray dropped into a folder under it after a sweep found nothing: only that folder changed
    settle()
    cook(game)
    settle()
    out = cook(game)
    assert "removed" not in out
    (models / "old/gone2.vda").write_bytes(gone2)
    out = cook(game)
    assert "removed assets/.cooked/models/old/gone2.vda (its source is gone)\n" in out, out
    assert not (models / "old/gone2.vda").exists() and (models / "old/notes.txt").exists()
