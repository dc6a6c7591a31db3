"""How well does `python -m vision analyze` read the sample photos?

    .venv/bin/python bench/vision_accuracy.py sample_images [--timeout 120] [--no-profile] [--json OUT]
        [--compare EARLIER.json] [--by tilt_band,edition,light,table,phase] [--reserves-from-truth]
        [--measured-profile] [--camera-files] [--jobs N]

Runs the vision CLI on every image of FOLDER that has a truth file (NAME.json, format
exxit-sample/1, written by tools/render), aligns each predicted position to its truth over the
6 rotations and the translations of the hex lattice, and prints, overall and per tilt band and per
edition (`--by`: any of the truth's tilt_band, edition, light, table and phase, a table each):
per-cell tile accuracy (white / black / none over the World, its perimeter and any cell the
prediction calls a tile), World exactly right, stack precision and recall, top-colour accuracy,
height and full disc order exactly right (over matched stacks; heights also from 20 degrees of
tilt and under, the issue's two targets), forced-dance sets exactly right
(both colours, computed by `rules` on the aligned prediction and on the truth), how often they are
right or are those of a stack flagged uncertain a disc higher or lower (the alternatives the web
page names; with the reserves given, a disc moved between two such stacks), and what they would
be if every found stack had its true height (what height errors cost), score exactly right,
whole position exactly right, images where no World was found, and the median and 95th
percentile seconds per image (wall time of the subprocess, and the CLI's own "timing" total), and
how often the tiles and stacks vision reads sure and those it flags uncertain (its warnings
"uncertain-tiles", and "uncertain-stacks" or "fitted-to-reserves") are right; then the confusion
of true and read heights over the found stacks.
A failing, crashing or missing vision counts as "no World found", so this runs from day one.
`--compare EARLIER.json` (an earlier run's --json) also prints, image by image, the counts that
changed since, and the totals before and after: what a change to vision did.
`--measured-profile` gives vision each render's own set profile (the sizes of its pieces, which
`tools/render/plan.py --sizes-off` draws apart from the edition's) instead of the edition's.
`--camera-files` gives vision each photo's lens (`--camera NAME.camera.json`, written beside the
photos taken again through a distorting lens by `tools/lens_distort.py`).
`--jobs N` reads N photos at a time (one CLI process each): the figures are the same, the seconds per
image are then those of a shared machine (bench/vision_speed.py measures the speed).
`--reserves-from-truth` gives vision each photo's true reserves (`--reserves W,B`), as players who
count their reserves would: how much the heights fitted to them (vision.fitting) get right.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import rules  # noqa: E402

ROTATIONS = 6
HEIGHT_TILT_SPLIT = 20.0   # degrees of tilt from which the heights' target is 99%, and 95% below (issue #4)


# ------------------------------------------------------------------ positions as plain maps
def tile_map(pos: dict) -> dict:
    """{(q, r): colour} of a position JSON."""
    return {(int(t["q"]), int(t["r"])): t["colour"] for t in pos.get("tiles", [])}


def stack_map(pos: dict) -> dict:
    """{(q, r): tuple of disc colours (None where unread)} of a position JSON; vision may give only
    "height" and "top"."""
    out = {}
    for s in pos.get("stacks", []):
        discs = s.get("discs")
        if discs is None or (s.get("height") and len(discs) != s["height"]):
            h = int(s.get("height") or 1)
            discs = [None] * (h - 1) + [s.get("top")]
        out[(int(s["q"]), int(s["r"]))] = tuple(discs)
    return out


def rotate(cell, k):
    """Rotate an axial cell by k * 60 degrees about (0, 0) (E -> SE for k = 1)."""
    q, r = cell
    for _ in range(k % 6):
        q, r = -r, q + r
    return q, r


def transform(tiles: dict, stacks: dict, k: int, shift) -> tuple[dict, dict]:
    move = lambda c: (rotate(c, k)[0] + shift[0], rotate(c, k)[1] + shift[1])
    return ({move(c): v for c, v in tiles.items()}, {move(c): v for c, v in stacks.items()})


def agreement(truth_tiles, truth_stacks, tiles, stacks) -> int:
    """How much two placements agree: equal tile cells (colour counts) and equal stack cells."""
    score = 0
    for c, col in tiles.items():
        if c in truth_tiles:
            score += 2 if truth_tiles[c] == col else 1
        else:
            score -= 1
    for c, discs in stacks.items():
        if c in truth_stacks:
            score += 2 if truth_stacks[c][-1] == discs[-1] else 1
        else:
            score -= 1
    return score


def align(truth: dict, pred: dict) -> tuple[dict, dict, tuple]:
    """The prediction's tiles and stacks moved by the rotation and lattice translation that best
    matches the truth (candidate translations: every truth cell paired with every predicted cell),
    and that move (rotation k, shift)."""
    tt, ts = tile_map(truth), stack_map(truth)
    pt, ps = tile_map(pred), stack_map(pred)
    if not pt and not ps:
        return {}, {}, (0, (0, 0))
    truth_cells = list(tt) + list(ts)
    best = None
    for k in range(ROTATIONS):
        rot_cells = [rotate(c, k) for c in list(pt) + list(ps)]
        votes = Counter((a[0] - b[0], a[1] - b[1]) for a in truth_cells for b in rot_cells)
        for shift, _ in votes.most_common(12):
            tiles, stacks = transform(pt, ps, k, shift)
            s = agreement(tt, ts, tiles, stacks)
            if best is None or s > best[0]:
                best = (s, tiles, stacks, (k, shift))
    return best[1], best[2], best[3]


def flagged(pos: dict) -> tuple[dict, dict]:
    """({cell: flagged?} of the tiles, of the stacks) of a vision reading: flagged where its
    warnings "uncertain-tiles", and "uncertain-stacks" or "fitted-to-reserves", name the cell."""
    def read(items, *codes):
        named = {tuple(map(int, c)) for w in pos.get("warnings", []) if w.get("code") in codes
                 for c in w.get("cells", [])}
        return {(int(i["q"]), int(i["r"])): (int(i["q"]), int(i["r"])) in named for i in items}

    return (read(pos.get("tiles", []), "uncertain-tiles"),
            read(pos.get("stacks", []), "uncertain-stacks", "fitted-to-reserves"))


def perimeter(tiles) -> set:
    return {n for cell in tiles for n in rules.neighbours(cell)} - set(tiles)


def to_rules(tiles: dict, stacks: dict, total_tiles: int = 39):
    """A rules.Position of an aligned placement, or None if rules refuses it."""
    obj = {"format": "exxit-position/1",
           "tiles": [{"q": q, "r": r, "colour": c} for (q, r), c in tiles.items()],
           "stacks": [{"q": q, "r": r, "discs": list(d)} for (q, r), d in stacks.items()],
           "total_tiles": max(total_tiles, len(tiles))}
    try:
        return rules.position_from_json(obj)
    except (ValueError, KeyError, TypeError):
        return None


def dance_set(dances) -> frozenset:
    return frozenset(json.dumps(rules.move_to_json(d), sort_keys=True) for d in dances)


# ------------------------------------------------------------------ scoring one image
def score_image(truth: dict, pred: dict | None) -> dict:
    """Counts for one image; `pred` None means no World was found."""
    tt, ts = tile_map(truth), stack_map(truth)
    domain_truth = set(tt) | perimeter(tt)
    out = {"images": 1, "no_world": 0, "cells": 0, "cells_right": 0, "world_right": 0,
           "stacks_true": len(ts), "stacks_pred": 0, "stacks_matched": 0, "top_right": 0,
           "height_right": 0, "order_right": 0, "dances_right": 0, "dances_right_or_named": 0,
           "dances_right_given_heights": 0,
           "score_right": 0, "position_right": 0,
           "tiles_sure": 0, "tiles_sure_right": 0, "tiles_flagged": 0, "tiles_flagged_right": 0,
           "stacks_sure": 0, "stacks_sure_right": 0, "stacks_flagged": 0, "stacks_flagged_right": 0}
    if pred is None or not pred.get("tiles"):
        out["no_world"] = 1
        out["cells"] = len(domain_truth)
        out["cells_right"] = sum(1 for c in domain_truth if c not in tt)
        return out
    pt, ps, move = align(truth, pred)
    tile_flags, stack_flags = transform(*flagged(pred), *move)
    for c, flag in tile_flags.items():
        kind = "flagged" if flag else "sure"
        out[f"tiles_{kind}"] += 1
        out[f"tiles_{kind}_right"] += int(tt.get(c) == pt[c])
    for c, flag in stack_flags.items():
        kind = "flagged" if flag else "sure"
        out[f"stacks_{kind}"] += 1
        out[f"stacks_{kind}_right"] += int(c in ts and len(ts[c]) == len(ps[c]) and ts[c][-1] == ps[c][-1])
    domain = domain_truth | set(pt)
    out["cells"] = len(domain)
    out["cells_right"] = sum(1 for c in domain if tt.get(c) == pt.get(c))
    out["world_right"] = int(pt == tt)
    out["stacks_pred"] = len(ps)
    matched = set(ps) & set(ts)
    out["stacks_matched"] = len(matched)
    out["top_right"] = sum(1 for c in matched if ps[c][-1] == ts[c][-1])
    out["height_right"] = sum(1 for c in matched if len(ps[c]) == len(ts[c]))
    out["order_right"] = sum(1 for c in matched if ps[c] == ts[c])
    out["position_right"] = int(pt == tt and ps == ts)
    total = int(truth.get("total_tiles", 39))
    truth_pos = to_rules(tt, ts, total)
    pred_pos = to_rules(pt, ps, total)
    out["heights"] = [[len(ts[c]), len(ps[c])] for c in sorted(matched)]
    # the same reading with every found stack at its true height (owner as read): what heights cost
    true_height = {c: (ts[c][:-1] + ps[c][-1:] if c in ts else d) for c, d in ps.items()}
    fixed_pos = to_rules(pt, true_height, total)
    if truth_pos is not None and pred_pos is not None:
        out["dances_right"] = int(same_dances(truth_pos, pred_pos))
        unsure = [c for c, flag in stack_flags.items() if flag]
        out["dances_right_or_named"] = int(out["dances_right"] or named_among_unsure(
            truth_pos, pred_pos, unsure, pred.get("reserves_counted") is True))
        out["score_right"] = int(rules.score(truth_pos) == rules.score(pred_pos))
    if truth_pos is not None and fixed_pos is not None:
        out["dances_right_given_heights"] = int(same_dances(truth_pos, fixed_pos))
    return out


def same_dances(a, b) -> bool:
    return all(dance_set(rules.forced_dances(a, c)) == dance_set(rules.forced_dances(b, c)) for c in rules.COLOURS)


def named_among_unsure(truth_pos, pred_pos, unsure, reserves_counted=False) -> bool:
    """Whether the true forced dances are those of a stack flagged uncertain a disc off
    (rules.dances_a_disc_off: what the web page names under its answer), or, with the reserves
    counted, of a disc moved between two of them (rules.dances_a_disc_moved)."""
    true = {c: dance_set(rules.forced_dances(truth_pos, c)) for c in rules.COLOURS}
    named = rules.dances_a_disc_moved(pred_pos, unsure) if reserves_counted else rules.dances_a_disc_off(pred_pos, unsure)
    return any(all(dance_set(dances[c]) == true[c] for c in rules.COLOURS) for *_, dances in named)


def height_confusion(rows: list[dict]) -> Counter:
    """(true height, read height) -> count, over the matched stacks of scored images."""
    return Counter((t, r) for row in rows for t, r in row.get("heights", []))


def print_confusion(confusion: Counter):
    top = max([4] + [max(k) for k in confusion])
    label = lambda h: f"{h}" if h < top else f"{top}+"
    clip = lambda h: min(h, top)
    table = Counter()
    for (t, r), n in confusion.items():
        table[(clip(t), clip(r))] += n
    print("heights of found stacks (rows: true, columns: read):")
    print("true".ljust(6) + "".join(f"read {label(r)}".rjust(9) for r in range(1, top + 1)) + "    right")
    for t in range(1, top + 1):
        n = sum(table[(t, r)] for r in range(1, top + 1))
        if n:
            print(label(t).ljust(6) + "".join(str(table[(t, r)]).rjust(9) for r in range(1, top + 1))
                  + f"{table[(t, t)] / n:9.3f}")


def heights_right(rows) -> float:
    """The share of matched stacks read at their true height over the scored images `rows`."""
    pairs = [pair for row in rows for pair in row.get("heights", [])]
    return sum(t == r for t, r in pairs) / len(pairs) if pairs else float("nan")


def summarise(rows: list[dict]) -> dict:
    """Rates of a group of scored images."""
    tot = defaultdict(float)
    for row in rows:
        for k, v in row.items():
            if isinstance(v, (int, float)):
                tot[k] += v
    n = tot["images"] or 1
    rate = lambda a, b: (a / b) if b else float("nan")
    walls = sorted(r["wall_s"] for r in rows if "wall_s" in r)
    inner = sorted(r["vision_s"] for r in rows if r.get("vision_s") is not None)
    pct = lambda xs, p: xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))] if xs else float("nan")
    tilted = [r for r in rows if r.get("tilt_deg") is not None]
    return {
        "images": int(tot["images"]),
        "tile accuracy per cell": rate(tot["cells_right"], tot["cells"]),
        "World exactly right": tot["world_right"] / n,
        "stack precision": rate(tot["stacks_matched"], tot["stacks_pred"]),
        "stack recall": rate(tot["stacks_matched"], tot["stacks_true"]),
        "top colour right": rate(tot["top_right"], tot["stacks_matched"]),
        "height exactly right": rate(tot["height_right"], tot["stacks_matched"]),
        f"... at {HEIGHT_TILT_SPLIT:g} degrees of tilt and more": heights_right(
            r for r in tilted if r["tilt_deg"] >= HEIGHT_TILT_SPLIT),
        f"... under {HEIGHT_TILT_SPLIT:g} degrees": heights_right(
            r for r in tilted if r["tilt_deg"] < HEIGHT_TILT_SPLIT),
        "disc order exactly right": rate(tot["order_right"], tot["stacks_matched"]),
        "forced dances exactly right": tot["dances_right"] / n,
        "... or given by an unsure stack a disc off": tot["dances_right_or_named"] / n,
        "... if found stacks had their true heights": tot["dances_right_given_heights"] / n,
        "score exactly right": tot["score_right"] / n,
        "position exactly right": tot["position_right"] / n,
        "no World found": tot["no_world"] / n,
        "tiles read sure: right": rate(tot["tiles_sure_right"], tot["tiles_sure"]),
        "tiles flagged uncertain: right": rate(tot["tiles_flagged_right"], tot["tiles_flagged"]),
        "stacks read sure: exactly right": rate(tot["stacks_sure_right"], tot["stacks_sure"]),
        "stacks flagged uncertain: exactly right": rate(tot["stacks_flagged_right"], tot["stacks_flagged"]),
        "median s per image": pct(walls, 0.5),
        "p95 s per image": pct(walls, 0.95),
        "median s in vision": pct(inner, 0.5),
        "p95 s in vision": pct(inner, 0.95),
    }


# ------------------------------------------------------------------ running the CLI
def run_vision(image: Path, profile: str | None, timeout: float, python: str, reserves: dict | None = None,
               others: list = (), camera: Path | None = None):
    """(prediction JSON or None, wall seconds, in-process seconds or None, note)."""
    cmd = [python, "-m", "vision", "analyze", str(image), "--json"]
    if camera:
        cmd += ["--camera", str(camera)]
    for other in others:
        cmd += ["--second-photo", str(other)]
    if profile:
        cmd += ["--profile", profile]
    if reserves:
        cmd += ["--reserves", f"{reserves['white']},{reserves['black']}"]
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - started, None, "timeout"
    except OSError as exc:
        return None, time.perf_counter() - started, None, f"cannot run vision: {exc}"[:120]
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        lines = (proc.stderr or "").strip().splitlines()
        return None, wall, None, f"exit {proc.returncode}: {lines[-1] if lines else ''}"[:120]
    try:
        pred = json.loads(proc.stdout)
    except ValueError:
        return None, wall, None, "output is not JSON"
    timing = pred.get("timing") or {}
    inner = timing.get("total_s") if isinstance(timing, dict) else None
    return pred, wall, inner, "ok"


def load_truths(folder: Path):
    for path in sorted(folder.glob("*.json")):
        try:
            truth = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(truth, dict) and truth.get("format") == "exxit-sample/1":
            image = path.with_name(truth.get("image", path.stem + ".jpg"))
            if image.exists():
                yield image, truth


def fmt(v):
    if isinstance(v, int):
        return str(v)
    if v != v:   # nan
        return "-"
    return f"{v:.3f}"


GROUP_KEYS = ("tilt_band", "edition", "light", "table", "phase")     # the truth's meta fields --by takes
EDITION_NAMES = {"jactalea-red-black": "red-black", "silver-red": "silver-red", "black-white": "black-white"}


def group_name(key: str, value: str) -> str:
    """A group's column name: "tilt 0-15", "red-black", "light window"."""
    if key == "tilt_band":
        return f"tilt {value}"
    if key == "edition":
        return EDITION_NAMES.get(value, value)
    return f"{key} {value}"


