#!/usr/bin/env python3
"""Writes the test characters: humanoid glTF / GLB / VRM files in the conventions real
tools export, each with a skinned mesh (a box along each bone, wholly that bone's:
POSITION, NORMAL, JOINTS_0, WEIGHTS_0, inverseBindMatrices) that three.js's GLTFLoader
loads and the live view draws; the VRM files give their eye point too (VRM 1.0
lookAt.offsetFromHeadBone, VRM 0.x firstPerson.firstPersonBoneOffset).

    scripts/gen_characters.py [OUTDIR]     (default tests/data/characters)

Conventions:
  blender  every bone's local +Y runs along the bone to its main child, with an
           arbitrary (seeded) roll about it
  vrm1     VRM 1.0 normalised: identity rest rotations, bones along the parent's axes,
           facing +Z, with the VRMC_vrm humanoid map
  vrm0     VRM 0.x (UniVRM): identity rotations, facing -Z, with the VRM humanoid map
  mixamo   arbitrary (seeded) rest rotations under an "Armature" matrix node that scales
           by 0.01 and turns the rig (bones in centimetres)

Also writes OUTDIR/characters.lua: each file's bones, their world rest positions in
metres and the rest box of their mesh, as the generator placed them before encoding
(what an importer must recover),
and OUTDIR/../bench_160.glb, a 160-bone character for tests/bench/bench_gltf.

Standard library only; the output is deterministic (fixed seeds), and checked in.
"""
import base64
import json
import math
import os
import random
import struct
import sys

# ---- quaternions (x, y, z, w) and vectors ----


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


def qconj(q):
    return (-q[0], -q[1], -q[2], q[3])


def qrot(q, v):
    p = qmul(qmul(q, (v[0], v[1], v[2], 0.0)), qconj(q))
    return (p[0], p[1], p[2])


def qaxis(axis, angle):
    n = math.sqrt(sum(c * c for c in axis))
    s = math.sin(angle / 2) / n
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))


def qbetween(a, b):
    """The shortest rotation taking unit a to unit b."""
    d = sum(x * y for x, y in zip(a, b))
    c = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    if d < -0.999999:
        axis = (1.0, 0.0, 0.0) if abs(a[0]) < 0.9 else (0.0, 0.0, 1.0)
        return qaxis(axis, math.pi)
    q = (c[0], c[1], c[2], 1 + d)
    n = math.sqrt(sum(x * x for x in q))
    return tuple(x / n for x in q)


def qrandom(rng):
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    return (math.sqrt(1 - u1) * math.sin(2 * math.pi * u2), math.sqrt(1 - u1) * math.cos(2 * math.pi * u2),
            math.sqrt(u1) * math.sin(2 * math.pi * u3), math.sqrt(u1) * math.cos(2 * math.pi * u3))


def sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def norm(v):
    n = math.sqrt(sum(x * x for x in v))
    return tuple(x / n for x in v)


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def box(a, b, w, t):
    """The 12 triangles of a box from a to b, 2w across (about +X where it can) and 2t
    thick: (positions, normals), three vertices a triangle, facing out."""
    d = norm(sub(b, a))
    v = norm(cross(d, (1.0, 0.0, 0.0) if abs(d[0]) < 0.9 else (0.0, 0.0, 1.0)))
    u = cross(v, d)
    corner = {}
    for i, e in ((0, a), (1, b)):
        for j, su in ((0, -w), (1, w)):
            for k, sv in ((0, -t), (1, t)):
                corner[(i, j, k)] = tuple(e[c] + su * u[c] + sv * v[c] for c in range(3))
    faces = [([(0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 1, 0)], tuple(-c for c in d)),
             ([(1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)], d),
             ([(0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)], tuple(-c for c in v)),
             ([(0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)], v),
             ([(0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1)], tuple(-c for c in u)),
             ([(0, 1, 0), (0, 1, 1), (1, 1, 1), (1, 1, 0)], u)]
    pos, nrm = [], []
    for quad, n in faces:
        p = [corner[c] for c in quad]
        if sum(x * y for x, y in zip(cross(sub(p[1], p[0]), sub(p[2], p[0])), n)) < 0:
            p.reverse()
        for tri in ((p[0], p[1], p[2]), (p[0], p[2], p[3])):
            pos += tri
            nrm += [n, n, n]
    return pos, nrm


