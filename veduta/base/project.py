"""A game repo: where its assets, cooked files and cache live, and its sources.

The game root is the folder holding ``dodo.py`` or ``pyproject.toml`` (the
current folder or the nearest parent).  ``[tool.veduta]`` in its
``pyproject.toml`` may set ``assets`` (default ``assets``), ``cooked``
(default ``<assets>/.cooked``) and ``cache`` (default ``cache``), each
relative to the root, and the shared cache tier: ``cache_url`` (``s3://bucket/prefix``,
``file:///path`` or a folder path) and ``cache_write`` (true to upload; default false),
and ``strict`` (true: warnings and inspect's error findings fail the cook and the check; default
false, the spec's severities),
see docs/shared-cache.md.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from operator import itemgetter
from typing import NamedTuple, NoReturn

from veduta.base.errors import ConfigError, UsageError, clip_words, quote, shown_path
from veduta.base.fsutil import check_inside, confined_root, kind_in_words, outside
from veduta.base.kinds import BY_FOLDER, BY_NAME, KINDS, Kind, kind_of, name_of

CONFIG_KEYS = ("assets", "cooked", "cache", "cache_url", "cache_write", "strict")
#: the shared cache's URL from the environment, which wins over [tool.veduta] cache_url
ENV_CACHE_URL = "VEDUTA_CACHE_URL"


class Source(NamedTuple):
    """One source file: ``rel`` is relative to the assets folder, forward slashes.  (A named
    tuple: a scan makes one per source, and a frozen dataclass took three times as long.)"""

    kind: Kind
    name: str
    rel: str


def plain_rel(path: str) -> str | None:
    """*path*, a path under the assets folder, written plainly (``./a``, ``a//b``, ``a/./b`` and
    ``a/../b`` as the folder's listing names them, "/" between names), or None when it leads out
    of the assets folder, is absolute or names the folder itself. Looks at nothing on disk: the
    one normalisation of a source path a user gives (``veduta cook``, ``check``, ``why``,
    ``deps``, ``doit cook:<path>``, the MCP tools)."""
    import posixpath

    plain = posixpath.normpath(path.replace(os.sep, "/")) if path else path
    if not plain or plain in (".", "..") or plain.startswith("../") or posixpath.isabs(plain):
        return None
    return plain


@dataclass(frozen=True)
class Project:
    root: str
    assets: str  # paths relative to the current folder when the project was found that way
    cooked: str
    cache: str
    #: the shared cache tier as configured in pyproject.toml (VEDUTA_CACHE_URL wins; see
    #: veduta.cook.remote.settings); "" when none
    cache_url: str = ""
    cache_write: bool = False
    #: ``strict = true``: every warning fails the cook and the check (docs/authoring-tools.md)
    strict: bool = False

    def shared_cache_set(self, environ=None) -> bool:
        """Is a shared tier set for this game (without parsing or checking it: that is
        :func:`veduta.cook.remote.settings`, whose module a cook with none never imports)?"""
        url = (os.environ if environ is None else environ).get(ENV_CACHE_URL)
        return bool(url.strip()) if url is not None else bool(self.cache_url)

    @classmethod
    def find(cls, start: str | None = None) -> Project:
        start = os.path.abspath(start or os.getcwd())
        d = start
        while True:
            if os.path.isfile(os.path.join(d, "dodo.py")) or os.path.isfile(os.path.join(d, "pyproject.toml")):
                return cls.at(d)
            parent = os.path.dirname(d)
            if parent == d:
                return cls.at(start)
            d = parent

    @classmethod
    def at(cls, root: str) -> Project:
        cfg = _read_config(os.path.join(root, "pyproject.toml"))
        rel_root = os.path.relpath(root)
        assets = os.path.normpath(os.path.join(rel_root, cfg.get("assets", "assets")))
        cooked = (
            os.path.normpath(os.path.join(rel_root, cfg["cooked"]))
            if "cooked" in cfg
            else os.path.join(assets, ".cooked")
        )
        cache = os.path.normpath(os.path.join(rel_root, cfg.get("cache", "cache")))
        where = os.path.normpath(os.path.join(rel_root, "pyproject.toml"))
        for key, folder in (("cooked", cooked), ("cache", cache)):
            clash = _overlap(folder, assets)
            if clash:
                raise ConfigError(
                    f"{where}: [tool.veduta] {key} = {cfg.get(key, folder)!r}: {clash}; "
                    f"pick a folder outside the source folders (the default is "
                    f"{'<assets>/.cooked' if key == 'cooked' else 'cache'})"
                )
        # (where the folders really are: a link named as the cache folder may lead into another)
        c, k, a = os.path.realpath(cache), os.path.realpath(cooked), os.path.realpath(assets)

        def refuse(key: str, clash: str) -> NoReturn:
            value = cfg.get(key, {"cache": cache, "cooked": cooked, "assets": assets}[key])
            raise ConfigError(f"{where}: [tool.veduta] {key} = {value!r}: the cache folder {cache} {clash}")

        if c == k or c.startswith(k.rstrip(os.sep) + os.sep):
            # the engine loads the cooked folder: doit's database, the stat cache and the store
            # would ship with the game (and a cooked folder is the one thing safe to delete)
            refuse(
                "cache" if "cache" in cfg else "cooked",
                f"{'is' if c == k else 'is inside'} the cooked folder {cooked}; keep them apart "
                f"(the defaults are cache and <assets>/.cooked)",
            )
        if c == a or c.startswith(a.rstrip(os.sep) + os.sep):
            # the file-system monitor watches the assets folder, and the cache folder holds its own
            # (its cookies, its journal): a cook's cookie would be journaled as a change, never as
            # the answer, and every cook written there would be journaled too
            refuse(
                "cache" if "cache" in cfg else "assets",
                f"is inside the assets folder {assets}; keep it outside (the default is cache, beside "
                f"the assets folder)",
            )
        return cls(
            rel_root,
            assets,
            cooked,
            cache,
            cfg.get("cache_url", ""),
            cfg.get("cache_write", False),
            cfg.get("strict", False),
        )

    # -- sources -------------------------------------------------------------
    def sources(self) -> list[Source]:
        """Every source under the assets folder, sorted by path."""
        return self.scan()[0]

    def select(
        self, sources: list[str] | None, warnings: list[str] | None = None
    ) -> tuple[list[Source], list[str], list[Source]]:
        """:meth:`scan` (its *warnings* too), and the sources named by *sources* (paths under the
        assets folder; all when None): ``(all sources, problems, selected)``.  A name that is no
        source is a :class:`~veduta.base.errors.UsageError` naming it."""
        all_sources, problems = self.scan(warnings)
        if sources is None:
            return all_sources, problems, all_sources
        wanted = set(sources)
        selected = [s for s in all_sources if s.rel in wanted]
        missing = sorted(wanted - {s.rel for s in selected})
        if missing:
            from veduta.base.errors import UsageError

            # (a FIFO named like a source: the scan's words for it)
            odd: list[str] = []
            gone: list[str] = []
            for rel in missing:
                why = not_a_source(self.source_path(rel)) if kind_of(rel) else None
                if why:
                    odd.append(clip_words(why))
                else:
                    gone.append(rel)
            if gone:
                odd.append(f"no such source: {', '.join(map(clip_words, gone))}")
            raise UsageError("; ".join(odd))
        return all_sources, problems, selected

    def scan(self, warnings: list[str] | None = None, walk=None) -> tuple[list[Source], list[str]]:
        """Every source under the assets folder, sorted by path, and the problems found
        on the way (a folder that cannot be read, a file name that is not UTF-8), each
        a ``path: message`` line naming the path as the file system has it (a face shows it
        with :func:`~veduta.base.errors.shown_path`); no assets folder at all is :meth:`need_assets`'s
        ConfigError.  Links skipped (loops, dangling links) are appended to
        *warnings*.  Under ``veduta mcp``'s confinement (:func:`veduta.base.fsutil.confine`), a source
        or folder that resolves outside the game root is a problem naming where it resolves, and
        is left out (so it is never read, and a reference to it is missing).  *walk* lists a kind's
        folder in place of :func:`_walk`, with its arguments and answer (the cook's kept listings:
        ``veduta/cook/scancache.py``)."""
        out: list[Source] = []
        problems: list[str] = []
        self.need_assets()
        for k in KINDS:
            top = os.path.join(self.assets, k.folder)
            rels = [f"{k.folder}/{rel}" for rel in (walk or _walk)(top, k.suffix, problems, warnings, confined=True)]
            joined = "".join(rels)
            try:
                joined.encode("utf-8")  # every name at once; one by one only if one is not text
            except UnicodeEncodeError:
                rels = [rel for rel in rels if _utf8_name(rel, self.assets, problems)]
            if "=" in joined:  # (doit refuses a task named with "=": the whole cook would abort)
                rels = [rel for rel in rels if _no_equals(rel, self.assets, problems)]
            cut = len(k.suffix)
            # (made in C: calling the named tuple's __new__ once a source was a tenth of a no-op's scan)
            out += map(_source, zip(repeat(k), [rel[rel.rfind("/") + 1 : -cut] for rel in rels], rels))
        out.sort(key=_BY_REL)
        return out, problems

    def need_assets(self) -> None:
        """:class:`~veduta.base.errors.ConfigError` when there is no assets folder: a game without one
        is set up wrong (a configuration mistake, exit 2), not a source that failed."""
        if not os.path.isdir(self.assets):
            what = "is not a folder" if os.path.exists(self.assets) else "does not exist"
            raise ConfigError(
                f"no assets folder: {self.assets} {what} (a game keeps its sources in assets/, "
                f"or names the folder with [tool.veduta] assets in pyproject.toml)"
            )

    def cooked_path(self, kind: Kind | str, name: str) -> str:
        k = BY_NAME[kind] if isinstance(kind, str) else kind
        return os.path.join(self.cooked, k.folder, name + ".vda")

    def source_path(self, rel: str) -> str:
        return os.path.join(self.assets, *rel.split("/"))

    def find_source(self, kind: str, name: str) -> Source | None:
        """A source by kind and name (the first path when the name is a duplicate).  Under
        ``veduta mcp``'s confinement, a source that resolves outside the game root (a link out of
        it) is :class:`~veduta.base.fsutil.OutsideRoot`, naming the file and where it resolves: every
        tool that finds a source by name reads it, and the world editors write it."""
        k = BY_NAME[kind]
        for rel in _walk(os.path.join(self.assets, k.folder), k.suffix):
            if name_of(rel) == name:
                src = Source(k, name, f"{k.folder}/{rel}")
                check_inside(self.source_path(src.rel))
                return src
        return None

    def index(self):
        return AssetIndex.from_paths(s.rel for s in self.sources())


#: a Source from its (kind, name, rel) tuple, made without a Python call
_source = partial(tuple.__new__, Source)
#: a Source's rel (the sort key of a scan)
_BY_REL = itemgetter(2)


def _utf8_name(rel: str, assets: str, problems: list[str]) -> bool:
    """Whether source path *rel* is text (UTF-8); if not, a problem naming it is appended: the path
    as the file system has it (its bytes that are not UTF-8 as Python keeps them, which a face
    shows as ``\\xe9`` with :func:`~veduta.base.errors.shown_path` and JSON writes as ``\\udce9``:
    the very file, never a lookalike with U+FFFD in its name that another file may hold)."""
    try:
        rel.encode("utf-8")
        return True
    except UnicodeEncodeError:
        problems.append(
            f"{os.path.join(assets, rel)}: file name is not valid UTF-8 (source names are text in META); rename it"
        )
        return False


def _no_equals(rel: str, assets: str, problems: list[str]) -> bool:
    """Whether source path *rel* is free of "=", which doit refuses in a task's name (``cook:<path>``:
    it would abort the whole cook) and no asset name holds; if not, a problem naming it is appended
    and the file is not a source."""
    if "=" not in rel:
        return True
    problems.append(
        f"{os.path.join(assets, rel)}: a path holding '=' cannot be a source (doit reads "
        f"NAME=VALUE on its command line as a variable, so no task is named with '=', and no asset name "
        f"holds one); rename it"
    )
    return False


def _overlap(folder: str, assets: str) -> str:
    """Why *folder* (cooked files, cache) may not be where it is, or "" when it may: it must not
    be the assets folder, hold it, or lie in a kind's source folder (its files would mix with
    the sources, and a scan would read them)."""
    f, a = os.path.abspath(folder), os.path.abspath(assets)
    if f == a:
        return "it is the assets folder"
    if a.startswith(f.rstrip(os.sep) + os.sep):
        return "it holds the assets folder"
    if f.startswith(a + os.sep):
        first = os.path.relpath(f, a).split(os.sep)[0]
        if first in BY_FOLDER:
            return f"it is {'' if f == os.path.join(a, first) else 'inside '}the {first} source folder"
    return ""


def _walk(
    top: str, suffix: str, problems: list[str] | None = None, warnings: list[str] | None = None, confined: bool = False
) -> list[str]:
    """Paths of files ending in *suffix* under *top*, relative to it, sorted; skips dot folders.

    A folder that cannot be read is a problem (appended to *problems*).  Symbolic links are
    followed, but never into a folder already on the way down (a loop such as ``ln -s .
    again``), and a link that cannot be resolved (a loop of links, a dangling one) is skipped;
    both are warnings (appended to *warnings*).  Only regular files count: a FIFO would block
    the read; a FIFO, socket or device named like a source is a problem naming it and what it
    is.  *confined*, when this process is confined to a root (``veduta mcp``): a file or folder
    reached through a link that resolves outside it is a problem, and left out.
    """
    out: list[str] = []
    try:
        st = os.stat(top)
    except OSError:
        return out
    root = confined_root() if confined else None
    if root is not None and _escapes(top, problems):
        return out
    linked = root is not None and os.path.realpath(top) != os.path.abspath(top)
    stack = [("", top, frozenset({(st.st_dev, st.st_ino)}), linked)]
    while stack:
        prefix, d, above, linked = stack.pop()
        try:
            it = os.scandir(d)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            if problems is not None:
                problems.append(f"{d}: cannot read the folder ({exc.strerror})")
            continue
        with it:
            for e in it:
                if e.name.startswith("."):
                    continue
                try:
                    is_dir = e.is_dir()
                    is_file = not is_dir and e.name.endswith(suffix) and len(e.name) > len(suffix) and e.is_file()
                    dst = e.stat() if is_dir else None
                except OSError as exc:  # a link loop (a file linked to itself), ...
                    if warnings is not None:
                        warnings.append(f"{e.path}: warning: skipped, cannot follow it ({exc.strerror or exc})")
                    continue
                if (
                    not is_dir
                    and not is_file
                    and warnings is not None
                    and e.is_symlink()
                    and not os.path.exists(e.path)
                ):
                    warnings.append(
                        f"{e.path}: warning: skipped, a link to nothing ({os.readlink(e.path)} does not exist)"
                    )
                    continue
                # a FIFO, socket or device named like a source: never opened (a FIFO would block
                # the read), and a problem naming it, so the cook and check fail as for any bad source
                odd = (
                    _not_regular(e)
                    if not is_dir
                    and not is_file
                    and problems is not None
                    and e.name.endswith(suffix)
                    and len(e.name) > len(suffix)
                    else None
                )
                via_link = linked or (root is not None and (is_dir or is_file or odd is not None) and e.is_symlink())
                if via_link and (is_dir or is_file or odd is not None) and _escapes(e.path, problems):
                    continue
                if odd is not None and problems is not None:
                    problems.append(_not_a_source_line(e.path, odd))
                    continue
                if dst is not None:
                    ident = (dst.st_dev, dst.st_ino)
                    if ident in above:
                        if warnings is not None:
                            warnings.append(f"{e.path}: warning: skipped, a link to a folder above it (a loop)")
                        continue
                    stack.append((prefix + e.name + "/", e.path, above | {ident}, via_link))
                elif is_file:
                    out.append(prefix + e.name)
    out.sort()
    return out


#: what sits between the path and the words in a "not a source" line (:func:`not_a_source`)
NOT_A_SOURCE = ": not a source: it is "


def _not_a_source_line(path: str, what: str) -> str:
    return f"{path}{NOT_A_SOURCE}{what}, not a regular file (never read)"


def not_a_source(path: str) -> str | None:
    """Why the file at *path*, named like a source, is none, in the words the scan uses for it
    (``assets/models/x.vmodel: not a source: it is a FIFO (a named pipe), not a regular file
    (never read)``): a FIFO, socket or device; None for a regular file or a folder, or when it is
    missing or cannot be stat()ed.  One stat that follows a link: never opened, so a FIFO is never
    waited on.  For a source a user names by path (cook, check, why): the same error as the scan's."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # (ValueError: a NUL in the path)
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return _not_a_source_line(path, kind_in_words(mode))


