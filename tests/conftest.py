from __future__ import annotations

import pytest

from tests.gamerepo import Game, make_game


@pytest.fixture
def game(tmp_path) -> Game:
    """A game repo with four models (crate, props/barrel, tree with its lod tree_far) and a one-line dodo.py."""
    return make_game(tmp_path)
