"""Colour models made from given Lab colours, for testing the stages that read a photo's colours
without finding them in a photo first."""
from __future__ import annotations

import numpy as np

from vision.colours import ColourClass, ColourModel, hint_labs
from vision.profile import load_profile

SPREAD = (3.0, 2.0, 2.0)             # Lab spread of every colour class made here


def colour_model(tiles: dict, tables=(), discs: dict | None = None, lab=None, edition: str | None = None,
                 spread=SPREAD) -> ColourModel:
    """A ColourModel with these tile colours {role: Lab}, table colours, disc colours (the tiles'
    by default), working image in Lab (a 4x4 black one by default), and `edition`'s colour hints
    (none by default)."""
    def made(mean):
        return ColourClass(np.array(mean, float), np.array(spread, float))

    lab = np.zeros((4, 4, 3), np.float32) if lab is None else np.asarray(lab, np.float32)
    tile_classes = {role: made(mean) for role, mean in tiles.items()}
    disc_classes = dict(tile_classes) if discs is None else {role: made(mean) for role, mean in discs.items()}
    return ColourModel(tables=[made(t) for t in tables], tiles=tile_classes, discs=disc_classes,
                       world_mask=np.zeros(lab.shape[:2], np.uint8), lab=lab,
                       hints=hint_labs(load_profile(edition)) if edition else {})
