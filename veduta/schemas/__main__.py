"""``python -m veduta.schemas``: regenerate the schema files shipped in this package (run it
after changing a field declaration or a field table in docs/formats; a test fails until then)."""

from __future__ import annotations

import os

from veduta.schemas import write

if __name__ == "__main__":
    for path in write(os.path.dirname(os.path.abspath(__file__))):
        print(path)
