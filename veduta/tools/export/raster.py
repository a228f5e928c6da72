"""A small deterministic rasteriser over numpy, for the preview images (models, world views).

The same triangles give the same pixels on every machine: positions are snapped to a fixed-point
screen grid (1/16 pixel) and coverage is decided with integer edge functions (a top-left fill
rule, so triangles that share an edge leave neither gaps nor double pixels); everything else uses
only the float64 operations IEEE 754 rounds exactly (+, -, *, /, sqrt, floor, comparisons), one
array element at a time in a written order: no sums over arrays, no matrix products (BLAS), no
numpy transcendental functions (their SIMD versions differ between machines). Angles are turned
into sines and cosines by :func:`sin_cos_deg`, a polynomial in those same operations.

Drawing happens in fragments: each triangle's pixels are found with the triangles of a similar
screen size in one array operation, and a z-buffer is resolved by sorting (the nearest fragment
wins, the earlier triangle on a tie), so the cost grows with the pixels covered, not with a Python
loop per triangle. Materials (:class:`Surface`) have an albedo, an optional texture (its levels
sampled nearest or bilinear, repeat or clamp, the level chosen per triangle by its texel density),
alpha opaque, cutout (a fragment below the cutoff is not drawn) or blend (drawn over the opaque
ones, farthest first), one or two sides, lit or unlit. Lighting is per corner (Lambert, one
directional light plus ambient), interpolated. Colours are mixed, lit and averaged in linear
RGB; sRGB bytes are decoded and encoded through tables built with basic operations
(:func:`srgb_tables`).

Cameras are orthographic or perspective (:class:`View`); triangles crossing the near plane are
clipped, fragments beyond the far plane dropped. Lines (:meth:`Frame.lines`: a ground grid) are
drawn first, under every triangle.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

#: sub-pixel bits of the fixed-point screen grid
SUB = 4
ONE = 1 << SUB
#: fragments made per array operation, at most (memory: about 60 bytes each)
BATCH = 1 << 19


def _root5(a: float) -> float:
    """a ** (1/5) for a in [0, 1] by Newton's method from 1 (decreasing to the root), IEEE basic
    operations only."""
    if a <= 0.0:
        return 0.0
    y = 1.0
    while True:
        y2 = y * y
        y4 = y2 * y2
        nxt = y - (y4 * y - a) / (5.0 * y4)
        if not nxt < y:
            return y
        y = nxt


def srgb_decode(c: float) -> float:
    """The sRGB transfer function's inverse, c in [0, 1] -> linear, with ``x ** 2.4`` as
    ``x * x * (x * x) ** (1/5)`` (:func:`_root5`)."""
    if c <= 0.04045:
        return c / 12.92
    x = (c + 0.055) / 1.055
    x2 = x * x
    return x2 * _root5(x2)


@functools.cache
def srgb_tables() -> tuple[np.ndarray, np.ndarray]:
    """(256,) linear value of each sRGB byte, and (255,) the linear values where encoding steps
    from byte b - 1 to b (b = 1..255): the decoded midpoints, so encoding a decoded byte gives
    it back."""
    lin = np.array([srgb_decode(b / 255.0) for b in range(256)], dtype=np.float64)
    steps = np.array([srgb_decode((b - 0.5) / 255.0) for b in range(1, 256)], dtype=np.float64)
    return lin, steps


def to_linear(rgb) -> np.ndarray:
    """sRGB bytes (any shape) -> linear float64."""
    return srgb_tables()[0][np.asarray(rgb, dtype=np.int64)]


def to_srgb(lin: np.ndarray) -> np.ndarray:
    """Linear values -> sRGB bytes (uint8), the nearest byte (a table search, no pow)."""
    return np.searchsorted(srgb_tables()[1], np.asarray(lin, dtype=np.float64), side="right").astype(np.uint8)


def sin_cos_deg(deg: float) -> tuple[float, float]:
    """sin and cos of an angle in degrees, exact at multiples of 90 and computed with IEEE basic
    operations only (a reduction to [-45, 45] degrees and Taylor polynomials), so every machine
    gets the same bits."""
    d = float(deg) % 360.0
    q = int(math.floor((d + 45.0) / 90.0)) % 4
    r = d - 90.0 * math.floor((d + 45.0) / 90.0)  # in [-45, 45)
    x = r * (math.pi / 180.0)
    x2 = x * x
    s = x * (
        1.0
        - x2
        / 6.0
        * (
            1.0
            - x2
            / 20.0
            * (1.0 - x2 / 42.0 * (1.0 - x2 / 72.0 * (1.0 - x2 / 110.0 * (1.0 - x2 / 156.0 * (1.0 - x2 / 210.0)))))
        )
    )
    c = 1.0 - x2 / 2.0 * (
        1.0
        - x2
        / 12.0
        * (
            1.0
            - x2
            / 30.0
            * (1.0 - x2 / 56.0 * (1.0 - x2 / 90.0 * (1.0 - x2 / 132.0 * (1.0 - x2 / 182.0 * (1.0 - x2 / 240.0)))))
        )
    )
    if r == 0.0:
        s, c = 0.0, 1.0
    return ((s, c), (c, -s), (-s, -c), (-c, s))[q]


def tan_deg(deg: float) -> float:
    s, c = sin_cos_deg(deg)
    return s / c


def rotation(deg: tuple[float, float, float]) -> np.ndarray:
    """(3, 3) R = Rz . Ry . Rx of angles in degrees (model.md's order), from :func:`sin_cos_deg`."""
    sx, cx = sin_cos_deg(deg[0])
    sy, cy = sin_cos_deg(deg[1])
    sz, cz = sin_cos_deg(deg[2])
    rx = ((1.0, 0.0, 0.0), (0.0, cx, -sx), (0.0, sx, cx))
    ry = ((cy, 0.0, sy), (0.0, 1.0, 0.0), (-sy, 0.0, cy))
    rz = ((cz, -sz, 0.0), (sz, cz, 0.0), (0.0, 0.0, 1.0))
    return mat_mul(mat_mul(rz, ry), rx)


def mat_mul(a, b) -> np.ndarray:
    """(3, 3) a . b, each element summed in index order."""
    return np.array(
        [[a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j] for j in range(3)] for i in range(3)],
        dtype=np.float64,
    )


