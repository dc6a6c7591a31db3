"""Build the Blender scene of one sample photo and render it (needs bpy).

`render_spec(spec, exr_path, settings)` builds the table, the World and its stacks, the supply and
reserves, a distractor, the light, the camera and, if the spec asks (its "hand"), a player's hand
of `spec` (every random choice comes from spec["seed"]), renders a linear EXR and returns the
geometric ground truth.
"""
from __future__ import annotations

import math

import bpy  # first: it makes bmesh and mathutils importable
import bmesh
import numpy as np
from mathutils import Euler, Matrix, Vector

import geometry
import materials
from rules import neighbours   # importable once plan (which render.py imports) puts the repository on the path

EDITION_KINDS = {   # surface kind of the white-role and black-role pieces
    "jactalea-red-black": ("rubber", "rubber"),
    "silver-red": ("metal", "plastic"),
    "black-white": ("plastic", "plastic"),
}
MM = 0.001
SKIN_TONES = ((0.62, 0.38, 0.28), (0.70, 0.47, 0.38), (0.50, 0.29, 0.20), (0.33, 0.18, 0.11), (0.17, 0.09, 0.055))


# ---------------------------------------------------------------- meshes
def hex_prism_mesh(name, width_mm, thickness_mm, bevel_mm):
    """Pointy-topped hexagonal prism centred on the origin, all edges bevelled."""
    radius = width_mm / math.sqrt(3.0) * MM
    half = thickness_mm / 2.0 * MM
    bm = bmesh.new()
    ring = [(radius * math.cos(math.radians(90 + 60 * k)), radius * math.sin(math.radians(90 + 60 * k)))
            for k in range(6)]
    bottom = [bm.verts.new((x, y, -half)) for x, y in ring]
    top = [bm.verts.new((x, y, half)) for x, y in ring]
    bm.faces.new(top)
    bm.faces.new(list(reversed(bottom)))
    for k in range(6):
        j = (k + 1) % 6
        bm.faces.new([bottom[k], bottom[j], top[j], top[k]])
    return _finish_mesh(bm, name, bevel_mm)


def disc_mesh(name, diameter_mm, thickness_mm, bevel_mm, vertices=48):
    radius = diameter_mm / 2.0 * MM
    half = thickness_mm / 2.0 * MM
    bm = bmesh.new()
    ring = [(radius * math.cos(2 * math.pi * k / vertices), radius * math.sin(2 * math.pi * k / vertices))
            for k in range(vertices)]
    bottom = [bm.verts.new((x, y, -half)) for x, y in ring]
    top = [bm.verts.new((x, y, half)) for x, y in ring]
    bm.faces.new(top)
    bm.faces.new(list(reversed(bottom)))
    for k in range(vertices):
        j = (k + 1) % vertices
        bm.faces.new([bottom[k], bottom[j], top[j], top[k]])
    return _finish_mesh(bm, name, bevel_mm, sharp_deg=50.0)


def _finish_mesh(bm, name, bevel_mm, sharp_deg=None):
    bm.normal_update()
    big = {f for f in bm.faces}
    edges = [e for e in bm.edges if sharp_deg is None or e.calc_face_angle(0.0) > math.radians(sharp_deg)]
    bmesh.ops.bevel(bm, geom=edges, offset=bevel_mm * MM, segments=3, profile=0.5, affect="EDGES",
                    clamp_overlap=True)
    for f in bm.faces:
        f.smooth = f not in big or (sharp_deg is not None and abs(f.normal.z) < 0.5)
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    return mesh


def add_object(name, mesh, material, location, rotation=(0.0, 0.0, 0.0)):
    obj = bpy.data.objects.new(name, mesh)
    if material is not None:     # meshes are shared: the material belongs to the object
        if not mesh.materials:
            mesh.materials.append(None)
        obj.material_slots[0].link = "OBJECT"
        obj.material_slots[0].material = material
    obj.location = location
    obj.rotation_euler = Euler(rotation, "XYZ")
    bpy.context.scene.collection.objects.link(obj)
    return obj


