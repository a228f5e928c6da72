"""``veduta lsp``: the cook's diagnostics, completion, hover, definition and references in any
editor, as a Language Server Protocol server over stdio (pygls).

A thin face over :class:`veduta.tools.editor.Workspace` (reached through :mod:`veduta.api`):
this module only turns protocol messages into its calls and its plain answers into protocol
types, converting positions (the core counts 1-based lines and columns in characters; the
protocol 0-based lines and characters in the negotiated encoding, UTF-16 by default).

Diagnostics are computed in the server's own process, without doit, for the buffer's text on
open and on every change, a short time after the last change (``debounce_ms`` in the client's
initialization options, default :data:`DEBOUNCE_MS`), and again for every open buffer whose
last check read a source that changed (a buffer over :data:`LARGE` characters: once its typing
pauses, and in a thread of the server's, so that it answers everything else meanwhile: a
newer text of that buffer is checked next, and a check of an older one is never published).
A hover, completion, definition or references request on such a buffer is answered in another
thread of the server's, by a copy of the workspace as it was asked (:meth:`VedutaLanguageServer.ask`).
Both threads are daemons: ``exit`` ends the process with a check or an answer under way.
A source whose game's ``pyproject.toml`` cannot be read gets one error saying so,
until the file is fixed; a file in no game gets nothing.  Lines end at "\n", "\r\n" and "\r"
(:class:`_Document`).  The server never writes a file: an interrupted rename's journal is left
to the next ``veduta`` command, with one warning per game.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, NamedTuple
from urllib.parse import unquote

import numpy as np
from lsprotocol import types as lsp
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument, Workspace

from veduta import api
from veduta.base.errors import ConfigError
from veduta.base.kinds import is_png
from veduta.source.jsonpos import LINE_END, line_content_end, line_starts

__all__ = ["VedutaLanguageServer", "serve", "DEBOUNCE_MS"]

#: Milliseconds after the last change before a buffer's diagnostics are computed.
DEBOUNCE_MS = 30
#: Characters past which a buffer is large: its diagnostics wait at least :data:`LARGE_DEBOUNCE_MS`
#: after its last change (a check reads the whole text: not once per keystroke), and are computed
#: in a thread, the server answering other requests meanwhile (a 15.6 MB model with errors in
#: every part: a few seconds on a loaded 2-core machine).
LARGE = 1 << 20
LARGE_DEBOUNCE_MS = 1000
#: The source suffixes and the images sources name: what the server asks the client to watch.
WATCHED = "**/*.{vmodel,vtexture,vmaterial,vscene,vprefab,vworld,vmap,png}"
#: The game's configuration, also watched: a change re-reads it for every open buffer of that game.
CONFIG = "**/pyproject.toml"

_SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "note": lsp.DiagnosticSeverity.Information,
}
_ITEM_KIND = {
    "field": lsp.CompletionItemKind.Field,
    "value": lsp.CompletionItemKind.EnumMember,
    "image": lsp.CompletionItemKind.File,
    "biome": lsp.CompletionItemKind.Constant,
    "clip": lsp.CompletionItemKind.Event,
}

log = logging.getLogger("veduta.lsp")


def _internal_error(exc: BaseException) -> list[dict[str, Any]]:
    """The one diagnostic of a check that raised *exc* (a bug of the server's)."""
    return [
        {
            "line": 1,
            "col": 1,
            "end_line": 1,
            "end_col": 2,
            "severity": "error",
            "path": "$",
            "message": f"internal error of veduta lsp, please report: {type(exc).__name__}: {exc}",
        }
    ]


# -- URIs and paths: every conversion between them goes through these three (and the server's
# ``doc`` and ``client_uri``), consistent with pygls's workspace, which files a document under its
# URI percent-decoded (``old%20wall`` and ``old wall``, ``%C3%A9`` and ``é`` are one document), so
# that a source whose path holds a space or a non-ASCII letter is found whatever spelling names it.
def _key(uri: str) -> str:
    """What pygls 2.1.1 (checked against that version) files the document of *uri* under in its
    workspace's ``text_documents``, and what the server keys its own tables by: *uri* decoded."""
    return unquote(uri)


def _path(uri: str) -> str | None:
    """The absolute path of the file a ``file:`` *uri* names (decoded as pygls does: the URI
    parsed first, then its path percent-decoded, so ``%23`` is a "#" of the name); None for
    another scheme."""
    path = to_fs_path(uri)
    return os.path.abspath(path) if path is not None else None


def _uri(path: str) -> str:
    """The ``file:`` URI of *path*, percent-encoded (pygls's spelling, as editors send it)."""
    return from_fs_path(path) or ""


def _wire(name: str) -> str:
    """An lsprotocol attribute name as the protocol spells it (``text_document``: ``textDocument``)."""
    first, *rest = name.rstrip("_").split("_")
    return first + "".join(w[:1].upper() + w[1:] for w in rest)


_JSON_TYPE = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
}


