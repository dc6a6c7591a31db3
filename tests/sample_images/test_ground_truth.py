"""The committed sample photos and their ground truth agree with each other.

The truth files are written by tools/render (Blender); these checks read only the JPEG and the
JSON, so they run without bpy: every truth is a valid position, its camera block is consistent,
the projected tile centres land on tiles of the right colour, and the projected stack tops land on
discs of the top disc's colour.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

import rules

# EXXIT_SAMPLE_IMAGES checks another rendered folder (e.g. a large local set) the same way
FOLDER = Path(os.environ.get("EXXIT_SAMPLE_IMAGES", Path(__file__).resolve().parents[2] / "sample_images"))
BANDS = {"0-15": (0, 15), "15-35": (15, 35), "35-60": (35, 60)}


def load(path):
    return json.loads(path.read_text())


def is_truth(path):
    obj = load(path)
    return isinstance(obj, dict) and obj.get("format") == "exxit-sample/1"


TRUTHS = sorted(p for p in FOLDER.glob("*.json") if is_truth(p))


def project(truth, points):
    cam = truth["camera"]
    K, R, t = (np.array(cam[k], float) for k in ("K", "R", "t"))
    pts = np.atleast_2d(np.asarray(points, float)) @ R.T + t
    uvw = pts @ K.T
    return uvw[:, :2] / uvw[:, 2:3], pts[:, 2]


def patch_lab(lab, xy, radius):
    """Median Lab colour of a small square patch around a pixel."""
    x, y = int(round(xy[0])), int(round(xy[1]))
    r = max(2, int(radius))
    h, w = lab.shape[:2]
    assert r <= x < w - r and r <= y < h - r, f"pixel {xy} is outside the image"
    return np.median(lab[y - r:y + r + 1, x - r:x + r + 1].reshape(-1, 3), axis=0)


def image_lab(truth):
    img = cv2.imread(str(FOLDER / truth["image"]))
    assert img is not None
    return cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)


def projected_size(truth, world_mm, size_mm):
    """Pixels spanned by `size_mm` at a world point (seen face-on)."""
    _, depth = project(truth, [world_mm])
    return truth["camera"]["K"][0][0] * size_mm / depth[0]


def test_there_is_a_sample_set():
    assert len(TRUTHS) >= 10, "sample_images/ should hold the rendered photos with their truth"


@pytest.mark.parametrize("path", TRUTHS, ids=lambda p: p.stem)
def test_truth_is_complete_and_valid(path):
    truth = load(path)
    assert truth["format"] == "exxit-sample/1"
    image = FOLDER / truth["image"]
    assert image.exists() and image.stat().st_size < 500_000
    pos = rules.position_from_json(truth["position"])          # raises on an invalid position
    meta = truth["meta"]
    lo, hi = BANDS[meta["tilt_band"]]
    assert lo <= meta["tilt_deg"] <= hi
    assert meta["edition"] == truth["profile"]["name"]
    w, h = truth["camera"]["image_size"]
    assert cv2.imread(str(image)).shape[:2] == (h, w)
    cells = {(c["q"], c["r"]) for c in truth["pixels"]["cells"]}
    assert set(pos.tiles) | set(pos.stacks) == cells
    assert {(s["q"], s["r"]) for s in truth["pixels"]["stacks"]} == set(pos.stacks)
    for s in truth["pixels"]["stacks"]:
        assert s["height"] == len(pos.stacks[(s["q"], s["r"])])


@pytest.mark.parametrize("path", TRUTHS, ids=lambda p: p.stem)
def test_pixels_are_the_projection_of_the_world_points(path):
    truth = load(path)
    cam = truth["camera"]
    R = np.array(cam["R"])
    assert np.allclose(R @ R.T, np.eye(3), atol=1e-6) and np.linalg.det(R) > 0
    centre = -R.T @ np.array(cam["t"])
    assert np.allclose(centre, cam["centre_mm"], atol=0.05)
    assert abs(np.linalg.norm(centre - np.array(cam["target_mm"])) - cam["distance_mm"]) < 0.1
    # the optical axis makes the recorded tilt with the vertical
    assert abs(np.degrees(np.arccos(-R[2, 2])) - cam["tilt_deg"]) < 0.01
    w, h = cam["image_size"]
    for c in truth["pixels"]["cells"]:
        uv, _ = project(truth, [c["world_mm"]])
        assert np.allclose(uv[0], c["pixel"], atol=0.02)
        assert 0 <= c["pixel"][0] < w and 0 <= c["pixel"][1] < h
    for s in truth["pixels"]["stacks"]:
        uv, _ = project(truth, [s["top_world_mm"]])
        assert np.allclose(uv[0], s["top_pixel"], atol=0.02)
        assert 0 <= s["top_pixel"][0] < w and 0 <= s["top_pixel"][1] < h


def tile_samples(truth, lab):
    """{role: [Lab colours]} sampled at the projected centres of visible tiles without stacks."""
    colour = {(t["q"], t["r"]): t["colour"] for t in truth["position"]["tiles"]}
    inradius = truth["profile"]["tile_width_mm"] / 2
    out = {"white": [], "black": []}
    for c in truth["pixels"]["cells"]:
        if c["tile"] and c["visible"]:
            radius = 0.25 * projected_size(truth, c["world_mm"], inradius)
            out[colour[(c["q"], c["r"])]].append(patch_lab(lab, c["pixel"], radius))
    return out


def hint_lab(rgb):
    px = np.uint8([[list(reversed(rgb))]])
    return cv2.cvtColor(px, cv2.COLOR_BGR2LAB).astype(np.float32)[0, 0]


LAB_WEIGHT = np.array([0.5, 1.0, 1.0], np.float32)   # glare moves lightness more than hue


def nearer(seen, mine, other):
    """True when a Lab colour is nearer `mine` than `other` (lightness counted half)."""
    return np.linalg.norm((seen - mine) * LAB_WEIGHT) < np.linalg.norm((seen - other) * LAB_WEIGHT)


def tile_centre_checks(truth, lab):
    """(right, total) over the visible tile centres: nearer the photo's own mean of its colour than
    of the other colour; plus the two means, or None when a colour has no visible tile."""
    samples = tile_samples(truth, lab)
    means = {role: np.mean(v, axis=0) for role, v in samples.items() if v}
    if len(means) < 2:
        return 0, 0, None
    right = total = 0
    for role, other in (("white", "black"), ("black", "white")):
        for s in samples[role]:
            right += nearer(s, means[role], means[other])
            total += 1
    return right, total, means


def stack_top_checks(truth, lab, means):
    """(right, total) over the visible stack tops: nearer the photo's tiles of the top disc's colour
    than of the other colour (discs and tiles of a role share their colour in every edition)."""
    tops = {(s["q"], s["r"]): s["discs"][-1] for s in truth["position"]["stacks"]}
    radius_mm = truth["profile"]["disc_diameter_mm"] / 2
    right = total = 0
    for s in truth["pixels"]["stacks"]:
        if not s["top_visible"]:
            continue
        radius = 0.3 * projected_size(truth, s["top_world_mm"], radius_mm)
        seen = patch_lab(lab, s["top_pixel"], radius)
        role = tops[(s["q"], s["r"])]
        other = "black" if role == "white" else "white"
        right += nearer(seen, means[role], means[other])
        total += 1
    return right, total


@pytest.mark.parametrize("path", TRUTHS, ids=lambda p: p.stem)
def test_projected_tile_centres_show_the_tile_colour(path):
    """Nearly every visible tile centre looks like the photo's other tiles of its colour (a lamp's
    glare whitens a few glossy tiles near its hotspot), and the two colours differ the way the
    edition's colours do."""
    truth = load(path)
    right, total, means = tile_centre_checks(truth, image_lab(truth))
    if means is None:
        pytest.skip("every tile of one colour carries a stack")
    assert right >= 0.8 * total, f"{right} of {total} tile centres show their colour"
    hints = truth["profile"]["colours"]
    expected = hint_lab(hints["white"]["tile_rgb"]) - hint_lab(hints["black"]["tile_rgb"])
    seen = means["white"] - means["black"]
    assert float(np.dot(expected, seen)) > 0.3 * np.linalg.norm(expected) * np.linalg.norm(seen)


