"""veduta cook: the asset compiler of the Veduta engine."""

from __future__ import annotations

#: The compiler version recorded in every META chunk (asset.CompilerVersion), exactly as the
#: spec writes it for this feature set (container-vda.md: "veduta-asset/0.8.0 since map
#: tilesets"); the engine takes a file with another version for foreign or stale.  Changing it
#: makes every cooked asset stale.
COMPILER_VERSION = "veduta-asset/0.8.0"

#: veduta's own rules on top of the spec's version: bump it when the cook comes to write or report
#: something else for the same sources (a compiler fix, a new warning, another staleness rule).
#: It lives in the cook's state (the stat cache, and the folder of the local store's and the
#: shared cache's entries: cache/store/<salt>/...), never in META: the sources an earlier
#: toolchain cooked are then cooked again, never restored (docs/cooking.md).
TOOLCHAIN_SALT = "veduta-cook-rules/2"

#: What the cook's state is kept for: the spec's compiler version and veduta's own rules.
TOOLCHAIN = f"{COMPILER_VERSION}+{TOOLCHAIN_SALT}"

#: The distribution whose installed metadata holds the package version (pyproject.toml).
DISTRIBUTION = "veduta-cook"


def __getattr__(name: str) -> str:
    # ``__version__`` is read from the installed metadata (the one place it is written is
    # pyproject.toml), lazily: importlib.metadata is not worth importing on the cook's path.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(DISTRIBUTION)
        except PackageNotFoundError:  # run from a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