def odd_sources(project, kind: str, name: str) -> list[str]:
    """The "not a source" lines of the FIFOs, sockets and devices under *kind*'s folder named like
    its source *name* (``models/props/x.vmodel`` for model ``x``), sorted by path: why a name a
    user gave finds no source, when one of them is in its place."""
    k = BY_NAME[kind]
    problems: list[str] = []
    _walk(os.path.join(project.assets, k.folder), k.suffix, problems)
    out = []
    for line in problems:
        path, sep, _ = line.partition(NOT_A_SOURCE)
        if sep and name_of(path.replace(os.sep, "/")) == name:
            out.append(line)
    return out


def _not_regular(entry: os.DirEntry) -> str | None:
    """What *entry* (not a folder, not a regular file) is, in words (``a FIFO (a named pipe)``,
    ``a socket``, ...), from one stat that follows a link; None when it is gone or cannot be stat()ed."""
    try:
        mode = entry.stat().st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else kind_in_words(mode)


def _escapes(path: str, problems: list[str] | None) -> bool:
    """Whether *path* resolves outside the root this process is confined to; if so, a problem
    naming it and where it resolves is appended to *problems*."""
    real = outside(path)
    if real is None:
        return False
    if problems is not None:
        problems.append(
            f"{path}: resolves to {shown_path(real)}, outside the game root {shown_path(confined_root() or '')} "
            f"(veduta mcp reads and writes only files inside it); skipped"
        )
    return True


