"""Files made from cooked assets for tools outside the engine: binary glTF 2.0 of models and world
chunks (``veduta export gltf``) and preview sheets of models (``veduta preview model``).

Everything here reads cooked ``.vda`` files (cooking what is stale first, as ``veduta world
query`` does) and is never imported on the cook's path. See ``docs/export.md``.
"""

#: ``preview model --size``: pixels per view, default and range
PREVIEW_SIZE = 160
PREVIEW_MIN_SIZE, PREVIEW_MAX_SIZE = 32, 1024