def _json_type(value: Any) -> str:
    return "null" if value is None else _JSON_TYPE.get(type(value), type(value).__name__)


def _what_is_wrong(exc: BaseException | None, value: Any, path: str = "") -> list[str]:
    """What cattrs' structuring error *exc* says is wrong with the message *value*, one
    ``path: problem`` per mistake, the path as the protocol spells it (``params.position.line``)."""
    where = path or "message"
    if exc is None:
        return [f"{where}: cannot be read"]
    subs = getattr(exc, "exceptions", None)
    if subs is None:  # a leaf: the field's own error
        if isinstance(exc, KeyError):
            return [f"{where}: required field missing"]
        return [f"{where}: {exc}"]
    out: list[str] = []
    for sub in subs:
        note = next((n for n in getattr(sub, "__notes__", ()) if hasattr(n, "name") or hasattr(n, "index")), None)
        name, index = getattr(note, "name", None), getattr(note, "index", None)
        if isinstance(name, str):
            if not isinstance(value, dict):  # the container itself is the mistake: say it once
                problem = f"{path}: expected an object, got {_json_type(value)}"
                if problem not in out:
                    out.append(problem)
                continue
            out += _what_is_wrong(sub, value.get(_wire(name)), f"{path}.{_wire(name)}" if path else _wire(name))
        elif isinstance(index, int) and isinstance(value, list) and 0 <= index < len(value):
            out += _what_is_wrong(sub, value[index], f"{path}[{index}]")
        else:
            out += _what_is_wrong(sub, value, path)
    return out


def _units(s: str, encoding: Any) -> int:
    """The code units of *s* in the negotiated position *encoding* (UTF-16 unless told)."""
    if encoding == lsp.PositionEncodingKind.Utf32:
        return len(s)
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(s.encode("utf-8", "surrogateescape"))
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _chars(s: str, units: int, encoding: Any) -> int:
    """How many characters of *s* its first *units* code units in *encoding* cover (all of *s*
    when it has fewer; a position inside a character counts that character)."""
    if encoding == lsp.PositionEncodingKind.Utf32:
        n = units
    elif encoding == lsp.PositionEncodingKind.Utf8:
        n = len(s.encode("utf-8", "surrogateescape")[:units].decode("utf-8", "surrogateescape"))
    else:
        n = len(s.encode("utf-16-le", "surrogatepass")[: 2 * units].decode("utf-16-le", "surrogatepass"))
    return max(0, min(n, len(s)))


class _Lines:
    """Where the lines of one text start (ending at "\n", "\r\n" and "\r": the protocol's, and
    the core's, ``veduta check``'s), and the conversions between the core's positions (1-based
    lines, columns in characters) and the protocol's, through offsets in the text."""

    def __init__(self, text: str, starts: Any = None) -> None:
        self.text = text
        self.starts = line_starts(text) if starts is None else starts

    def content(self, line: int) -> str:
        """Protocol line *line* (0-based) without its line end."""
        return self.text[self.starts[line] : line_content_end(self.text, self.starts, line)]

    def offset(self, pos: lsp.Position, encoding: Any) -> int:
        """The offset of protocol position *pos*: past the end of its line, the line's end;
        past the last line, the text's end (LSP 3.17)."""
        if pos.line >= len(self.starts):
            return len(self.text)
        return int(self.starts[pos.line]) + _chars(self.content(pos.line), pos.character, encoding)

    def position(self, offset: int, encoding: Any) -> lsp.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        end = min(offset, line_content_end(self.text, self.starts, line))
        return lsp.Position(line=line, character=_units(self.text[self.starts[line] : end], encoding))

    def core_offset(self, line: int, col: int) -> int:
        """The offset of the core's 1-based *line* and *col* (within that line)."""
        if line - 1 >= len(self.starts):
            return len(self.text)
        start = self.starts[line - 1]
        return min(start + max(col - 1, 0), line_content_end(self.text, self.starts, line - 1))

    def core_position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


