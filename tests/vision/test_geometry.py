from dataclasses import replace

import cv2
import numpy as np
import pytest

from synthetic import Scene, midgame, random_scene, render
from vision.colours import find_colours
from vision.errors import NoWorldFoundError
from vision.camera import Camera, look_at
from vision.geometry import (LAST_LOOK, MIN_INLIERS, _apply, _cells_among, _cloth_perspective, _explained_share,
                             _lattice_fit_quality, _singular, _square_grid_direction, find_world, refine_on_tiles,
                             sample_image, straight_edges)
from vision.hexgrid import cell_to_plane, cells_to_plane, hexagon, plane_to_cells
from vision.loading import load_image
from vision.pipeline import locate_world
from vision.profile import load_profile


def _fit(img):
    loaded = load_image(img)
    prof = load_profile()
    colours = find_colours(loaded, prof)
    return loaded, find_world(straight_edges(loaded.gray), colours, prof, loaded.size, loaded.scale)


def _true_tiles_in_plane(scene: Scene, cam, geo) -> np.ndarray:
    """The centres of the scene's tiles, rendered through `cam`, in the lattice plane of `geo`."""
    px = np.array([cam.project([[*(np.array(cell_to_plane(c)) * scene.pitch_mm), 0.0]])[0] for c in scene.tiles])
    return geo.work_to_plane(px * geo.scale)


def _off_the_lattice(plane: np.ndarray) -> np.ndarray:
    """How far points of the lattice plane lie from their nearest lattice point, in pitches."""
    return np.linalg.norm(plane - cells_to_plane(plane_to_cells(plane)), axis=1)


@pytest.mark.parametrize("tilt", [0, 12, 25, 40, 52, 60])
def test_lattice_fits_every_tile_centre(tilt):
    scene = random_scene(100 + tilt, tilt, n_tiles=14)
    img, cam = render(scene)
    _, geo = _fit(img)
    plane = _true_tiles_in_plane(scene, cam, geo)
    assert _off_the_lattice(plane).max() < 0.12   # within an eighth of a tile of a lattice point
    # lattice neighbours stay neighbours: the fit is not a sub- or super-lattice
    cells = {tuple(c) for c in plane_to_cells(plane)}
    assert len(cells) == len(scene.tiles)


@pytest.mark.parametrize("tilt", [0, 30, 55])
def test_a_worlds_hexagons_share_their_edges_among_the_three_directions(tilt):
    """vision.pipeline takes a lattice whose edges lie mostly along one direction only when no other
    try finds a likely World (a checked cloth's lines fit one direction of too fine a lattice); a
    World's own hexagons put no more than about half their edge length on any one direction."""
    scene = random_scene(40 + tilt, tilt, n_tiles=10)
    img, _ = render(scene)
    _, geo = _fit(img)
    assert geo.largest_family_share() < 0.5


@pytest.mark.parametrize("tilt", [25, 45, 60])
def test_camera_recovered_from_the_lattice(tilt):
    scene = random_scene(7, tilt, n_tiles=12)
    img, cam = render(scene)
    _, geo = _fit(img)
    assert geo.camera.focal_estimated
    assert geo.camera.K[0, 0] == pytest.approx(scene.focal_px, rel=0.12)
    assert geo.camera.tilt_deg == pytest.approx(tilt, abs=3)


@pytest.mark.parametrize("tilt", [25, 40, 55])
def test_a_camera_turned_off_the_tiles_is_turned_back_onto_their_outlines(tilt):
    """refine_on_tiles refits a camera to the outlines of the tiles read: the located camera turned
    1.5 degrees about its own x axis (the World's centre kept in place) puts the far tiles up to a
    tenth of a pitch off their cells; refitted, every tile is back within 0.03 of its cell, at the
    focal length it had."""
    scene = random_scene(300 + tilt, tilt, n_tiles=16)
    img, cam = render(scene)
    profile = replace(load_profile(), tile_width_mm=scene.tile_mm, tile_gap_mm=scene.pitch_mm - scene.tile_mm)
    located = locate_world(load_image(img), profile)
    geo = located.geometry

    def worst_offset(geo):
        return _off_the_lattice(_true_tiles_in_plane(scene, cam, geo)).max()

    centre = np.append(cells_to_plane(sorted(located.first.tiles)).mean(axis=0) * geo.pitch_mm, 0.0)
    turn, _ = cv2.Rodrigues(np.array([np.radians(1.5), 0.0, 0.0]))
    R = turn @ geo.camera.R
    turned = Camera(K=geo.camera.K, R=R, t=geo.camera.R @ centre + geo.camera.t - R @ centre, focal_estimated=True)
    off = geo.with_camera(turned)
    refitted = refine_on_tiles(off, located.edges, located.first.tiles, profile)
    assert worst_offset(off) > 0.03
    assert worst_offset(refitted) < 0.03
    assert refitted.camera.K[0, 0] == pytest.approx(geo.camera.K[0, 0], rel=0.02)


