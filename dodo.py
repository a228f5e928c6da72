from veduta.dodo import *  # noqa: F401,F403 - the one line a game repo needs