def grouped(rows: list[dict], keys) -> dict[str, dict]:
    """{key: {column name: summary}} of the scored images `rows`, each key's groups after "all"."""
    every = summarise(rows)
    return {key: {"all": every, **{group_name(key, v): summarise([r for r in rows if r[key] == v])
                                   for v in sorted({r[key] for r in rows})}}
            for key in keys}


def print_table(groups: dict):
    names = list(groups)
    metrics = list(next(iter(groups.values())))
    width = max(len(m) for m in metrics) + 2
    columns = [max(12, len(n) + 2) for n in names]
    print("".ljust(width) + "".join(n.rjust(c) for n, c in zip(names, columns)))
    for m in metrics:
        print(m.ljust(width) + "".join(fmt(groups[n][m]).rjust(c) for n, c in zip(names, columns)))


COMPARED = ("no_world", "cells_right", "world_right", "stacks_matched", "stacks_pred", "top_right", "height_right",
            "dances_right", "score_right", "stacks_sure", "stacks_sure_right")


def compare_runs(earlier: list[dict], rows: list[dict]) -> list[str]:
    """Lines saying what changed from the scored images `earlier` to `rows`: each image whose
    counts (COMPARED) differ, then the totals over the images both hold."""
    before = {r["name"]: r for r in earlier}
    common = [r for r in rows if r["name"] in before]
    lines = []
    for row in common:
        changed = [f"{k} {before[row['name']].get(k, 0)} -> {row.get(k, 0)}" for k in COMPARED
                   if before[row["name"]].get(k, 0) != row.get(k, 0)]
        if changed:
            lines.append(f"{row['name']}: " + ", ".join(changed))
    lines.append(f"totals over {len(common)} images both runs read:")
    for k in COMPARED:
        lines.append(f"  {k:18} {sum(before[r['name']].get(k, 0) for r in common):6} -> "
                     f"{sum(r.get(k, 0) for r in common):6}")
    return lines


