"""How a ``veduta`` command ends when Ctrl-C stops it (:func:`interrupted`), and the test hook
that holds its start at a known phase (:func:`startup_pause`). Imports nothing: it is loaded
before the command's modules (veduta/faces/cli/__init__.py)."""

import sys

#: What a ``veduta`` command stopped by Ctrl-C says on stderr (a cook says its own line:
#: :data:`veduta.cook.tasks.INTERRUPTED`).
INTERRUPTED = "veduta: interrupted"

#: test hook: ``VEDUTA_TEST_PAUSE_START=PHASE`` makes the command say ``start: PHASE`` on stderr
#: at that phase of its start and wait there (a minute), so that a test sends Ctrl-C at a known
#: moment: ``import`` (in the import of veduta.faces.cli.main, whose imports are done),
#: ``edits`` (the command line read, before an interrupted rename is completed), ``command``
#: (before the command runs)
PAUSE_START = "VEDUTA_TEST_PAUSE_START"


def interrupted() -> int:
    """Say that Ctrl-C stopped the command (one line on stderr); its exit status, 130."""
    try:
        sys.stderr.write(f"{INTERRUPTED}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # no stderr to say it on: the status says it
        pass
    return 130


def startup_pause(phase: str) -> None:
    """The :data:`PAUSE_START` test hook at *phase*; nothing when it is not set to *phase*."""
    import os

    if os.environ.get(PAUSE_START) != phase:
        return
    import time

    sys.stderr.write(f"start: {phase}\n")
    sys.stderr.flush()
    time.sleep(60)