def mat_from_qts(q, t, s):
    """Column-major 4x4 of translate(t) * rotate(q) * scale(s)."""
    x, y, z, w = q
    r = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    m = [0.0] * 16
    for c in range(3):
        for i in range(3):
            m[c * 4 + i] = r[i][c] * s
    m[12], m[13], m[14], m[15] = t[0], t[1], t[2], 1.0
    return m


def mat_inverse_rigid_scaled(q, t, s):
    """Inverse of translate(t) * rotate(q) * uniform scale(s)."""
    qi = qconj(q)
    ti = tuple(-c / s for c in qrot(qi, t))
    return mat_from_qts(qi, ti, 1.0 / s)


# ---- the humanoid ----

# name, parent, position (metres, T-pose, facing +Z, the character's left at +X), role
def humanoid(pose, upper_chest, neck2, toes, extra=0):
    bones = [
        ("Hips", None, (0.0, 1.00, 0.0), "hips"),
        ("Spine", "Hips", (0.0, 1.10, -0.01), "spine"),
        ("Chest", "Spine", (0.0, 1.25, -0.02), "chest"),
    ]
    top = "Chest"
    if upper_chest:
        bones.append(("UpperChest", "Chest", (0.0, 1.37, -0.02), "upperChest"))
        top = "UpperChest"
    bones.append(("Neck", top, (0.0, 1.50, -0.02), "neck"))
    head_parent = "Neck"
    if neck2:
        bones.append(("Neck2", "Neck", (0.0, 1.55, -0.01), None))
        head_parent = "Neck2"
    bones += [
        ("Head", head_parent, (0.0, 1.60, 0.0), "head"),
        ("LeftEye", "Head", (0.032, 1.68, 0.075), "leftEye"),
        ("RightEye", "Head", (-0.032, 1.68, 0.075), "rightEye"),
    ]
    down = math.radians(40) if pose == "apose" else 0.0
    for side, sx in (("Left", 1.0), ("Right", -1.0)):
        shoulder = (0.02 * sx, 1.45, -0.02)
        upper = (0.17 * sx, 1.45, -0.03)
        arm = [(0.45 * sx, 1.45, -0.04), (0.70 * sx, 1.45, -0.03)]
        # A-pose: the arm turned down about the character's forward axis at the shoulder joint
        rq = qaxis((0.0, 0.0, 1.0), -down * sx)
        arm = [tuple(u + v for u, v in zip(upper, qrot(rq, sub(p, upper)))) for p in arm]
        bones += [
            (side + "Shoulder", top, shoulder, side[0].lower() + side[1:] + "Shoulder"),
            (side + "UpperArm", side + "Shoulder", upper, side.lower() + "UpperArm"),
            (side + "LowerArm", side + "UpperArm", arm[0], side.lower() + "LowerArm"),
            (side + "Hand", side + "LowerArm", arm[1], side.lower() + "Hand"),
        ]
        bones += [
            (side + "UpperLeg", "Hips", (0.09 * sx, 0.95, 0.0), side.lower() + "UpperLeg"),
            (side + "LowerLeg", side + "UpperLeg", (0.09 * sx, 0.52, 0.01), side.lower() + "LowerLeg"),
            (side + "Foot", side + "LowerLeg", (0.09 * sx, 0.08, -0.02), side.lower() + "Foot"),
        ]
        if toes:
            bones.append((side + "Toes", side + "Foot", (0.09 * sx, 0.02, 0.12), side.lower() + "Toes"))
        # extra chains (fingers) to reach a bone count, for the benchmark
        for f in range(extra):
            base = arm[1]
            prev = side + "Hand"
            for k in range(3):
                name = "%sFinger%d_%d" % (side, f, k)
                p = (base[0] + sx * 0.03 * (k + 1), base[1], base[2] - 0.04 + 0.02 * f)
                bones.append((name, prev, p, None))
                prev = name
    return bones


def main_child(bones):
    """Each bone's main child: the first listed (the chain a tool points the bone at)."""
    out = {}
    for name, parent, _, _ in bones:
        if parent is not None and parent not in out:
            out[parent] = name
    return out


