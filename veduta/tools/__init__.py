"""The tools: one module per tool or family, each a core function that takes a Project and plain
arguments and returns plain data (exposed by :mod:`veduta.api`). None is imported on the cook's path."""
