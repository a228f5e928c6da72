"""``python -m bench``: the benchmarks of ``make bench`` (see :mod:`bench.cook`)."""

import sys

from bench.cook import main

sys.exit(main())