def world_rotations(bones, convention, rng):
    pos = {b[0]: b[2] for b in bones}
    parent = {b[0]: b[1] for b in bones}
    child = main_child(bones)
    rots = {}
    for name, par, p, _ in bones:
        if convention in ("vrm1", "vrm0"):
            rots[name] = (0.0, 0.0, 0.0, 1.0)
        elif convention == "blender":
            if name in child:
                d = norm(sub(pos[child[name]], p))
            else:
                d = norm(sub(p, pos[par]))
            roll = qaxis((0.0, 1.0, 0.0), rng.uniform(-math.pi, math.pi))
            rots[name] = qmul(qbetween((0.0, 1.0, 0.0), d), roll)
        else:
            rots[name] = qrandom(rng)
    return rots


# ---- glTF writing ----


class Bin:
    def __init__(self):
        self.data = bytearray()
        self.views = []
        self.accessors = []

    def add(self, fmt, values, comp, typ, count, minmax=None, target=None):
        while len(self.data) % 4:
            self.data.append(0)
        off = len(self.data)
        self.data += struct.pack("<" + fmt * len(values), *values)
        view = {"buffer": 0, "byteOffset": off, "byteLength": len(self.data) - off}
        if target:
            view["target"] = target
        self.views.append(view)
        acc = {"bufferView": len(self.views) - 1, "componentType": comp, "count": count, "type": typ}
        if minmax:
            acc["min"], acc["max"] = minmax
        self.accessors.append(acc)
        return len(self.accessors) - 1


def eye_offset(bones, pos):
    """The eye point from the head, in the head's space (VRM heads have no rest rotation):
    between the eyes, a centimetre further forward, so that it differs from the eyes'."""
    mid = tuple((pos["LeftEye"][c] + pos["RightEye"][c]) / 2 - pos["Head"][c] for c in range(3))
    ahead = 1.0 if mid[2] > 0 else -1.0
    return (round(mid[0], 9) + 0.0, round(mid[1], 9), round(mid[2] + 0.01 * ahead, 9))


