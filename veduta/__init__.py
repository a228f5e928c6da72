"""veduta cook: the asset compiler of the Veduta engine."""

from __future__ import annotations

#: The compiler version recorded in every META chunk (asset.CompilerVersion).
#: Changing it makes every cooked asset stale.
COMPILER_VERSION = "veduta-asset/0.8.1"

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
