/*
 * ik_gltf.h: reads the skeletons and the humanoid bone map of a glTF 2.0 file (.gltf with
 * embedded data: URIs or external buffer files, .glb, and VRM 0.x / 1.0 avatars, which are
 * .glb files) into ik_skeleton bone descriptions.
 *
 * What is read: every node (name, parent, rest transform as TRS or as a matrix), every
 * skin (its joints and inverse bind matrices), and the humanoid map of the VRM extension
 * (`extensions.VRM.humanoid.humanBones`, VRM 0.x) or of VRMC_vrm
 * (`extensions.VRMC_vrm.humanoid.humanBones`, VRM 1.0; preferred when a file has both).
 * Materials and animations are not read; every accessor's and buffer view's range is
 * checked; the inverse bind matrices and the skinned meshes' positions, joints and weights
 * are read (ik_gltf_node_vertex_bounds), streamed: no vertex is kept.
 *
 * Conventions: glTF's own (+Y up, right-handed, metres, quaternions (x, y, z, w), matrices
 * column-major), which are this library's, so nothing is converted. A VRM 0.x avatar faces
 * -Z, a VRM 1.0 avatar (and glTF's front) +Z: ik_gltf_vrm says which.
 *
 * Scale: a skeleton has no scale, so each bone takes its node's world position exactly
 * (every scale on the way, a Mixamo root's 0.01 say, is baked into the positions) and the
 * rotation of its world matrix: the nearest rotation (polar decomposition), which is the
 * matrix's own rotation under uniform scale. Under non-uniform scale or shear the bone's
 * axes are that nearest rotation's and the shear is dropped; a mirrored world matrix
 * (negative determinant) gives the rotation of the matrix with its local X axis negated;
 * a singular one (a zero scale) gives the parent's world rotation times the node's own
 * rotation. ik_gltf_node_flags says which nodes had which.
 *
 * The loader allocates (the result, and transiently the JSON tree and buffers); every
 * count and size it allocates for is bounded by ik_gltf_options. Malformed input is
 * refused with a message naming the JSON path at fault ("nodes[3].rotation: expected 4
 * numbers"); nothing is kept then. A loaded ik_gltf is read-only: any number of threads
 * may read one.
 */
#ifndef IK_GLTF_H
#define IK_GLTF_H

#include <stddef.h>

#include "ik_api.h"
#include "ik_skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ik_gltf_status {
  IK_GLTF_OK = 0,
  IK_GLTF_E_ARGUMENT, /* a NULL pointer or an index out of range given to a function */
  IK_GLTF_E_IO,       /* a file could not be opened or read */
  IK_GLTF_E_FORMAT,   /* the file is not valid glTF (the message names where) */
  IK_GLTF_E_LIMIT,    /* the file is larger than an ik_gltf_options limit */
  IK_GLTF_E_MEMORY    /* an allocation failed */
} ik_gltf_status;

/* Why a load or a query failed: the status and a one-line message. */
typedef struct ik_gltf_error {
  ik_gltf_status status;
  char message[256];
} ik_gltf_error;

/* Bounds on what a load may allocate for. 0 in a field means its default. */
typedef struct ik_gltf_options {
  size_t max_file_bytes;  /* the .gltf/.glb itself and each external buffer file; 256 MiB */
  size_t max_json_bytes;  /* the JSON text; 64 MiB */
  size_t max_json_values; /* JSON values (numbers, strings, ...); 2^21, about 130 MiB of tree */
  int max_nodes;          /* nodes, skins, accessors, buffer views, buffers each; 65536 */
} ik_gltf_options;

/* Opaque: made by a load, freed by ik_gltf_free. */
typedef struct ik_gltf ik_gltf;

