"""A second DeepCAD-JSON builder, on the PyPI OCCT bindings (module OCP).

Used only as a reference by tests/cad/deepcad_parity_test.cc: it builds a
DeepCAD construction sequence into a solid from the published semantics
(REFERENCE.md section 2, docs/INGEST.md "DeepCAD JSON") and measures it, so
that cadclip's C++ builder can be compared with it program by program. It is
written from those semantics, not from src/cad/deepcad.cc.

    build(doc, unit=1.0, symmetric_full=True) -> Built (shape or refusal)
    measure(shape) -> {volume, area, bbox, faces, solids}

Conventions: sketch (x, y) -> origin + x*x_axis + y*y_axis; an extrude runs
along the sketch's z_axis; every length (coordinates, radii, distances) is
the JSON number times `unit` (millimetres per JSON unit).
"""
import math

from OCP.BRepAlgoAPI import BRepAlgoAPI_Common, BRepAlgoAPI_Cut, BRepAlgoAPI_Fuse
from OCP.BRepBndLib import BRepBndLib
from OCP.BRepBuilderAPI import (BRepBuilderAPI_MakeEdge, BRepBuilderAPI_MakeFace,
                                BRepBuilderAPI_MakeVertex, BRepBuilderAPI_MakeWire,
                                BRepBuilderAPI_Transform)
from OCP.BRepCheck import BRepCheck_Analyzer
from OCP.BRepGProp import BRepGProp
from OCP.BRepPrimAPI import BRepPrimAPI_MakePrism
from OCP.Bnd import Bnd_Box
from OCP.GC import GC_MakeArcOfCircle
from OCP.GProp import GProp_GProps
from OCP.BRep import BRep_Builder
from OCP.ShapeFix import ShapeFix_Face, ShapeFix_Shape
from OCP.ShapeUpgrade import ShapeUpgrade_UnifySameDomain
from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_SOLID
from OCP.TopExp import TopExp, TopExp_Explorer
from OCP.TopoDS import TopoDS, TopoDS_Compound
from OCP.collections import List_TopoDS_Shape as ShapeList
from OCP.BRepAdaptor import BRepAdaptor_Curve, BRepAdaptor_Surface
from OCP.GeomAbs import (GeomAbs_Circle, GeomAbs_Cylinder, GeomAbs_Ellipse, GeomAbs_Line,
                         GeomAbs_Plane)
from OCP.collections import IndexedMap_TopoDS_Shape_TopTools_ShapeMapHasher as ShapeMap
from OCP.gp import gp_Ax2, gp_Circ, gp_Dir, gp_Pln, gp_Pnt, gp_Trsf, gp_Vec

OPERATIONS = {
    "NewBodyFeatureOperation": "fuse",
    "JoinFeatureOperation": "fuse",
    "CutFeatureOperation": "cut",
    "IntersectFeatureOperation": "common",
}


class Refused(Exception):
    """A program the semantics cannot build; `kind` is a short class name."""

    def __init__(self, kind, detail):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class Built:
    def __init__(self, shape=None, refused=None, warnings=()):
        self.shape = shape
        self.refused = refused  # a Refused, or None when shape holds the solid
        self.warnings = list(warnings)


# --- small vector helpers (plain tuples) -------------------------------------

def _add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def _sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def _mul(a, s):
    return tuple(x * s for x in a)


def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _norm(a):
    return math.sqrt(_dot(a, a))


