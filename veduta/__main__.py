"""``python -m veduta``: the ``veduta`` command."""

from veduta.faces.cli import run

run()
