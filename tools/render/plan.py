"""Make a stratified plan of sample photos: one spec per image (position, edition, light, table,
tilt band, phase, seed). Needs the `rules` package for game positions, not bpy.

    python tools/render/plan.py --count 72 --seed 2026 --out tools/render/sample_plan.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

import positions  # noqa: E402

TILT_BANDS = ["0-15", "15-35", "35-60"]
EDITIONS = ["jactalea-red-black", "silver-red", "black-white"]
LIGHTS = ["overhead", "window", "lamp", "evening"]
TABLES = ["wood", "felt", "tablecloth", "desk"]
PHASES = ["opening", "midgame", "finished", "blitz"]
SHORT = {"jactalea-red-black": "redblack", "silver-red": "silverred", "black-white": "blackwhite"}
SIZES = ("tile_width_mm", "tile_thickness_mm", "disc_diameter_mm", "disc_thickness_mm")


def balanced(values, count, seed, salt):
    """`count` values, each block of len(values) a random permutation of them (so every value is
    equally often, up to one); the first k values do not depend on `count`."""
    out = []
    for block in range((count + len(values) - 1) // len(values)):
        perm = np.random.default_rng([seed, salt, block]).permutation(len(values))
        out.extend(values[j] for j in perm)
    return out[:count]


def game_position(rng, phase, want):
    if want == "restacked":
        return positions.restacked(rng, positions.game_snapshot(rng, phase))
    if want == "crowded":
        return positions.restacked(rng, positions.game_snapshot(rng, phase), sets=2)
    if want == "towers":
        return positions.restacked(rng, positions.game_snapshot(rng, phase), heights=positions.TOWER_HEIGHTS)
    if phase == "opening":
        return positions.game_snapshot(rng, "opening")
    if phase == "midgame":
        return positions.game_snapshot(rng, "midgame", want=want)
    if phase == "finished":
        return positions.game_snapshot(rng, "finished", want=want)
    total = int(rng.choice([19, 29]))
    if rng.random() < 0.35:
        import rules
        return rules.position_to_json(rules.Position.standard(total_tiles=total))
    return positions.game_snapshot(rng, "blitz-finished", total_tiles=total)


WANTS = ["tall-stack", "mixed-stack", "perimeter-stack", "hole", None]
EXTRA_WANTS = ["restacked", "crowded", "towers", "black-on-black"]   # not in the default cycle: training photos
                                                                    # only (positions.restacked, .black_on_black)
HANDS = ("beside", "over")          # where a player's hand may be (scene.Builder.place_hand)
REGROUPINGS = ("restacked", "crowded", "towers")   # wants whose discs are regrouped: no game's mix of heights


def make_plan(count, seed, hand_only=False, wants=WANTS):
    hand = positions.hand_written()
    hand_names = list(hand)
    n = len(hand_names) if hand_only else count
    combos = [(t, e) for e in EDITIONS for t in TILT_BANDS]  # the 9 tilt x edition cells, cycled
    lights, tables = balanced(LIGHTS, n, seed, 1), balanced(TABLES, n, seed, 2)
    phases = balanced(PHASES + ["midgame"], n, seed, 3)   # midgames weigh double
    specs = []
    for i in range(n):
        tilt, edition = combos[(i + i // 9) % 9]
        if i < len(hand_names):
            source, want = hand_names[i], None
            phase, pos = hand[source]
        else:
            phase = phases[i]
            want = wants[i % len(wants)] if phase in ("midgame", "finished") else None
            pos = game_position(np.random.default_rng([seed, 100, i]), phase, want)
            source = "random-game"
        spec = {
            "name": f"s{i + 1:03d}-{phase}-{SHORT[edition]}-tilt{tilt.replace('-', '_')}",
            "seed": int(seed * 1000 + i),
            "edition": edition, "light": lights[i], "table": tables[i], "tilt_band": tilt,
            "phase": phase, "source": source,
            "features": positions.features(pos), "position": pos,
        }
        if want in REGROUPINGS:
            spec["regrouped"] = want
        specs.append(spec)
    return specs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=72)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--hand-only", action="store_true", help="only the hand-written positions")
    ap.add_argument("--games-only", action="store_true",
                    help="drop the hand-written positions (they are in the committed set already)")
    ap.add_argument("--wants", default=",".join(w or "any" for w in WANTS),
                    help="features the midgame and finished positions look for in turn "
                         "(e.g. hole,tall-stack for a training set rich in the rare cases; any = none)")
    ap.add_argument("--phases", help=f"keep only these phases (comma-separated, of {','.join(PHASES)})")
    ap.add_argument("--tilts", help=f"keep only these tilt bands (comma-separated, of {','.join(TILT_BANDS)})")
    ap.add_argument("--tables", help=f"keep only these tables (comma-separated, of {','.join(TABLES)}; "
                                     "a tablecloth is checked in 6 photos of 10)")
    ap.add_argument("--second-views", metavar="PLAN",
                    help="instead of new positions: a second photo of every spec of PLAN, the same scene "
                         "from another side at 35-60° (bench/vision_accuracy.py --second-photos)")
    ap.add_argument("--third-views", metavar="PLAN2",
                    help="instead of new positions: a third photo of every spec of PLAN2 (a --second-views "
                         "plan), the camera turned as far the other way about the table")
    ap.add_argument("--sizes-off", type=float, metavar="F",
                    help="pieces whose every size is the edition's times a factor drawn in [1-F, 1+F] for each "
                         "spec (a set vision was not told the sizes of: the pipeline should bear F = 0.2)")
    ap.add_argument("--hand", choices=HANDS,
                    help="a player's hand in every photo: resting on the table beside the World, or held over "
                         "its edge; the scenes are otherwise those of the plan without it (same --seed)")
    ap.add_argument("--out", default=str(HERE / "sample_plan.json"))
    args = ap.parse_args(argv)
    if args.sizes_off is not None and not 0 <= args.sizes_off < 1:
        ap.error("--sizes-off must be at least 0 and under 1")
    if args.second_views:
        write_plan(second_views(json.loads(Path(args.second_views).read_text()), args.seed), args.out)
        return
    if args.third_views:
        write_plan(third_views(json.loads(Path(args.third_views).read_text())), args.out)
        return
    wants = [None if w == "any" else w for w in args.wants.split(",")]
    unknown = set(wants) - set(WANTS) - set(EXTRA_WANTS)
    if unknown:
        ap.error(f"unknown --wants {sorted(unknown)}: choose from {[w or 'any' for w in WANTS + EXTRA_WANTS]}")
    specs = make_plan(args.count, args.seed, args.hand_only, wants)
    if args.games_only:
        specs = [s for s in specs if s["source"] == "random-game"]
    for option, field, choices in (("phases", "phase", PHASES), ("tilts", "tilt_band", TILT_BANDS),
                                   ("tables", "table", TABLES)):
        if getattr(args, option):
            kept = getattr(args, option).split(",")
            if set(kept) - set(choices):
                ap.error(f"unknown --{option} {sorted(set(kept) - set(choices))}: choose from {choices}")
            specs = [s for s in specs if s[field] in kept]
    if args.sizes_off is not None:
        specs = sizes_off(specs, args.sizes_off, args.seed)
    if args.hand:
        specs = [{**spec, "hand": args.hand} for spec in specs]
    write_plan(specs, args.out)


def second_views(specs, seed):
    """The same specs seen from another side: at 35-60° of tilt, the camera turned 45-135° either way
    about the table (the scene, its light and the phone's processing stay those of the spec)."""
    rng = np.random.default_rng([seed, 2])
    return [{**spec, "tilt_band": "35-60",
             "azimuth_offset_deg": round(float(rng.choice([-1, 1]) * rng.uniform(45, 135)), 1)} for spec in specs]


def third_views(second_specs):
    """The specs of a second-views plan seen from a third side: the camera turned about the table
    as far from the first photo's as the second's was, the other way."""
    return [{**spec, "azimuth_offset_deg": -spec["azimuth_offset_deg"]} for spec in second_specs]


def sizes_off(specs, off, seed):
    """The specs with pieces of other sizes: each of SIZES the edition's times a factor drawn in
    [1 - off, 1 + off] (the spec's `size_factors`, which render.py applies)."""
    rng = np.random.default_rng([seed, 3])
    return [{**spec, "size_factors": {k: round(float(rng.uniform(1 - off, 1 + off)), 3) for k in SIZES}}
            for spec in specs]


def sized_profile(profile, spec):
    """The set profile of the pieces a spec shows: the edition's, with its `size_factors` applied."""
    factors = spec.get("size_factors", {})
    return {**profile, **{k: round(profile[k] * f, 3) for k, f in factors.items()}}


def write_plan(specs, out):
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(specs, indent=1) + "\n")
    print(f"{len(specs)} specs -> {out}")


if __name__ == "__main__":
    main()
