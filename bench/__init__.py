"""Benchmarks of veduta cook (``make bench``): outside the package, so users install the toolchain,
not its measuring bench."""