def build(bones, convention, rng, vrm_names=True, boxes_mesh=True):
    """The glTF JSON (without buffers) and the binary data, plus world positions."""
    flip = convention == "vrm0"
    pos = {}
    for name, _, p, _ in bones:
        pos[name] = (-p[0], p[1], -p[2]) if flip else p  # VRM 0.x faces -Z: turned half about Y
    rots = world_rotations(bones, convention, rng)
    index = {b[0]: i for i, b in enumerate(bones)}
    nodes = []
    mixamo = convention == "mixamo"
    arm_q = qaxis((1.0, 0.0, 0.0), -math.pi / 2) if mixamo else None
    arm_s = 0.01
    offset = 1 if mixamo else 0
    for name, par, _, _ in bones:
        wq, wp = rots[name], pos[name]
        if par is None:
            if mixamo:  # relative to the Armature: turned by arm_q, scaled by arm_s
                lq = qmul(qconj(arm_q), wq)
                lp = tuple(c / arm_s for c in qrot(qconj(arm_q), wp))
            else:
                lq, lp = wq, wp
        else:
            pq = rots[par]
            lq = qmul(qconj(pq), wq)
            lp = qrot(qconj(pq), sub(wp, pos[par]))
            if mixamo:
                lp = tuple(c / arm_s for c in lp)
        node = {"name": name, "translation": [round(c, 12) for c in lp]}
        if convention not in ("vrm1", "vrm0"):
            node["rotation"] = list(lq)
        nodes.append(node)
    for name, par, _, _ in bones:
        kids = [index[b[0]] + offset for b in bones if b[1] == name]
        if kids:
            nodes[index[name]]["children"] = kids
    roots = [index[b[0]] + offset for b in bones if b[1] is None]
    if mixamo:
        m = mat_from_qts(arm_q, (0.0, 0.0, 0.0), arm_s)
        nodes.insert(0, {"name": "Armature", "matrix": m, "children": roots})
        roots = [0]

    # the mesh: a box along each bone to its main child (a leaf: 6 cm on from its
    # parent), skinned to that bone alone
    b = Bin()
    verts, normals, joints, weights, boxes = [], [], [], [], {}
    child = main_child(bones)
    for i, (name, par, _, _) in enumerate(bones):
        p = pos[name]
        if name in child:
            q = pos[child[name]]
        else:
            d = norm(sub(p, pos[par]))
            q = tuple(p[c] + 0.06 * d[c] for c in range(3))
        if boxes_mesh:
            tri, nrm = box(p, q, 0.03, 0.03)
        else:  # one small triangle at the bone's head (the benchmark's file, kept as it was)
            tri = [(p[0] + 0.01, p[1], p[2]), (p[0] - 0.01, p[1], p[2]), (p[0], p[1] + 0.01, p[2])]
            nrm = [(0.0, 0.0, 1.0)] * 3
        boxes[name] = ([min(v[c] for v in tri) for c in range(3)], [max(v[c] for v in tri) for c in range(3)])
        for v, n in zip(tri, nrm):
            verts += [round(c, 9) for c in v] if boxes_mesh else list(v)
            normals += list(n)
            joints += [i, 0, 0, 0]
            weights += [1.0, 0.0, 0.0, 0.0]
    n = len(verts) // 3
    mn = [min(verts[k::3]) for k in range(3)]
    mx = [max(verts[k::3]) for k in range(3)]
    a_pos = b.add("f", verts, 5126, "VEC3", n, (mn, mx), 34962)
    attributes = {"POSITION": a_pos}
    if boxes_mesh:
        attributes["NORMAL"] = b.add("f", normals, 5126, "VEC3", n, None, 34962)
    attributes["JOINTS_0"] = b.add("H", joints, 5123, "VEC4", n, None, 34962)
    attributes["WEIGHTS_0"] = b.add("f", weights, 5126, "VEC4", n, None, 34962)
    ibm = []
    for name, _, _, _ in bones:
        s = arm_s if mixamo else 1.0
        # the joint's world transform is rotate(world q) at world p with the rig's scale
        ibm += mat_inverse_rigid_scaled(rots[name], pos[name], s)
    a_ibm = b.add("f", ibm, 5126, "MAT4", len(bones))
    mesh_node = len(nodes)
    nodes.append({"name": "Body", "mesh": 0, "skin": 0})
    gltf = {
        "asset": {"version": "2.0", "generator": "ikrig scripts/gen_characters.py"},
        "scene": 0,
        "scenes": [{"nodes": roots + [mesh_node]}],
        "nodes": nodes,
        "meshes": [{"name": "Body", "primitives": [{"attributes": attributes}]}],
        "skins": [{"name": "Skin", "joints": [i + offset for i in range(len(bones))], "inverseBindMatrices": a_ibm,
                   "skeleton": roots[0]}],
        "accessors": b.accessors,
        "bufferViews": b.views,
    }
    if convention == "vrm1" and vrm_names:
        gltf["extensionsUsed"] = ["VRMC_vrm"]
        gltf["extensions"] = {"VRMC_vrm": {
            "specVersion": "1.0",
            "meta": {"name": "ikrig test character", "version": "1", "authors": ["ikrig"],
                     "licenseUrl": "https://vrm.dev/licenses/1.0/"},
            "humanoid": {"humanBones": {role: {"node": index[name] + offset}
                                        for name, _, _, role in bones if role}},
            "lookAt": {"offsetFromHeadBone": list(eye_offset(bones, pos))}}}
    elif convention == "vrm0" and vrm_names:
        gltf["extensionsUsed"] = ["VRM"]
        gltf["extensions"] = {"VRM": {
            "specVersion": "0.0", "meta": {"title": "ikrig test character", "version": "1", "author": "ikrig"},
            "humanoid": {"humanBones": [{"bone": role, "node": index[name] + offset, "useDefaultValues": True}
                                        for name, _, _, role in bones if role]},
            "firstPerson": {"firstPersonBone": index["Head"] + offset,
                            "firstPersonBoneOffset": dict(zip("xyz", eye_offset(bones, pos)))}}}
    return gltf, bytes(b.data), pos, boxes


