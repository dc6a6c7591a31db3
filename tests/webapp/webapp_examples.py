"""What the web app tests share besides fixtures: an example position, a drawn photo of its tiles
and an analysis of it stored as if vision had read it. A module of its own, not conftest.py: test
files importing from "conftest" get whichever conftest was imported first (tests/vision has one)."""

import io
import math
from pathlib import Path

from PIL import Image, ImageDraw

import rules
from webapp import db

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DIR = REPO / "sample_images"

# RULES.md example 4 with a few black tiles: White's only forced dance is the perimeter dance
# "dance 0,0 W" (3 other dances set aside by the perimeter priority); Black must play 0,1 NW.
EXAMPLE_TILES = {(-1, 0): "white", (0, 0): "white", (1, 0): "white", (2, 0): "black",
                 (0, 1): "black", (0, 2): "white", (1, -1): "black", (2, -1): "white"}
EXAMPLE_STACKS = {(0, 0): ("white", "white"), (1, 0): ("black",), (-1, 0): ("black",),
                  (0, 1): ("black", "black"), (2, -1): ("white",)}


def example_position():
    obj = rules.position_to_json(rules.Position(EXAMPLE_TILES, EXAMPLE_STACKS))
    for item in obj["tiles"] + obj["stacks"]:
        item["confidence"] = 0.9
    return obj


def jpeg_bytes(image, **options):
    out = io.BytesIO()
    image.save(out, "JPEG", **options)
    return out.getvalue()


def drawn_photo(tiles, width=800, height=600):
    """A flat drawing of the tiles (red = White, black = Black) and the pixel centre of each cell."""
    def centre(q, r):
        return (width / 2 + 60 * math.sqrt(3) * (q + r / 2), height / 2 + 60 * 1.5 * r * 0.8)

    image = Image.new("RGB", (width, height), (120, 90, 60))
    draw = ImageDraw.Draw(image)
    for (q, r), colour in tiles.items():
        x, y = centre(q, r)
        corners = [(x + 58 * math.cos(math.radians(60 * i + 30)),
                    y + 58 * 0.8 * math.sin(math.radians(60 * i + 30))) for i in range(6)]
        draw.polygon(corners, fill=(190, 40, 40) if colour == "white" else (30, 30, 30))
    return image, centre


def store_example(app, position=None, warnings=()):
    """Store an analysis of the example position, or of another position on its tiles, as if
    vision had read it (with its `warnings`); return its id."""
    position = position or example_position()
    image, centre = drawn_photo(EXAMPLE_TILES)
    cells = {f"{q},{r}": list(centre(q, r)) for q in range(-5, 6) for r in range(-5, 6)}
    overlay = {"width": image.width, "height": image.height, "cells": cells,
               "tops": {f"{st['q']},{st['r']}": list(centre(st["q"], st["r"]))
                        for st in position["stacks"]}}
    reading = dict(position, image={}, warnings=list(warnings))
    with app.app_context():
        return db.insert_analysis("test", jpeg_bytes(image), reading, overlay, position)