#: The largest ``pyproject.toml`` read for a game's settings, in bytes (told from one stat, before a
#: byte is read): a project's is a few kilobytes; a larger file is a configuration error naming it.
MAX_CONFIG_BYTES = 1 << 20


def _read_config(path: str) -> dict:
    from veduta.base.fsutil import NotARegularFile, TooLarge, read_with_stat

    try:
        data = read_with_stat(path, MAX_CONFIG_BYTES, "a game's pyproject.toml")[0]
    except (TooLarge, NotARegularFile) as exc:  # (a FIFO would block, a huge file fill the memory)
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except OSError:
        return {}
    import tomllib

    try:
        tool = tomllib.loads(data.decode("utf-8")).get("tool", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool: expected a table ([tool]), not {_toml_type(tool)}")
    cfg = tool.get("veduta", {})
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: tool.veduta: expected a table ([tool.veduta]), not {_toml_type(cfg)}")
    for key, value in cfg.items():
        if key not in CONFIG_KEYS:
            raise ConfigError(f"{path}: [tool.veduta] {key}: unknown key (want one of {', '.join(CONFIG_KEYS)})")
        if key in ("cache_write", "strict"):
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: [tool.veduta] {key}: expected true or false")
        elif key == "cache_url":
            if not isinstance(value, str):
                raise ConfigError(
                    f"{path}: [tool.veduta] cache_url: expected a string (s3://bucket/prefix, "
                    f"file:///path or a folder path)"
                )
        elif not isinstance(value, str) or not value:
            raise ConfigError(f"{path}: [tool.veduta] {key}: expected a folder path string")
        if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ConfigError(
                f"{path}: [tool.veduta] {key}: {value!r} holds a control character (a NUL, newline or "
                f"the like), which no path can hold here"
            )
    return cfg


def _toml_type(value: object) -> str:
    """What TOML calls *value*'s type, for an error naming what was found instead."""
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array"}.get(
        type(value), "a " + type(value).__name__
    )


