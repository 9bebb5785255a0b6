"""Seeded random DeepCAD construction sequences for the parity oracle.

    program(seed, index) -> (doc, tags)

`doc` is a DeepCAD JSON document (entities + sequence, lengths in mm on a
scale of tens of mm); `tags` names what it contains (plane kinds, curve kinds,
arc sweeps, operations, extents, degenerate entities) so that disagreements
can be grouped. The same (seed, index) gives the same document, byte for byte
once written with `dumps`.

What the programs contain, as real DeepCAD/Text2CAD files do: sketch planes
on XY, XZ, YZ (in-plane turns, flipped normals) and oblique planes, with
offset origins, some on a face of an earlier extrude; lines; arcs of every
sweep (small, 90 degrees, exactly 180, over 180) turning either way along
their loop, with start and end stored in either order, start_angle not always
0 and `normal` stored as +z, -z or the world normal (in the sketch plane's
own coordinates that is in-plane for XZ and YZ sketches); circles and circles
split into two half arcs; holes, several profiles per sketch and the disc
that fills a hole as a profile of its own; NewBody/Join/Cut/Intersect;
OneSide/Symmetric/TwoSides; empty extrudes; and at a small rate degenerate
entities (zero-length lines, zero radii, open loops, zero extents, two half
arcs on the same side of their circle). Profiles are made from shapes that
cannot cross themselves, with holes placed inside.
Arcs follow the DeepCAD arc rule: the arc passes through
center + radius * R((start_angle + end_angle) / 2) * reference_vector.
"""
import json
import math
import random

TAU = 2 * math.pi


def dumps(doc):
    return json.dumps(doc) + "\n"


def _pt(p):
    return {"x": p[0], "y": p[1], "z": 0.0}


def _vec(v):
    return {"x": v[0], "y": v[1], "z": v[2]}


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _neg(v):
    return tuple(-x for x in v)


def _on_circle(c, r, angle):
    return (c[0] + r * math.cos(angle), c[1] + r * math.sin(angle))


def _rotate_about(p, c, angle):
    s, co = math.sin(angle), math.cos(angle)
    dx, dy = p[0] - c[0], p[1] - c[1]
    return (c[0] + co * dx - s * dy, c[1] + s * dx + co * dy)


