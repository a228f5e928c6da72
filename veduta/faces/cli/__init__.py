"""The ``veduta`` command: :func:`run`, which imports :func:`veduta.faces.cli.main.main` (one
module per command family) and runs it.

This module imports nothing (``sys`` is loaded before any code runs): Ctrl-C at any moment from
here on, the imports of the command's modules included, ends the command with one line,
``veduta: interrupted``, and exit status 130, never a KeyboardInterrupt traceback. (Before
it, in Python's own start, Ctrl-C is Python's.)
"""

import sys


def run() -> None:
    """The ``veduta`` console script and ``python -m veduta``: the command's exit status."""
    try:
        from veduta.faces.cli.main import main

        status = main()
    except KeyboardInterrupt:  # (main says so itself once it runs: this is Ctrl-C in the imports)
        from veduta.faces.cli.start import interrupted

        status = interrupted()
    sys.exit(status)