# ---------------------------------------------------------------- the scene
class Builder:
    def __init__(self, spec, settings):
        self.spec = spec
        self.settings = settings
        self.rng = np.random.default_rng(spec["seed"])
        self.profile = spec["profile"]
        self.position = spec["position"]
        self.truth_tiles = []     # (q, r, world point mm of the tile top centre)
        self.truth_stacks = []    # (q, r, base point mm, top point mm)
        self.obstacles = []       # (x_mm, y_mm, radius_mm) that props must keep away from
        self.reserve_spots = []   # (x_mm, y_mm) of reserve disc piles already placed
        self.distractor = None
        self.hand = None          # what place_hand put in the scene, for the truth's meta
        self.lights = []          # what light_record says of each lamp, for the truth's meta

    def u(self, a, b):
        return float(self.rng.uniform(a, b))

    # ------------------------------------------------------------ set-up
    def reset(self):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        scene = bpy.context.scene
        scene.render.engine = "CYCLES"
        cyc = scene.cycles
        cyc.device = "CPU"
        cyc.samples = self.settings["samples"]
        cyc.use_adaptive_sampling = True
        cyc.adaptive_threshold = 0.03
        cyc.use_denoising = True
        cyc.denoiser = "OPENIMAGEDENOISE"
        cyc.denoising_input_passes = "RGB_ALBEDO_NORMAL"
        cyc.denoising_prefilter = "FAST"
        cyc.denoising_quality = "BALANCED"
        cyc.max_bounces = 4
        cyc.diffuse_bounces = 2
        cyc.glossy_bounces = 2
        cyc.transmission_bounces = 0
        cyc.transparent_max_bounces = 2
        cyc.caustics_reflective = False
        cyc.caustics_refractive = False
        cyc.blur_glossy = 1.0
        cyc.seed = int(self.spec["seed"]) % (2 ** 31)
        scene.render.threads_mode = "FIXED"
        scene.render.threads = self.settings["threads"]
        # rendered smaller and scaled up to the photo size afterwards (same field of view)
        scene.render.resolution_x = round(self.settings["width"] * self.settings["render_scale"])
        scene.render.resolution_y = round(self.settings["height"] * self.settings["render_scale"])
        scene.render.resolution_percentage = 100
        scene.render.film_transparent = False
        scene.view_settings.view_transform = "Standard"
        scene.render.image_settings.file_format = "OPEN_EXR"
        scene.render.image_settings.color_depth = "16"
        scene.render.image_settings.exr_codec = "ZIP"
        self.scene = scene

    def build(self):
        self.reset()
        prof = self.profile
        self.tile_t = prof["tile_thickness_mm"]
        self.disc_t = prof["disc_thickness_mm"] * self.u(0.97, 1.03)
        self.disc_d = prof["disc_diameter_mm"]
        self.gap = self.u(0.6, 2.2)
        self.pitch = prof["tile_width_mm"] + self.gap
        self.make_materials()
        self.make_table()
        self.place_world()
        self.place_stacks()
        self.place_supply()
        self.place_reserves()
        if self.rng.random() < self.settings.get("distractor_p", 0.55):
            self.place_distractor()
        self.make_light()
        self.make_camera()
        if self.spec.get("hand"):
            self.place_hand(self.spec["hand"])

    def make_materials(self):
        prof, rng = self.profile, self.rng
        kinds = EDITION_KINDS.get(prof["name"], ("plastic", "plastic"))
        white, black = prof["colours"]["white"], prof["colours"]["black"]
        wear = self.u(0.2, 0.9)
        self.tile_mat = materials.piece_material("tile", white["tile_rgb"], kinds[0], black["tile_rgb"],
                                                 kinds[1], rng, wear)
        self.disc_mats = {
            "white": materials.piece_material("disc-white", white["disc_rgb"], kinds[0], rng=rng, wear=wear),
            "black": materials.piece_material("disc-black", black["disc_rgb"], kinds[1], rng=rng, wear=wear),
        }
        self.tile_mesh = hex_prism_mesh("tile", prof["tile_width_mm"], self.tile_t, self.u(0.35, 0.7))
        self.disc_mesh = disc_mesh("disc", self.disc_d, self.disc_t, self.u(0.5, 1.0))

    def make_table(self):
        """A table top (a slab, large enough for the World and the pieces around it) standing on
        a floor; at steep tilts its edge and the floor can come into view."""
        kind = self.spec["table"]
        cells = [(t["q"], t["r"]) for t in self.position["tiles"]]
        cells += [(s["q"], s["r"]) for s in self.position["stacks"]]
        pts = np.array([geometry.cell_centre_mm(q, r, self.pitch) for q, r in cells])
        centre = pts.mean(axis=0)
        radius = float(np.max(np.linalg.norm(pts - centre, axis=1))) + self.pitch
        half = (radius + self.u(450, 900), radius + self.u(420, 750))
        thickness = self.u(18, 40)
        bm = bmesh.new()
        bmesh.ops.create_cube(bm, size=1.0)
        bmesh.ops.scale(bm, vec=(2 * half[0] * MM, 2 * half[1] * MM, thickness * MM), verts=bm.verts)
        bmesh.ops.translate(bm, vec=(0, 0, -thickness / 2 * MM), verts=bm.verts)
        mesh = bpy.data.meshes.new("table")
        bm.to_mesh(mesh)
        bm.free()
        shift = self.rng.uniform(-120, 120, 2)
        table = add_object("table", mesh, materials.table_material(kind, self.rng),
                           ((centre[0] + shift[0]) * MM, (centre[1] + shift[1]) * MM, 0.0),
                           (0, 0, self.u(0, math.pi)))
        table.modifiers.new("rounded edge", "BEVEL").width = 0.004
        floor_colour = [(0.25, 0.2, 0.15), (0.35, 0.35, 0.33), (0.12, 0.1, 0.09), (0.4, 0.3, 0.2)]
        floor_mesh = bpy.data.meshes.new("floor")
        bm = bmesh.new()
        bmesh.ops.create_grid(bm, x_segments=1, y_segments=1, size=8.0)
        bm.to_mesh(floor_mesh)
        bm.free()
        add_object("floor", floor_mesh,
                   materials.simple_material("floor", floor_colour[int(self.rng.integers(4))], 0.7),
                   (centre[0] * MM, centre[1] * MM, -self.u(0.70, 0.78)))

    # ------------------------------------------------------------ the World
    def tile_point(self, q, r):
        x, y = geometry.cell_centre_mm(q, r, self.pitch)
        return x, y

    def place_world(self):
        jit = min(1.2, self.gap / 2.0)
        self.tile_pose = {}
        for t in self.position["tiles"]:
            q, r = t["q"], t["r"]
            x, y = self.tile_point(q, r)
            dx, dy = (float(np.clip(self.rng.normal(0, jit / 2), -jit, jit)) for _ in range(2))
            rot = math.radians(float(np.clip(self.rng.normal(0, 1.3), -3.0, 3.0)))
            x, y = x + dx, y + dy
            flip = math.pi if t["colour"] == "black" else 0.0
            z = self.tile_t / 2.0 + 0.002
            add_object(f"tile {q},{r}", self.tile_mesh, self.tile_mat, (x * MM, y * MM, z * MM),
                       (flip, 0.0, rot))
            self.tile_pose[(q, r)] = (x, y)
            top = (x, y, self.tile_t)
            self.truth_tiles.append((q, r, top))
            self.obstacles.append((x, y, self.pitch * 0.62))

    def place_stacks(self):
        lean_scale = self.u(0.1, 0.6)
        for s in self.position["stacks"]:
            q, r = s["q"], s["r"]
            on_tile = (q, r) in self.tile_pose
            if on_tile:
                x, y = self.tile_pose[(q, r)]
                base_z = self.tile_t
            else:
                x, y = self.tile_point(q, r)
                base_z = 0.0
                self.obstacles.append((x, y, self.pitch * 0.62))
            off = 2.2 if on_tile else 3.5
            x += float(np.clip(self.rng.normal(0, off / 2), -off, off))
            y += float(np.clip(self.rng.normal(0, off / 2), -off, off))
            base = (x, y, base_z)
            lean_dir = self.u(0, 2 * math.pi)
            lean = lean_scale * self.u(0.0, 1.0)
            twist = self.u(0, 2 * math.pi)
            cx, cy = x, y
            for k, colour in enumerate(s["discs"]):
                cx += lean * math.cos(lean_dir) + float(self.rng.normal(0, 0.35))
                cy += lean * math.sin(lean_dir) + float(self.rng.normal(0, 0.35))
                z = base_z + (k + 0.5) * self.disc_t + 0.0005 * k
                tilt = math.radians(self.u(0, 0.8))
                add_object(f"disc {q},{r} #{k}", self.disc_mesh, self.disc_mats[colour],
                           (cx * MM, cy * MM, z * MM),
                           (tilt * math.cos(twist), tilt * math.sin(twist), twist + k * self.u(0, 1.0)))
                if k == 0:
                    base = (cx, cy, base_z)
            top = (cx, cy, base_z + len(s["discs"]) * self.disc_t + 0.0005 * (len(s["discs"]) - 1))
            self.truth_stacks.append((q, r, base, top, on_tile))

    # ------------------------------------------------------------ around the World
    def world_extent(self):
        pts = np.array([(x, y) for x, y, _ in self.obstacles])
        centre = pts.mean(axis=0)
        radius = float(np.max(np.linalg.norm(pts - centre, axis=1))) + self.pitch * 0.6
        return centre, radius

    def free_spot(self, radius_mm, prefer_angle=None, spread=math.pi):
        centre, wr = self.world_extent()
        for attempt in range(200):
            ang = self.u(0, 2 * math.pi) if prefer_angle is None else prefer_angle + self.u(-spread, spread) / 2
            dist = wr + radius_mm + self.u(25, 110) + attempt * 2
            x, y = centre[0] + dist * math.cos(ang), centre[1] + dist * math.sin(ang)
            if all(math.hypot(x - ox, y - oy) > radius_mm + orad + 20 for ox, oy, orad in self.obstacles):
                return x, y
        return x, y

    def place_supply(self):
        left = int(self.position.get("tiles_left",
                                     self.position.get("total_tiles", 39) - len(self.position["tiles"])))
        if left <= 0:
            return
        piles = max(1, math.ceil(left / int(self.rng.integers(5, 12))))
        counts = np.full(piles, left // piles)
        counts[: left % piles] += 1
        base_angle = self.u(0, 2 * math.pi)
        for p, count in enumerate(counts):
            spot = self.free_spot(self.pitch * 0.7, base_angle + p * 0.3, 0.5)
            x0, y0 = spot
            messy = self.u(1.0, 6.0)
            for k in range(int(count)):
                x = x0 + float(self.rng.normal(0, messy))
                y = y0 + float(self.rng.normal(0, messy))
                flip = math.pi if self.rng.random() < 0.5 else 0.0
                z = (k + 0.5) * self.tile_t * 1.01 + 0.002
                add_object(f"supply {p}#{k}", self.tile_mesh, self.tile_mat, (x * MM, y * MM, z * MM),
                           (flip + math.radians(self.u(-0.6, 0.6)), math.radians(self.u(-0.6, 0.6)),
                            self.u(0, math.pi)))
            self.obstacles.append((x0, y0, self.pitch * 0.7 + 2 * messy))

    def place_reserves(self):
        on_table = {"white": 0, "black": 0}
        for s in self.position["stacks"]:
            for d in s["discs"]:
                on_table[d] += 1
        reserves = self.position.get("reserves") or {}
        side = self.u(0, 2 * math.pi)
        for i, colour in enumerate(("white", "black")):
            count = int(reserves.get(colour, 8 - on_table[colour]))
            if count <= 0:
                continue
            group = self.disc_d * (1.2 + 0.25 * min(count, 8) ** 0.5)
            x0, y0 = self.free_spot(group, side + i * math.pi, 1.2)
            self.obstacles.append((x0, y0, group))
            k = 0
            while k < count:
                pile = min(count - k, int(self.rng.choice([1, 1, 1, 2, 3, 4])))
                for _ in range(60):
                    ang, dist = self.u(0, 2 * math.pi), self.u(0, group - self.disc_d * 0.5)
                    x, y = x0 + dist * math.cos(ang), y0 + dist * math.sin(ang)
                    if all(math.hypot(x - ox, y - oy) > self.disc_d * 1.02 for ox, oy in self.reserve_spots):
                        break
                for j in range(pile):
                    z = (j + 0.5) * self.disc_t + 0.0005 * j
                    add_object(f"reserve {colour}#{k + j}", self.disc_mesh, self.disc_mats[colour],
                               ((x + self.rng.normal(0, 0.8)) * MM, (y + self.rng.normal(0, 0.8)) * MM, z * MM),
                               (0, 0, self.u(0, 6.28)))
                self.reserve_spots.append((x, y))
                k += pile

    def place_distractor(self):
        kind = str(self.rng.choice(["mug", "phone", "pencil", "coin", "die", "mug", "phone"]))
        if kind == "mug":
            r_mm = self.u(38, 45)
            x, y = self.free_spot(r_mm + 15)
            bpy.ops.mesh.primitive_cylinder_add(vertices=64, radius=r_mm * MM, depth=self.u(85, 105) * MM,
                                                location=(x * MM, y * MM, 0.05))
            mug = bpy.context.object
            mug.location.z = mug.dimensions.z / 2
            mod = mug.modifiers.new("shell", "SOLIDIFY")
            mod.thickness = 0.004
            bm = bmesh.new()
            bm.from_mesh(mug.data)
            top = [f for f in bm.faces if f.normal.z > 0.9]
            bmesh.ops.delete(bm, geom=top, context="FACES_ONLY")
            bm.to_mesh(mug.data)
            bm.free()
            mug.modifiers.new("bevel", "BEVEL").width = 0.0015
            colour = [(0.8, 0.8, 0.78), (0.05, 0.15, 0.4), (0.6, 0.1, 0.05), (0.85, 0.6, 0.1)][int(self.rng.integers(4))]
            mug.data.materials.append(materials.simple_material("mug", colour, 0.15, coat=0.5))
            for p in mug.data.polygons:
                p.use_smooth = True
            bpy.ops.mesh.primitive_torus_add(major_radius=0.028, minor_radius=0.006,
                                             location=((x + r_mm + 12) * MM, y * MM, mug.dimensions.z * 0.55),
                                             rotation=(math.pi / 2, 0, 0))
            handle = bpy.context.object
            handle.data.materials.append(mug.data.materials[0])
            self.obstacles.append((x, y, r_mm + 40))
        elif kind == "phone":
            w, h = self.u(70, 78), self.u(145, 165)
            x, y = self.free_spot(h / 2)
            bpy.ops.mesh.primitive_cube_add(size=1, location=(x * MM, y * MM, 0.004))
            ph = bpy.context.object
            ph.scale = (w * MM, h * MM, 0.008)
            ph.rotation_euler.z = self.u(0, math.pi)
            ph.modifiers.new("bevel", "BEVEL").width = 0.003
            ph.data.materials.append(materials.simple_material("phone", (0.01, 0.01, 0.012), 0.05, coat=1.0))
            self.obstacles.append((x, y, h / 2))
        elif kind == "pencil":
            length = self.u(140, 180)
            x, y = self.free_spot(length / 2)
            bpy.ops.mesh.primitive_cylinder_add(vertices=6, radius=0.0037, depth=length * MM,
                                                location=(x * MM, y * MM, 0.0033),
                                                rotation=(math.pi / 2, 0, self.u(0, math.pi)))
            bpy.context.object.data.materials.append(
                materials.simple_material("pencil", (0.8, 0.5, 0.02), 0.35))
            self.obstacles.append((x, y, length / 2))
        elif kind == "coin":
            x, y = self.free_spot(15)
            bpy.ops.mesh.primitive_cylinder_add(vertices=48, radius=self.u(10, 13) * MM, depth=0.0022,
                                                location=(x * MM, y * MM, 0.0011))
            bpy.context.object.data.materials.append(
                materials.simple_material("coin", (0.8, 0.6, 0.35), 0.3, metallic=1.0))
            self.obstacles.append((x, y, 15))
        else:
            s = self.u(14, 18)
            x, y = self.free_spot(s)
            bpy.ops.mesh.primitive_cube_add(size=s * MM, location=(x * MM, y * MM, s / 2 * MM),
                                            rotation=(0, 0, self.u(0, 3)))
            die = bpy.context.object
            die.modifiers.new("bevel", "BEVEL").width = 0.002
            die.modifiers[-1].segments = 3
            die.data.materials.append(materials.simple_material("die", (0.8, 0.8, 0.78), 0.3))
            self.obstacles.append((x, y, s))
        self.distractor = kind

    # ------------------------------------------------------------ a player's hand
    def place_hand(self, kind):
        """A player's hand and forearm, its fingers towards a tile on the World's edge: "beside" it,
        resting on the table 30-70 mm short of the tile's edge (what vision should ignore), or "over"
        it, held 40-90 mm above the table with the fingertips over the tile (it hides the cells
        under it, as a hand about to move a stack does). Placed once the camera is, from random
        numbers of its own: the scene is otherwise the one the spec makes without a hand. Where it
        can, the hand lies in the photo and clear of the supply, the reserves and the distractor."""
        rng = np.random.default_rng([self.spec["seed"], 11])
        u = lambda a, b: float(rng.uniform(a, b))
        size = u(0.9, 1.1)
        reach = 116.0 * size                               # palm centre to the middle fingertip
        poses = self.tile_pose
        edge = [c for c in poses if not all(n in poses for n in neighbours(c))]
        centre = np.mean(list(poses.values()), axis=0)
        props = self.obstacles[len(poses):]               # all but the tiles: stacks, supply, reserves, prop
        W, H = self.settings["width"], self.settings["height"]
        best = None
        for i in rng.permutation(len(edge)):
            tile = np.array(poses[edge[i]])
            out = tile - centre
            out = out / (np.linalg.norm(out) + 1e-9)
            if kind == "over":
                tips, lift = tile + out * u(-0.2, 0.3) * self.pitch, u(40, 90)
            else:
                tips, lift = tile + out * (self.pitch / 2 + u(30, 70)), 0.0
            palm = tips + out * reach
            arm = [palm + out * d for d in np.linspace(40, 340, 7)]
            uv = geometry.project([(*tips, 0.0), (*palm, 0.0)], self.K, self.R, self.t)
            in_photo = float(np.mean((uv[:, 0] > 0.05 * W) & (uv[:, 0] < 0.95 * W) &
                                     (uv[:, 1] > 0.05 * H) & (uv[:, 1] < 0.95 * H)))
            clear = min([math.hypot(p[0] - ox, p[1] - oy) - orad for p in [palm, *arm] for ox, oy, orad in props]
                        or [1e9])
            score = in_photo * 2 + min(clear, 60.0) / 60.0
            if best is None or score > best[0]:
                best = (score, palm, out, lift)
        _, palm, out, lift = best
        side = np.array([-out[1], out[0]])
        thumb_side = float(rng.choice([-1.0, 1.0]))
        skin = materials.simple_material("skin", SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], 0.55)

        def at(along, across, z):             # hand frame (mm; along = towards the World) -> scene
            p = palm - out * along + side * across
            return np.array([p[0], p[1], lift + z])

        def smooth(obj, mat):                  # skin and cloth show no facets, nor their straight edges
            obj.data.materials.append(mat)
            for p in obj.data.polygons:
                p.use_smooth = True

        def limb(a, b, r1, r2, mat):
            a, b = np.asarray(a, float), np.asarray(b, float)
            d = Vector(b - a)
            bpy.ops.mesh.primitive_cone_add(vertices=24, radius1=r1 * MM, radius2=r2 * MM, depth=d.length * MM,
                                            location=tuple((a + b) / 2 * MM))
            obj = bpy.context.object
            obj.rotation_euler = d.normalized().to_track_quat("Z", "Y").to_euler()
            smooth(obj, mat)
            for end, r in ((a, r1), (b, r2)):
                bpy.ops.mesh.primitive_uv_sphere_add(segments=16, ring_count=8, radius=r * MM, location=tuple(end * MM))
                smooth(bpy.context.object, mat)

        bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=MM, location=tuple(at(0, 0, 12) * MM))
        hand = bpy.context.object
        hand.scale = (48 * size, 42 * size, 12 * size)
        hand.rotation_euler.z = math.atan2(-out[1], -out[0])
        smooth(hand, skin)
        for across, length, r in ((-27, 62, 7.5), (-9, 75, 8.5), (9, 78, 8.5), (27, 70, 8.0)):
            limb(at(38 * size, across * size, 9), at((38 + length) * size, across * 1.12 * size, 7),
                 r * size, r * size * 0.9, skin)
        limb(at(5 * size, thumb_side * 38 * size, 10), at(40 * size, thumb_side * 68 * size, 9),
             10 * size, 9 * size, skin)
        elbow_rise = u(10, 60)
        wrist, elbow = at(-45 * size, 0, 20), at(-360, 0, 22 + elbow_rise)
        limb(wrist, elbow, 28 * size, 36 * size, skin)
        if rng.random() < 0.6:                 # a sleeve from above the wrist
            cloth = materials.simple_material("sleeve", tuple(rng.uniform(0.02, 0.6, 3)), 0.9)
            limb(at(-110, 0, 21 + elbow_rise * 0.2), at(-380, 0, 23 + elbow_rise), 36 * size, 44 * size, cloth)
        self.hand = kind

    # ------------------------------------------------------------ light
    def make_light(self):
        kind = self.spec["light"]
        world = bpy.data.worlds.new("room")
        world.use_nodes = True
        bg = world.node_tree.nodes["Background"]
        self.scene.world = world
        centre, _ = self.world_extent()
        cx, cy = centre * MM
        u = self.u
        if kind == "overhead":
            light = bpy.data.lights.new("ceiling", "AREA")
            light.shape = "DISK" if self.rng.random() < 0.5 else "RECTANGLE"
            light.size = u(0.3, 1.2)
            light.size_y = u(0.3, 1.2)
            light.energy = u(120, 320)
            light.color = (1.0, u(0.93, 0.99), u(0.85, 0.95))
            obj = bpy.data.objects.new("ceiling", light)
            obj.location = (cx + u(-0.7, 0.7), cy + u(-0.7, 0.7), u(1.3, 2.1))
            bg.inputs["Color"].default_value = (0.55, 0.52, 0.48, 1)
            bg.inputs["Strength"].default_value = u(0.15, 0.4)
        elif kind == "window":
            light = bpy.data.lights.new("sun", "SUN")
            light.angle = math.radians(u(0.5, 3.0))
            light.energy = u(2.5, 6.0)
            light.color = (1.0, u(0.95, 1.0), u(0.9, 1.0))
            obj = bpy.data.objects.new("sun", light)
            elev, az = math.radians(u(18, 55)), u(0, 2 * math.pi)
            obj.rotation_euler = (math.pi / 2 - elev, 0, az)
            bg.inputs["Color"].default_value = (0.55, 0.65, 0.85, 1)
            bg.inputs["Strength"].default_value = u(0.3, 0.7)
        elif kind == "lamp":
            light = bpy.data.lights.new("lamp", "POINT")
            light.shadow_soft_size = u(0.01, 0.05)
            light.energy = u(15, 45)
            light.color = (1.0, u(0.62, 0.72), u(0.3, 0.42))
            obj = bpy.data.objects.new("lamp", light)
            ang = u(0, 2 * math.pi)
            dist = u(0.3, 0.6)
            obj.location = (cx + dist * math.cos(ang), cy + dist * math.sin(ang), u(0.3, 0.6))
            bg.inputs["Color"].default_value = (0.6, 0.45, 0.3, 1)
            bg.inputs["Strength"].default_value = u(0.02, 0.08)
        else:  # dim evening
            light = bpy.data.lights.new("evening", "AREA")
            light.size = u(1.0, 2.5)
            light.energy = u(20, 60)
            light.color = (1.0, u(0.75, 0.85), u(0.55, 0.7))
            obj = bpy.data.objects.new("evening", light)
            obj.location = (cx + u(-1.2, 1.2), cy + u(-1.2, 1.2), u(1.5, 2.5))
            bg.inputs["Color"].default_value = (0.25, 0.3, 0.45, 1)
            bg.inputs["Strength"].default_value = u(0.03, 0.1)
        if kind != "window":
            direction = Vector((cx, cy, 0)) - obj.location
            obj.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
        self.scene.collection.objects.link(obj)
        self.lights.append(light_record(obj, light))
        if kind != "window" and self.rng.random() < 0.4:     # a second, weaker source for glare
            fill = bpy.data.lights.new("fill", "AREA")
            fill.size = u(0.2, 0.6)
            fill.energy = light.energy * u(0.1, 0.3) if kind != "lamp" else u(5, 15)
            fobj = bpy.data.objects.new("fill", fill)
            ang = u(0, 2 * math.pi)
            fobj.location = (cx + 1.2 * math.cos(ang), cy + 1.2 * math.sin(ang), u(0.6, 1.5))
            fobj.rotation_euler = (Vector((cx, cy, 0)) - fobj.location).to_track_quat("-Z", "Y").to_euler()
            self.scene.collection.objects.link(fobj)
            self.lights.append(light_record(fobj, fill))

    # ------------------------------------------------------------ camera
    def key_points(self):
        pts = []
        r = self.profile["tile_width_mm"] / math.sqrt(3.0)
        for q, rr, top in self.truth_tiles:
            for k in range(6):
                a = math.radians(90 + 60 * k)
                pts.append((top[0] + r * math.cos(a), top[1] + r * math.sin(a), top[2]))
        for *_, base, top, _on in self.truth_stacks:
            for k in range(4):
                a = k * math.pi / 2
                rd = self.disc_d / 2
                pts.append((top[0] + rd * math.cos(a), top[1] + rd * math.sin(a), top[2]))
                pts.append((base[0] + rd * math.cos(a), base[1] + rd * math.sin(a), base[2]))
        return np.array(pts)

    def make_camera(self):
        s = self.settings
        W, H = s["width"], s["height"]
        band = self.spec["tilt_band"]
        lo, hi = {"0-15": (0, 15), "15-35": (15, 35), "35-60": (35, 60)}[band]
        self.tilt = self.u(lo, hi)
        self.azimuth = (self.u(0, 360) + self.spec.get("azimuth_offset_deg", 0.0)) % 360
        self.roll = float(np.clip(self.rng.normal(0, 2.0), -5, 5))
        self.hfov = self.u(55, 80)
        K = geometry.intrinsics(W, H, self.hfov)
        pts = self.key_points()
        centre = pts.mean(axis=0)
        spread = np.ptp(pts[:, :2], axis=0).max()
        margin = 0.05
        for attempt in range(40):
            shift = self.rng.normal(0, 0.18, 2) * spread * (0.9 ** attempt)
            target = np.array([centre[0] + shift[0], centre[1] + shift[1], self.tile_t])
            fits = None
            for d in np.arange(300.0, 1600.0, 10.0):
                C, R = geometry.look_pose(target, d, self.tilt, self.azimuth, self.roll)
                uv = geometry.project(pts, K, R, -R @ C)
                if (uv[:, 0].min() > margin * W and uv[:, 0].max() < (1 - margin) * W
                        and uv[:, 1].min() > margin * H and uv[:, 1].max() < (1 - margin) * H):
                    fits = d
                    break
            if fits is not None and fits <= 1000.0:
                break
        d_min = max(fits if fits is not None else 1600.0, 350.0)
        self.distance = self.u(d_min, max(d_min, min(1000.0, d_min * 1.45)))
        C, R = geometry.look_pose(target, self.distance, self.tilt, self.azimuth, self.roll)
        self.K, self.R, self.C, self.t = K, R, C, -R @ C
        self.target = target
        cam_data = bpy.data.cameras.new("phone")
        cam_data.sensor_fit = "HORIZONTAL"
        cam_data.sensor_width = 36.0
        cam_data.lens = 18.0 / math.tan(math.radians(self.hfov) / 2)
        cam_data.clip_start = 0.01
        cam_data.clip_end = 20.0
        cam = bpy.data.objects.new("phone", cam_data)
        blender_rot = Matrix([list(R[0]), list(-R[1]), list(-R[2])]).transposed()
        cam.matrix_world = Matrix.Translation(Vector(C * MM)) @ blender_rot.to_4x4()
        self.scene.collection.objects.link(cam)
        self.scene.camera = cam
        self.camera_obj = cam

    # ------------------------------------------------------------ truth
    def visible(self, point_mm):
        """True when nothing lies between the camera and the point (a ray cast)."""
        depsgraph = bpy.context.evaluated_depsgraph_get()
        origin = Vector(self.C * MM)
        target = Vector(np.asarray(point_mm, float) * MM)
        direction = target - origin
        dist = direction.length
        hit, loc, *_ = self.scene.ray_cast(depsgraph, origin, direction.normalized(), distance=dist)
        return (not hit) or (loc - target).length < 0.0015

    def check_projection(self):
        """Our K, R, t against Blender's own camera projection (guards the truth)."""
        from bpy_extras.object_utils import world_to_camera_view
        W, H = self.settings["width"], self.settings["height"]
        for _q, _r, top in self.truth_tiles[:3]:
            ndc = world_to_camera_view(self.scene, self.camera_obj, Vector(np.asarray(top) * MM))
            ours = geometry.project([top], self.K, self.R, self.t)[0]
            theirs = (ndc.x * W - 0.5, (1 - ndc.y) * H - 0.5)   # same fov at any render size
            if abs(ours[0] - theirs[0]) > 0.05 or abs(ours[1] - theirs[1]) > 0.05:
                raise RuntimeError(f"projection mismatch: ours {ours}, Blender {theirs}")

    def truth(self):
        self.check_projection()
        pix = lambda p: [round(float(v), 2) for v in geometry.project([p], self.K, self.R, self.t)[0]]
        cells = []
        for q, r, top in self.truth_tiles:
            stacked = any(sq == q and sr == r for sq, sr, *_ in self.truth_stacks)
            cells.append({"q": q, "r": r, "tile": True, "world_mm": [round(v, 2) for v in top],
                          "pixel": pix(top), "visible": (not stacked) and self.visible(top)})
        for q, r, base, top, on_tile in self.truth_stacks:
            if not on_tile:
                cx, cy = base[0], base[1]
                cells.append({"q": q, "r": r, "tile": False, "world_mm": [round(cx, 2), round(cy, 2), 0.0],
                              "pixel": pix((cx, cy, 0.0)), "visible": False})
        stacks = [{"q": q, "r": r, "height": None, "on_tile": on_tile,
                   "top_world_mm": [round(v, 2) for v in top], "top_pixel": pix(top),
                   "top_visible": self.visible(top),
                   "base_world_mm": [round(v, 2) for v in base], "base_pixel": pix(base)}
                  for q, r, base, top, on_tile in self.truth_stacks]
        heights = {(s["q"], s["r"]): len(s["discs"]) for s in self.position["stacks"]}
        for s in stacks:
            s["height"] = heights[(s["q"], s["r"])]
        W, H = self.settings["width"], self.settings["height"]
        camera = {
            "model": "pinhole, no distortion; pixels: OpenCV convention (centre of top-left pixel = 0,0)",
            "image_size": [W, H],
            "K": [[round(v, 4) for v in row] for row in self.K],
            "R": [[round(v, 8) for v in row] for row in self.R],
            "t": [round(float(v), 4) for v in self.t],
            "centre_mm": [round(float(v), 3) for v in self.C],
            "target_mm": [round(float(v), 3) for v in self.target],
            "hfov_deg": round(self.hfov, 3),
            "tilt_deg": round(self.tilt, 3),
            "azimuth_deg": round(self.azimuth, 3),
            "roll_deg": round(self.roll, 3),
            "distance_mm": round(self.distance, 2),
        }
        lattice = {"pitch_mm": round(self.pitch, 3), "gap_mm": round(self.gap, 3),
                   "tile_top_z_mm": self.tile_t, "disc_thickness_mm": round(self.disc_t, 3)}
        return {"camera": camera, "lattice": lattice, "pixels": {"cells": cells, "stacks": stacks},
                "distractor": self.distractor, "hand": self.hand, "lights": self.lights}


def light_record(obj, light) -> dict:
    """Where a lamp is and which way it shines (scene mm; a sun's location means nothing), and its
    size: what a shadow's length and softness follow from."""
    record = {"type": light.type, "energy": round(float(light.energy), 2),
              "direction": [round(float(v), 4) for v in obj.rotation_euler.to_matrix() @ Vector((0, 0, -1))]}
    if light.type == "SUN":
        record["angle_deg"] = round(math.degrees(light.angle), 3)
    else:
        record["location_mm"] = [round(float(v) / MM, 1) for v in obj.location]
        if light.type == "AREA":
            record["size_mm"] = [round(light.size / MM, 1), round(light.size_y / MM, 1)]
        else:
            record["radius_mm"] = round(light.shadow_soft_size / MM, 1)
    return record


def render_spec(spec, exr_path, settings):
    builder = Builder(spec, settings)
    builder.build()
    truth = builder.truth()
    builder.scene.render.filepath = str(exr_path)
    bpy.ops.render.render(write_still=True)
    return truth