class _Document(TextDocument):
    """pygls's document with the protocol's lines: pygls 2.1.1 (checked against that version)
    splits them with ``str.splitlines``, which also breaks at U+2028, U+2029, U+0085, U+000B,
    U+000C and U+001C-U+001E, so an incremental change after such a character (legal raw in a
    JSON string) lands elsewhere than in the editor's copy.

    Where its lines start is kept from one incremental change to the next (:func:`_restarted`:
    the lines the change touched read again, the others moved), not found again in all of the
    text at each: a change of a 17 MB scene of 274,000 lines took 240-320 ms in the server's loop,
    nearly all of it that."""

    _starts: tuple[str, np.ndarray] | None = None  # (the text, where its lines start)

    @property
    def lines(self) -> tuple[str, ...]:
        text = self.source
        starts = _Lines(text).starts
        return tuple(text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True) if a < b)

    def line_starts(self) -> np.ndarray:
        """Where the lines of its text start (int64)."""
        text = self.source
        if self._starts is None or self._starts[0] is not text:
            self._starts = (text, np.array(line_starts(text), dtype=np.int64))
        return self._starts[1]

    def _apply_incremental_change(self, change: lsp.TextDocumentContentChangePartial) -> None:
        text, starts = self.source, self.line_starts()
        lines, encoding = _Lines(text, starts), self.position_codec.encoding
        start, end = sorted((lines.offset(change.range.start, encoding), lines.offset(change.range.end, encoding)))
        self._source = text[:start] + change.text + text[end:]
        self._starts = (self._source, _restarted(starts, start, end, self._source, len(change.text)))


def _restarted(starts: np.ndarray, start: int, end: int, text: str, inserted: int) -> np.ndarray:
    """Where the lines of *text* start, *text* being a text whose lines started at *starts* with
    its characters *start* to *end* replaced by *inserted* characters: the lines from the one
    before the change's (a "\r" there and a "\n" now after it are one line end) to the first
    that starts after it are read again, the later ones moved; as :func:`line_starts` of *text*."""
    delta = inserted - (end - start)
    first = max(int(np.searchsorted(starts, start, "right")) - 2, 0)
    after = int(np.searchsorted(starts, end, "right"))  # (its line end is past the change: still one)
    stop = int(starts[after]) + delta if after < len(starts) else len(text)
    found = np.fromiter((m.end() for m in LINE_END.finditer(text, int(starts[first]), stop)), dtype=np.int64)
    return np.concatenate((starts[: first + 1], found, starts[after + 1 :] + delta))


class _Workspace(Workspace):
    """pygls's workspace making :class:`_Document` documents."""

    def _create_text_document(
        self, doc_uri: str, source: str | None = None, version: int | None = None, language_id: str | None = None
    ) -> TextDocument:
        return _Document(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


class _Aside:
    """A thread of the server's that runs jobs in turn, each answered in the server's loop as
    an asyncio future. A daemon thread: a job under way (a check or a hover of a large buffer)
    never keeps the process alive once the client says exit (a ``ThreadPoolExecutor``'s threads
    are joined at the interpreter's exit: the process would wait for the job's end)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def run(self, job: Callable[[], Any], then: Callable[[], None] | None = None) -> asyncio.Future:
        """``job()`` in this thread, after the jobs given before it; its result (or exception)
        in the future, in the running loop. A job whose future is cancelled before it starts
        does not run; one cancelled while it runs goes on to its end, and then ``then()`` runs in
        the loop, as after every job that ran (what it read is only safe to touch then)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((loop, future, job, then))
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name=self.name, daemon=True)
            self._thread.start()
        return future

    def _work(self) -> None:
        while True:
            loop, future, job, then = self._jobs.get()
            if future.cancelled():
                continue
            try:
                outcome: tuple[Callable[..., None], Any] = (future.set_result, job())
            except BaseException as exc:  # noqa: BLE001 - handed to the loop, which reports it
                outcome = (future.set_exception, exc)
            try:
                loop.call_soon_threadsafe(_settle, future, *outcome, then)
            except RuntimeError:  # the loop is closed: the server is ending
                return


_Job = tuple[asyncio.AbstractEventLoop, asyncio.Future, Callable[[], Any], Callable[[], None] | None]


def _settle(future: asyncio.Future, setter: Callable[..., None], value: Any, then: Callable[[], None] | None) -> None:
    if then is not None:  # (before the answer's own callbacks: a request after it finds what the job read)
        then()
    if not future.done():  # (not cancelled meanwhile)
        setter(value)


class _Asked(NamedTuple):
    """What a request about a position of a buffer is answered from (:meth:`VedutaLanguageServer.ask`)."""

    ws: Any  #: the editor workspace of its game (a large buffer's: a copy of its own)
    rel: str  #: the buffer's source path there
    lines: _Lines  #: the lines of its text
    line: int  #: the core's position (1-based line, column in characters)
    col: int
    encoding: Any  #: the protocol's position encoding
    client_uri: Callable[[str], str]  #: the URI the client knows a file's URI by


#: What :meth:`_Protocol.structure_message` returns for a message it rejected (and answered).
_REJECTED: Any = object()