/* The standard humanoid bones (VRM's names, ik_humanoid_bone_name). */
typedef enum ik_humanoid_bone {
  IK_HUMANOID_HIPS,
  IK_HUMANOID_SPINE,
  IK_HUMANOID_CHEST,
  IK_HUMANOID_UPPER_CHEST,
  IK_HUMANOID_NECK,
  IK_HUMANOID_HEAD,
  IK_HUMANOID_LEFT_EYE,
  IK_HUMANOID_RIGHT_EYE,
  IK_HUMANOID_LEFT_SHOULDER,
  IK_HUMANOID_LEFT_UPPER_ARM,
  IK_HUMANOID_LEFT_LOWER_ARM,
  IK_HUMANOID_LEFT_HAND,
  IK_HUMANOID_RIGHT_SHOULDER,
  IK_HUMANOID_RIGHT_UPPER_ARM,
  IK_HUMANOID_RIGHT_LOWER_ARM,
  IK_HUMANOID_RIGHT_HAND,
  IK_HUMANOID_LEFT_UPPER_LEG,
  IK_HUMANOID_LEFT_LOWER_LEG,
  IK_HUMANOID_LEFT_FOOT,
  IK_HUMANOID_LEFT_TOES,
  IK_HUMANOID_RIGHT_UPPER_LEG,
  IK_HUMANOID_RIGHT_LOWER_LEG,
  IK_HUMANOID_RIGHT_FOOT,
  IK_HUMANOID_RIGHT_TOES,
  IK_HUMANOID_BONE_COUNT
} ik_humanoid_bone;

/* "hips", "spine", ..., "upperChest", "leftUpperArm", ..., "rightToes"; NULL out of range. */
IK_API const char *ik_humanoid_bone_name(int role);
/* The role of a VRM bone name, or -1 (names outside the list: fingers, jaw, ...). */
IK_API int ik_humanoid_bone_from_name(const char *name);

/* Which humanoid extension a file had. */
typedef enum ik_gltf_vrm { IK_GLTF_VRM_NONE, IK_GLTF_VRM_0, IK_GLTF_VRM_1 } ik_gltf_vrm;

/* Per-node flags of the world matrix's decomposition (see Scale above). */
enum {
  IK_GLTF_NODE_NONUNIFORM = 1, /* non-uniform scale or shear: the rotation is the nearest one */
  IK_GLTF_NODE_MIRRORED = 2,   /* negative determinant */
  IK_GLTF_NODE_SINGULAR = 4    /* a zero scale: rotation from the parent's and the node's own */
};

/* Every option at its default. */
IK_API void ik_gltf_options_init(ik_gltf_options *opt);

/* Loads a .gltf or .glb file (told apart by the GLB magic, not by the name). External
 * buffer URIs are resolved against the file's directory. opt may be NULL (defaults),
 * err too. On failure *out is NULL. */
IK_API ik_gltf_status ik_gltf_load_file(const char *path, const ik_gltf_options *opt, ik_gltf **out,
                                        ik_gltf_error *err);
/* The same from memory (data is not kept). base_dir resolves external buffer URIs; NULL
 * refuses them (data: URIs and a GLB's own binary chunk still work). */
IK_API ik_gltf_status ik_gltf_load_memory(const void *data, size_t size, const char *base_dir,
                                          const ik_gltf_options *opt, ik_gltf **out, ik_gltf_error *err);
/* Frees a loaded file (NULL is fine). Names it returned die with it. */
IK_API void ik_gltf_free(ik_gltf *g);

/* ---- nodes (indices as in the file) ---- */

IK_API int ik_gltf_node_count(const ik_gltf *g);
/* The node's name, made unique: the file's name when it has one no earlier node has,
 * "node<index>" when it has none, "<name>#<index>" for a repeat. NULL out of range. */
IK_API const char *ik_gltf_node_name(const ik_gltf *g, int node);
/* The parent node, or -1 (a root, or out of range). */
IK_API int ik_gltf_node_parent(const ik_gltf *g, int node);
/* The rest transform relative to the parent as TRS (a matrix node decomposed: rotation
 * as above, scale the column lengths, X negated when mirrored). Any output may be NULL.
 * IK_GLTF_E_ARGUMENT out of range. */
IK_API ik_gltf_status ik_gltf_node_local(const ik_gltf *g, int node, double translation[3],
                                         double rotation[4], double scale[3]);