def apply(m: np.ndarray, p: np.ndarray, t=(0.0, 0.0, 0.0)) -> np.ndarray:
    """``m . p + t`` for points ``p`` (..., 3), each coordinate summed in index order."""
    m = np.asarray(m, dtype=np.float64)
    x, y, z = p[..., 0], p[..., 1], p[..., 2]
    return np.stack([x * m[i, 0] + y * m[i, 1] + z * m[i, 2] + t[i] for i in range(3)], axis=-1)


Vec3 = tuple[float, float, float]


def vec3(v) -> Vec3:
    """Three floats of a sequence or array."""
    x, y, z = (float(c) for c in v)
    return x, y, z


def dot3(a: np.ndarray, b) -> np.ndarray:
    """Dot products along the last axis, summed x, y, z in that order."""
    b = np.asarray(b, dtype=np.float64)
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    n = np.sqrt(v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1] + v[..., 2] * v[..., 2])
    n = np.where(n == 0, 1.0, n)
    return v / n[..., None]


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        axis=-1,
    )


@dataclass(frozen=True)
class View:
    """A camera: eye, unit right/up/forward vectors (world), orthographic (``half_height`` metres)
    or perspective (``tan_half``: the tangent of half the vertical field of view), near and far
    planes (metres along forward), the image size in pixels (the drawing size, before any
    supersampling)."""

    eye: tuple[float, float, float]
    right: tuple[float, float, float]
    up: tuple[float, float, float]
    forward: tuple[float, float, float]
    ortho: bool
    half_height: float
    tan_half: float
    near: float
    far: float
    width: int
    height: int

    @classmethod
    def looking(
        cls,
        eye,
        target,
        width: int,
        height: int,
        *,
        ortho: bool = False,
        half_height: float = 1.0,
        fov_deg: float = 60.0,
        near: float = 0.1,
        far: float = 1000.0,
    ) -> View:
        """A view from *eye* toward *target*, up +Y (north, -Z, when looking straight down or up)."""
        e = np.asarray(eye, dtype=np.float64)
        f = unit(np.asarray(target, dtype=np.float64) - e)
        up = np.array([0.0, 1.0, 0.0])
        r = cross(f, up)
        if float(dot3(r, r)) < 1e-12:
            r = cross(f, np.array([0.0, 0.0, -1.0]))
        r = unit(r)
        u = cross(r, f)
        return cls(
            vec3(e),
            vec3(r),
            vec3(u),
            vec3(f),
            ortho,
            float(half_height),
            tan_deg(fov_deg / 2.0),
            float(near),
            float(far),
            int(width),
            int(height),
        )

    def to_view(self, p: np.ndarray) -> np.ndarray:
        """World points (..., 3) in view space: x right, y up, z forward (depth)."""
        d = p - np.asarray(self.eye)
        return np.stack([dot3(d, self.right), dot3(d, self.up), dot3(d, self.forward)], axis=-1)

    def project(self, v: np.ndarray, ss: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """View-space points -> (screen x, screen y in pixels of the supersampled image, depth key:
        larger is nearer, linear in screen space)."""
        w, h = self.width * ss, self.height * ss
        aspect = self.width / self.height
        if self.ortho:
            sx = w / 2.0 + v[..., 0] / (self.half_height * aspect) * (w / 2.0)
            sy = h / 2.0 - v[..., 1] / self.half_height * (h / 2.0)
            return sx, sy, -v[..., 2]
        z = v[..., 2]
        sx = w / 2.0 + v[..., 0] / (z * (self.tan_half * aspect)) * (w / 2.0)
        sy = h / 2.0 - v[..., 1] / (z * self.tan_half) * (h / 2.0)
        return sx, sy, 1.0 / z


@dataclass
class Surface:
    """How a material is drawn: albedo RGBA bytes; texture levels ((h, w, 4) uint8 RGBA each, level
    0 first) or None; nearest or bilinear; clamp or repeat; alpha "opaque", "cutout" (with
    cutoff 0..1) or "blend"; two-sided; unlit."""

    albedo: tuple[int, int, int, int] = (255, 255, 255, 255)
    levels: list[np.ndarray] | None = None
    nearest: bool = False
    clamp: bool = False
    alpha: str = "opaque"
    cutoff: float = 0.5
    two_sided: bool = False
    unlit: bool = False
    _f: list[np.ndarray] = field(default_factory=list, repr=False)

    def level(self, k: int) -> np.ndarray:
        """Level k as float64 linear RGB and alpha 0..1 (cached)."""
        if not self._f:
            for lv in self.levels or []:
                f = np.empty(lv.shape, dtype=np.float64)
                f[..., :3] = to_linear(lv[..., :3])
                f[..., 3] = lv[..., 3] / 255.0
                self._f.append(f)
        return self._f[min(k, len(self._f) - 1)]

    def albedo_linear(self) -> np.ndarray:
        """(4,) linear RGB and alpha 0..1 of the albedo."""
        a = self.albedo
        return np.array([*to_linear(a[:3]).tolist(), a[3] / 255.0])


@dataclass
class Light:
    """Towards the light (unit, world), its colour and the ambient colour, linear RGB 0..1."""

    direction: tuple[float, float, float] = (0.0, 1.0, 0.0)
    colour: tuple[float, float, float] = (1.0, 1.0, 1.0)
    ambient: tuple[float, float, float] = (0.3, 0.3, 0.3)


class Frame:
    """An image being drawn: triangles are collected with :meth:`add`, lines with :meth:`lines`,
    and :meth:`render` draws them all (RGB uint8, ``(height, width, 3)``)."""

    def __init__(self, view: View, background: tuple[int, int, int], light: Light, ss: int = 1):
        self.view, self.background, self.light, self.ss = view, background, light, int(ss)
        self.surfaces: list[Surface] = []
        self._surface_at: dict[int, int] = {}
        self._tris: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._lines: list[tuple[np.ndarray, np.ndarray, tuple[int, int, int]]] = []
        self.stats = {"triangles": 0, "clipped": 0, "culled": 0, "fragments": 0}

    def surface(self, s: Surface) -> int:
        """The index of surface *s* in this frame (added once)."""
        at = self._surface_at.get(id(s))
        if at is None:
            self.surfaces.append(s)
            at = self._surface_at[id(s)] = len(self.surfaces) - 1
        return at

    def add(self, positions: np.ndarray, normals: np.ndarray | None, uvs: np.ndarray | None, surface) -> None:
        """Triangles: corners ``(n, 3, 3)`` world metres (counter-clockwise seen from the side
        they face), normals ``(n, 3, 3)`` per corner (None: each triangle's own, flat), UVs ``(n, 3, 2)``
        (None: zeros), surface index (int, or ``(n,)``)."""
        p = np.asarray(positions, dtype=np.float64).reshape(-1, 3, 3)
        ok = np.isfinite(p).all(axis=(1, 2))
        n = int(ok.sum())
        if not n:
            return
        s = np.broadcast_to(np.asarray(surface, dtype=np.int64), (len(p),))[ok]
        p = p[ok]
        if normals is None:
            nrm = unit(cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]))
            nr = np.repeat(nrm[:, None, :], 3, axis=1)
        else:
            nr = unit(np.asarray(normals, dtype=np.float64).reshape(-1, 3, 3)[ok])
        uv = np.zeros((n, 3, 2)) if uvs is None else np.asarray(uvs, dtype=np.float64).reshape(-1, 3, 2)[ok]
        self._tris.append((p, nr, uv, s))

    def lines(self, a: np.ndarray, b: np.ndarray, rgb: tuple[int, int, int]) -> None:
        """Segments from points a to b ((n, 3) each, world metres), one pixel wide, drawn under
        every triangle (a grid on the ground under a model)."""
        self._lines.append(
            (np.asarray(a, dtype=np.float64).reshape(-1, 3), np.asarray(b, dtype=np.float64).reshape(-1, 3), rgb)
        )

    # -- the pipeline -------------------------------------------------------------------------

    def render(self) -> np.ndarray:
        v, ss = self.view, self.ss
        W, H = v.width * ss, v.height * ss
        out = np.empty((H, W, 3), dtype=np.float64)
        out[:] = to_linear(self.background)
        depth = np.full(H * W, -np.inf)
        for a, b, rgb in self._lines:  # under every triangle
            self._draw_lines(a, b, rgb, out)
        if self._tris:
            p, nrm, uv, surf = (np.concatenate([t[i] for t in self._tris]) for i in range(4))
            self._draw(p, nrm, uv, surf, out, depth)
        if ss > 1:  # the mean of each ss x ss block, added in a fixed order
            sub = out.reshape(v.height, ss, v.width, ss, 3)
            acc = np.zeros((v.height, v.width, 3), dtype=np.float64)
            for i in range(ss):
                for j in range(ss):
                    acc = acc + sub[:, i, :, j]
            out = acc / float(ss * ss)
        return to_srgb(out)

    def _draw(self, p, nrm, uv, surf, out, depth) -> None:
        v, ss = self.view, self.ss
        W, H = v.width * ss, v.height * ss
        self.stats["triangles"] += len(p)
        # facing, from the triangle's plane (clipping keeps it)
        face = cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
        if v.ortho:
            toward = -dot3(face, v.forward)
        else:
            e = np.asarray(v.eye)
            toward = dot3(face, e) - dot3(face, p[:, 0])
        front = toward > 0
        two = np.array([s.two_sided for s in self.surfaces], dtype=bool)[surf]
        keep = (front | two) & (toward != 0)
        self.stats["culled"] += int((~keep).sum())
        p, nrm, uv, surf, front = p[keep], nrm[keep], uv[keep], surf[keep], front[keep]
        order = np.flatnonzero(keep)  # draw order (ties of depth go to the earlier triangle)
        # per-corner light, the normal turned round for a back face
        nrm = np.where(front[:, None, None], nrm, -nrm)
        light = self._light(nrm, surf)  # (n, 3, 3)
        vp = v.to_view(p)
        # near plane (and whole triangles beyond far)
        z = vp[..., 2]
        drop = (z > v.far).all(axis=1) | (z < v.near).all(axis=1)
        cross_near = (z < v.near).any(axis=1) & ~drop
        if cross_near.any():
            extra = self._clip_near(
                vp[cross_near], uv[cross_near], light[cross_near], surf[cross_near], order[cross_near]
            )
        else:
            extra = None
        ok = ~drop & ~cross_near
        vp, uv, light, surf, order = vp[ok], uv[ok], light[ok], surf[ok], order[ok]
        if extra is not None:
            self.stats["clipped"] += len(extra[0])
            vp, uv, light, surf, order = (np.concatenate([a, b]) for a, b in zip((vp, uv, light, surf, order), extra))
        if not len(vp):
            return
        sx, sy, key = v.project(vp, ss)
        X = np.floor(sx * ONE + 0.5)
        Y = np.floor(sy * ONE + 0.5)
        # outside the image: leave out (also keeps the integers small)
        off = (X.max(axis=1) < 0) | (Y.max(axis=1) < 0) | (X.min(axis=1) > W * ONE) | (Y.min(axis=1) > H * ONE)
        lim = float(1 << 40)
        off |= (np.abs(X) > lim).any(axis=1) | (np.abs(Y) > lim).any(axis=1)
        X, Y = X[~off].astype(np.int64), Y[~off].astype(np.int64)
        key, uv, light, surf, order = key[~off], uv[~off], light[~off], surf[~off], order[~off]
        area = (X[:, 1] - X[:, 0]) * (Y[:, 2] - Y[:, 0]) - (X[:, 2] - X[:, 0]) * (Y[:, 1] - Y[:, 0])
        # one winding on screen: swap corners 1 and 2 where the area is negative
        neg = area < 0
        for arr in (X, Y, key, uv, light):
            arr[neg, 1], arr[neg, 2] = arr[neg, 2].copy(), arr[neg, 1].copy()
        area = np.abs(area)
        nz = area > 0
        X, Y, key, uv, light, surf, order, area = (a[nz] for a in (X, Y, key, uv, light, surf, order, area))
        if not len(X):
            return
        mip = self._mips(X, Y, uv, surf, area)
        frags = self._fragments(X, Y, area, W, H)
        if frags is None:
            return
        tri, pix, w0, w1, w2 = frags
        self.stats["fragments"] += len(tri)
        # depth key, linear in screen space; attributes perspective-correct
        k = key[tri]
        kk = (w0 * k[:, 0] + w1 * k[:, 1] + w2 * k[:, 2]) / area[tri]
        if v.ortho:
            vis = (kk <= -v.near) & (kk >= -v.far)
            a0, a1, a2 = w0, w1, w2
        else:
            vis = kk >= 1.0 / v.far
            a0, a1, a2 = w0 * k[:, 0], w1 * k[:, 1], w2 * k[:, 2]
        den = a0 + a1 + a2
        a0, a1, a2 = a0 / den, a1 / den, a2 / den
        tri, pix, kk, a0, a1, a2 = tri[vis], pix[vis], kk[vis], a0[vis], a1[vis], a2[vis]
        # a unique rank per triangle in draw order (a clipped triangle's pieces share its order)
        rank = np.empty(len(order), dtype=np.int64)
        rank[np.lexsort((np.arange(len(order)), order))] = np.arange(len(order))
        s_of = surf[tri]
        modes = np.array([{"opaque": 0, "cutout": 1, "blend": 2}[s.alpha] for s in self.surfaces], dtype=np.int64)
        mode = modes[s_of]
        solid = mode == 0
        cutout = np.flatnonzero(mode == 1)
        if len(cutout):  # drawn only where the texture's alpha reaches the cutoff
            cut = np.array([s.cutoff for s in self.surfaces], dtype=np.float64)
            alpha = self._shade(cutout, tri, s_of, mip, uv, light, a0, a1, a2)[:, 3]
            solid[cutout] = alpha >= cut[s_of[cutout]]
        flat = out.reshape(-1, 3)
        # opaque: the nearest fragment per pixel, the earlier triangle on a tie (maxima and minima
        # per pixel do not depend on the order the fragments come in)
        idx = np.flatnonzero(solid)
        if len(idx):
            p = pix[idx]
            best = depth.copy()
            np.maximum.at(best, p, kk[idx])
            idx = idx[(kk[idx] == best[p]) & (kk[idx] > depth[p])]
            first = np.full(len(depth), np.iinfo(np.int64).max, dtype=np.int64)
            r = rank[tri[idx]]
            np.minimum.at(first, pix[idx], r)
            idx = idx[r == first[pix[idx]]]
            depth[pix[idx]] = kk[idx]
            flat[pix[idx]] = self._shade(idx, tri, s_of, mip, uv, light, a0, a1, a2)[:, :3]
        # blended: over the opaque, farthest first
        idx = np.flatnonzero((mode == 2) & (kk > depth[pix]))
        if len(idx):
            o = np.lexsort((rank[tri[idx]], kk[idx], pix[idx]))
            idx = idx[o]
            col = self._shade(idx, tri, s_of, mip, uv, light, a0, a1, a2)
            start = np.ones(len(idx), dtype=bool)
            start[1:] = pix[idx][1:] != pix[idx][:-1]
            group = np.cumsum(start) - 1
            first_at = np.flatnonzero(start)
            layer = np.arange(len(idx)) - first_at[group]
            for r in range(int(layer.max()) + 1):
                at = np.flatnonzero(layer == r)
                al = col[at, 3:4]
                q = pix[idx[at]]
                flat[q] = col[at, :3] * al + flat[q] * (1.0 - al)

    def _shade(self, idx, tri, s_of, mip, uv, light, a0, a1, a2) -> np.ndarray:
        """(len(idx), 4): the lit colour (linear) and alpha of fragments *idx*."""
        t = tri[idx]
        b0, b1, b2 = a0[idx], a1[idx], a2[idx]
        u = uv[t]
        fu = b0 * u[:, 0, 0] + b1 * u[:, 1, 0] + b2 * u[:, 2, 0]
        fv = b0 * u[:, 0, 1] + b1 * u[:, 1, 1] + b2 * u[:, 2, 1]
        rgba = self._sample(s_of[idx], mip[t], fu, fv)
        li = light[t]
        for c in range(3):
            rgba[:, c] = rgba[:, c] * (b0 * li[:, 0, c] + b1 * li[:, 1, c] + b2 * li[:, 2, c])
        return rgba

    def _draw_lines(self, a, b, rgb, out) -> None:
        v, ss = self.view, self.ss
        W, H = v.width * ss, v.height * ss
        va, vb = v.to_view(a), v.to_view(b)
        za, zb = va[:, 2], vb[:, 2]
        lim = v.near if not v.ortho else -np.inf
        keep = (za >= lim) | (zb >= lim)
        va, vb, za, zb = va[keep], vb[keep], za[keep], zb[keep]
        if not len(va):
            return
        if not v.ortho:  # move an end behind the near plane onto it
            for p, q, zp, zq in ((va, vb, za, zb), (vb, va, zb, za)):
                behind = zp < v.near
                s = np.where(behind, (v.near - zp) / np.where(zq == zp, 1.0, zq - zp), 0.0)
                p[:] = p + (q - p) * s[:, None]
        ax, ay, _ = v.project(va, ss)
        bx, by, _ = v.project(vb, ss)
        n = np.ceil(np.maximum(np.abs(bx - ax), np.abs(by - ay))).astype(np.int64) + 1
        n = np.minimum(n, 4 * (W + H))
        seg = np.repeat(np.arange(len(n)), n)
        start = np.cumsum(n) - n
        t = (np.arange(int(n.sum())) - start[seg]) / np.maximum(n[seg] - 1, 1)
        sx = ax[seg] + (bx[seg] - ax[seg]) * t
        sy = ay[seg] + (by[seg] - ay[seg]) * t
        px, py = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
        flat = out.reshape(-1, 3)
        for oy in range(ss):
            for ox in range(ss):
                qx, qy = px + ox - ss // 2, py + oy - ss // 2
                ok = (qx >= 0) & (qx < W) & (qy >= 0) & (qy < H)
                flat[qy[ok] * W + qx[ok]] = to_linear(rgb)

    def _light(self, nrm: np.ndarray, surf: np.ndarray) -> np.ndarray:
        lt = self.light
        d = np.asarray(lt.direction, dtype=np.float64)
        lam = np.maximum(dot3(nrm, d), 0.0)  # (n, 3)
        out = np.stack([lt.ambient[c] + lt.colour[c] * lam for c in range(3)], axis=-1)  # (n, 3 corners, 3)
        unlit = np.array([s.unlit for s in self.surfaces], dtype=bool)[surf]
        out[unlit] = 1.0
        return out

    def _clip_near(self, vp, uv, light, surf, order):
        """Triangles crossing the near plane cut to the part in front of it (one or two each)."""
        near = self.view.near
        P, U, L, S, O = [], [], [], [], []
        for t in range(len(vp)):
            poly = []
            corners = [(vp[t, i], uv[t, i], light[t, i]) for i in range(3)]
            for i in range(3):
                a, b = corners[i], corners[(i + 1) % 3]
                ina, inb = a[0][2] >= near, b[0][2] >= near
                if ina:
                    poly.append(a)
                if ina != inb:
                    s = (near - a[0][2]) / (b[0][2] - a[0][2])
                    poly.append(tuple(x + (y - x) * s for x, y in zip(a, b, strict=True)))
            for i in range(1, len(poly) - 1):
                tri = (poly[0], poly[i], poly[i + 1])
                P.append([c[0] for c in tri])
                U.append([c[1] for c in tri])
                L.append([c[2] for c in tri])
                S.append(surf[t])
                O.append(order[t])
        if not P:
            return (
                np.zeros((0, 3, 3)),
                np.zeros((0, 3, 2)),
                np.zeros((0, 3, 3)),
                np.zeros(0, np.int64),
                np.zeros(0, np.int64),
            )
        return (
            np.asarray(P, np.float64),
            np.asarray(U, np.float64),
            np.asarray(L, np.float64),
            np.asarray(S, np.int64),
            np.asarray(O, np.int64),
        )

    def _mips(self, X, Y, uv, surf, area) -> np.ndarray:
        """The texture level of each triangle: k steps down while its texels per pixel are 4 or more."""
        n = len(X)
        mip = np.zeros(n, dtype=np.int64)
        sizes = np.array(
            [
                (s.levels[0].shape[1], s.levels[0].shape[0], len(s.levels)) if s.levels else (0, 0, 1)
                for s in self.surfaces
            ],
            dtype=np.float64,
        )
        tw, th, nl = sizes[surf, 0], sizes[surf, 1], sizes[surf, 2]
        du1, dv1 = uv[:, 1, 0] - uv[:, 0, 0], uv[:, 1, 1] - uv[:, 0, 1]
        du2, dv2 = uv[:, 2, 0] - uv[:, 0, 0], uv[:, 2, 1] - uv[:, 0, 1]
        texels = np.abs(du1 * dv2 - du2 * dv1) * tw * th
        pixels = area / float(ONE * ONE)
        ratio = texels / pixels
        for _ in range(15):
            up = (ratio >= 4.0) & (mip < nl - 1)
            if not up.any():
                break
            mip += up
            ratio = np.where(up, ratio / 4.0, ratio)
        return mip

    def _fragments(self, X, Y, area, W, H):
        """(triangle, pixel index, w0, w1, w2): the pixels each triangle covers (the centre inside,
        top-left rule on its edges) with the integer edge functions that weight its corners."""
        x0 = np.clip((X.min(axis=1) - ONE // 2) >> SUB, 0, W - 1)
        x1 = np.clip((X.max(axis=1) - ONE // 2 + ONE - 1) >> SUB, 0, W - 1)
        y0 = np.clip((Y.min(axis=1) - ONE // 2) >> SUB, 0, H - 1)
        y1 = np.clip((Y.max(axis=1) - ONE // 2 + ONE - 1) >> SUB, 0, H - 1)
        bw, bh = x1 - x0 + 1, y1 - y0 + 1
        # edges a -> b with their top-left bias (y down, corners in the winding of positive area)
        edges = []
        for a, b in ((1, 2), (2, 0), (0, 1)):  # the edge opposite corner 0, 1, 2
            dx, dy = X[:, b] - X[:, a], Y[:, b] - Y[:, a]
            tl = ((dy == 0) & (dx > 0)) | (dy < 0)
            edges.append((a, dx, dy, np.where(tl, 1, 0)))
        out: list[list[np.ndarray]] = [[], [], [], [], []]
        cw, ch = _pow2(bw), _pow2(bh)
        bucket = cw * 65536 + ch
        for key in np.unique(bucket).tolist():
            bwid, bhei = key // 65536, key % 65536
            members = np.flatnonzero(bucket == key)
            per = max(1, BATCH // (bwid * bhei))
            oy, ox = np.mgrid[0:bhei, 0:bwid]
            for s in range(0, len(members), per):
                m = members[s : s + per]
                px = x0[m, None, None] + ox[None]
                py = y0[m, None, None] + oy[None]
                inside = (px <= x1[m, None, None]) & (py <= y1[m, None, None])
                cx = px * ONE + ONE // 2
                cy = py * ONE + ONE // 2
                ws = []
                for a, dx, dy, tl in edges:
                    e = dx[m, None, None] * (cy - Y[m, a, None, None]) - dy[m, None, None] * (cx - X[m, a, None, None])
                    inside &= (e + tl[m, None, None]) > 0
                    ws.append(e)
                t, j, i = np.nonzero(inside)
                if not len(t):
                    continue
                out[0].append(m[t])
                out[1].append(py[t, j, i] * W + px[t, j, i])
                for c in range(3):
                    out[2 + c].append(ws[c][t, j, i].astype(np.float64))
        if not out[0]:
            return None
        return tuple(np.concatenate(o) for o in out)

    def _sample(self, surf: np.ndarray, mip: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Linear RGB and alpha 0..1 (float64) of each fragment: its surface's texture at (u, v)
        times the albedo."""
        out = np.empty((len(surf), 4), dtype=np.float64)
        for si, s in enumerate(self.surfaces):
            sel = surf == si
            if not sel.any():
                continue
            alb = s.albedo_linear()
            if not s.levels:
                out[sel] = alb
                continue
            for k in np.unique(mip[sel]).tolist():
                at = np.flatnonzero(sel & (mip == k))
                tex = s.level(k)
                out[at] = texel(tex, u[at], v[at], s.nearest, s.clamp) * alb
        return out


def _pow2(n: np.ndarray) -> np.ndarray:
    """The smallest power of two >= n (n >= 1), with integers."""
    p = np.ones_like(n)
    while (p < n).any():
        p = np.where(p < n, p * 2, p)
    return p


def _wrap(i: np.ndarray, n: int, clamp: bool) -> np.ndarray:
    return np.clip(i, 0, n - 1) if clamp else np.mod(i, n)


def texel(tex: np.ndarray, u: np.ndarray, v: np.ndarray, nearest: bool, clamp: bool) -> np.ndarray:
    """(m, 4) float RGBA of texture ``tex`` ((h, w, 4) float64, linear) at texture coordinates u, v (1 =
    the texture's width or height; v down the rows)."""
    h, w = tex.shape[:2]
    if nearest:
        x = _wrap(np.floor(u * w).astype(np.int64), w, clamp)
        y = _wrap(np.floor(v * h).astype(np.int64), h, clamp)
        return tex[y, x]
    tx = u * w - 0.5
    ty = v * h - 0.5
    fx0, fy0 = np.floor(tx), np.floor(ty)
    fx, fy = (tx - fx0)[:, None], (ty - fy0)[:, None]
    xa, ya = fx0.astype(np.int64), fy0.astype(np.int64)
    xb, yb = _wrap(xa + 1, w, clamp), _wrap(ya + 1, h, clamp)
    xa, ya = _wrap(xa, w, clamp), _wrap(ya, h, clamp)
    top = tex[ya, xa] * (1.0 - fx) + tex[ya, xb] * fx
    bot = tex[yb, xa] * (1.0 - fx) + tex[yb, xb] * fx
    return top * (1.0 - fy) + bot * fy
