"""The deterministic rasteriser of the preview images: coverage, depth, faces, textures, alpha,
perspective and the arithmetic it relies on."""

from __future__ import annotations

import math

import numpy as np

from veduta.tools.export import raster

RED = (255, 0, 0, 255)
FRONT = np.array(
    [[[-0.5, -0.5, 0], [0.5, -0.5, 0], [0.5, 0.5, 0]], [[-0.5, -0.5, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]]]
)  # a 1 m quad facing +Z
UV = np.array([[[0, 1], [1, 1], [1, 0]], [[0, 1], [1, 0], [0, 0]]], float)  # v down the rows: top left (0, 0)
UNLIT = raster.Light((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def front_view(size: int = 64, px_per_m: float = 20.0, **kw) -> raster.View:
    return raster.View.looking(
        (0, 0, 5), (0, 0, 0), size, size, ortho=True, half_height=size / 2 / px_per_m, near=0.0, far=10.0, **kw
    )


def draw(
    tris, surface: raster.Surface, view: raster.View | None = None, uv=None, light=UNLIT, ss=1, background=(10, 20, 30)
) -> np.ndarray:
    f = raster.Frame(view or front_view(), background, light, ss=ss)
    f.add(tris, None, uv, f.surface(surface))
    return f.render()


def test_a_quad_covers_its_pixels_exactly_once():
    # 1 m at 20 px per metre, aligned with the pixel grid: exactly 20 x 20 pixels, in the middle
    img = draw(FRONT, raster.Surface(albedo=RED, unlit=True))
    red = (img == (255, 0, 0)).all(axis=2)
    assert red.sum() == 400
    ys, xs = np.nonzero(red)
    assert (ys.min(), ys.max(), xs.min(), xs.max()) == (22, 41, 22, 41)
    assert tuple(img[0, 0]) == (10, 20, 30)  # the background, exactly
    # a half-transparent blend shows every pixel of the shared diagonal once: no darker seam, no gap
    img = draw(
        FRONT + [0.013, 0.007, 0],
        raster.Surface(albedo=(255, 0, 0, 128), unlit=True, alpha="blend"),
        background=(0, 0, 0),
    )
    inside = img[img[..., 0] > 0]
    assert len(inside) == 400 and len({tuple(p) for p in inside}) == 1


def test_back_faces_are_culled_unless_two_sided():
    behind = raster.View.looking((0, 0, -5), (0, 0, 0), 64, 64, ortho=True, half_height=1.6, near=0.0, far=10.0)
    assert not (draw(FRONT, raster.Surface(albedo=RED, unlit=True), behind) == (255, 0, 0)).all(axis=2).any()
    two = draw(FRONT, raster.Surface(albedo=RED, unlit=True, two_sided=True), behind)
    assert (two == (255, 0, 0)).all(axis=2).sum() == 400


def test_the_nearer_triangle_wins_whatever_the_order():
    tri = np.array([[[-1, -1, 0], [1, -1, 0], [0, 1, 0]]], float)
    for order in ((0, 1), (1, 0)):
        f = raster.Frame(front_view(), (0, 0, 0), UNLIT)
        blue, red = (
            f.surface(raster.Surface(albedo=(0, 0, 255, 255), unlit=True)),
            f.surface(raster.Surface(albedo=RED, unlit=True)),
        )
        pieces = [(tri + [0, 0, 0.5], blue), (tri, red)]
        for i in order:
            f.add(pieces[i][0], None, None, pieces[i][1])
        assert tuple(f.render()[32, 32]) == (0, 0, 255)
    # at the same depth the earlier triangle keeps the pixel
    f = raster.Frame(front_view(), (0, 0, 0), UNLIT)
    f.add(tri, None, None, f.surface(raster.Surface(albedo=(0, 255, 0, 255), unlit=True)))
    f.add(tri, None, None, f.surface(raster.Surface(albedo=RED, unlit=True)))
    assert tuple(f.render()[32, 32]) == (0, 255, 0)


def _checker() -> np.ndarray:
    tex = np.zeros((2, 2, 4), np.uint8)
    tex[..., 3] = 255
    tex[0, 0, :3] = tex[1, 1, :3] = (255, 0, 0)
    tex[0, 1, :3] = tex[1, 0, :3] = (0, 0, 255)
    return tex


def test_nearest_sampling_shows_the_texture_pixels():
    img = draw(FRONT, raster.Surface(levels=[_checker()], nearest=True, unlit=True), uv=UV)
    # the quad's top-left quarter is texel (0, 0), red; top right (1, 0), blue
    assert tuple(img[25, 25]) == (255, 0, 0) and tuple(img[25, 38]) == (0, 0, 255)
    assert tuple(img[38, 25]) == (0, 0, 255) and tuple(img[38, 38]) == (255, 0, 0)
    # the albedo multiplies the texture
    img = draw(
        FRONT, raster.Surface(albedo=(255, 255, 255, 255), levels=[_checker()], nearest=True, unlit=True), uv=UV * 2
    )  # repeats twice: texel (0, 0) again at the second quarter
    assert tuple(img[25, 25]) == (255, 0, 0) and tuple(img[25, 27]) == (0, 0, 255) and tuple(img[25, 32]) == (255, 0, 0)


def test_bilinear_sampling_blends_in_linear_light():
    # between a red and a blue texel, halfway: linear 0.5 of each, sRGB 188
    tex = np.zeros((1, 2, 4), np.uint8)
    tex[..., 3] = 255
    tex[0, 0, :3], tex[0, 1, :3] = (255, 0, 0), (0, 0, 255)
    got = raster.texel(raster.Surface(levels=[tex]).level(0), np.array([0.5]), np.array([0.5]), False, True)
    assert raster.to_srgb(got[:, :3]).tolist() == [[188, 0, 188]]
    # clamp keeps the edge texel; repeat wraps to the other side
    lv = raster.Surface(levels=[tex]).level(0)
    assert raster.texel(lv, np.array([0.0]), np.array([0.5]), False, True)[0, 0] == 1.0
    assert raster.texel(lv, np.array([0.0]), np.array([0.5]), False, False)[0, 0] == 0.5


def test_cutout_draws_only_where_the_alpha_reaches_the_cutoff():
    tex = np.zeros((1, 2, 4), np.uint8)
    tex[0, 0] = (0, 255, 0, 255)  # left opaque, right transparent
    img = draw(FRONT, raster.Surface(levels=[tex], nearest=True, unlit=True, alpha="cutout", cutoff=0.5), uv=UV)
    assert tuple(img[32, 25]) == (0, 255, 0) and tuple(img[32, 38]) == (10, 20, 30)


def test_light_is_lambert_with_ambient():
    light = raster.Light((0.0, 0.0, 1.0), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    img = draw(FRONT, raster.Surface(albedo=(255, 255, 255, 255)), light=light)
    assert tuple(img[32, 32]) == tuple(raster.to_srgb(np.array([0.75] * 3)).tolist())
    side = raster.Light((1.0, 0.0, 0.0), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    assert tuple(draw(FRONT, raster.Surface(), light=side)[32, 32]) == tuple(raster.to_srgb(np.array([0.25] * 3)))


def test_perspective_clips_at_near_and_drops_beyond_far():
    # a long floor from under the camera to far away: clipped at the near plane, cut at far
    floor = np.array(
        [[[-500, 0, 5], [500, 0, 5], [500, 0, -200]], [[-500, 0, 5], [500, 0, -200], [-500, 0, -200]]], float
    )
    view = raster.View.looking((0, 1, 0), (0, 1, -1), 80, 60, fov_deg=60, near=0.1, far=50)
    f = raster.Frame(view, (0, 0, 0), UNLIT)
    f.add(floor, None, None, f.surface(raster.Surface(albedo=RED, unlit=True)))
    img = f.render()
    assert f.stats["clipped"] >= 1
    red = (img == (255, 0, 0)).all(axis=2)
    assert red[-1].all()  # the floor under the camera reaches the bottom row
    # the horizon would be the middle row (y = 30); the floor at d metres is 30 / (d tan 30 deg) rows
    # under it: row 31 (its centre 1.5 rows under) is 34.6 m away, row 30 (0.5 under) 104 m, past far
    assert not red[:31].any() and red[31:].all()


def test_lines_lie_under_the_triangles():
    f = raster.Frame(front_view(), (0, 0, 0), UNLIT)
    f.lines(np.array([[-2.0, 0.0, 1.0]]), np.array([[2.0, 0.0, 1.0]]), (0, 255, 0))  # in front of the quad
    f.add(FRONT, None, None, f.surface(raster.Surface(albedo=RED, unlit=True)))
    img = f.render()
    assert tuple(img[32, 32]) == (255, 0, 0) and tuple(img[32, 5]) == (0, 255, 0)


def test_supersampling_averages_in_linear_light():
    # a quad edge through the middle of the 2 x 2 samples of a pixel: half red, half black
    view = front_view(8, 4.0)  # 4 px per metre, 8 px: the quad covers pixels 2..5
    f = raster.Frame(view, (0, 0, 0), UNLIT, ss=2)
    f.add(FRONT + [0.125, 0, 0], None, None, f.surface(raster.Surface(albedo=RED, unlit=True)))
    img = f.render()
    assert tuple(img[4, 2]) == (188, 0, 0) and tuple(img[4, 3]) == (255, 0, 0)


def test_the_picture_does_not_depend_on_the_order_of_opaque_triangles():
    # 60 overlapping triangles, each on a plane of its own depth: any order gives the same bytes
    rng = np.random.default_rng(7)
    tris = rng.uniform(-1.5, 1.5, (60, 3, 3))
    tris[:, :, 2] = np.linspace(-1, 1, 60)[:, None]
    view = raster.View.looking((0.3, 0.2, 4), (0, 0, 0), 96, 72, fov_deg=50, near=0.1, far=20)

    def render(order) -> bytes:
        f = raster.Frame(view, (30, 30, 30), raster.Light((0.3, 0.9, 0.3), (0.8, 0.8, 0.8), (0.2, 0.2, 0.2)), ss=2)
        for i in order:
            f.add(tris[i : i + 1], None, None, f.surface(raster.Surface(albedo=(i * 4, 150, 100, 255), two_sided=True)))
        return f.render().tobytes()

    a = render(range(60))
    assert a == render(range(60)) == render(range(59, -1, -1)) == render(rng.permutation(60).tolist())


def test_sines_cosines_and_srgb_tables_use_basic_operations_and_are_close():
    worst = max(
        max(abs(s - math.sin(math.radians(d))), abs(c - math.cos(math.radians(d))))
        for d in np.linspace(-720, 720, 20001).tolist()
        for s, c in [raster.sin_cos_deg(d)]
    )
    assert worst < 2e-15
    assert raster.sin_cos_deg(90) == (1.0, 0.0) and raster.sin_cos_deg(-180) == (0.0, -1.0)
    lin, steps = raster.srgb_tables()
    assert (raster.to_srgb(lin) == np.arange(256)).all()  # each byte decodes and encodes back
    ref = np.array(
        [(b / 255) / 12.92 if b / 255 <= 0.04045 else ((b / 255 + 0.055) / 1.055) ** 2.4 for b in range(256)]
    )
    assert np.abs(ref - lin).max() < 1e-15
    r = raster.rotation((0.0, 90.0, 0.0))
    assert r.tolist() == [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]


def test_degenerate_and_broken_triangles_draw_nothing_and_break_nothing():
    tris = np.array(
        [
            [[0, 0, 0], [0, 0, 0], [0, 0, 0]],
            [[1e30, 0, 0], [-1e30, 1, 0], [0, -1e30, 0]],
            [[np.nan, 0, 0], [1, 0, 0], [0, 1, 0]],
            [[np.inf, 0, 0], [1, 0, 0], [0, 1, 0]],
        ],
        float,
    )
    img = draw(tris, raster.Surface(albedo=RED, unlit=True, two_sided=True))
    assert (img == (10, 20, 30)).all()
