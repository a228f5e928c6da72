from __future__ import annotations

import pytest

from tests.world.worlds import example_prefabs, example_world


@pytest.fixture
def example():
    """A generator of the spec's example world."""
    from veduta.world import Generator

    return Generator(example_world(), example_prefabs())
