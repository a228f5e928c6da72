"""A small z-buffer rasteriser over numpy, for preview sheets of cooked models.

Orthographic views only. Each triangle fills the pixels whose centres lie inside it (edge
functions over its screen bounding box, one triangle at a time: previews have hundreds to a few
thousand triangles, so a Python loop over triangles with numpy inside costs well under a second).
Depth is interpolated linearly (exact for an orthographic view), normals with the same barycentric
weights, then renormalised. Shading is Lambert with a fixed light in view space plus ambient, in
linear RGB, written as sRGB bytes. Rendering happens at ``SUPERSAMPLE`` times the size and is
averaged down, for smooth edges. Everything is float64 numpy arithmetic in a fixed order, so the
same inputs give the same pixels on a given machine and numpy.
"""

from __future__ import annotations

import math

import numpy as np

SUPERSAMPLE = 2
AMBIENT = 0.32
#: direction towards the light in view space (up, left and towards the viewer)
LIGHT = np.array([-0.35, 0.75, 0.56]) / np.linalg.norm([-0.35, 0.75, 0.56])


def rot_x(deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, 0, s], [0, 1.0, 0], [-s, 0, c]])


#: world -> view rotations; the viewer looks down -Z of the view space, +Y up on screen
VIEWS: dict[str, np.ndarray] = {
    "front": np.eye(3),  # from +Z
    "side": np.array([[0.0, 0, -1], [0, 1, 0], [1, 0, 0]]),  # from +X
    "top": np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]),  # from +Y, -Z up on the image
    "three-quarter": rot_x(30) @ rot_y(-45),  # from +X+Z, 30 degrees above
}


def linear_to_srgb(lin: np.ndarray) -> np.ndarray:
    lin = np.clip(lin, 0.0, 1.0)
    s = np.where(lin <= 0.0031308, lin * 12.92, 1.055 * np.power(lin, 1 / 2.4) - 0.055)
    return np.round(s * 255.0).astype(np.uint8)


def render(positions: np.ndarray, normals: np.ndarray, colors: np.ndarray, two_sided: np.ndarray,
           view: np.ndarray, centre: np.ndarray, scale: float, size: int,
           background: tuple[int, int, int] = (236, 238, 240)) -> np.ndarray:
    """Draw triangles into a ``(size, size, 3) uint8`` sRGB image.

    positions, normals: ``(n, 3, 3) float64`` corners of n triangles (counter-clockwise from the
    side they face) and their normals, model space; colors: ``(n, 3)`` linear RGB per triangle;
    two_sided: ``(n,) bool``, draw the back too (with the normal turned round); view: a world to
    view rotation from :data:`VIEWS`; the model point *centre* lands in the middle of the image,
    *scale* pixels per metre.
    """
    ss = SUPERSAMPLE
    n_px = size * ss
    colour = np.zeros((n_px, n_px, 3))
    colour[:] = linear_from_srgb8(np.array(background))
    depth = np.full((n_px, n_px), -np.inf)
    if len(positions):
        p = (positions - centre) @ view.T
        nrm = normals @ view.T
        k = scale * ss
        sx = p[..., 0] * k + n_px / 2.0
        sy = n_px / 2.0 - p[..., 1] * k
        z = p[..., 2]
        for t in range(len(p)):
            _triangle(sx[t], sy[t], z[t], nrm[t], colors[t], bool(two_sided[t]), colour, depth)
    img = linear_to_srgb(colour).astype(np.float64)
    img = img.reshape(size, ss, size, ss, 3).mean(axis=(1, 3))
    return np.round(img).astype(np.uint8)


def linear_from_srgb8(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _triangle(sx, sy, z, nrm, rgb, two_sided, colour, depth) -> None:
    # signed area with y pointing down on screen: negative for counter-clockwise in view space
    area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0])
    if area == 0:
        return
    front = area < 0
    if not front and not two_sided:
        return
    h, w = depth.shape
    x0 = max(int(math.floor(min(sx) - 0.5)), 0)
    x1 = min(int(math.ceil(max(sx) - 0.5)), w - 1)
    y0 = max(int(math.floor(min(sy) - 0.5)), 0)
    y1 = min(int(math.ceil(max(sy) - 0.5)), h - 1)
    if x0 > x1 or y0 > y1:
        return
    px = np.arange(x0, x1 + 1) + 0.5
    py = (np.arange(y0, y1 + 1) + 0.5)[:, None]
    # barycentric weights from the edge functions
    w0 = ((sx[1] - px) * (sy[2] - py) - (sx[2] - px) * (sy[1] - py)) / area
    w1 = ((sx[2] - px) * (sy[0] - py) - (sx[0] - px) * (sy[2] - py)) / area
    w2 = 1.0 - w0 - w1
    inside = (w0 >= 0) & (w1 >= 0) & (w2 >= 0)
    if not inside.any():
        return
    zz = w0 * z[0] + w1 * z[1] + w2 * z[2]
    win = depth[y0:y1 + 1, x0:x1 + 1]
    draw = inside & (zz > win)
    if not draw.any():
        return
    n = w0[..., None] * nrm[0] + w1[..., None] * nrm[1] + w2[..., None] * nrm[2]
    n = n[draw]
    length = np.linalg.norm(n, axis=1)
    length[length == 0] = 1.0
    n = n / length[:, None]
    if not front:
        n = -n
    light = AMBIENT + (1.0 - AMBIENT) * np.clip(n @ LIGHT, 0.0, 1.0)
    win[draw] = zz[draw]
    colour[y0:y1 + 1, x0:x1 + 1][draw] = light[:, None] * rgb
