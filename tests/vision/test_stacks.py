"""Geometry helpers of the stack stage."""
import cv2
import numpy as np

from vision.stacks import SHIFT_GRID_MM, _inside_convex


def test_points_inside_several_convex_outlines_at_once_agree_with_opencv():
    rng = np.random.default_rng(0)
    polys = [cv2.convexHull((rng.random((n, 2)) * 100).astype(np.float32)).reshape(-1, 2).astype(float)
             for n in (4, 9, 30)]
    pts = rng.random((400, 2)) * 100
    got = _inside_convex(polys, pts, 2.0)
    for inside, poly in zip(got, polys):
        want = [cv2.pointPolygonTest(poly.astype(np.float32), (float(x), float(y)), True) > 2.0 for x, y in pts]
        assert inside.tolist() == want


def test_offsets_tried_cover_a_hand_placed_stack():
    """Stacks stand up to about 3.5 mm off their cell's centre; every such offset is within
    0.7 mm of one tried."""
    rng = np.random.default_rng(1)
    angle, radius = rng.random(500) * 2 * np.pi, np.sqrt(rng.random(500)) * 3.5
    offsets = np.stack([np.cos(angle), np.sin(angle)], 1) * radius[:, None]
    nearest = np.linalg.norm(offsets[:, None] - SHIFT_GRID_MM[None], axis=2).min(axis=1)
    assert nearest.max() < 0.7