__all__ = ["Project", "Source", "BY_FOLDER"]


class AssetIndex:
    """Every source of a game by kind and name (``kind -> name -> [paths]``).

    Paths are relative to the assets folder with forward slashes; a name with
    more than one path is a duplicate (an error the cook reports).
    """

    def __init__(self, by_kind: dict[str, dict[str, list[str]]] | None = None):
        self.by_kind = by_kind or {}

    @classmethod
    def from_paths(cls, paths) -> AssetIndex:
        by_kind: dict[str, dict[str, list[str]]] = {}
        for rel in sorted(paths):
            k = kind_of(rel)
            if k is not None:
                by_kind.setdefault(k.name, {}).setdefault(name_of(rel), []).append(rel)
        return cls(by_kind)

    def resolve(self, kind: str, name: str) -> str | None:
        paths = self.by_kind.get(kind, {}).get(name)
        return paths[0] if paths else None


def canonical_path(kind: str, name: str) -> str:
    """Where a missing asset of *kind* called *name* would be looked for first."""
    k = BY_NAME[kind]
    return f"{k.folder}/{name}{k.suffix}"


def no_such_asset(project, kind: str, name: str) -> UsageError:
    """The one "no such asset" error of every tool, with the closest existing names of that kind:
    ``no model "crat" under assets/models/ (did you mean crate?)``."""
    from veduta.base.names import did_you_mean

    odd = odd_sources(project, kind, name)
    if odd:  # (a FIFO named like the source: the scan's words for it)
        return UsageError("; ".join(map(clip_words, odd)))
    names = project.index().by_kind.get(kind, {})
    return UsageError(
        f"no {kind} {quote(name)} under {project.assets}/{BY_NAME[kind].folder}/{did_you_mean(name, names)}"
    )


#: The mark of a watched reference that was missing (:attr:`veduta.compile.CompileContext.watch`).
WATCH_MISSING = "!"


def watch_holds(watch, index: AssetIndex) -> bool:
    """Whether every reference in *watch* (:attr:`veduta.compile.CompileContext.watch`) resolves in
    *index* as it did: a missing one is still missing, a found one still at the same path.  (Here,
    not among the compilers: the cook's check asks it without importing them.)"""
    for w in watch:
        missing = w.startswith(WATCH_MISSING)
        rel = w[1:] if missing else w
        k = kind_of(rel)
        if k is None:
            return False
        found = index.resolve(k.name, name_of(rel))
        if (found is not None) if missing else (found != rel):
            return False
    return True
