"""``veduta mcp``'s stdio transport: the MCP SDK's, with a guard in front that answers every request.

The SDK's stdio transport (``mcp`` 2.3.0, the newest release when this was written) hands a line
it cannot parse or validate to its dispatcher as an exception, which logs it at debug level and
drops it: a request holding a lone UTF-16 surrogate escape (``"\\ud800"``) in any string, or a
``tools/call`` with array params, was never answered, and the client waited for ever. Fixes were
proposed upstream (modelcontextprotocol/python-sdk pull requests 2766, closed unmerged, and 2852,
open), but none is released, so there is no fixed version to pin. Hence this guard, in front of
the transport rather than inside it: it reads the server's stdin itself, lets through every line
the SDK's own message adapter accepts, and answers a line it rejects, when that line is a request
whose id can be read, with a JSON-RPC error (``-32700`` for text the SDK cannot parse, ``-32602``
for params that are not an object, ``-32600`` for any other message that is not a valid request),
sent through the SDK's own write stream so replies never interleave. A line with no readable id
(not JSON at all, a notification) gets no reply, as JSON-RPC allows and so that a peer writing
garbage cannot start a storm of replies; it is one line on stderr. Nothing echoes a whole line.

Two SDK names are used beside its public API (STYLE 12), both checked against ``mcp`` 2.3.0:
``MCPServer._lowlevel_server`` (what ``MCPServer.run_stdio_async`` runs; no public accessor) and
``stdio_server(stdin=...)``'s contract that it iterates *stdin* for lines.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter

from veduta.base.errors import clip


def rejection(line: str) -> list[tuple[Any, ErrorData]] | None:
    """Why the SDK would drop *line*: ``[(request id, the error to answer)]`` (several for a
    batch), an id None when the line is no request with a readable id (nothing to answer); None
    when the SDK takes the line."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError: the SDK would drop the line
        errors: list[dict[str, Any]] = list(getattr(exc, "errors", list)())
    first = errors[0] if errors else {}
    try:
        message = json.loads(line)  # Python's parser takes what pydantic's refuses (lone surrogates)
    except (ValueError, RecursionError):
        return [(None, ErrorData(code=PARSE_ERROR, message=f"Parse error: {clip(str(first.get('msg', '')), 200)}"))]
    if isinstance(message, list):  # a JSON-RPC batch, which MCP no longer has (since 2025-06-18)
        batch = ErrorData(
            code=INVALID_REQUEST,
            message="Invalid Request: a batch (an array of messages); send each message on a line of its own",
        )
        return [(i, batch) for i in map(_id_of, message) if i is not None] or [(None, batch)]
    rid = _id_of(message)
    if first.get("type") == "json_invalid":
        reason = str(first.get("msg", ""))
        if not _utf8(message):
            reason = "a string holds a lone UTF-16 surrogate escape (such as \\ud800), which is no character"
        return [(rid, ErrorData(code=PARSE_ERROR, message=f"Parse error: {clip(reason, 200)}"))]
    if isinstance(message, dict) and "params" in message and not isinstance(message["params"], dict):
        found = type(message["params"]).__name__.replace("list", "an array").replace("str", "a string")
        return [
            (
                rid,
                ErrorData(
                    code=INVALID_PARAMS,
                    message=f"Invalid params: params must be an object (named arguments), not {found}",
                ),
            )
        ]
    where = clip(".".join(str(p) for p in first.get("loc", ())), 80)
    why = clip(str(first.get("msg", "not a JSON-RPC request")), 200)
    return [(rid, ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {where}: {why}"))]


def _id_of(message: Any) -> Any:
    """The id of a request, or None: a notification (no id), a response, or an id no reply could
    carry (a bool, a float, a string that is no text)."""
    rid = message.get("id") if isinstance(message, dict) and "method" in message else None
    return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) and _utf8(rid) else None


def _utf8(value: Any) -> bool:
    """Whether *value* (a str, or what json.loads made of a line) can be written as UTF-8."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


class GuardedLines:
    """The lines of the server's stdin for the SDK's transport: those it takes pass, and each
    one it would drop is answered (:func:`rejection`) through the SDK's write stream."""

    def __init__(self, stream: io.TextIOWrapper):
        self._lines = anyio.wrap_file(stream)
        self._write = None
        self._ready = anyio.Event()

    def attach(self, write_stream) -> None:
        """The SDK's write stream, where answers to rejected lines go (once the transport runs)."""
        self._write = write_stream
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            if not line.strip():
                continue
            found = rejection(line)
            if found is None:
                yield line
                continue
            for rid, error in found:
                if rid is None:
                    print(
                        f"veduta mcp: ignored a line of {len(line):,} characters that is no request with an id: "
                        f"{error.message}",
                        file=sys.stderr,
                        flush=True,
                    )
                    continue
                await self._ready.wait()
                assert self._write is not None
                await self._write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=rid, error=error)))
                print(
                    f"veduta mcp: answered request {clip(str(rid), 40)} with an error: {error.message}",
                    file=sys.stderr,
                    flush=True,
                )


def _claim_stdin() -> tuple[io.TextIOWrapper, int]:
    """The server's stdin (the MCP wire) as a text stream on a private descriptor, and fd 0
    pointed at the null device, as the SDK does when it claims stdin itself: a handler or a
    child process that reads stdin reads nothing, not the client's messages."""
    wire = os.dup(0)
    os.set_inheritable(wire, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    stream = io.TextIOWrapper(os.fdopen(wire, "rb", closefd=False), encoding="utf-8", errors="replace")
    return stream, wire


async def run_stdio(server) -> None:
    """Serve *server* (an ``MCPServer``) over stdio until the client closes stdin, every request
    answered (see the module doc)."""
    stream, wire = _claim_stdin()
    lines = GuardedLines(stream)
    low = server._lowlevel_server  # mcp 2.3.0: what MCPServer.run_stdio_async runs (no public name)
    try:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.attach(write_stream)
            await low.run(read_stream, write_stream, low.create_initialization_options())
    finally:
        os.dup2(wire, 0)
        os.close(wire)
