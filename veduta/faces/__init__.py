"""The faces: thin converters between a protocol and :mod:`veduta.api` (CLI, MCP, LSP), side by side."""