class Generator:
    def __init__(self, rng):
        self.rng = rng
        self.tags = set()
        self.ids = set()

    # --- helpers -----------------------------------------------------------

    def uid(self, prefix):
        while True:
            name = prefix + "".join(self.rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZ", k=3))
            if name not in self.ids:
                self.ids.add(name)
                return name

    def length(self, lo, hi):
        """A length in [lo, hi]: half the time on a 0.5 mm grid, as CAD users type them."""
        v = self.rng.uniform(lo, hi)
        if self.rng.random() < 0.5:
            v = max(lo, round(v * 2) / 2)
        return v

    def angle(self):
        return self.rng.choice([0.0, 0.0, math.pi / 2, self.rng.uniform(0, TAU)])

    # --- curves ------------------------------------------------------------

    def line(self, p, q):
        return {"type": "Line3D", "start_point": _pt(p), "end_point": _pt(q),
                "curve": self.uid("C")}

    def arc(self, c, r, p0, p1, a0, sweep, world_normal):
        """The arc of centre c and radius r turning counterclockwise by `sweep` from
        p0 (at angle a0) to p1, in the stored form of DeepCAD files."""
        rng = self.rng
        start_angle = 0.0 if rng.random() < 0.6 else rng.uniform(-math.pi, math.pi)
        ref_angle = a0 - start_angle  # R(start_angle) * ref points at p0
        normal = rng.choice([(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), world_normal,
                             _neg(world_normal)])
        if normal[2] == 0.0:
            self.tags.add("arc-normal-in-plane")
        start, end = (p0, p1) if rng.random() < 0.5 else (p1, p0)
        if abs(sweep - math.pi) < 1e-12:
            self.tags.add("arc-180")
        elif abs(sweep - math.pi / 2) < 1e-12:
            self.tags.add("arc-90")
        elif sweep > math.pi:
            self.tags.add("arc-over-180")
        else:
            self.tags.add("arc-under-180")
        if start_angle != 0.0:
            self.tags.add("arc-start-angle")
        return {"type": "Arc3D", "start_point": _pt(start), "end_point": _pt(end),
                "center_point": _pt(c), "radius": r,
                "normal": _vec(normal), "start_angle": start_angle,
                "end_angle": start_angle + sweep,
                "reference_vector": _vec((math.cos(ref_angle), math.sin(ref_angle), 0.0)),
                "curve": self.uid("C")}

    def circle(self, c, r, world_normal):
        self.tags.add("circle")
        normal = self.rng.choice([(0.0, 0.0, 1.0), world_normal])
        return {"type": "Circle3D", "center_point": _pt(c), "radius": r,
                "normal": _vec(normal), "curve": self.uid("C")}

    # --- closed shapes: (curves, inscribed disc (centre, radius) or None, circumradius)

    def rectangle(self, c, wn):
        w, h, turn = self.length(4, 40), self.length(4, 40), self.angle()
        corners = [_rotate_about((c[0] + sx * w / 2, c[1] + sy * h / 2), c, turn)
                   for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        self.tags.add("rectangle")
        curves = [self.line(corners[i], corners[(i + 1) % 4]) for i in range(4)]
        return curves, (c, min(w, h) / 2), math.hypot(w, h) / 2

    def disc(self, c, wn):
        r = self.length(2, 20)
        if self.rng.random() < 0.3:
            # A full circle stored as two half arcs.
            self.tags.add("split-circle")
            a0 = self.rng.choice([0.0, math.pi / 2, self.rng.uniform(0, TAU)])
            p0, p1 = _on_circle(c, r, a0), _on_circle(c, r, a0 + math.pi)
            curves = [self.arc(c, r, p0, p1, a0, math.pi, wn),
                      self.arc(c, r, p1, p0, a0 + math.pi, math.pi, wn)]
        else:
            curves = [self.circle(c, r, wn)]
        return curves, (c, r), r

    def slot(self, c, wn):
        half, r, turn = self.length(2, 20), self.length(2, 10), self.angle()
        self.tags.add("slot")
        u = (math.cos(turn), math.sin(turn))
        c0 = (c[0] - half * u[0], c[1] - half * u[1])
        c1 = (c[0] + half * u[0], c[1] + half * u[1])
        # Counterclockwise: along -r side from c0 to c1, round c1, back along +r side.
        a_low = turn - math.pi / 2
        p0, p1 = _on_circle(c0, r, a_low), _on_circle(c1, r, a_low)
        p2, p3 = _on_circle(c1, r, a_low + math.pi), _on_circle(c0, r, a_low + math.pi)
        curves = [self.line(p0, p1), self.arc(c1, r, p1, p2, a_low, math.pi, wn),
                  self.line(p2, p3), self.arc(c0, r, p3, p0, a_low + math.pi, math.pi, wn)]
        return curves, (c, r), half + r

    def rounded_rectangle(self, c, wn):
        w, h, turn = self.length(6, 40), self.length(6, 40), self.angle()
        r = self.rng.uniform(0.1, 0.45) * min(w, h)
        self.tags.add("rounded-rectangle")
        curves = []
        corner_centres = [(w / 2 - r, -h / 2 + r), (w / 2 - r, h / 2 - r),
                          (-w / 2 + r, h / 2 - r), (-w / 2 + r, -h / 2 + r)]
        points = []  # (arc start, arc end) per corner, counterclockwise
        for k, (x, y) in enumerate(corner_centres):
            a0 = -math.pi / 2 + k * math.pi / 2
            cc = (c[0] + x, c[1] + y)
            points.append((cc, _rotate_about(_on_circle(cc, r, a0), c, turn),
                           _rotate_about(_on_circle(cc, r, a0 + math.pi / 2), c, turn),
                           a0 + turn))
        for k, (cc, s, e, a0) in enumerate(points):
            curves.append(self.arc(_rotate_about(cc, c, turn), r, s, e, a0, math.pi / 2, wn))
            curves.append(self.line(e, points[(k + 1) % 4][1]))
        return curves, (c, min(w, h) / 2), math.hypot(w, h) / 2

    def polygon(self, c, wn):
        """A convex polygon on a circle, some edges bulging outward as arcs whose radius
        is at least the circle's (so they stay inside it and cannot cross)."""
        n = self.rng.randint(3, 7)
        big = self.length(6, 22)
        while True:
            angles = sorted(self.rng.uniform(0, TAU) for _ in range(n))
            gaps = [(angles[(i + 1) % n] - angles[i]) % TAU for i in range(n)]
            if max(gaps) < 0.8 * math.pi and min(gaps) > 0.15:
                break
        self.tags.add("polygon")
        pts = [_on_circle(c, big, a) for a in angles]
        curves = []
        for i in range(n):
            p, q = pts[i], pts[(i + 1) % n]
            if self.rng.random() < 0.5:
                curves.append(self.line(p, q))
                continue
            chord = math.hypot(q[0] - p[0], q[1] - p[1])
            if self.rng.random() < 0.4:
                rho, o = big, c  # an arc of the circle itself
            else:
                rho = big * self.rng.uniform(1.0, 3.0)
                mid = ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
                d = math.sqrt(max(rho * rho - chord * chord / 4, 0.0))
                # Centre on the polygon's side of the chord: the arc bulges outward.
                inward = (-(q[1] - p[1]) / chord, (q[0] - p[0]) / chord)
                o = (mid[0] + d * inward[0], mid[1] + d * inward[1])
            a0 = math.atan2(p[1] - o[1], p[0] - o[0])
            sweep = 2 * math.asin(min(1.0, chord / (2 * rho)))
            curves.append(self.arc(o, rho, p, q, a0, sweep, wn))
        return curves, (c, big * math.cos(max(gaps) / 2)), big

    def notched_rectangle(self, c, wn):
        """A rectangle whose top edge is an arc dipping into it (turning clockwise)."""
        w, h = self.length(8, 40), self.length(8, 40)
        # At most a half circle (sag w/2): a deeper notch would be a major arc.
        sag = min(self.rng.uniform(0.1, 0.45) * h, self.rng.uniform(0.2, 0.95) * w / 2)
        if self.rng.random() < 0.4 and w / 2 <= 0.45 * h:
            sag = w / 2  # a half-circle notch
        self.tags.add("notch")
        x0, x1, y0, y1 = c[0] - w / 2, c[0] + w / 2, c[1] - h / 2, c[1] + h / 2
        rho = (sag * sag + w * w / 4) / (2 * sag)
        o = (c[0], y1 - sag + rho)
        pa, pb = (x1, y1), (x0, y1)
        # Clockwise from pa to pb is counterclockwise from pb to pa.
        a0 = math.atan2(pb[1] - o[1], pb[0] - o[0])
        sweep = 2 * math.asin(min(1.0, w / (2 * rho)))
        if sag == w / 2:
            sweep = math.pi
        curves = [self.line((x0, y0), (x1, y0)), self.line((x1, y0), pa),
                  self.arc(o, rho, pb, pa, a0, sweep, wn), self.line(pb, (x0, y0))]
        return curves, ((c[0], c[1] - sag / 2), min(w, h - sag) / 2), math.hypot(w, h) / 2

    def pie(self, c, wn):
        """A sector: two radii and an arc of any sweep, 180 degrees (a half disc) included."""
        r = self.length(4, 20)
        sweep = self.rng.choice([self.rng.uniform(0.2, 1.2), math.pi / 2, math.pi,
                                 self.rng.uniform(math.pi + 0.2, TAU - 0.4)])
        a0 = self.angle()
        self.tags.add("pie")
        p0, p1 = _on_circle(c, r, a0), _on_circle(c, r, a0 + sweep)
        curves = [self.line(c, p0), self.arc(c, r, p0, p1, a0, sweep, wn), self.line(p1, c)]
        return curves, None, r

    def keyhole(self, c, wn):
        """A disc with a stem: an arc of more than 180 degrees closed by three lines."""
        r = self.length(4, 15)
        w = self.rng.uniform(0.3, 1.4) * r
        stem = self.rng.uniform(1.2, 2.5) * r
        turn = self.angle()
        self.tags.add("keyhole")
        yj = -math.sqrt(r * r - w * w / 4)
        local = [(w / 2, yj), (-w / 2, yj), (-w / 2, -stem), (w / 2, -stem)]
        q = [_rotate_about((c[0] + x, c[1] + y), c, turn) for x, y in local]
        a0 = math.atan2(yj, w / 2) + turn
        sweep = TAU - 2 * math.asin(w / (2 * r))
        curves = [self.arc(c, r, q[0], q[1], a0, sweep, wn), self.line(q[1], q[2]),
                  self.line(q[2], q[3]), self.line(q[3], q[0])]
        return curves, (c, r), max(r, math.hypot(w / 2, stem))

    def shape(self, c, wn):
        kind = self.rng.choices(
            [self.rectangle, self.disc, self.slot, self.rounded_rectangle, self.polygon,
             self.notched_rectangle, self.pie, self.keyhole],
            weights=[5, 4, 2, 2, 3, 1.5, 1.5, 1])[0]
        return kind(c, wn)

    def hole(self, c, room, wn):
        """A shape scaled to a circumradius of at most `room`, centred at c."""
        kind = self.rng.choice([self.disc, self.disc, self.rectangle, self.slot, self.polygon,
                                self.rounded_rectangle])
        curves, _, size = kind((0.0, 0.0), wn)
        return _moved(curves, c, room / size * self.rng.uniform(0.5, 1.0))

    # --- presentation: what real files do to a loop's curves -----------------

    def present(self, curves):
        curves = [dict(cv) for cv in curves]
        for cv in curves:
            if cv["type"] == "Line3D" and self.rng.random() < 0.35:
                cv["start_point"], cv["end_point"] = cv["end_point"], cv["start_point"]
                self.tags.add("flipped-line")
        if len(curves) > 1:
            k = self.rng.randrange(len(curves))
            curves = curves[k:] + curves[:k]
            if self.rng.random() < 0.5:
                curves.reverse()
            if self.rng.random() < 0.1:
                self.rng.shuffle(curves)
                self.tags.add("shuffled-loop")
        return curves

    # --- sketches and programs -----------------------------------------------

    def frame(self, placed):
        """A right-handed sketch frame: (origin, x_axis, y_axis, z_axis)."""
        rng = self.rng
        if placed and rng.random() < 0.4:
            # On the start or end face of an earlier prism, facing either way.
            origin, x, y, z, lo, hi = rng.choice(placed)
            at = rng.choice([lo, hi])
            origin = tuple(o + at * zz for o, zz in zip(origin, z))
            shift = (rng.uniform(-5, 5), rng.uniform(-5, 5)) if rng.random() < 0.5 else (0, 0)
            origin = tuple(o + shift[0] * xx + shift[1] * yy for o, xx, yy in zip(origin, x, y))
            if rng.random() < 0.5:
                x, z = _neg(x), _neg(z)
            self.tags.add("on-face")
            return origin, x, y, z
        kind = rng.choices(["XY", "XZ", "YZ", "oblique"], weights=[4, 3, 2, 2])[0]
        self.tags.add("plane-" + kind)
        if kind == "oblique":
            q = [rng.gauss(0, 1) for _ in range(4)]
            n = math.sqrt(sum(v * v for v in q))
            w, a, b, cq = (v / n for v in q)
            x = (1 - 2 * (b * b + cq * cq), 2 * (a * b + w * cq), 2 * (a * cq - w * b))
            y = (2 * (a * b - w * cq), 1 - 2 * (a * a + cq * cq), 2 * (b * cq + w * a))
        else:
            x, y = {"XY": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
                    "XZ": ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
                    "YZ": ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0))}[kind]
            for _ in range(rng.randrange(4)):  # in-plane quarter turns
                x, y = y, _neg(x)
            if rng.random() < 0.3:
                x, y = y, x  # the normal z = x cross y then points the other way
        z = _cross(x, y)
        z = tuple(0.0 if v == 0 else v for v in z)  # no -0.0 in the files
        offset = rng.random() < 0.7
        origin = tuple(rng.uniform(-12, 12) if offset else 0.0 for _ in range(3))
        return origin, x, y, z

    def sketch(self, placed, single=False):
        origin, x, y, z = self.frame(placed)
        wn = z  # the sketch normal in world coordinates
        profiles = {}
        n_shapes = 1 if single else self.rng.choices([1, 2, 3], weights=[60, 28, 12])[0]
        spots = []
        for _ in range(n_shapes):
            for _ in range(20):
                spread = 3 if single else 10
                c = ((self.rng.uniform(-spread, spread), self.rng.uniform(-spread, spread))
                     if self.rng.random() < 0.8 or spots else (0.0, 0.0))
                saved = set(self.tags)
                curves, inscribed, size = self.shape(c, wn)
                if all(math.hypot(c[0] - s[0], c[1] - s[1]) > size + s[2] + 1.0 for s in spots):
                    break
                self.tags = saved
            else:
                continue
            spots.append((c[0], c[1], size))
            loops = [{"is_outer": True, "profile_curves": self.present(curves)}]
            holes = []
            if inscribed is not None and inscribed[1] > 2.0 and self.rng.random() < 0.4:
                (cx, cy), rho = inscribed
                count = 2 if self.rng.random() < 0.3 else 1
                if count == 1:
                    off = self.rng.uniform(0, 0.3) * rho
                    t = self.rng.uniform(0, TAU)
                    centres, room = [(cx + off * math.cos(t), cy + off * math.sin(t))], 0.6 * rho
                else:
                    t = self.rng.uniform(0, TAU)
                    d = 0.5 * rho
                    centres = [(cx + d * math.cos(t), cy + d * math.sin(t)),
                               (cx - d * math.cos(t), cy - d * math.sin(t))]
                    room = 0.4 * rho
                for hc in centres:
                    hole = self.hole(hc, room, wn)
                    if hole is not None:
                        holes.append(hole)
                        loops.append({"is_outer": False, "profile_curves": self.present(hole)})
                if holes:
                    self.tags.add("hole")
            if len(loops) > 1 and self.rng.random() < 0.1:
                flag = self.rng.choice([True, False])
                for lp in loops:
                    lp["is_outer"] = flag  # the flags then do not single one out
                self.tags.add("outer-by-size")
            profiles[self.uid("P")] = {"loops": loops}
            for hole in holes:
                if self.rng.random() < 0.3:
                    # The disc inside a hole is a profile of its own, as in real sketches.
                    profiles[self.uid("P")] = {
                        "loops": [{"is_outer": True, "profile_curves": self.present(hole)}]}
                    self.tags.add("hole-filler")
        sketch = {"type": "Sketch", "name": "Sketch",
                  "transform": {"origin": _vec(origin), "x_axis": _vec(x), "y_axis": _vec(y),
                                "z_axis": _vec(z)},
                  "profiles": profiles}
        return sketch, (origin, x, y, z)

    def degenerate(self, sketch, used):
        """Breaks one used profile of the sketch: a zero-length line, a zero radius, an
        open loop, or two half arcs of one circle that the arc rule puts on the same side
        (a loop enclosing nothing). Returns the profile ids the extrude then uses."""
        kind = self.rng.choices(["zero-length-line", "zero-radius", "open-loop", "same-side-arcs"],
                                weights=[1, 1, 1, 0.5])[0]
        self.tags.add("degenerate-" + kind)
        if kind == "same-side-arcs":
            c, r = (self.rng.uniform(-5, 5), self.rng.uniform(-5, 5)), self.length(2, 10)
            a0 = self.angle()
            p0, p1 = _on_circle(c, r, a0), _on_circle(c, r, a0 + math.pi)
            # Both halves turn counterclockwise from p0: the second one, stored from p1
            # to p0, then runs back over the first.
            halves = [self.arc(c, r, p0, p1, a0, math.pi, (0.0, 0.0, 1.0)),
                      self.arc(c, r, p0, p1, a0, math.pi, (0.0, 0.0, 1.0))]
            halves[1]["start_point"], halves[1]["end_point"] = _pt(p1), _pt(p0)
            pid = self.uid("P")
            sketch["profiles"][pid] = {"loops": [{"is_outer": True, "profile_curves": halves}]}
            return used + [pid]
        profile = sketch["profiles"][self.rng.choice(used)]
        loop = self.rng.choice(profile["loops"])
        curves = loop["profile_curves"]
        if kind == "zero-length-line":
            at = dict(curves[0].get("start_point") or curves[0]["center_point"])
            curves.insert(self.rng.randrange(len(curves) + 1),
                          {"type": "Line3D", "start_point": at, "end_point": dict(at),
                           "curve": self.uid("C")})
        elif kind == "zero-radius":
            c = curves[0].get("center_point") or curves[0]["start_point"]
            pid = self.uid("P")
            sketch["profiles"][pid] = {"loops": [{"is_outer": True, "profile_curves": [
                {"type": "Circle3D", "center_point": dict(c), "radius": 0.0,
                 "normal": _vec((0.0, 0.0, 1.0)), "curve": self.uid("C")}]}]}
            return used + [pid]
        elif len(curves) > 1:
            del curves[self.rng.randrange(len(curves))]
        else:
            loop["profile_curves"] = [{"type": "Line3D", "start_point": _pt((0.0, 0.0)),
                                       "end_point": _pt((5.0, 0.0)), "curve": self.uid("C")}]
        return used

    def extent(self, symmetric=False):
        rng = self.rng
        kind = rng.choices(["OneSide", "Symmetric", "TwoSides"], weights=[6, 2, 2])[0]
        if symmetric:
            kind = "Symmetric"
        self.tags.add("extent-" + kind)
        one = self.length(10, 30) if symmetric else self.length(1, 25)
        if kind == "OneSide" and rng.random() < 0.1:
            one = -one
            self.tags.add("extent-negative")
        ext = {"start_extent": {"type": "ProfilePlaneStartDefinition"},
               "extent_type": kind + "FeatureExtentType",
               "extent_one": {"distance": {"type": "ModelParameter", "role": "AlongDistance",
                                           "name": "none", "value": one},
                              "taper_angle": {"type": "ModelParameter", "role": "TaperAngle",
                                              "name": "none", "value": 0.0},
                              "type": "DistanceExtentDefinition"}}
        lo, hi = min(0.0, one), max(0.0, one)
        if kind == "Symmetric":
            lo, hi = -one, one
        if kind == "TwoSides":
            two = self.length(1, 15)
            lo = -two
            ext["extent_two"] = {"distance": {"type": "ModelParameter",
                                              "role": "AgainstDistance", "name": "none",
                                              "value": two},
                                 "taper_angle": {"type": "ModelParameter", "role": "Side2TaperAngle",
                                                 "name": "none", "value": 0.0},
                                 "type": "DistanceExtentDefinition"}
        return ext, (lo, hi)

    def program(self):
        rng = self.rng
        n = rng.choices([1, 2, 3, 4, 5, 6], weights=[40, 28, 15, 9, 5, 3])[0]
        entities, sequence, placed, sketches = {}, [], [], []
        broken = rng.random() < 0.03
        for k in range(n):
            if k == 0:
                op = rng.choices(["NewBody", "Join", "Cut", "Intersect"],
                                 weights=[97, 2, 0.5, 0.5])[0]
            else:
                op = rng.choices(["NewBody", "Join", "Cut", "Intersect"],
                                 weights=[15, 35, 40, 8])[0]
            # An intersect keeps something only where its tool overlaps the body: one
            # profile near the sketch origin, extruded both ways.
            overlap = op == "Intersect" and k > 0
            if sketches and rng.random() < 0.1 and not overlap:
                sid, sketch, frame = rng.choice(sketches)
                self.tags.add("sketch-reused")
            else:
                sketch, frame = self.sketch(placed, single=overlap)
                if not sketch["profiles"]:
                    continue
                sid = self.uid("S")
                entities[sid] = sketch
                sketches.append((sid, sketch, frame))
                sequence.append({"index": len(sequence), "type": "Sketch", "entity": sid})
            self.tags.add("op-" + op)
            ids = list(sketch["profiles"])
            if k > 0 and rng.random() < 0.05:
                used = []
                self.tags.add("empty-extrude")
            elif rng.random() < 0.6:
                used = ids
            else:
                used = rng.sample(ids, rng.randint(1, len(ids)))
            if len(used) > 1:
                self.tags.add("multi-profile")
            ext, (lo, hi) = self.extent(symmetric=overlap)
            if broken and k == n - 1 and rng.random() < 0.25:
                ext["extent_one"]["distance"]["value"] = 0.0
                self.tags.add("degenerate-zero-extent")
            elif broken and k == n - 1 and used:
                used = self.degenerate(sketch, used)
            eid = self.uid("E")
            entities[eid] = dict({"type": "ExtrudeFeature", "name": "Extrude",
                                  "profiles": [{"profile": p, "sketch": sid} for p in used],
                                  "operation": op + "FeatureOperation"}, **ext)
            sequence.append({"index": len(sequence), "type": "ExtrudeFeature", "entity": eid})
            placed.append(tuple(frame) + (lo, hi))
        if rng.random() < 0.1:
            rng.shuffle(sequence)  # readers sort by index
        return {"entities": entities, "properties": {}, "sequence": sequence}


def _moved(curves, c, scale):
    """Curves made about the origin, scaled by `scale` and moved to c."""
    def move(p):
        return {"x": p["x"] * scale + c[0], "y": p["y"] * scale + c[1], "z": 0.0}

    out = []
    for cv in curves:
        cv = dict(cv)
        for key in ("start_point", "end_point", "center_point"):
            if key in cv:
                cv[key] = move(cv[key])
        if "radius" in cv:
            cv["radius"] = cv["radius"] * scale
        out.append(cv)
    return out


def program(seed, index):
    """The program `index` of the series `seed`, and its tags (sorted)."""
    gen = Generator(random.Random(f"cadclip-deepcad-parity:{seed}:{index}"))
    doc = gen.program()
    return doc, sorted(gen.tags)
