"""The ``veduta`` command: :func:`veduta.faces.cli.main.main`, one module per command family."""
