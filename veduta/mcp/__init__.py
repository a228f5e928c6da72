"""``veduta mcp``: the toolchain's tools over the Model Context Protocol (stdio).

The server lives in :mod:`veduta.mcp.server`, which imports the MCP SDK; this package's
``__init__`` imports nothing, so registering the ``mcp`` sub-command costs the CLI nothing.
"""