def read_images(items, args, measured_profiles: Path | None) -> list:
    """Each image's score row (score_image), in the order of `items`, read by vision as the options
    say, `args.jobs` at a time; with `measured_profiles` (a folder), each render's own set profile is
    written there and given."""
    def read(item):
        image, truth = item
        meta = truth.get("meta", {})
        profile = None if args.no_profile else meta.get("edition")
        if measured_profiles:
            profile = str(measured_profiles / f"{image.stem}.json")
            Path(profile).write_text(json.dumps(truth["profile"]))
        reserves = truth["position"].get("reserves") if args.reserves_from_truth else None
        others = [Path(folder) / image.name for folder in args.second_photos]
        camera = image.with_name(f"{image.stem}.camera.json") if args.camera_files else None
        pred, wall, inner, note = run_vision(image, profile, args.timeout, args.python, reserves, others, camera)
        row = score_image(truth["position"], pred)
        row.update({"name": image.stem, "wall_s": wall, "vision_s": inner, "note": note,
                    "tilt_deg": meta.get("tilt_deg"), **{key: meta.get(key, "?") for key in GROUP_KEYS}})
        if args.verbose:
            print(f"{image.stem}: {note}, cells {row['cells_right']}/{row['cells']}, "
                  f"stacks {row['stacks_matched']}/{row['stacks_true']}, {wall:.1f} s", flush=True)
        return row

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(read, items))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Vision accuracy on sample photos with ground truth.")
    ap.add_argument("folder", help="folder of NAME.jpg + NAME.json (tools/render truth)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per image")
    ap.add_argument("--no-profile", action="store_true", help="do not pass the edition's profile")
    ap.add_argument("--measured-profile", action="store_true",
                    help="pass each render's own set profile (the sizes its pieces have: plan.py --sizes-off), "
                         "as a user who measured the set (python -m calibration profile) would")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs the vision CLI")
    ap.add_argument("--json", metavar="OUT", help="also write per-image results and the summary")
    ap.add_argument("--verbose", "-v", action="store_true", help="one line per image")
    ap.add_argument("--compare", metavar="EARLIER", help="an earlier run's --json: print what changed since")
    ap.add_argument("--reserves-from-truth", action="store_true",
                    help="give vision the true reserves, as players who count theirs would")
    ap.add_argument("--second-photos", metavar="DIR", action="append", default=[],
                    help="read each photo together with the photo of the same name in DIR (another "
                         "view of the same table: tools/render/plan.py --second-views); given again, "
                         "with a third photo too (plan.py --third-views)")
    ap.add_argument("--camera-files", action="store_true",
                    help="give vision each photo's lens, NAME.camera.json beside it (photos taken through "
                         "a distorting lens: tools/lens_distort.py)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="photos read at a time, a vision process each (the seconds per image then shared)")
    ap.add_argument("--by", default="tilt_band,edition",
                    help=f"comma-separated truth fields to group the images by, a table each ({', '.join(GROUP_KEYS)})")
    args = ap.parse_args(argv)
    keys = [k.strip() for k in args.by.split(",") if k.strip()]
    if args.no_profile and args.measured_profile:
        sys.exit("vision_accuracy: --no-profile and --measured-profile exclude each other")
    if args.jobs < 1:
        sys.exit(f"vision_accuracy: --jobs takes 1 or more, not {args.jobs}")
    if not keys or set(keys) - set(GROUP_KEYS):
        sys.exit(f"vision_accuracy: --by takes some of {', '.join(GROUP_KEYS)}, not {args.by!r}")
    folder = Path(args.folder)
    for given in (folder, *args.second_photos):
        if given and not Path(given).is_dir():
            sys.exit(f"vision_accuracy: {given} is not a folder")
    earlier = None
    if args.compare:
        try:
            earlier = json.loads(Path(args.compare).read_text())["images"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            sys.exit(f"vision_accuracy: {args.compare} is not an earlier run's --json ({exc})")
    items = list(load_truths(folder))
    if not items:
        sys.exit(f"vision_accuracy: no images with truth (exxit-sample/1) in {folder}")
    if args.measured_profile:
        with tempfile.TemporaryDirectory() as profiles:
            rows = read_images(items, args, Path(profiles))
    else:
        rows = read_images(items, args, None)
    tables = grouped(rows, keys)
    print(f"vision accuracy on {len(rows)} images of {folder}")
    for groups in tables.values():
        print_table(groups)
    print_confusion(height_confusion(rows))
    failures = Counter(r["note"].split(":")[0] for r in rows if r["note"] != "ok")
    if failures:
        print("vision did not answer: " + ", ".join(f"{k} x{v}" for k, v in failures.items()))
    if earlier is not None:
        print(f"changes since {args.compare}:")
        print("\n".join(compare_runs(earlier, rows)))
    if args.json:
        summary = {name: figures for groups in tables.values() for name, figures in groups.items()}
        Path(args.json).write_text(json.dumps({"summary": summary, "images": rows}, indent=1))


if __name__ == "__main__":
    main()