def test_no_world_in_an_empty_table_or_in_noise():
    table = np.full((600, 800, 3), (80, 120, 160), np.uint8)
    with pytest.raises(NoWorldFoundError):
        _fit(table)
    rng = np.random.default_rng(1)
    noise = rng.integers(0, 255, (600, 800, 3), dtype=np.uint8)
    with pytest.raises(NoWorldFoundError):
        _fit(noise)


def test_debug_drawing_shows_segments_and_lattice():
    tiles, stacks = midgame()
    img, _ = render(Scene(tiles=tiles, stacks=stacks, tilt_deg=35))
    loaded, geo = _fit(img)
    out = geo.draw(loaded.work)
    assert out.shape == loaded.work.shape and np.any(out != loaded.work)


def test_a_degenerate_refit_is_no_lattice_not_a_crash(monkeypatch):
    # edge points that pin down too little make RANSAC return a singular homography
    import vision.geometry as geometry
    seg = np.array([[x, 0.0, x, 0.3] for x in np.arange(0.0, 6.0, 0.5)])       # on lattice edge lines
    M1 = np.eye(3)
    monkeypatch.setattr(geometry.cv2, "findHomography",
                        lambda src, dst, *a: (np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]]), None))
    assert geometry._icp(M1, seg, "homography", iters=1) is None


def test_a_focal_length_implied_far_off_does_not_lose_the_world(monkeypatch):
    # a small World's perspective can imply a focal length far off; the camera decomposed with it
    # no longer explains the edges once refined, and the homography decomposed with a typical
    # focal length is tried next
    import vision.geometry as geometry
    scene = random_scene(7, 30, n_tiles=12)
    img, cam = render(scene)
    monkeypatch.setattr(geometry, "focal_from_homography", lambda H, principal: 2.4 * scene.focal_px)
    _, geo = _fit(img)
    assert geo.camera.tilt_deg == pytest.approx(30, abs=4)


def test_an_image_is_sampled_at_any_number_of_points():
    """cv2.remap refuses maps of 32767 rows or columns: a reading of a few hundred cells samples
    more points than that."""
    rng = np.random.default_rng(3)
    image = rng.random((60, 80, 3)).astype(np.float32)
    x, y = rng.integers(0, 80, 50_000), rng.integers(0, 60, 50_000)
    assert np.array_equal(sample_image(image, x, y), image[y, x])
    assert np.array_equal(sample_image(image[..., 0], x, y), image[y, x, 0])
    outside = sample_image(image[..., 0], np.array([-5.0, 100.0]), np.array([10.0, 10.0]), border_value=7.0)
    assert outside.tolist() == [7.0, 7.0]
    nearest_edge = sample_image(image[..., 0], np.array([-5.0, 100.0]), np.array([10.0, 10.0]), border_value=None)
    assert nearest_edge.tolist() == [image[10, 0, 0], image[10, 79, 0]]


def test_straight_edges_within_a_box_are_those_of_the_whole_image_there():
    """A small World's edges are looked for in a box around it; they come back in the working
    image's pixels, as the whole image's edges there."""
    image = np.full((300, 400), 40, np.uint8)
    cv2.rectangle(image, (220, 150), (330, 240), 200, -1)          # inside the box
    cv2.rectangle(image, (20, 20), (90, 80), 200, -1)              # outside it
    box = (180, 110, 380, 290)
    whole, inside = straight_edges(image), straight_edges(image, box)
    in_box = lambda seg: ((seg[:, [0, 2]] >= box[0]) & (seg[:, [0, 2]] <= box[2]) &
                          (seg[:, [1, 3]] >= box[1]) & (seg[:, [1, 3]] <= box[3])).all(axis=1)
    assert len(inside) >= 4 and in_box(inside).all()
    near = np.abs(inside[:, None, :] - whole[None, in_box(whole), :]).max(axis=2).min(axis=1)
    assert (near < 1.0).all()                       # every edge found in the box is one of the whole image's
    assert not in_box(whole).all()                  # ... which also holds the edges outside it


