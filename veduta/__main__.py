"""``python -m veduta``: the ``veduta`` command."""

import sys

from veduta.faces.cli.main import main

sys.exit(main())
