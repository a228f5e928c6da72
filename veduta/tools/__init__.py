"""The tools beside the cook: one module per tool or family, each a core function returning
plain data (``veduta/api.py`` is their one door; the CLI, MCP and LSP faces are thin)."""
