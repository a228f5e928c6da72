"""``veduta mcp``: the toolchain's tools for agents, over the Model Context Protocol.

The server (:mod:`veduta.faces.mcp.server`) is a thin face over :mod:`veduta.api`: every tool calls
the same function as its CLI command and returns the same data as that command's ``--json``.
Importing this package imports nothing of the SDK; only :func:`veduta.faces.mcp.server.serve` does.
"""