def write_glb(path, gltf, binary):
    gltf = dict(gltf)
    gltf["buffers"] = [{"byteLength": len(binary)}]
    js = json.dumps(gltf, separators=(",", ":")).encode()
    js += b" " * (-len(js) % 4)
    bn = binary + b"\0" * (-len(binary) % 4)
    total = 12 + 8 + len(js) + 8 + len(bn)
    with open(path, "wb") as f:
        f.write(struct.pack("<III", 0x46546C67, 2, total))
        f.write(struct.pack("<II", len(js), 0x4E4F534A) + js)
        f.write(struct.pack("<II", len(bn), 0x004E4942) + bn)


def write_gltf(path, gltf, binary, external):
    gltf = dict(gltf)
    if external:
        bin_name = os.path.splitext(os.path.basename(path))[0] + ".bin"
        with open(os.path.join(os.path.dirname(path), bin_name), "wb") as f:
            f.write(binary)
        gltf["buffers"] = [{"byteLength": len(binary), "uri": bin_name}]
    else:
        uri = "data:application/octet-stream;base64," + base64.b64encode(binary).decode()
        gltf["buffers"] = [{"byteLength": len(binary), "uri": uri}]
    with open(path, "w") as f:
        json.dump(gltf, f, indent=1)
        f.write("\n")


# file, convention, pose, upper chest, two-bone neck, toes, container
CHARACTERS = [
    ("blender_tpose.glb", "blender", "tpose", True, True, True, "glb"),
    ("blender_apose.gltf", "blender", "apose", False, False, False, "embedded"),
    ("vrm1_tpose.vrm", "vrm1", "tpose", True, False, True, "glb"),
    ("vrm1_apose_min.vrm", "vrm1", "apose", False, True, False, "glb"),
    ("vrm0_tpose.vrm", "vrm0", "tpose", True, False, True, "glb"),
    ("mixamo_tpose.gltf", "mixamo", "tpose", False, True, True, "external"),
    ("mixamo_apose.glb", "mixamo", "apose", True, False, False, "glb"),
]


def lua_table(entries):
    out = ["-- Generated by scripts/gen_characters.py: each test character's bones, their world",
           "-- rest positions (metres) and their mesh's rest box, as placed before encoding.", "return {"]
    for e in entries:
        out.append("  {")
        out.append('    file = "%s", convention = "%s", pose = "%s",' % (e["file"], e["convention"], e["pose"]))
        out.append("    upper_chest = %s, neck2 = %s, toes = %s," % (str(e["upper_chest"]).lower(),
                                                                str(e["neck2"]).lower(), str(e["toes"]).lower()))
        out.append("    bones = {")
        for name, parent, p, role in e["bones"]:
            lo, hi = e["boxes"][name]
            out.append('      { name = "%s", parent = %s, role = %s,'
                       % (name, '"%s"' % parent if parent else "nil", '"%s"' % role if role else "nil"))
            out.append("        position = { %.15g, %.15g, %.15g }," % p)
            out.append("        box = { min = { %.9g, %.9g, %.9g }, max = { %.9g, %.9g, %.9g } } }," % tuple(lo + hi))
        out.append("    },")
        out.append("  },")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                                                                 "characters")
    os.makedirs(outdir, exist_ok=True)
    entries = []
    for k, (fname, conv, pose, uc, n2, toes, container) in enumerate(CHARACTERS):
        rng = random.Random(1000 + k)
        bones = humanoid(pose, uc, n2, toes)
        gltf, binary, pos, boxes = build(bones, conv, rng)
        path = os.path.join(outdir, fname)
        if container == "glb":
            write_glb(path, gltf, binary)
        else:
            write_gltf(path, gltf, binary, container == "external")
        entries.append({"file": fname, "convention": conv, "pose": pose, "upper_chest": uc, "neck2": n2,
                        "toes": toes, "bones": [(b[0], b[1], pos[b[0]], b[3]) for b in bones], "boxes": boxes})
    with open(os.path.join(outdir, "characters.lua"), "w") as f:
        f.write(lua_table(entries))
    # 160 bones: the full humanoid (25) and 23 three-bone finger chains a side, the last cut
    bones = humanoid("tpose", True, True, True, extra=23)
    bones = bones[:160] if len(bones) >= 160 else bones
    assert len(bones) == 160, len(bones)
    gltf, binary, _, _ = build(bones, "blender", random.Random(7), boxes_mesh=False)
    write_glb(os.path.join(outdir, "..", "bench_160.glb"), gltf, binary)


if __name__ == "__main__":
    main()