def test_projected_points_land_on_their_pieces_over_the_whole_set():
    """Over all photos: 96 % of tile centres and 95 % of stack tops show their colour (the rest is
    glare on glossy pieces, as in real photos)."""
    tiles = [0, 0]
    tops = [0, 0]
    for path in TRUTHS:
        truth = load(path)
        lab = image_lab(truth)
        right, total, means = tile_centre_checks(truth, lab)
        tiles[0] += right
        tiles[1] += total
        if means is not None:
            r, t = stack_top_checks(truth, lab, means)
            tops[0] += r
            tops[1] += t
    assert tiles[1] > 0 and tiles[0] >= 0.96 * tiles[1], tiles
    assert tops[1] > 0 and tops[0] >= 0.95 * tops[1], tops



def test_the_set_is_the_committed_plan_and_is_stratified():
    """sample_images/ is what tools/render/sample_plan.json renders, over every stratum."""
    if "EXXIT_SAMPLE_IMAGES" in os.environ:
        pytest.skip("checks the committed set only")
    plan = json.loads((FOLDER.parent / "tools" / "render" / "sample_plan.json").read_text())
    truths = {p.stem: load(p) for p in TRUTHS}
    assert set(truths) == {spec["name"] for spec in plan}
    for spec in plan:
        truth = truths[spec["name"]]
        assert truth["position"] == spec["position"]
        assert all(truth["meta"][k] == spec[k] for k in ("tilt_band", "edition", "light", "table", "phase"))
    metas = [t["meta"] for t in truths.values()]
    assert len(metas) >= 60
    for band in BANDS:
        for edition in ("jactalea-red-black", "silver-red", "black-white"):
            assert sum(m["tilt_band"] == band and m["edition"] == edition for m in metas) >= 6
    for field, values in (("light", ("overhead", "window", "lamp", "evening")),
                          ("table", ("wood", "felt", "tablecloth", "desk")),
                          ("phase", ("opening", "midgame", "finished", "blitz"))):
        for value in values:
            assert sum(m[field] == value for m in metas) >= 10, (field, value)