class _Protocol(LanguageServerProtocol):
    """pygls's protocol answering requests whose params cannot be read, and without its leak of
    a future per notification.

    pygls 2.1.1 (checked against that version) structures each message in the JSON decoder's
    object hook (:meth:`structure_message`); when that fails it raises out of its read loop,
    which shows "Error in server: Invalid Params" to the user (window/showMessage) and never
    answers the request, though JSON-RPC requires an answer to every request.  Here a request
    gets a JSON-RPC error response on its id (-32602, naming each mistake); a notification
    (which must not be answered) is logged and dropped; neither pops up.

    pygls 2.1.1 (checked against that version) runs a notification whose handler is a generator
    (its own didOpen, didChange, didClose: every keystroke) by storing a future in
    ``_request_futures`` under a new id that nothing removes, as only requests' futures are
    removed when answered: about 2 kB per edit, forever (measured: 62 -> 71 MiB over 4,000
    edits). No public API reaches that table; this is the one place that touches it."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            method = data.get("method")
            what = "; ".join(_what_is_wrong(exc.__cause__, data))
            msg_id = data.get("id")
            if isinstance(method, str) and isinstance(msg_id, int | str) and not isinstance(msg_id, bool):
                log.warning("%s request %r rejected: %s", method, msg_id, what)
                kind = "invalid params" if exc.code == JsonRpcInvalidParams.CODE else "cannot be read"
                error = lsp.ResponseError(code=exc.code, message=f"{method}: {kind}: {what}")
                self._send_response(msg_id, error=error)
            else:
                log.warning("%s message dropped, it cannot be read: %s", method or "unnamed", what)
            return _REJECTED

    def handle_message(self, message: Any) -> None:
        """Hand *message* on, but answer a request before ``initialize`` with -32002 (server not
        initialized) and one after ``shutdown`` with -32600 (invalid request), as LSP 3.17 says:
        pygls 2.1.1 (checked against that version) runs the first (a handler's RuntimeError and
        its traceback as an internal error) and never answers the second. Notifications then
        (but ``exit``) are dropped."""
        if message is _REJECTED:
            return
        method, msg_id = getattr(message, "method", None), getattr(message, "id", None)
        if isinstance(method, str) and method != lsp.EXIT:
            why, code = None, 0
            if self._workspace is None and method != lsp.INITIALIZE:
                why, code = "the server is not initialized (send initialize first)", JsonRpcServerNotInitialized.CODE
            elif self._shutdown:
                why, code = "the server is shut down (only exit is left)", JsonRpcInvalidRequest.CODE
            if why is not None:
                if msg_id is not None:
                    log.warning("%s request %r refused: %s", method, msg_id, why)
                    self._send_response(msg_id, error=lsp.ResponseError(code=code, message=f"{method}: {why}"))
                else:
                    log.warning("%s notification dropped: %s", method, why)
                return
        super().handle_message(message)

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        """Run a handler as pygls does, but a request handler may answer with an asyncio future
        (an answer computed aside, :meth:`VedutaLanguageServer.ask`): the answer is sent when it
        is done, and a ``$/cancelRequest`` meanwhile cancels it (filed in ``_request_futures``,
        where pygls looks for what to cancel).

        pygls 2.1.1 (checked against that version) answers a plain handler at once and starts a
        coroutine handler only once its loop turns, which can be after the messages already read:
        a change sent after the request can be applied first, and a small buffer's answer would
        then be about a text the client did not ask about. So the handlers stay plain, answer a small
        buffer at once as before, and only a large buffer's answer comes later."""

        def answer(future: Any) -> None:
            done = not future.cancelled() and future.exception() is None
            result = future.result() if done else None
            if msg_id is not None and isinstance(result, asyncio.Future):
                self._request_futures[msg_id] = result  # type: ignore[assignment]  # (pygls keeps both kinds)
                result.add_done_callback(callback)
                return
            callback(future)

        super()._execute_handler(msg_id, handler, answer, args, kwargs)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        before = set(self._request_futures)
        super()._handle_notification(method_name, params)
        for key in set(self._request_futures) - before:
            future = self._request_futures[key]
            if future.done():
                del self._request_futures[key]
            else:
                future.add_done_callback(functools.partial(self._forget, key))

    def _forget(self, key: str | int, _future: Any) -> None:
        self._request_futures.pop(key, None)


