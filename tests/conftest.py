from __future__ import annotations

import os
import tempfile

import pytest

from tests.gamerepo import Game, make_game

# the user's journal key (veduta.cook.journal._user_key) of every test and the processes it starts:
# one folder of the run's own, not the home folder of whoever runs the tests
os.environ.setdefault("VEDUTA_STATE_DIR", tempfile.mkdtemp(prefix="veduta-state-"))


@pytest.fixture
def game(tmp_path) -> Game:
    """A game repo with four models (crate, props/barrel, tree with its lod tree_far) and a one-line dodo.py."""
    return make_game(tmp_path)


@pytest.fixture
def here(game: Game):
    """The game's root as the current folder (as the MCP server works), restored afterwards: its Project."""
    import os

    from veduta.base.project import Project

    old = os.getcwd()
    os.chdir(game.root)
    try:
        yield Project.at(".")
    finally:
        os.chdir(old)


@pytest.fixture
def s3(monkeypatch) -> dict:
    """A fresh bucket on a real S3-protocol server on 127.0.0.1 (tests/s3server.py), and this
    process's environment pointed at it: ``{"env": AWS_* variables, "bucket": name}``."""
    from tests.s3server import aws_env, new_bucket, server_url

    env = aws_env(server_url())
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("VEDUTA_CACHE_URL", raising=False)
    monkeypatch.delenv("VEDUTA_CACHE_WRITE", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return {"env": env, "bucket": new_bucket(env)}
