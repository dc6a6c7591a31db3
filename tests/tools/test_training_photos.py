"""tools/training_photos.py labels each read cell through the true camera: check that mapping."""
import argparse
import importlib.util
import json
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("training_photos", REPO / "tools" / "training_photos.py")
training_photos = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = training_photos      # as an import would (its dataclass looks itself up there)
spec.loader.exec_module(training_photos)

TRUTHS = sorted((REPO / "sample_images").glob("s0[0-3]*.json"))[:6]


@pytest.mark.parametrize("path", TRUTHS, ids=lambda p: p.stem)
def test_true_cells_come_back_from_their_pixels(path):
    truth = json.loads(path.read_text())
    cells = [(c["q"], c["r"]) for c in truth["pixels"]["cells"]]
    pixels = np.array([c["pixel"] for c in truth["pixels"]["cells"]])
    assert training_photos.true_cell_of(truth, pixels) == cells


def test_a_pixel_between_two_cells_goes_to_the_nearer():
    truth = json.loads(TRUTHS[0].read_text())
    cells = {(c["q"], c["r"]): np.array(c["pixel"]) for c in truth["pixels"]["cells"]}
    a = next(c for c in cells if (c[0] + 1, c[1]) in cells)
    b = (a[0] + 1, a[1])
    near_a = cells[a] * 0.6 + cells[b] * 0.4
    near_b = cells[a] * 0.4 + cells[b] * 0.6
    assert training_photos.true_cell_of(truth, np.array([near_a, near_b])) == [a, b]


@pytest.mark.parametrize("folder", ["sample_images", "renders/holdout-seed7", "renders/train-seed37",
                                    "renders/holdout-seed38", "renders/dev-seed44", "renders/dev-sizes-seed53",
                                    "renders/fresh-seed119", "/elsewhere/fresh-seed120", "renders/dev-cloth-seed66/",
                                    "renders/hands-over-seed138"])
def test_training_on_a_measuring_set_is_refused(capsys, folder):
    ap = argparse.ArgumentParser()
    with pytest.raises(SystemExit):
        training_photos.refuse_measuring_sets(ap, [REPO / "renders/train-seed31", REPO / folder])
    assert "train on other renders" in capsys.readouterr().err
    training_photos.refuse_measuring_sets(ap, [REPO / "renders/train-seed31", REPO / "renders/towers-seed121"])   # others are fine


@pytest.mark.parametrize("variant", list(training_photos.VARIANTS))
def test_pixels_of_a_variant_go_back_to_the_photo(variant):
    photo = np.zeros((120, 160, 3), np.uint8)
    spots = [(20, 30), (131, 88), (75, 10)]
    for x, y in spots:
        photo[y - 2:y + 3, x - 2:x + 3] = 255
    image, to_photo = training_photos.variant_of(photo, variant)
    for x, y in spots:
        mask = np.zeros(photo.shape[:2], np.uint8)
        mask[y - 2:y + 3, x - 2:x + 3] = 255
        moved = training_photos.variant_of(np.dstack([mask] * 3), variant)[0][..., 0].astype(float)
        ys, xs = np.nonzero(moved > 60)
        centre = np.array([[np.average(xs, weights=moved[ys, xs]), np.average(ys, weights=moved[ys, xs])]])
        assert np.allclose(to_photo(centre)[0], (x, y), atol=0.6)
    assert image.shape[0] == round(120 * training_photos.VARIANTS[variant][1])


def test_a_worn_photo_is_the_same_for_its_name_and_lands_on_the_photo():
    rng = np.random.default_rng(1)
    photo = rng.integers(40, 100, (1200, 1600, 3), dtype=np.uint8)
    photo[500:700, 700:900] = 250
    worn = {name: training_photos.variant_of(photo, "worn", name) for name in (f"s{i:03d}.jpg" for i in range(12))}
    again, _ = training_photos.variant_of(photo, "worn", "s000.jpg")
    assert np.array_equal(again, worn["s000.jpg"][0])
    assert len({image.tobytes() for image, _ in worn.values()}) == len(worn)       # each photo its own losses
    assert any(image.shape[1] < 1100 for image, _ in worn.values())                # some are smaller photos
    for image, to_photo in worn.values():
        grey = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (0, 0), 2).astype(float)
        ys, xs = np.nonzero(grey > (grey.max() + np.median(grey)) / 2)
        square = to_photo(np.column_stack([[xs.min(), xs.max()], [ys.min(), ys.max()]]))
        assert np.allclose(square, [[700, 500], [899, 699]], atol=4)


def test_variants_are_checked(capsys):
    ap = argparse.ArgumentParser()
    assert training_photos.parse_variants(ap, ",turn") == ["", "turn"]
    with pytest.raises(SystemExit):
        training_photos.parse_variants(ap, "turn,upside-down")
    assert "unknown ['upside-down']" in capsys.readouterr().err