/* The world matrix at rest (column-major, scene space: the product of every ancestor's). */
IK_API ik_gltf_status ik_gltf_node_world(const ik_gltf *g, int node, double matrix[16]);
/* IK_GLTF_NODE_* flags of the world matrix; 0 out of range. */
IK_API int ik_gltf_node_flags(const ik_gltf *g, int node);

/* ---- skins ---- */

IK_API int ik_gltf_skin_count(const ik_gltf *g);
/* The skin's name, or NULL (none, or out of range). */
IK_API const char *ik_gltf_skin_name(const ik_gltf *g, int skin);
/* Number of joints; 0 out of range. */
IK_API int ik_gltf_skin_joint_count(const ik_gltf *g, int skin);
/* Node of joint `joint` of `skin`, or -1 out of range. */
IK_API int ik_gltf_skin_joint(const ik_gltf *g, int skin, int joint);
/* The joint's inverse bind matrix (identity when the skin has none). */
IK_API ik_gltf_status ik_gltf_skin_inverse_bind(const ik_gltf *g, int skin, int joint, double matrix[16]);

/* The rest extent of the skinned vertices that follow `node` most (their largest weight
 * is its joint's), over every node that has both a mesh and a skin: the world-space box
 * in min and max (either may be NULL), and the number of vertices as the return value. 0,
 * min and max untouched, for a node no vertex follows or out of range. Vertices are
 * placed as skinning places them at rest (the weighted sum of joint world times inverse
 * bind matrix times position), so the box is right even when the bind pose is not the
 * rest pose. Read from JOINTS_0 / WEIGHTS_0 and a float POSITION; a primitive without
 * them, or whose data has no buffer view (compressed meshes), adds nothing. What a foot
 * rig needs for its sole: the lowest point of the foot's and toes' boxes. */
IK_API int ik_gltf_node_vertex_bounds(const ik_gltf *g, int node, double min[3], double max[3]);

/* ---- humanoid ---- */

IK_API ik_gltf_vrm ik_gltf_vrm_version(const ik_gltf *g);
/* The node mapped to `role`, or -1 (not mapped, no map, or role out of range). */
IK_API int ik_gltf_humanoid_node(const ik_gltf *g, int role);
/* The eye point a VRM gives: VRM 1.0's `lookAt.offsetFromHeadBone` (from the head) or VRM
 * 0.x's `firstPerson.firstPersonBoneOffset` (from `firstPersonBone`, else the head), in
 * offset (that node's local space, as the file has it). Returns the node it is from, or -1
 * (no offset in the file, no head mapped, or g NULL); offset may be NULL. */
IK_API int ik_gltf_look_offset(const ik_gltf *g, double offset[3]);

/* ---- skeletons ----
 * A skeleton is made of a set of nodes: a skin's joints (skin >= 0), or with
 * IK_GLTF_ALL_JOINTS every skin's joints and every humanoid node (every node when the file
 * has neither). A bone's parent is its nearest ancestor in the set; a bone with none is a
 * root, at its world transform. Nodes in between are folded into the positions and
 * rotations (see Scale above). Bones come parents first (by depth in the node tree, then
 * node index). */
#define IK_GLTF_ALL_JOINTS (-1)

/* Number of bones of the skeleton of `skin`; 0 when skin is neither a skin nor
 * IK_GLTF_ALL_JOINTS. */
IK_API int ik_gltf_skeleton_bone_count(const ik_gltf *g, int skin);
/* Writes the skeleton's bone descriptions, parents first (count must be
 * ik_gltf_skeleton_bone_count), ready for ik_skeleton_init; names point into g. nodes,
 * when non-NULL, gets each bone's node index. IK_GLTF_E_ARGUMENT for a wrong count or
 * skin; IK_GLTF_E_LIMIT when a position is beyond IK_REAL_MAX_COORD. */
IK_API ik_gltf_status ik_gltf_skeleton_descs(const ik_gltf *g, int skin, ik_bone_desc *descs, int *nodes,
                                             int count, ik_gltf_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IK_GLTF_H */
