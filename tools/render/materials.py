"""Procedural Cycles materials: the pieces of each edition and the tables (needs bpy)."""
from __future__ import annotations

import bpy


def srgb_to_linear(c: float) -> float:
    c = c / 255.0
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def linear_rgba(rgb255, gain=1.0):
    return tuple(min(1.0, srgb_to_linear(v) * gain) for v in rgb255) + (1.0,)


class Nodes:
    """Small helper around a node tree: create nodes and link them by socket name."""

    def __init__(self, material):
        material.use_nodes = True
        self.tree = material.node_tree
        self.tree.nodes.clear()

    def add(self, kind, **inputs):
        node = self.tree.nodes.new(kind)
        for name, value in inputs.items():
            self.set(node, name, value)
        return node

    def set(self, node, name, value):
        sock = node.inputs[name] if isinstance(name, int) else _socket(node.inputs, name)
        if isinstance(value, bpy.types.NodeSocket):
            self.tree.links.new(value, sock)
        else:
            sock.default_value = value

    def out(self, node, name):
        return node.outputs[name] if isinstance(name, int) else _socket(node.outputs, name)

    def mix_rgb(self, fac, a, b, blend="MIX"):
        node = self.add("ShaderNodeMix")
        node.data_type = "RGBA"
        node.blend_type = blend
        self.set(node, "Factor", fac)
        for sock_name, value in (("A", a), ("B", b)):
            sock = [s for s in node.inputs if s.name == sock_name and s.type == "RGBA"][0]
            if isinstance(value, bpy.types.NodeSocket):
                self.tree.links.new(value, sock)
            else:
                sock.default_value = value
        return [s for s in node.outputs if s.type == "RGBA"][0]

    def math(self, op, a, b=0.0):
        node = self.add("ShaderNodeMath")
        node.operation = op
        self.set(node, 0, a)
        self.set(node, 1, b)
        return node.outputs[0]

    def map_range(self, value, from_min, from_max, to_min, to_max):
        node = self.add("ShaderNodeMapRange")
        self.set(node, "Value", value)
        self.set(node, "From Min", from_min)
        self.set(node, "From Max", from_max)
        self.set(node, "To Min", to_min)
        self.set(node, "To Max", to_max)
        return node.outputs["Result"]

    def noise(self, vector, scale, detail=4.0, roughness=0.55):
        node = self.add("ShaderNodeTexNoise", Scale=scale, Detail=detail, Roughness=roughness)
        self.set(node, "Vector", vector)
        return node

    def output(self, bsdf):
        out = self.add("ShaderNodeOutputMaterial")
        self.tree.links.new(bsdf.outputs["BSDF"], out.inputs["Surface"])


def _socket(sockets, name):
    for s in sockets:
        if s.name == name and s.enabled:
            return s
    return sockets[name]


# Surface kinds of the pieces: (roughness, metallic, coat, specular level)
KINDS = {
    "rubber": dict(roughness=0.62, metallic=0.0, coat=0.0, specular=0.35, sheen=0.1),
    "plastic": dict(roughness=0.3, metallic=0.0, coat=0.15, specular=0.5, sheen=0.0),
    # silver: metallic paint (flakes in a diffuse base), not a mirror
    "metal": dict(roughness=0.38, metallic=0.55, coat=0.2, specular=0.5, sheen=0.0),
}