def test_a_trainer_takes_folders_and_refuses_the_measuring_sets(capsys):
    args = training_photos.trainer_args(["renders/train-seed31", "--variants", ",turn"], "train", "stack_net", epochs=5,
                                        variants="", variants_help="")
    assert args.variants == ["", "turn"] and args.epochs == 5 and args.folds == 3
    with pytest.raises(SystemExit):
        training_photos.trainer_args([str(REPO / "sample_images")], "train", "stack_net", epochs=5, variants="", variants_help="")
    assert "train on other renders" in capsys.readouterr().err


def test_the_game_prior_ratio_undoes_the_regrouped_photos_mix():
    labels = np.array([0] * 80 + [1] * 15 + [2] * 5 + [0] * 10 + [3] * 10)   # the last 20: a regrouped photo
    of_games = np.arange(len(labels)) < 100
    ratio = training_photos.game_prior_ratio(labels, of_games, 5)
    games = np.bincount(labels[of_games], minlength=5).astype(float)
    games[3] = 0.5                                            # a class only the regrouped photo has
    every = np.bincount(labels, minlength=5) / len(labels)
    assert ratio[:4] == pytest.approx(games[:4] / games.sum() / every[:4])
    assert ratio[3] < 0.1                                  # as rare as a hundred game samples can tell
    assert ratio[4] == 1.0                                 # a class nobody has stays
    assert ratio[1] > 1 and ratio[2] > 1                   # the regrouped photo made them rarer
    assert training_photos.game_prior_ratio(labels, np.zeros(len(labels), bool), 5).tolist() == [1.0] * 5


def test_crowded_and_regrouped_photos_are_not_game_positions(tmp_path):
    folder = tmp_path / "train-seed99"
    folder.mkdir()
    for name, whites, regrouped in (("s001", 8, None), ("s002", 9, None), ("s003", 6, "towers")):
        stacks = [{"q": 0, "r": 0, "discs": ["white"] * whites}, {"q": 1, "r": 0, "discs": ["black"] * 3}]
        (folder / f"{name}.json").write_text(json.dumps({"position": {"stacks": stacks}, "meta": {"regrouped": regrouped}}))
    photos = [(f"train-seed99/{name}.jpg", {"heights": np.zeros(n)}) for name, n in (("s001", 3), ("s002", 2), ("s003", 2))]
    got = training_photos.game_samples([folder], photos, "heights")
    assert got.tolist() == [True, True, True, False, False, False, False]


@pytest.mark.parametrize("sizes", training_photos.SIZES_READ_WITH)
def test_a_photo_of_other_sized_pieces_is_read_with_the_sizes_asked_for(sizes):
    truth = json.loads(TRUTHS[0].read_text())
    edition = training_photos.load_profile(truth["profile"]["name"])
    rendered = {**truth["profile"], "disc_diameter_mm": round(edition.disc_diameter_mm * 1.2, 3),
                "tile_thickness_mm": round(edition.tile_thickness_mm * 0.8, 3)}
    read = training_photos.first_read(TRUTHS[0].with_suffix(".jpg"), {**truth, "profile": rendered}, "", sizes)
    assert read is not None
    want = rendered if sizes == "rendered" else {"disc_diameter_mm": edition.disc_diameter_mm,
                                                 "tile_thickness_mm": edition.tile_thickness_mm}
    assert read.profile.disc_diameter_mm == pytest.approx(want["disc_diameter_mm"])
    assert read.profile.tile_thickness_mm == pytest.approx(want["tile_thickness_mm"])


def test_a_trainer_reads_the_sizes_rendered_unless_told_the_edition():
    assert training_photos.trainer_args(["renders/train-seed31"], "train", "stack_net", epochs=5, variants="",
                                        variants_help="").sizes == "rendered"
    assert training_photos.trainer_args(["renders/train-seed31", "--sizes", "edition"], "train", "stack_net",
                                        epochs=5, variants="", variants_help="").sizes == "edition"


def test_a_trainer_starts_from_the_named_networks_weights_or_says_they_are_missing(capsys):
    args = training_photos.trainer_args(["renders/train-seed31", "--start-from", str(REPO / "vision/models")],
                                        "train", "tile_net", epochs=5, variants="", variants_help="")
    with np.load(REPO / "vision/models/tile_net.npz") as shipped:
        assert sorted(args.start) == sorted(shipped.files)
        assert all(np.array_equal(args.start[k], shipped[k]) for k in shipped.files)
    assert training_photos.trainer_args(["renders/train-seed31"], "train", "tile_net", epochs=5, variants="",
                                        variants_help="").start is None
    with pytest.raises(SystemExit):
        training_photos.trainer_args(["renders/train-seed31", "--start-from", str(REPO / "tools")], "train",
                                     "tile_net", epochs=5, variants="", variants_help="")
    assert "no tile_net.npz there" in capsys.readouterr().err
