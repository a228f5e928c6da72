"""The faces of the toolchain: thin layers over veduta.api (command line, MCP, LSP)."""
