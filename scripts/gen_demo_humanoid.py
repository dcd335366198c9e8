#!/usr/bin/env python3
"""Writes the built-in demo's skinned humanoid: src/host/view/humanoid.glb, the mesh
`ikrig view` draws for the demo's `humanoid` skeleton (lua/ik/demo/scene.lua).

    scripts/gen_demo_humanoid.py [OUT.glb]     (default src/host/view/humanoid.glb)

The bones are the demo's, in its order, each at its place in the humanoid's own frame
(+Z forward, +Y up, +X its left) raised so that the soles stand on y = 0, with no rest
rotation: the demo builds the same skeleton in code (tests/lua/view_model_spec.lua checks
that the two agree). The mesh is a box per bone, each vertex wholly the box's bone's
(rigid parts), with flat normals and one material.

Standard library only (and gen_characters.py's writers); deterministic, checked in.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_characters import Bin, box, write_glb  # noqa: E402

FOOT_OFFSET = 0.08  # ankle above the sole, as the demo scene's
ANKLE_Y = -0.87
RAISE = FOOT_OFFSET - ANKLE_Y  # the hips above the soles

# name, parent, position in the demo's frame (hips at the origin): lua/ik/demo/scene.lua's BODY
BODY = [
    ("hips", None, (0, 0, 0)),
    ("spine", "hips", (0, 0.10, -0.01)),
    ("chest", "spine", (0, 0.28, -0.02)),
    ("neck", "chest", (0, 0.50, -0.02)),
    ("head", "neck", (0, 0.60, 0.0)),
    ("head_top", "head", (0, 0.79, 0.0)),
    ("nose", "head", (0, 0.69, 0.11)),
]
for s, x in (("l", 1), ("r", -1)):
    BODY += [
        (s + "_shoulder", "chest", (0.03 * x, 0.47, -0.02)),
        (s + "_upper_arm", s + "_shoulder", (0.18 * x, 0.47, -0.04)),
        (s + "_lower_arm", s + "_upper_arm", (0.19 * x, 0.19, -0.06)),
        (s + "_hand", s + "_lower_arm", (0.19 * x, -0.06, -0.02)),
    ]
BODY += [
    ("l_upper_leg", "hips", (0.09, -0.03, 0)),
    ("l_lower_leg", "l_upper_leg", (0.10, -0.45, 0.12)),
    ("l_foot", "l_lower_leg", (0.10, -0.87, 0.16)),
    ("l_toes", "l_foot", (0.10, -0.93, 0.30)),
    ("r_upper_leg", "hips", (-0.09, -0.03, 0)),
    ("r_lower_leg", "r_upper_leg", (-0.10, -0.46, -0.06)),
    ("r_foot", "r_lower_leg", (-0.10, -0.87, -0.16)),
    ("r_toes", "r_foot", (-0.10, -0.93, -0.02)),
]


def add(a, b, k=1.0):
    return tuple(x + k * y for x, y in zip(a, b))


def sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def unit(v):
    n = math.sqrt(sum(c * c for c in v))
    return tuple(c / n for c in v)


def shapes():
    """(bone, from, to, half width across, half thickness): a box from `from` to `to`."""
    at = {b[0]: b[2] for b in BODY}
    out = [
        ("hips", (0, -0.08, -0.01), (0, 0.10, -0.01), 0.15, 0.09),
        ("spine", at["spine"], at["chest"], 0.14, 0.085),
        ("chest", at["chest"], at["neck"], 0.17, 0.10),
        ("neck", at["neck"], at["head"], 0.045, 0.045),
        ("head", (0, 0.60, 0.01), (0, 0.80, 0.01), 0.085, 0.10),
        ("head", (0, 0.66, 0.09), (0, 0.71, 0.14), 0.018, 0.018),  # the nose: where it looks
    ]
    for s in ("l", "r"):
        hand, lower = at[s + "_hand"], at[s + "_lower_arm"]
        out += [
            (s + "_shoulder", at[s + "_shoulder"], at[s + "_upper_arm"], 0.05, 0.045),
            (s + "_upper_arm", at[s + "_upper_arm"], at[s + "_lower_arm"], 0.048, 0.048),
            (s + "_lower_arm", lower, hand, 0.04, 0.04),
            (s + "_hand", hand, add(hand, unit(sub(hand, lower)), 0.10), 0.045, 0.02),
            (s + "_upper_leg", at[s + "_upper_leg"], at[s + "_lower_leg"], 0.07, 0.07),
            (s + "_lower_leg", at[s + "_lower_leg"], at[s + "_foot"], 0.055, 0.055),
        ]
        foot, toes = at[s + "_foot"], at[s + "_toes"]
        sole = ANKLE_Y - FOOT_OFFSET
        out += [
            (s + "_foot", (foot[0], sole + 0.04, foot[2] - 0.05), (toes[0], sole + 0.04, toes[2]), 0.045, 0.04),
            (s + "_toes", (toes[0], sole + 0.02, toes[2]), (toes[0], sole + 0.02, toes[2] + 0.06), 0.045, 0.02),
        ]
    return out


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src", "host", "view",
                                                             "humanoid.glb")
    index = {b[0]: i for i, b in enumerate(BODY)}
    world = {name: (p[0], p[1] + RAISE, p[2]) for name, _, p in BODY}
    nodes = []
    for name, parent, _ in BODY:
        t = sub(world[name], world[parent]) if parent else world[name]
        nodes.append({"name": name, "translation": [round(c, 9) + 0.0 for c in t]})
    for name, _, _ in BODY:
        kids = [index[b[0]] for b in BODY if b[1] == name]
        if kids:
            nodes[index[name]]["children"] = kids
    verts, norms, joints, weights = [], [], [], []
    for bone, a, b, w, t in shapes():
        raise_ = (0, RAISE, 0)
        pos, nrm = box(add(a, raise_), add(b, raise_), w, t)
        for p, n in zip(pos, nrm):
            verts += [round(c, 6) for c in p]
            norms += list(n)
            joints += [index[bone], 0, 0, 0]
            weights += [1.0, 0.0, 0.0, 0.0]
    bn = Bin()
    count = len(verts) // 3
    mn = [min(verts[k::3]) for k in range(3)]
    mx = [max(verts[k::3]) for k in range(3)]
    a_pos = bn.add("f", verts, 5126, "VEC3", count, (mn, mx), 34962)
    a_nrm = bn.add("f", norms, 5126, "VEC3", count, None, 34962)
    a_joint = bn.add("H", joints, 5123, "VEC4", count, None, 34962)
    a_weight = bn.add("f", weights, 5126, "VEC4", count, None, 34962)
    ibm = []
    for name, _, _ in BODY:  # the inverse of translate(world): column-major
        p = world[name]
        ibm += [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -p[0], -p[1], -p[2], 1]
    a_ibm = bn.add("f", ibm, 5126, "MAT4", len(BODY))
    mesh_node = len(nodes)
    nodes.append({"name": "Body", "mesh": 0, "skin": 0})
    gltf = {
        "asset": {"version": "2.0", "generator": "ikrig scripts/gen_demo_humanoid.py"},
        "scene": 0,
        "scenes": [{"nodes": [0, mesh_node]}],
        "nodes": nodes,
        "materials": [{"name": "Skin", "pbrMetallicRoughness": {"baseColorFactor": [0.62, 0.70, 0.80, 1.0],
                                                                "metallicFactor": 0.0, "roughnessFactor": 0.7}}],
        "meshes": [{"name": "Body", "primitives": [{"attributes": {"POSITION": a_pos, "NORMAL": a_nrm,
                                                                    "JOINTS_0": a_joint, "WEIGHTS_0": a_weight},
                                                     "material": 0}]}],
        "skins": [{"name": "Skin", "joints": list(range(len(BODY))), "inverseBindMatrices": a_ibm, "skeleton": 0}],
        "accessors": bn.accessors,
        "bufferViews": bn.views,
    }
    write_glb(out, gltf, bytes(bn.data))


if __name__ == "__main__":
    main()