def test_a_camera_keeping_fewer_edges_is_the_last_look(monkeypatch):
    """A camera that explains under CAMERA_KEEPS of its lattice's edges (a small World on a checked
    cloth, whose edges crowd around it) is refused, but accepted by the last look, which the
    pipeline takes when no other look found a World; keeping fewer still, no World is found."""
    img, _ = render(Scene(tiles=midgame()[0], tilt_deg=45))
    loaded = load_image(img)
    prof = load_profile()
    edges = straight_edges(loaded.gray)
    monkeypatch.setattr("vision.geometry.CAMERA_KEEPS", 2.0)     # no camera keeps twice its lattice's edges
    with pytest.raises(NoWorldFoundError):
        find_world(edges, find_colours(loaded, prof), prof, loaded.size, loaded.scale)
    geo = find_world(edges, find_colours(loaded, prof), prof, loaded.size, loaded.scale, last_look=True)
    assert geo.camera.tilt_deg == pytest.approx(45, abs=3)
    assert locate_world(loaded, prof).geometry.camera.tilt_deg == pytest.approx(45, abs=3)
    monkeypatch.setattr("vision.geometry.LAST_LOOK", (LAST_LOOK[0], 2.0))
    with pytest.raises(NoWorldFoundError):
        locate_world(loaded, prof)


def _grid_segments(angle_deg, side, extent, centre=(0.0, 0.0), keep=lambda mid: True):
    """The edges of a square grid of `side` turned by `angle_deg`, one segment per square side,
    within `extent` of `centre` (plane units), where `keep(midpoint)` holds."""
    a = np.radians(angle_deg)
    u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    out = []
    steps = np.arange(-extent, extent, side)
    for i in steps:
        for j in steps:
            p = np.asarray(centre) + i * u + j * v
            for d in (u, v):
                if keep(p + d * side / 2):
                    out.append([*p, *(p + d * side)])
    return np.array(out)


def _tile_edges(cells):
    """The six sides of each tile of `cells` (plane units, a pitch of 1), each side once."""
    sides = {}
    for cell in cells:
        corners = hexagon(cell, 1.0)
        for k in range(6):
            a, b = corners[k], corners[(k + 1) % 6]
            sides[tuple(np.round((a + b) / 2, 6))] = [*a, *b]
    return np.array(list(sides.values()))


def test_a_checked_cloths_squares_are_a_square_grid_a_hex_pattern_or_wood_grain_is_not():
    checks = _grid_segments(17.0, 0.3, 4.0)
    lengths = np.hypot(*(checks[:, 2:] - checks[:, :2]).T)
    assert _square_grid_direction(checks, lengths) == pytest.approx(17.0, abs=1.0)
    tiles = _tile_edges([(q, r) for q in range(-3, 4) for r in range(-3, 4) if abs(q + r) <= 3])
    assert _square_grid_direction(tiles, np.hypot(*(tiles[:, 2:] - tiles[:, :2]).T)) is None
    grain = checks[np.abs(checks[:, 3] - checks[:, 1] - np.tan(np.radians(17.0)) * (checks[:, 2] - checks[:, 0])) < 1e-6]
    assert len(grain) > 100
    assert _square_grid_direction(grain, np.hypot(*(grain[:, 2:] - grain[:, :2]).T)) is None