class VedutaLanguageServer(LanguageServer):
    """The server: one editor workspace per game (found from each document's folder)."""

    def __init__(self) -> None:
        from veduta import __version__

        super().__init__(
            "veduta", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental, protocol_cls=_Protocol
        )
        self.games: dict[str, Any] = {}  # game root -> editor Workspace
        self.debounce = DEBOUNCE_MS / 1000
        # The tables below are keyed by _key(URI); a URI sent to the client is the one it gave.
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._published: dict[str, str] = {}  # documents with diagnostics shown -> the URI they were sent under
        self.unreadable: dict[str, str] = {}  # document -> why its game's configuration cannot be read
        self._lines_of: _Lines | None = None
        self._outside: set[str] = set()  # folders whose documents belong to no game (logged once)
        self._checker = _Aside("veduta-check")  # the thread large buffers are checked in (check_aside)
        self._asker = _Aside("veduta-ask")  # the thread questions about large buffers are answered in (ask)
        self._checking: dict[str, Any] = {}  # URI -> the future of its check there
        self._again: set[str] = set()  # URIs to check again once their check there ends

    # -- documents and games --------------------------------------------------------------------
    def game_of(self, uri: str) -> tuple[Any, str] | tuple[None, None]:
        """The editor workspace of the game *uri* belongs to and its source path there."""
        path = _path(uri)
        self.unreadable.pop(_key(uri), None)
        if path is None:
            return None, None
        for ws in self.games.values():
            rel = ws.source_of(path)
            if rel is not None:
                return ws, rel
        from veduta.base.kinds import BY_SUFFIX
        from veduta.base.project import Project

        try:
            project = Project.find(os.path.dirname(path))
            if not os.path.isdir(project.assets):  # no game here (a package.json, a plain project)
                self.not_a_game(path, f"no game: no assets folder {os.path.abspath(project.assets)}")
                return None, None
            ws = api.editor_workspace(project)
        except ConfigError as exc:  # its pyproject.toml is wrong
            log.warning("%s: %s", path, exc)
            if os.path.splitext(path)[1] in BY_SUFFIX:  # a source of that game, as far as can be told: say so
                self.unreadable[_key(uri)] = f"the game's configuration cannot be read: {exc}"
            return None, None
        except Exception as exc:  # noqa: BLE001 - no game here: say so in the log
            log.warning("%s: %s", path, exc)
            return None, None
        rel = ws.source_of(path)
        if rel is None:
            return None, None
        if os.path.abspath(ws.project.root) not in self.games:
            self.tell_edits_pending(ws)
        self.games.setdefault(os.path.abspath(ws.project.root), ws)
        return self.games[os.path.abspath(ws.project.root)], rel

    def not_a_game(self, path: str, why: str) -> None:
        """Log (once per folder) that the documents of *path*'s folder belong to no game: they
        get no diagnostics and no answers."""
        folder = os.path.dirname(path)
        if folder not in self._outside:
            self._outside.add(folder)
            log.info("%s: %s; its documents are not checked", folder, why)

    def tell_edits_pending(self, ws: Any) -> None:
        """Say (once per game loaded) that an interrupted rename waits in its cache: the server
        never writes, so it leaves the journal to the next ``veduta`` command, which completes it."""
        what = api.edits_pending(ws.project)
        if what is None:
            return
        journal = os.path.abspath(os.path.join(ws.project.cache, "edits.journal"))
        text = (
            f"veduta: an interrupted {what} waits in {journal}: "
            f"some sources may still hold the old text; the next veduta command (veduta cook, doit cook, "
            f"veduta check) completes it (the language server never writes a file)"
        )
        log.warning("%s", text)
        self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=text))

    def uri_of(self, ws: Any, rel: str) -> str:
        return _uri(ws.path_of(rel))

    def doc(self, uri: str) -> TextDocument | None:
        """The open document *uri* names (however it is spelled: encoded or not), or None."""
        return self.workspace.text_documents.get(_key(uri))

    def client_uri(self, uri: str) -> str:
        """The URI the client knows the document *uri* names by: the one it opened it with (or
        last got diagnostics under), else *uri*; what the server sends back for it."""
        doc = self.doc(uri)
        return doc.uri if doc is not None else self._published.get(_key(uri), uri)

    def client_uris(self) -> Callable[[str], str]:
        """:meth:`client_uri` as the documents are now, for another thread: it reads copies of
        the server's tables, taken here (in the loop, which goes on changing them)."""
        known = {**self._published, **{key: doc.uri for key, doc in self.workspace.text_documents.items()}}
        return lambda uri: known.get(_key(uri), uri)

    def schedule(self, uris: list[str], delay: float | None = None) -> None:
        """Publish the diagnostics of *uris* after *delay* seconds (the debounce), unless they
        change again first."""
        loop = asyncio.get_running_loop()
        for uri in uris:
            old = self._pending.pop(_key(uri), None)
            if old is not None:
                old.cancel()
            wait = self.debounce if delay is None else delay
            doc = self.doc(uri)
            if doc is not None and len(doc.source) > LARGE:  # a large buffer: once the typing pauses
                wait = max(wait, LARGE_DEBOUNCE_MS / 1000)
            self._pending[_key(uri)] = loop.call_later(wait, self.publish, uri)

    def publish(self, uri: str) -> None:
        self._pending.pop(_key(uri), None)
        ws, rel = self.game_of(uri)
        doc = self.doc(uri)
        if doc is None:
            return
        uri = doc.uri
        if ws is None:
            why = self.unreadable.get(_key(uri))
            if why is None:
                self.clear(uri)
                return
            self._published[_key(uri)] = uri
            start = lsp.Position(line=0, character=0)
            first = self.position(doc.source, 1, 2) if doc.source[:1] not in ("", "\r", "\n") else start
            diag = lsp.Diagnostic(
                range=lsp.Range(start=start, end=first),
                severity=lsp.DiagnosticSeverity.Error,
                source="veduta",
                message=why,
            )
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[diag], version=doc.version)
            )
            return
        if rel is not None and len(doc.source) > LARGE:  # checked in a thread: the server answers meanwhile
            self.check_aside(uri, ws, rel)
            return
        try:
            found = ws.diagnostics(rel)
        except Exception as exc:  # noqa: BLE001 - a bug must not end the editing session
            log.exception("diagnostics of %s", uri)
            found = _internal_error(exc)
        self.send(uri, doc.source, doc.version, found)

    def send(self, uri: str, text: str, version: int | None, found: list[dict[str, Any]]) -> None:
        """Publish the diagnostics *found* (the editor workspace's) of *uri*'s *text*."""
        diags = [
            lsp.Diagnostic(
                range=self.range(text, d),
                severity=_SEVERITY.get(d["severity"]),
                code=d.get("code"),
                source="veduta",
                message=f"{d['path']}: {d['message']}",
            )
            for d in found
        ]
        uri = self.client_uri(uri)
        self._published[_key(uri)] = uri
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version)
        )

    def check_aside(self, uri: str, ws: Any, rel: str) -> None:
        """Check the large buffer *uri* in the checking thread (its text as it is now), and
        publish what it finds when it is done, unless the buffer changed meanwhile: a newer
        text is checked next (one check of a buffer at a time) and the older result dropped."""
        if _key(uri) in self._checking:
            self._again.add(_key(uri))
            return
        doc = self.doc(uri)
        if doc is None:
            return
        try:
            job = ws.check_job(rel)
        except Exception as exc:  # noqa: BLE001 - a bug must not end the editing session
            log.exception("diagnostics of %s", uri)
            self.send(uri, doc.source, doc.version, _internal_error(exc))
            return
        if job is None:
            self.send(uri, doc.source, doc.version, [])
            return
        future = self._checker.run(job)
        self._checking[_key(uri)] = future
        future.add_done_callback(functools.partial(self._checked, uri, ws, rel, doc.version, doc.source))

    def _checked(self, uri: str, ws: Any, rel: str, version: int | None, text: str, future: Any) -> None:
        """A check of :meth:`check_aside` ended (in the server's loop): publish it, or drop it
        for a newer one."""
        self._checking.pop(_key(uri), None)
        again = _key(uri) in self._again
        self._again.discard(_key(uri))
        doc = self.doc(uri)
        if doc is None or doc.version != version or doc.source is not text or again:
            if doc is not None and again:  # (a buffer changed meanwhile whose wait is over)
                self.publish(uri)
            return  # (a change whose wait is not over publishes when it is)
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            log.error("diagnostics of %s", uri, exc_info=exc)
            found = _internal_error(exc)
        else:
            found, deps = future.result()
            ws.checked(rel, deps)
        self.send(uri, text, version, found)

    def sync(self, uri: str) -> None:
        """Give the buffer of *uri* to its game (again) and publish its diagnostics soon: a
        buffer whose game could not be read when it was opened joins it once it can."""
        ws, rel = self.game_of(uri)
        doc = self.doc(uri)
        if ws is None or doc is None:
            if _key(uri) in self.unreadable or _key(uri) in self._published:  # say so, or take it back
                self.schedule([uri])
            return
        others = ws.change(rel, doc.source)
        self.schedule([uri, *[self.uri_of(ws, r) for r in others]])

    def clear(self, uri: str) -> None:
        sent = self._published.pop(_key(uri), None)
        if sent is not None:
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=sent, diagnostics=[]))

    # -- positions -------------------------------------------------------------------------------
    def _lines(self, text: str) -> _Lines:
        """*text*'s lines, kept for the last text asked about (a buffer's diagnostics convert many
        positions of one text)."""
        if self._lines_of is None or self._lines_of.text is not text:
            starts = None  # (an open document's kept line index, when *text* is its text)
            for doc in self.workspace.text_documents.values():
                kept = getattr(doc, "_starts", None)
                if kept is not None and kept[0] is text:
                    starts = kept[1]
                    break
            self._lines_of = _Lines(text, starts)
        return self._lines_of

    def position(self, text: str, line: int, col: int) -> lsp.Position:
        """The core's (line, column) in *text* as a protocol position (its lines and encoding)."""
        lines = self._lines(text)
        return lines.position(lines.core_offset(line, col), self.workspace.position_encoding)

    def range(self, text: str, r: dict[str, int]) -> lsp.Range:
        return _range(self._lines(text), r, self.workspace.position_encoding)

    def ask(self, uri: str, pos: lsp.Position, answer: Callable[[_Asked], Any]) -> Any:
        """``answer(asked)`` about position *pos* of buffer *uri* (:class:`_Asked`: its game's
        workspace, its source path, the lines of its text, the core's position, the position
        encoding and the client's URIs): None for a buffer in no game. A buffer past
        :data:`LARGE` characters is answered in a thread of the server's (every answer reads all
        of its text), by a copy of its workspace as it is now
        (:meth:`~veduta.tools.editor.Workspace.detached`) and of the client's URIs
        (:meth:`client_uris`), the server answering other requests meanwhile: then an asyncio
        future of the answer (see :meth:`_Protocol._execute_handler`). That thread reads nothing
        the loop changes."""
        ws, rel = self.game_of(uri)
        doc = self.doc(uri)
        if ws is None or rel is None or doc is None:
            return None
        text, encoding = doc.source, self.workspace.position_encoding
        if len(text) <= LARGE:
            lines = self._lines(text)
            line, col = lines.core_position(lines.offset(pos, encoding))
            return answer(_Asked(ws, rel, lines, line, col, encoding, self.client_uri))
        aside, client_uri = ws.detached(), self.client_uris()

        def job() -> Any:
            lines = _Lines(text)
            line, col = lines.core_position(lines.offset(pos, encoding))
            return answer(_Asked(aside, rel, lines, line, col, encoding, client_uri))

        return self._asker.run(job, then=functools.partial(ws.adopt, aside))  # (once the job has ended)