def _field(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise Refused("bad-input", f"{where}: missing '{key}'")
    return obj[key]


def _number(obj, key, where):
    value = _field(obj, key, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Refused("bad-input", f"{where}.{key}: not a number")
    return float(value)


def _vec3(obj, key, where):
    v = _field(obj, key, where)
    return (_number(v, "x", f"{where}.{key}"), _number(v, "y", f"{where}.{key}"),
            _number(v, "z", f"{where}.{key}"))


def _pt2(obj, key, where, unit):
    x, y, _ = _vec3(obj, key, where)  # sketch-local: z is ignored
    return (x * unit, y * unit)


# --- sketches ------------------------------------------------------------------

class Frame:
    """A sketch plane: local (x, y) -> world point; `normal` is the unit z_axis."""

    def __init__(self, transform, where, unit):
        self.origin = _mul(_vec3(transform, "origin", where), unit)
        self.x = _vec3(transform, "x_axis", where)
        self.y = _vec3(transform, "y_axis", where)
        z = _vec3(transform, "z_axis", where)
        if _norm(z) == 0 or _norm(self.x) == 0 or _norm(self.y) == 0:
            raise Refused("bad-input", f"{where}: a zero axis")
        self.normal = _mul(z, 1 / _norm(z))
        # +1 when (x_axis, y_axis) turn counterclockwise seen from the normal.
        self.handedness = 1.0 if _dot(_cross(self.x, self.y), self.normal) > 0 else -1.0

    def world(self, p):
        return _add(self.origin, _add(_mul(self.x, p[0]), _mul(self.y, p[1])))

    def gp(self, p):
        return gp_Pnt(*self.world(p))


def _rot(v, angle):
    c, s = math.cos(angle), math.sin(angle)
    return (c * v[0] - s * v[1], s * v[0] + c * v[1])


# Lengths beyond this (mm) are no part's; an arc of zero sweep with such a radius
# is the straight line between its ends.
FAR_MM = 1e9


class Curve:
    """One sketch curve in local 2-D: a line or arc between two ends, or a circle."""

    def __init__(self, kind, a=None, b=None, mid=None, center=None, radius=None):
        self.kind, self.a, self.b, self.mid = kind, a, b, mid
        self.center, self.radius = center, radius


def _curve(json_curve, where, unit):
    kind = _field(json_curve, "type", where)
    if kind == "Line3D":
        return Curve("line", _pt2(json_curve, "start_point", where, unit),
                     _pt2(json_curve, "end_point", where, unit))
    if kind == "Circle3D":
        return Curve("circle", center=_pt2(json_curve, "center_point", where, unit),
                     radius=_number(json_curve, "radius", where) * unit)
    if kind == "Arc3D":
        center = _pt2(json_curve, "center_point", where, unit)
        radius = _number(json_curve, "radius", where) * unit
        sweep = _number(json_curve, "end_angle", where) - _number(json_curve, "start_angle", where)
        if abs(radius) > FAR_MM and abs(sweep) <= 1e-9:
            # A straight segment stored as an arc of zero sweep about a far centre.
            return Curve("line", _pt2(json_curve, "start_point", where, unit),
                         _pt2(json_curve, "end_point", where, unit))
        ref = _vec3(json_curve, "reference_vector", where)[:2]
        length = math.hypot(*ref)
        if length == 0:
            raise Refused("bad-input", f"{where}: zero reference_vector")
        theta = (_number(json_curve, "start_angle", where) +
                 _number(json_curve, "end_angle", where)) / 2
        # The arc passes through center + radius * R(theta) * reference_vector
        # (DeepCAD cadlib Arc.get_mid_point); its normal does not pick the side.
        direction = _rot((ref[0] / length, ref[1] / length), theta)
        mid = (center[0] + radius * direction[0], center[1] + radius * direction[1])
        return Curve("arc", _pt2(json_curve, "start_point", where, unit),
                     _pt2(json_curve, "end_point", where, unit), mid=mid, center=center,
                     radius=radius)
    raise Refused("bad-input", f"{where}: unknown curve type {kind!r}")


def _dist2(p, q):
    return math.hypot(p[0] - q[0], p[1] - q[1])


# Joints farther apart than the matching tolerance but within this share of the
# profile's extent are a gap to close (docs/INGEST.md, "What the builder heals").
GAP_RELATIVE = 1e-3


def _chain_healed(curves, tol, gap_tol, where, warnings):
    """_chain at the matching tolerance, else at the gap tolerance with a warning."""
    try:
        return _chain(curves, tol, where)
    except Refused:
        chain = _chain(curves, gap_tol, where)
        warnings.append(f"{where}: closed gaps between the loop's curves (up to {gap_tol})")
        return chain


def _chain(curves, tol, where):
    """Orders a loop's curves head to tail; returns [(curve, start, end)] in loop order."""
    first = curves[0]
    chain = [(first, first.a, first.b)]
    rest = list(curves[1:])
    while rest:
        here = chain[-1][2]
        for i, c in enumerate(rest):
            if _dist2(c.a, here) <= tol:
                chain.append((c, c.a, c.b))
                break
            if _dist2(c.b, here) <= tol:
                chain.append((c, c.b, c.a))
                break
        else:
            raise Refused("open-loop", f"{where}: no curve continues the loop at {here}")
        del rest[i]
        if not rest:
            break
        if _dist2(chain[-1][2], chain[0][1]) <= tol:
            raise Refused("open-loop", f"{where}: the loop closes before its last curve")
    if _dist2(chain[-1][2], chain[0][1]) > tol:
        raise Refused("open-loop", f"{where}: the loop does not close")
    return chain


def _circumcircle(a, m, b):
    ax, ay = a
    bx, by = m
    cx, cy = b
    d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    if d == 0:
        return None
    ux = ((ax * ax + ay * ay) * (by - cy) + (bx * bx + by * by) * (cy - ay) +
          (cx * cx + cy * cy) * (ay - by)) / d
    uy = ((ax * ax + ay * ay) * (cx - bx) + (bx * bx + by * by) * (ax - cx) +
          (cx * cx + cy * cy) * (bx - ax)) / d
    return (ux, uy), math.hypot(ax - ux, ay - uy)


def _arc_sweep(a, m, b):
    """The circle through a, m, b and the signed angle (counterclockwise > 0) that the
    arc a -> m -> b turns about its centre; None when the points are collinear."""
    circle = _circumcircle(a, m, b)
    if circle is None:
        return None
    (ox, oy), r = circle
    two_pi = 2 * math.pi
    ta = math.atan2(a[1] - oy, a[0] - ox)
    d_ab = (math.atan2(b[1] - oy, b[0] - ox) - ta) % two_pi
    d_am = (math.atan2(m[1] - oy, m[0] - ox) - ta) % two_pi
    return (ox, oy), r, (d_ab if d_am < d_ab else d_ab - two_pi)


def _arc_area_term(a, m, b):
    """Green's-theorem area of the arc a -> m -> b: chord term plus the signed segment."""
    chord = (a[0] * b[1] - a[1] * b[0]) / 2
    sweep = _arc_sweep(a, m, b)
    if sweep is None:
        return chord
    _, r, phi = sweep
    sign = 1.0 if phi > 0 else -1.0
    return chord + sign * r * r / 2 * (abs(phi) - math.sin(abs(phi)))


def _merge_arcs(chain, tol):
    """Joins consecutive arcs of a chained loop that lie on one circle and turn the same
    way into one arc. Returns ("circle", centre, radius) when the whole loop is one
    circle (a circle stored as two half arcs), else ("chain", new chain).

    The geometry is the same; what changes is that one circle gives one cylindrical
    face, not several that the final face merging has to join. OCCT 7.6 and 8.0.1
    join such faces differently (docs/INGEST.md), so neither builder's count would
    then be the count a CAD system shows.
    """
    def circle_of(link):
        c, start, end = link
        if c.kind != "arc":
            return None
        return _arc_sweep(start, c.mid, end)

    def same(a, b):
        return (a is not None and b is not None
                and math.hypot(a[0][0] - b[0][0], a[0][1] - b[0][1]) <= tol
                and abs(a[1] - b[1]) <= tol and (a[2] > 0) == (b[2] > 0))

    sweeps = [circle_of(link) for link in chain]
    n = len(chain)
    breaks = [k for k in range(n) if not same(sweeps[k - 1], sweeps[k])]
    if not breaks:
        if sweeps[0] is not None and abs(abs(sum(sw[2] for sw in sweeps)) - 2 * math.pi) < 1e-9:
            return "circle", sweeps[0][0], sweeps[0][1]
        return "chain", chain
    out = []
    first = breaks[0]
    k = first
    while True:
        run = [k]
        while (k + 1) % n != first and (k + 1) % n not in breaks:
            k = (k + 1) % n
            run.append(k)
        if len(run) == 1:
            out.append(chain[run[0]])
        else:
            (cx, cy), r, _ = sweeps[run[0]]
            total = sum(sweeps[j][2] for j in run)
            start, end = chain[run[0]][1], chain[run[-1]][2]
            a = math.atan2(start[1] - cy, start[0] - cx) + total / 2
            mid = (cx + r * math.cos(a), cy + r * math.sin(a))
            out.append((Curve("arc", start, end, mid=mid, center=(cx, cy), radius=r), start, end))
        k = (k + 1) % n
        if k == first:
            return "chain", out


def _loop_extent(chain):
    """The largest distance between two nodes of a chained loop (or an arc's radius)."""
    points = [start for _, start, _ in chain] + [c.mid for c, _, _ in chain if c.kind == "arc"]
    return max(_dist2(p, q) for p in points for q in points)


class Loop:
    """A closed wire and its signed area in the sketch's 2-D frame."""

    def __init__(self, wire, signed_area):
        self.wire, self.signed_area = wire, signed_area


def _loop(json_loop, frame, tol, gap_tol, where, unit, warnings):
    """The loop's Loop, or None when every curve of it has zero size."""
    curves_json = _field(json_loop, "profile_curves", where)
    if not isinstance(curves_json, list) or not curves_json:
        raise Refused("open-loop", f"{where}: no curves")
    parsed = [_curve(c, f"{where}.profile_curves[{i}]", unit) for i, c in enumerate(curves_json)]
    # Curves of zero size (a line whose ends meet, a circle or arc of radius 0
    # whose ends meet) bound nothing: dropped with a warning. An arc of radius 0
    # between distinct ends, or a negative radius, contradicts itself.
    curves = []
    for i, c in enumerate(parsed):
        here = f"{where}.profile_curves[{i}]"
        if c.kind == "circle" and c.radius < -tol:
            raise Refused("zero-radius", f"{here}: negative radius {c.radius}")
        if c.kind == "circle" and c.radius <= tol:
            warnings.append(f"{here}: dropped a circle of radius 0")
            continue
        if c.kind in ("line", "arc") and _dist2(c.a, c.b) <= tol:
            if c.kind == "arc" and abs(c.radius) > tol:
                raise Refused("zero-length", f"{here}: an arc whose ends coincide")
            warnings.append(f"{here}: dropped a {c.kind} of zero length")
            continue
        if c.kind == "arc" and c.radius <= tol:
            raise Refused("zero-radius", f"{here}: radius {c.radius} between distinct ends")
        curves.append(c)
    if not curves:
        return None
    circles = [c for c in curves if c.kind == "circle"]
    if circles:
        if len(curves) != 1:
            raise Refused("open-loop", f"{where}: a circle shares its loop with other curves")
        c = circles[0]
        circ = gp_Circ(gp_Ax2(frame.gp(c.center), gp_Dir(*frame.normal), gp_Dir(*frame.x)),
                       c.radius)
        wire = BRepBuilderAPI_MakeWire(BRepBuilderAPI_MakeEdge(circ).Edge()).Wire()
        # gp_Circ runs counterclockwise about the normal.
        return Loop(wire, frame.handedness * math.pi * c.radius ** 2)

    merged = _merge_arcs(_chain_healed(curves, tol, gap_tol, where, warnings), tol)
    if merged[0] == "chain":
        chain = merged[1]
    else:
        _, centre, radius = merged
        circ = gp_Circ(gp_Ax2(frame.gp(centre), gp_Dir(*frame.normal), gp_Dir(*frame.x)), radius)
        wire = BRepBuilderAPI_MakeWire(BRepBuilderAPI_MakeEdge(circ).Edge()).Wire()
        return Loop(wire, frame.handedness * math.pi * radius ** 2)
    # One vertex per node, shared by the two curves that meet there.
    nodes = [start for _, start, _ in chain]
    vertices = [BRepBuilderAPI_MakeVertex(frame.gp(p)).Vertex() for p in nodes]
    maker = BRepBuilderAPI_MakeWire()
    area = 0.0
    for k, (c, start, end) in enumerate(chain):
        va, vb = vertices[k], vertices[(k + 1) % len(vertices)]
        if c.kind == "line":
            edge = BRepBuilderAPI_MakeEdge(va, vb)
            area += (start[0] * end[1] - start[1] * end[0]) / 2
        else:
            arc = GC_MakeArcOfCircle(frame.gp(start), frame.gp(c.mid), frame.gp(end))
            if not arc.IsDone():
                raise Refused("bad-arc", f"{where}: start, mid and end of an arc are collinear")
            edge = BRepBuilderAPI_MakeEdge(arc.Value(), va, vb)
            area += _arc_area_term(start, c.mid, end)
        if not edge.IsDone():
            raise Refused("bad-edge", f"{where}: curve {k} makes no edge")
        maker.Add(edge.Edge())
    if not maker.IsDone():
        raise Refused("open-loop", f"{where}: the edges make no wire")
    if abs(area) <= tol * _loop_extent(chain):
        # Two half arcs on the same side of their circle (say) enclose nothing:
        # no region, so the loop is left out (the profile, when it is the outer one).
        warnings.append(f"{where}: the loop encloses no area; left out")
        return None
    return Loop(maker.Wire(), area)


def _oriented(loop, frame, counterclockwise):
    """The loop's wire turned counterclockwise (or clockwise) about the plane normal."""
    ccw = loop.signed_area * frame.handedness > 0
    if ccw == counterclockwise:
        return loop.wire
    return TopoDS.Wire(loop.wire.Reversed())


def _region(loops, outer, plane, frame, where, warnings):
    """Outer loop less holes by a planar boolean of the loops' own faces, for loops that
    touch (the face with holes fails BRepCheck); None when the holes cover it all."""
    def alone(loop):
        face = BRepBuilderAPI_MakeFace(plane, _oriented(loop, frame, True), True)
        if not face.IsDone() or not BRepCheck_Analyzer(face.Face()).IsValid():
            raise Refused("invalid-face", f"{where}: a loop crosses itself")
        return face.Face()

    outer_face = alone(loops[outer])
    arguments, tools = ShapeList(), ShapeList()
    arguments.Append(outer_face)
    for i, lp in enumerate(loops):
        if i != outer:
            tools.Append(alone(lp))
    cut = BRepAlgoAPI_Cut()
    cut.SetArguments(arguments)
    cut.SetTools(tools)
    cut.Build()
    if not cut.IsDone():
        raise Refused("invalid-face", f"{where}: the planar boolean of the loops failed")
    outer_area = _area(outer_face)
    builder, region, count = BRep_Builder(), TopoDS_Compound(), 0
    builder.MakeCompound(region)
    explorer = TopExp_Explorer(cut.Shape(), TopAbs_FACE)
    while explorer.More():
        face = TopoDS.Face(explorer.Current())
        explorer.Next()
        if _area(face) <= 1e-9 * outer_area:
            continue
        if not BRepCheck_Analyzer(face).IsValid():
            fix = ShapeFix_Face(face)
            fix.Perform()
            face = fix.Face()
            if not BRepCheck_Analyzer(face).IsValid():
                raise Refused("invalid-face", f"{where}: the region is not a valid face")
        builder.Add(region, face)
        count += 1
    if count == 0:
        warnings.append(f"{where}: the holes cover the outer loop; profile skipped")
        return None
    warnings.append(f"{where}: the loops touch; built outer loop less holes ({count} faces)")
    return region


def _area(shape):
    props = GProp_GProps()
    BRepGProp.SurfaceProperties_s(shape, props)
    return abs(props.Mass())


def profile_face(sketch, profile_id, where, unit, warnings):
    """The planar face (or faces) of one sketch profile: outer loop counterclockwise,
    holes inside; (None, frame) when the profile encloses nothing."""
    frame = Frame(_field(sketch, "transform", where), where, unit)
    profiles = _field(sketch, "profiles", where)
    if profile_id not in profiles:
        raise Refused("bad-input", f"{where}: no profile {profile_id!r} in the sketch")
    loops_json = _field(profiles[profile_id], "loops", f"{where}.{profile_id}")
    if not isinstance(loops_json, list) or not loops_json:
        raise Refused("open-loop", f"{where}.{profile_id}: no loops")
    # Matching tolerance: 1e-6 of the profile's extent.
    coords = []
    for lp in loops_json:
        for c in lp.get("profile_curves", []):
            for key in ("start_point", "end_point", "center_point"):
                if key in c:
                    coords.append(_pt2(c, key, where, unit))
            if "radius" in c and isinstance(c["radius"], (int, float)):
                coords.append((abs(c["radius"]) * unit, 0.0))
    extent = max((v for x, y in coords for v in (abs(x), abs(y)) if v <= FAR_MM), default=0.0)
    tol = 1e-6 * max(extent, 1e-9)
    gap_tol = GAP_RELATIVE * max(extent, 1e-9)

    loops, outer_flags = [], []
    for i, lp in enumerate(loops_json):
        loop = _loop(lp, frame, tol, gap_tol, f"{where}.{profile_id}.loops[{i}]", unit, warnings)
        if loop is None:
            if lp.get("is_outer", False) is True:
                warnings.append(f"{where}.{profile_id}: the outer loop has zero size; skipped")
                return None, frame
            continue
        loops.append(loop)
        outer_flags.append(lp.get("is_outer", False) is True)
    if not loops:
        warnings.append(f"{where}.{profile_id}: every curve has zero size; skipped")
        return None, frame
    flagged = [i for i, is_outer in enumerate(outer_flags) if is_outer]
    if len(flagged) == 1:
        outer = flagged[0]
    else:
        outer = max(range(len(loops)), key=lambda i: abs(loops[i].signed_area))
    plane = gp_Pln(frame.gp((0.0, 0.0)), gp_Dir(*frame.normal))
    maker = BRepBuilderAPI_MakeFace(plane, _oriented(loops[outer], frame, True), True)
    if not maker.IsDone():
        raise Refused("invalid-face", f"{where}.{profile_id}: no face from the outer loop")
    for i, lp in enumerate(loops):
        if i != outer:
            maker.Add(_oriented(lp, frame, False))
    face = maker.Face()
    if not BRepCheck_Analyzer(face).IsValid():
        if len(loops) == 1:
            raise Refused("invalid-face", f"{where}.{profile_id}: the profile face is invalid")
        return _region(loops, outer, plane, frame, f"{where}.{profile_id}", warnings), frame
    return face, frame


# --- extrudes ------------------------------------------------------------------

def _distance(extrude, key, where, unit):
    return _number(_field(_field(extrude, key, where), "distance", f"{where}.{key}"), "value",
                   f"{where}.{key}.distance") * unit


def _range(extrude, where, unit, symmetric_full):
    """The extrusion's interval [lo, hi] along the normal.

    OneSide is [0, e1]; Symmetric [-e1, e1] (DeepCAD) or [-e1/2, e1/2]
    (Text2CAD); TwoSides the union of [0, e1] and [-e2, 0]. Every such union
    holds 0, so it is one interval and one prism (no seam at the sketch plane).
    """
    kind = _field(extrude, "extent_type", where)
    e1 = _distance(extrude, "extent_one", where, unit)
    if kind == "OneSideFeatureExtentType":
        ends = [0.0, e1]
    elif kind == "SymmetricFeatureExtentType":
        half = abs(e1) if symmetric_full else abs(e1) / 2
        ends = [-half, half]
    elif kind == "TwoSidesFeatureExtentType":
        ends = [0.0, e1, -_distance(extrude, "extent_two", where, unit)]
    else:
        raise Refused("bad-input", f"{where}: unknown extent_type {kind!r}")
    lo, hi = min(ends), max(ends)
    if not hi > lo:
        raise Refused("zero-extent", f"{where}: the extrusion has zero length")
    return lo, hi


def _prism(face, frame, lo, hi):
    n = gp_Vec(*frame.normal)
    move = gp_Trsf()
    move.SetTranslation(n.Multiplied(lo))
    start = BRepBuilderAPI_Transform(face, move, True).Shape()
    prism = BRepPrimAPI_MakePrism(start, n.Multiplied(hi - lo))
    if not prism.IsDone():
        raise Refused("bad-prism", "the prism failed")
    return prism.Shape()


def _boolean(kind, body, tool, where):
    algo = {"fuse": BRepAlgoAPI_Fuse, "cut": BRepAlgoAPI_Cut, "common": BRepAlgoAPI_Common}[kind]
    op = algo(body, tool)
    if not op.IsDone():
        raise Refused("boolean-failed", f"{where}: {kind} failed")
    return op.Shape()


def _solid_count(shape):
    m = ShapeMap()
    TopExp.MapShapes_s(shape, TopAbs_SOLID, m)
    return m.Extent()


def _box(shape):
    box = Bnd_Box()
    BRepBndLib.AddOptimal_s(shape, box, False, False)
    return (box.GetXMin(), box.GetYMin(), box.GetZMin(), box.GetXMax(), box.GetYMax(),
            box.GetZMax())


def build(doc, unit=1.0, symmetric_full=True):
    """Builds a parsed DeepCAD JSON document; never raises for a bad program."""
    warnings = []
    try:
        entities = _field(doc, "entities", "document")
        sequence = sorted(_field(doc, "sequence", "document"), key=lambda s: s.get("index", 0))
        body = None  # nothing built yet (an emptied body is an empty shape, not None)
        for step in sequence:
            kind = _field(step, "type", "sequence[]")
            if kind == "Sketch":
                continue
            if kind != "ExtrudeFeature":
                raise Refused("bad-input", f"unsupported feature type {kind!r}")
            eid = _field(step, "entity", "sequence[]")
            where = f"entities.{eid}"
            extrude = _field(entities, eid, "entities")
            start = _field(_field(extrude, "start_extent", where), "type", where)
            if start != "ProfilePlaneStartDefinition":
                raise Refused("bad-input", f"{where}: start_extent {start!r}")
            op_name = _field(extrude, "operation", where)
            if op_name not in OPERATIONS:
                raise Refused("bad-input", f"{where}: unknown operation {op_name!r}")
            op = OPERATIONS[op_name]
            profiles = _field(extrude, "profiles", where)
            if not profiles:
                warnings.append(f"{where}: an extrude with no profiles, skipped")
                continue
            lo, hi = _range(extrude, where, unit, symmetric_full)
            for ref in profiles:
                sid = _field(ref, "sketch", where)
                pid = _field(ref, "profile", where)
                sketch = _field(entities, sid, "entities")
                face, frame = profile_face(sketch, pid, f"entities.{sid}", unit, warnings)
                if face is None:
                    continue
                tool = _prism(face, frame, lo, hi)
                if body is None:
                    if op != "fuse":
                        raise Refused("nothing-to-cut", f"{where}: a {op_name} comes first")
                    body = tool
                else:
                    body = _boolean(op, body, tool, where)
        if body is None:
            raise Refused("no-solid", "no extrude built anything")
        unify = ShapeUpgrade_UnifySameDomain(body, True, True, False)
        unify.Build()
        shape = unify.Shape()
        if _solid_count(shape) == 0:
            raise Refused("no-solid", "the result holds no solid")
        if not BRepCheck_Analyzer(shape).IsValid():
            fix = ShapeFix_Shape(shape)
            fix.Perform()
            shape = fix.Shape()
            if not BRepCheck_Analyzer(shape).IsValid():
                raise Refused("invalid-result", "the result fails BRepCheck")
            warnings.append("the result failed BRepCheck; ShapeFix_Shape repaired it")
        box = _box(shape)
        x0, y0, z0, x1, y1, z1 = box
        diagonal = math.sqrt((x1 - x0) ** 2 + (y1 - y0) ** 2 + (z1 - z0) ** 2)
        props = GProp_GProps()
        BRepGProp.VolumeProperties_s(shape, props)
        if not props.Mass() > 1e-9 * diagonal ** 3:
            raise Refused("zero-volume", f"volume {props.Mass()} for a box diagonal {diagonal}")
        return Built(shape=shape, warnings=warnings)
    except Refused as refusal:
        return Built(refused=refusal, warnings=warnings)
    except Exception as error:  # an OCCT exception is a refusal with its text
        return Built(refused=Refused("occt-exception", f"{type(error).__name__}: {error}"),
                     warnings=warnings)


# Relative error bound of the adaptive volume and area integration, used on
# shapes with an edge that is not a line or conic. BRepGProp's default Gauss
# rule is off by up to 1e-4 on faces bounded by B-spline intersection curves
# (two cylinders), by a different amount in OCCT 7.6 and 8.0.1; adaptive
# integration brings both within 1e-9 of each other. On lines and conics the
# default rule is exact to rounding, and four times faster.
INTEGRATION_EPS = 1e-7


def _needs_adaptive_integration(shape):
    walk = TopExp_Explorer(shape, TopAbs_EDGE)
    while walk.More():
        kind = BRepAdaptor_Curve(TopoDS.Edge(walk.Current())).GetType()
        if kind not in (GeomAbs_Line, GeomAbs_Circle, GeomAbs_Ellipse):
            return True
        walk.Next()
    return False


def _same_surface(f, g, tol):
    """True when faces f and g lie on one plane or one cylinder (within tol)."""
    a, b = BRepAdaptor_Surface(f), BRepAdaptor_Surface(g)
    if a.GetType() != b.GetType():
        return False
    if a.GetType() == GeomAbs_Plane:
        pa, pb = a.Plane(), b.Plane()
        na, nb = pa.Axis().Direction(), pb.Axis().Direction()
        if na.XYZ().Crossed(nb.XYZ()).Modulus() > 1e-9:
            return False
        d = pb.Location().XYZ().Subtracted(pa.Location().XYZ())
        return abs(d.Dot(na.XYZ())) <= tol
    if a.GetType() == GeomAbs_Cylinder:
        ca, cb = a.Cylinder(), b.Cylinder()
        da, db = ca.Axis().Direction(), cb.Axis().Direction()
        if abs(ca.Radius() - cb.Radius()) > tol or da.XYZ().Crossed(db.XYZ()).Modulus() > 1e-9:
            return False
        d = cb.Location().XYZ().Subtracted(ca.Location().XYZ())
        return d.Crossed(da.XYZ()).Modulus() <= tol
    return False


def surface_patches(shape, tol):
    """Faces after joining every two that share an edge and lie on one plane or
    cylinder: the face count with no dependence on how an OCCT version's
    UnifySameDomain joins faces (across a cylinder's seam, say)."""
    faces = ShapeMap()
    TopExp.MapShapes_s(shape, TopAbs_FACE, faces)
    parent = list(range(faces.Extent() + 1))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    edges = ShapeMap()
    TopExp.MapShapes_s(shape, TopAbs_EDGE, edges)
    owners = {}  # edge index -> indices of the faces around it
    for i in range(1, faces.Extent() + 1):
        walk = TopExp_Explorer(faces.FindKey(i), TopAbs_EDGE)
        while walk.More():
            owners.setdefault(edges.FindIndex(walk.Current()), set()).add(i)
            walk.Next()
    for around in owners.values():
        if len(around) != 2:
            continue
        a, b = sorted(around)
        i, j = root(a), root(b)
        if i != j and _same_surface(TopoDS.Face(faces.FindKey(a)), TopoDS.Face(faces.FindKey(b)),
                                    tol):
            parent[i] = j
    return len({root(i) for i in range(1, faces.Extent() + 1)})


def measure(shape):
    """Volume (mm^3), area (mm^2), optimal box, faces, surface patches and solids of a
    built shape."""
    volume, area = GProp_GProps(), GProp_GProps()
    if _needs_adaptive_integration(shape):
        BRepGProp.VolumeProperties_s(shape, volume, INTEGRATION_EPS, False)
        BRepGProp.SurfaceProperties_s(shape, area, INTEGRATION_EPS)
    else:
        BRepGProp.VolumeProperties_s(shape, volume)
        BRepGProp.SurfaceProperties_s(shape, area)
    faces = ShapeMap()
    TopExp.MapShapes_s(shape, TopAbs_FACE, faces)
    box = _box(shape)
    diagonal = math.sqrt(sum((box[k + 3] - box[k]) ** 2 for k in range(3)))
    return {
        "volume": volume.Mass(),
        "area": area.Mass(),
        "bbox": list(box),
        "faces": faces.Extent(),
        "patches": surface_patches(shape, 1e-7 * diagonal),
        "solids": _solid_count(shape),
    }
