"""Make the sample PNGs next to this file (run once; the PNGs are committed).

    .venv/bin/python assets/textures/make_sample_pngs.py

crate.png (32 x 32, planks), hero.png (4 x 2 frames of 16 x 16: idle, jump, walk),
tiles.png (4 x 2 tiles of 16 x 16: grass x 3, dirt, stone, sand, flowers, path) and
water.png (6 x 3 autotile tiles of 16 x 16: an island on the left, a lake on the right).
Seeded and drawn with numpy, so running it again writes the same files.
"""

from __future__ import annotations

import os

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name: str, rgba: np.ndarray) -> None:
    Image.fromarray(rgba.astype(np.uint8), "RGBA").save(os.path.join(HERE, name), optimize=False)


def noisy(rng, h, w, rgb, spread):
    base = np.array(rgb, np.int16)[None, None, :]
    n = rng.integers(-spread, spread + 1, (h, w, 1), dtype=np.int16)
    out = np.empty((h, w, 4), np.int16)
    out[..., :3] = np.clip(base + n, 0, 255)
    out[..., 3] = 255
    return out


def crate(rng) -> np.ndarray:
    img = noisy(rng, 32, 32, (150, 105, 60), 10)
    y, x = np.mgrid[0:32, 0:32]
    img[(y % 8 == 0)] = (110, 75, 40, 255)  # plank gaps
    frame = (x < 3) | (x > 28) | (y < 3) | (y > 28)
    img[frame] = (95, 62, 32, 255)
    brace = (np.abs(x - y) <= 1) & ~frame
    img[brace] = (120, 82, 45, 255)
    return img


def hero(rng) -> np.ndarray:
    sheet = np.zeros((32, 64, 4), np.int16)
    y, x = np.mgrid[0:16, 0:16]
    for f in range(8):
        cell = np.zeros((16, 16, 4), np.int16)
        bob = f % 2 if f < 2 else 0
        lift = 2 if f in (2, 3) else 0
        top = 2 + bob - lift + (1 if f == 3 else 0)
        head = (x - 8) ** 2 + (y - (top + 3)) ** 2 <= 9
        body = (x >= 5) & (x <= 10) & (y >= top + 6) & (y <= top + 10)
        step = [0, 0, 0, 0, -2, 0, 2, 0][f]
        leg_l = (np.abs(x - (6 + step)) <= 1) & (y > top + 10) & (y <= min(15, top + 13))
        leg_r = (np.abs(x - (9 - step)) <= 1) & (y > top + 10) & (y <= min(15, top + 13))
        cell[head] = (240, 200, 160, 255)
        cell[body] = (60, 110, 200, 255)
        cell[leg_l | leg_r] = (50, 50, 70, 255)
        r, c = divmod(f, 4)
        sheet[r * 16:(r + 1) * 16, c * 16:(c + 1) * 16] = cell
    return sheet


def tiles(rng) -> np.ndarray:
    colours = [(70, 150, 60), (78, 158, 64), (64, 142, 56), (130, 95, 60),
               (128, 128, 132), (214, 196, 140), (70, 150, 60), (170, 140, 100)]
    sheet = np.zeros((32, 64, 4), np.int16)
    for t, rgb in enumerate(colours):
        tile = noisy(rng, 16, 16, rgb, 12)
        if t == 6:  # flowers on grass
            pts = rng.integers(1, 15, (6, 2))
            tile[pts[:, 0], pts[:, 1]] = (230, 60, 80, 255)
        r, c = divmod(t, 4)
        sheet[r * 16:(r + 1) * 16, c * 16:(c + 1) * 16] = tile
    return sheet


def water(rng) -> np.ndarray:
    sheet = np.zeros((48, 96, 4), np.int16)
    sea = noisy(rng, 48, 48, (50, 110, 190), 8)
    sand = noisy(rng, 48, 48, (214, 196, 140), 8)
    y, x = np.mgrid[0:48, 0:48]
    inner = (x >= 6) & (x < 42) & (y >= 6) & (y < 42)
    rim = (x >= 3) & (x < 45) & (y >= 3) & (y < 45) & ~inner
    island = np.where(inner[..., None], sand, sea)
    island[rim] = (240, 240, 250, 255)  # foam around the island
    lake = np.where(inner[..., None], sea, sand)
    lake[rim] = (240, 240, 250, 255)
    sheet[:, :48] = island
    sheet[:, 48:] = lake
    return sheet


def main() -> None:
    rng = np.random.default_rng(20240601)
    save("crate.png", crate(rng))
    save("hero.png", hero(rng))
    save("tiles.png", tiles(rng))
    save("water.png", water(rng))


if __name__ == "__main__":
    main()