server = VedutaLanguageServer()


@server.feature(lsp.INITIALIZE)
def initialize(ls: VedutaLanguageServer, params: lsp.InitializeParams) -> None:
    ls.workspace.__class__ = _Workspace  # just made by pygls, no document yet: ours count lines as LSP does
    opts = params.initialization_options
    if isinstance(opts, dict) and isinstance(opts.get("debounce_ms"), int | float) and opts["debounce_ms"] >= 0:
        ls.debounce = min(float(opts["debounce_ms"]), 5000.0) / 1000


@server.feature(lsp.INITIALIZED)
def initialized(ls: VedutaLanguageServer, params: lsp.InitializedParams) -> None:
    caps = ls.client_capabilities.workspace
    watch = caps.did_change_watched_files if caps is not None else None
    if watch is not None and watch.dynamic_registration:
        reg = lsp.Registration(
            id="veduta-sources",
            method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                watchers=[lsp.FileSystemWatcher(glob_pattern=WATCHED), lsp.FileSystemWatcher(glob_pattern=CONFIG)]
            ),
        )
        ls.client_register_capability(lsp.RegistrationParams(registrations=[reg]))
    api.editor_warm_up()  # the compilers' imports, now rather than on the first keystroke


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: VedutaLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    ws, rel = ls.game_of(uri)
    if ws is None:
        if _key(uri) in ls.unreadable:  # its game's configuration cannot be read: say so
            ls.schedule([uri], 0)
        return
    ws.files_changed()  # what changed on disk while nothing was open or watched
    doc = ls.doc(uri)
    if doc is None:
        return
    others = ws.open(rel, doc.source)
    ls.schedule([uri], 0)
    ls.schedule([ls.uri_of(ws, r) for r in others])


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: VedutaLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.sync(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: VedutaLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    ws, rel = ls.game_of(uri)
    if ws is None or rel not in ws.buffers:  # its game's configuration could not be read: again
        ls.sync(uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: VedutaLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    pending = ls._pending.pop(_key(uri), None)
    if pending is not None:
        pending.cancel()
    ws, rel = ls.game_of(uri)
    ls.clear(uri)
    ls.unreadable.pop(_key(uri), None)
    if ws is not None:
        ls.schedule([ls.uri_of(ws, r) for r in ws.close(rel)])


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: VedutaLanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    by_game: dict[int, tuple[Any, list[str]]] = {}
    configs = sorted(
        {os.path.dirname(p) for c in params.changes if (p := _path(c.uri)) and os.path.basename(p) == "pyproject.toml"}
    )
    for root in configs:  # a game's configuration changed: its open buffers read it again
        ls.games.pop(root, None)
        for uri in sorted(doc.uri for doc in ls.workspace.text_documents.values()):
            path = _path(uri)
            if path is not None and path.startswith(root + os.sep):
                ls.sync(uri)
    for change in params.changes:
        path = _path(change.uri)
        for ws in ls.games.values():
            rel = ws.source_of(path) if path else None
            if rel is None and path and is_png(path) and path.startswith(ws.assets + os.sep):
                rel = os.path.relpath(path, ws.assets).replace(os.sep, "/")
            if rel is not None:
                by_game.setdefault(id(ws), (ws, []))[1].append(rel)
    for ws, rels in by_game.values():
        ls.schedule([ls.uri_of(ws, r) for r in ws.files_changed(rels)])


def _location(asked: _Asked, r: dict[str, Any], seen: dict[str, _Lines] | None = None) -> lsp.Location:
    """The core's place *r* (``{"file", "line", "col", "end_line", "end_col"}``) in a source of
    the game *asked* is about as a protocol location (its text's lines: its buffer's, else its
    file's; kept in *seen*, by path), under the URI the client knows its file by."""
    path, ws = r["file"], asked.ws
    lines = (seen or {}).get(path)
    if lines is None:
        rel = ws.source_of(path)
        text = ws.text(rel) if rel is not None else None
        if text is None:
            start = lsp.Position(line=0, character=0)
            return lsp.Location(uri=asked.client_uri(_uri(path)), range=lsp.Range(start=start, end=start))
        lines = _Lines(text)
        if seen is not None:
            seen[path] = lines
    return lsp.Location(uri=asked.client_uri(_uri(path)), range=_range(lines, r, asked.encoding))


def _range(lines: _Lines, r: dict[str, int], encoding: Any) -> lsp.Range:
    """The core's range *r* in the text of *lines* as a protocol range."""
    return lsp.Range(
        start=lines.position(lines.core_offset(r["line"], r["col"]), encoding),
        end=lines.position(lines.core_offset(r["end_line"], r["end_col"]), encoding),
    )


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=['"']))
def completion(ls: VedutaLanguageServer, params: lsp.CompletionParams) -> Any:
    def answer(asked: _Asked) -> lsp.CompletionList:
        found = asked.ws.completion(asked.rel, asked.line, asked.col)
        if found["range"] is None:
            return lsp.CompletionList(is_incomplete=False, items=[])
        rng = _range(asked.lines, found["range"], asked.encoding)
        items = []
        for i, it in enumerate(found["items"]):
            doc = (
                lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=it["documentation"])
                if it["documentation"]
                else None
            )
            items.append(
                lsp.CompletionItem(
                    label=it["label"],
                    kind=_ITEM_KIND.get(it["kind"], lsp.CompletionItemKind.Reference),
                    detail=it["detail"] or None,
                    documentation=doc,
                    filter_text=it["insert"],
                    sort_text=f"{i:05d}",
                    text_edit=lsp.TextEdit(range=rng, new_text=it["insert"]),
                )
            )
        return lsp.CompletionList(is_incomplete=False, items=items)

    return ls.ask(params.text_document.uri, params.position, answer)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: VedutaLanguageServer, params: lsp.HoverParams) -> Any:
    def answer(asked: _Asked) -> lsp.Hover | None:
        found = asked.ws.hover(asked.rel, asked.line, asked.col)
        if found is None:
            return None
        return lsp.Hover(
            contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=found["text"]),
            range=_range(asked.lines, found["range"], asked.encoding),
        )

    return ls.ask(params.text_document.uri, params.position, answer)


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: VedutaLanguageServer, params: lsp.DefinitionParams) -> Any:
    def answer(asked: _Asked) -> lsp.Location | None:
        found = asked.ws.definition(asked.rel, asked.line, asked.col)
        return _location(asked, found) if found is not None else None

    return ls.ask(params.text_document.uri, params.position, answer)


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def references(ls: VedutaLanguageServer, params: lsp.ReferenceParams) -> Any:
    declaration = params.context.include_declaration

    def answer(asked: _Asked) -> list[lsp.Location]:
        seen: dict[str, _Lines] = {}  # (many references in one file: its lines once)
        return [_location(asked, r, seen) for r in asked.ws.references(asked.rel, asked.line, asked.col, declaration)]

    return ls.ask(params.text_document.uri, params.position, answer)


def serve(log_file: str | None = None) -> int:
    """Serve over stdin and stdout until the client says exit (or closes stdin): the exit status,
    0 when a shutdown request came first, else 1 (LSP 3.17, "exit")."""
    if log_file:
        logging.basicConfig(filename=log_file, level=logging.INFO)
    server.start_io()
    return 0 if server.protocol._shutdown else 1