def piece_material(name, rgb_up, kind_up, rgb_down=None, kind_down=None, rng=None, wear=0.5):
    """A piece material. With rgb_down, the colour depends on the side: object z > 0 shows rgb_up.

    Slight per-object colour variation (Object Info random), mottled roughness, and edge wear
    (pointiness) make each piece a little different and keep edges from looking plastic-perfect.
    """
    mat = bpy.data.materials.new(name)
    n = Nodes(mat)
    coord = n.out(n.add("ShaderNodeTexCoord"), "Object")
    info = n.add("ShaderNodeObjectInfo")
    geo = n.add("ShaderNodeNewGeometry")
    kind_down = kind_down or kind_up
    ku, kd = KINDS[kind_up], KINDS[kind_down]
    jitter = (lambda a, b: float(rng.uniform(a, b))) if rng is not None else (lambda a, b: (a + b) / 2)
    col_up = linear_rgba(rgb_up, jitter(0.88, 1.1))
    if rgb_down is not None:
        sep = n.add("ShaderNodeSeparateXYZ")
        n.set(sep, "Vector", coord)
        side = n.math("GREATER_THAN", n.out(sep, "Z"), 0.0)   # 1 on the upper half
        col_down = linear_rgba(rgb_down, jitter(0.88, 1.1))
        base = n.mix_rgb(side, col_down, col_up)
        rough = n.map_range(side, 0.0, 1.0, kd["roughness"], ku["roughness"])
        metal = n.map_range(side, 0.0, 1.0, kd["metallic"], ku["metallic"])
        coat = n.map_range(side, 0.0, 1.0, kd["coat"], ku["coat"])
    else:
        base, rough, metal, coat = col_up, ku["roughness"], ku["metallic"], ku["coat"]
    # per-object variation of value and hue
    hsv = n.add("ShaderNodeHueSaturation")
    n.set(hsv, "Color", base)
    n.set(hsv, "Hue", n.map_range(n.out(info, "Random"), 0, 1, 0.49, 0.51))
    n.set(hsv, "Value", n.map_range(n.out(info, "Random"), 0, 1, 0.9, 1.1))
    # mottling and wear
    mottle = n.noise(coord, jitter(180, 420), 6.0, 0.6)
    # wear on the bevels and cut sides only: the flat faces keep their colour
    facing = n.add("ShaderNodeVectorTransform")
    facing.vector_type = "NORMAL"
    facing.convert_from = "WORLD"
    facing.convert_to = "OBJECT"
    n.set(facing, "Vector", n.out(geo, "Normal"))
    upright = n.math("ABSOLUTE", n.out(n.add("ShaderNodeSeparateXYZ", Vector=n.out(facing, "Vector")), "Z"))
    wear_mask = n.map_range(upright, 0.97, 0.5, 0.0, wear)
    dust = (0.55, 0.52, 0.5, 1.0)
    colour = n.mix_rgb(n.math("MULTIPLY", wear_mask, 0.25), n.out(hsv, "Color"), dust)
    colour = n.mix_rgb(n.map_range(n.out(mottle, "Fac"), 0.3, 0.7, 0.0, 0.08), colour, (0, 0, 0, 1))
    bsdf = n.add("ShaderNodeBsdfPrincipled")
    n.set(bsdf, "Base Color", colour)
    rough_var = n.map_range(n.out(mottle, "Fac"), 0.3, 0.7, -0.08, 0.1)
    rough_tot = n.math("ADD", n.math("ADD", rough, rough_var), n.math("MULTIPLY", wear_mask, 0.3))
    n.set(bsdf, "Roughness", rough_tot)
    n.set(bsdf, "Metallic", metal)
    n.set(bsdf, "Coat Weight", coat)
    n.set(bsdf, "Coat Roughness", 0.12)
    n.set(bsdf, "Specular IOR Level", ku["specular"])
    n.set(bsdf, "Sheen Weight", ku["sheen"])
    bump = n.add("ShaderNodeBump", Strength=0.08, Distance=0.0003)
    n.set(bump, "Height", n.out(n.noise(coord, 2500.0, 2.0, 0.5), "Fac"))
    n.set(bsdf, "Normal", n.out(bump, "Normal"))
    n.output(bsdf)
    return mat