def test_a_checked_cloths_squares_do_not_count_against_the_worlds_lattice():
    """Around a small World on a fine checked cloth the squares' edges outnumber the tiles': they
    do not count against the lattice when the table away from the World shows the same square
    grid in the lattice's plane, and count as before when it shows none (a plain table) or when
    the plane map is wrong (the table's squares then do not look square)."""
    cells = [(0, 0), (1, 0), (0, 1), (1, -1)]
    outside = lambda mid: min(np.hypot(*(mid - cell_to_plane(c))) for c in cells) > 0.55
    tiles = _tile_edges(cells)
    around = _grid_segments(17.0, 0.12, 1.6, centre=(0.5, 0.3), keep=outside)
    seg = np.vstack([tiles, around])
    table = _grid_segments(17.0, 0.12, 5.0, centre=(0.5, 0.3),
                           keep=lambda mid: np.hypot(*(mid - [0.5, 0.3])) > 1.8)
    M = np.eye(3)
    families, _, inliers = _lattice_fit_quality(M, seg)
    assert (families[:len(tiles)] >= 0).all() and inliers < MIN_INLIERS
    assert _explained_share(M, seg, families, table) > 0.95
    assert _explained_share(M, seg, families, table[:0]) == pytest.approx(inliers)
    sheared = np.array([[1.0, 0.4, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert _explained_share(sheared, seg, families, table) == pytest.approx(inliers)


def test_edges_beyond_the_planes_horizon_do_not_break_the_square_grid():
    """A tilted photo's room beyond the table maps past the plane's horizon: an edge on the horizon
    itself has no place in the plane."""
    checks = _grid_segments(17.0, 0.3, 4.0)
    lengths = np.hypot(*(checks[:, 2:] - checks[:, :2]).T)
    beyond = np.array([[np.inf, 0.0, 1.0, 1.0], [np.nan, np.nan, 2.0, 2.0]])
    found = _square_grid_direction(np.vstack([checks, beyond]), np.concatenate([lengths, [1.0, 1.0]]))
    assert found == pytest.approx(17.0, abs=1.0)
    horizon = np.diag([1.0, 1.0, 0.0])                  # maps every point to infinity
    seg = _grid_segments(17.0, 30.0, 200.0, centre=(300.0, 300.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        assert _explained_share(horizon, seg, np.full(len(seg), -1), seg) == 0.0


@pytest.mark.parametrize("tilt", [15, 35, 55])
def test_a_checked_cloth_gives_the_planes_perspective(tilt):
    """The squares of a checked cloth seen by a camera at `tilt` degrees: their two directions'
    vanishing points give the plane up to a similarity (lengths and angles as on the table, at any
    distance), which a small World's few edges cannot; a wooden table's grain, one way, gives none."""
    w, h = 1600, 1200
    a = np.radians(tilt)
    camera = look_at((0.0, -600 * np.sin(a), 600 * np.cos(a)), (0.0, 0.0, 0.0), 1250.0, (w, h))
    checks = _grid_segments(17.0, 20.0, 300.0)                     # 20 mm squares, a 600 mm cloth
    ends = lambda plane: camera.project(np.column_stack([plane, np.zeros(len(plane))]))
    seg = np.column_stack([ends(checks[:, :2]), ends(checks[:, 2:])])
    inside = ((seg >= 0) & (seg < [w, h, w, h])).all(axis=1)
    Hm = _cloth_perspective(seg[inside], (h, w))
    corners = np.array([[x, y] for x in range(-200, 201, 50) for y in range(-200, 201, 50)], float)
    seen = _apply(Hm, ends(corners))
    target = seen @ [1, 1j]
    off = []
    for z in (corners @ [1, 1j], corners @ [1, -1j]):             # a similarity or its mirror image
        (a, b), *_ = np.linalg.lstsq(np.column_stack([z, np.ones_like(z)]), target, rcond=None)
        off.append(np.abs(a * z + b - target).max() / (400 * abs(a)))
    assert min(off) < 0.01                                          # within 1% of the cloth's width
    grain = seg[inside & (np.abs(np.abs(checks[:, 3] - checks[:, 1]) - 20 * np.sin(np.radians(17.0))) < 1e-6)]
    assert len(grain) > 50
    assert _cloth_perspective(grain, (h, w)) is None


def test_a_degenerate_lattice_map_is_singular_as_matrix_rank_says():
    """The ICP refuses a map fitted on too few distinct points: _singular answers as
    np.linalg.matrix_rank does, on full-rank maps of every scale and on rank-deficient ones."""
    rng = np.random.default_rng(5)
    full = [rng.normal(size=(3, 3)) * 10.0 ** rng.uniform(-6, 6) for _ in range(200)]
    u, v = rng.normal(size=(2, 3, 1))
    deficient = [u @ v.T, np.outer([1.0, 2.0, 0.0], [0.0, 1.0, 1.0]), np.zeros((3, 3)), np.diag([1.0, 1.0, 1e-17]),
                 np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 0.1, 1.0]])]
    for H in full + deficient:
        assert _singular(H) == (np.linalg.matrix_rank(H) < 3)
    assert all(_singular(H) for H in deficient)


def test_the_cells_beside_a_lattices_edges_are_picked_out_of_a_set():
    cells = np.array([[0, 0], [1, -1], [5, 2], [-3, 7], [1, -1]])
    assert _cells_among(cells, {(1, -1), (-3, 7), (9, 9)}).tolist() == [False, True, False, True, True]
    assert _cells_among(cells, set()).tolist() == [False] * 5
