"""``veduta lsp``: the language server (needs the ``lsp`` extra: pygls and lsprotocol)."""
