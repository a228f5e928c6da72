"""``python -m veduta``: the ``veduta`` command."""

import sys

from veduta.cli import main

sys.exit(main())