def table_material(kind, rng):
    """Procedural table tops: wood, felt, tablecloth (check or plain), dark desk."""
    mat = bpy.data.materials.new("table-" + kind)
    n = Nodes(mat)
    coord = n.out(n.add("ShaderNodeTexCoord"), "Object")
    bsdf = n.add("ShaderNodeBsdfPrincipled")
    u = lambda a, b: float(rng.uniform(a, b))
    bump_height = None
    if kind == "wood":
        mapping = n.add("ShaderNodeMapping")
        n.set(mapping, "Vector", coord)
        n.set(mapping, "Rotation", (0.0, 0.0, u(0, 3.14)))
        n.set(mapping, "Scale", (1.0, 25.0, 1.0))        # grain runs along x
        grain = n.noise(n.out(mapping, "Vector"), u(8, 20), 8.0, 0.65)
        rings = n.add("ShaderNodeTexWave", Scale=u(4, 9), Distortion=u(4, 10), Detail=u(3, 6))
        rings.wave_profile = "SAW"
        n.set(rings, "Vector", n.out(mapping, "Vector"))
        planks = n.noise(n.out(mapping, "Vector"), u(0.8, 1.6), 1.0)
        tone = u(0.45, 1.4)
        light = (0.40 * tone, 0.22 * tone, 0.10 * tone, 1)
        dark = (0.24 * tone, 0.12 * tone, 0.045 * tone, 1)
        fac = n.math("ADD", n.math("MULTIPLY", n.out(grain, "Fac"), 0.8),
                     n.math("MULTIPLY", n.out(rings, "Fac"), 0.12))
        fac = n.math("ADD", fac, n.math("MULTIPLY", n.out(planks, "Fac"), 0.3))
        n.set(bsdf, "Base Color", n.mix_rgb(n.map_range(fac, 0.55, 1.05, 0, 1), light, dark))
        n.set(bsdf, "Roughness", u(0.3, 0.55))
        n.set(bsdf, "Coat Weight", u(0.0, 0.4))
        bump_height = n.out(grain, "Fac")
    elif kind == "felt":
        palettes = [(0.02, 0.12, 0.05), (0.03, 0.05, 0.15), (0.12, 0.02, 0.02), (0.08, 0.08, 0.08),
                    (0.14, 0.11, 0.07)]
        c = palettes[int(rng.integers(len(palettes)))]
        fibre = n.noise(coord, 900.0, 8.0, 0.7)
        blotch = n.noise(coord, 6.0, 3.0)
        col = n.mix_rgb(n.map_range(n.out(fibre, "Fac"), 0.3, 0.7, 0, 0.35), c + (1,), (0, 0, 0, 1))
        col = n.mix_rgb(n.map_range(n.out(blotch, "Fac"), 0.3, 0.7, 0, 0.25), col,
                        tuple(min(1, 1.6 * v) for v in c) + (1,))
        n.set(bsdf, "Base Color", col)
        n.set(bsdf, "Roughness", 0.95)
        n.set(bsdf, "Sheen Weight", 0.8)
        n.set(bsdf, "Sheen Roughness", 0.4)
        n.set(bsdf, "Specular IOR Level", 0.2)
        bump_height = n.out(fibre, "Fac")
    elif kind == "tablecloth":
        weave = n.noise(coord, 1500.0, 4.0, 0.6)
        if rng.random() < 0.6:
            palettes = [((0.7, 0.7, 0.68), (0.45, 0.03, 0.03)), ((0.7, 0.7, 0.68), (0.03, 0.08, 0.3)),
                        ((0.6, 0.55, 0.4), (0.1, 0.25, 0.08))]
            c1, c2 = palettes[int(rng.integers(len(palettes)))]
            checker = n.add("ShaderNodeTexChecker", Scale=u(25, 70))
            mapping = n.add("ShaderNodeMapping")
            n.set(mapping, "Vector", coord)
            n.set(mapping, "Rotation", (0.0, 0.0, u(0, 3.14)))
            n.set(checker, "Vector", n.out(mapping, "Vector"))
            n.set(checker, "Color1", c1 + (1,))
            n.set(checker, "Color2", tuple((a + b) / 2 for a, b in zip(c1, c2)) + (1,))
            base = n.out(checker, "Color")
        else:
            tint = [(0.75, 0.73, 0.68), (0.62, 0.55, 0.42), (0.5, 0.55, 0.6)][int(rng.integers(3))]
            base = tint + (1,)
        wrinkles = n.noise(coord, u(3, 8), 2.0)
        col = n.mix_rgb(n.map_range(n.out(weave, "Fac"), 0.3, 0.7, 0, 0.2), base, (0, 0, 0, 1))
        n.set(bsdf, "Base Color", col)
        n.set(bsdf, "Roughness", 0.9)
        n.set(bsdf, "Sheen Weight", 0.5)
        bump_height = n.math("ADD", n.out(weave, "Fac"), n.math("MULTIPLY", n.out(wrinkles, "Fac"), 4.0))
    else:  # dark desk
        c = [(0.025, 0.025, 0.028), (0.04, 0.03, 0.025), (0.05, 0.05, 0.055)][int(rng.integers(3))]
        speck = n.noise(coord, 400.0, 6.0)
        col = n.mix_rgb(n.map_range(n.out(speck, "Fac"), 0.3, 0.7, 0, 0.3), c + (1,),
                        tuple(1.8 * v for v in c) + (1,))
        n.set(bsdf, "Base Color", col)
        n.set(bsdf, "Roughness", u(0.45, 0.7))
    if bump_height is not None:
        bump = n.add("ShaderNodeBump", Strength=0.05 if kind != "tablecloth" else 0.15, Distance=0.0005)
        n.set(bump, "Height", bump_height)
        n.set(bsdf, "Normal", n.out(bump, "Normal"))
    n.output(bsdf)
    return mat


def simple_material(name, rgb_linear, roughness, metallic=0.0, coat=0.0):
    mat = bpy.data.materials.new(name)
    n = Nodes(mat)
    bsdf = n.add("ShaderNodeBsdfPrincipled")
    n.set(bsdf, "Base Color", tuple(rgb_linear) + (1,))
    n.set(bsdf, "Roughness", roughness)
    n.set(bsdf, "Metallic", metallic)
    n.set(bsdf, "Coat Weight", coat)
    n.output(bsdf)
    return mat
