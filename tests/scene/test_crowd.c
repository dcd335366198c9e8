/* Crowds (ik_crowd.h) from a C host: on random templates and poses every instance ends
 * bit for bit where the per-object path (skeletons, bone chains, nodes and feet solved
 * pass by pass in ik_bone_batch) leaves the same character; 1, 2 and 4 threads give the
 * same bits; instances added and removed between frames leave the others alone and
 * start at rest; a frame allocates nothing; bad input is refused with nothing moved. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowd_character.h"
#include "ground_fixture.h"
#include "ik_bone_batch.h"
#include "ik_crowd.h"
#include "test_util.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

static int counting;
static long c_calls;

void *__wrap_malloc(size_t size) {
  c_calls += counting;
  return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size) {
  c_calls += counting;
  return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size) {
  c_calls += counting;
  return __real_realloc(p, size);
}

#define CHAINS 5
#define DT ((ik_real)(1.0 / 60))

typedef struct world {
  owned_ground ground;
  ik_real heights[40 * 40];
  void *sk_mem, *tpl_mem;
  ik_skeleton *sk;
  ik_crowd_template *t;
  ik_crowd_chain_desc chains[CHAINS];
} world;

static ik_vec3 jitter(t_rng *r, const double *o, double amount) {
  return v3(o[0] + t_uniform(r, -amount, amount), o[1] + t_uniform(r, -amount, amount),
            o[2] + t_uniform(r, -amount, amount));
}

/* A random template of the bench's shape: spine FABRIK (target hung from the hips),
 * legs two-bone with the host's targets, poles and feet; arms two-bone or FABRIK, with
 * or without poles. */
static void make_world(world *w, t_rng *r) {
  ik_bone_desc d[BONES];
  static const int legs[2][3] = {{12, 13, 14}, {15, 16, 17}}, arms[2][3] = {{6, 7, 8}, {9, 10, 11}};
  size_t size = ik_skeleton_size(BONES);
  int i, j, k;
  ik_error err;
  for (i = 0; i < 40 * 40; i++) {
    const double x = (i % 40) * 0.5, z = (i / 40) * 0.5;
    w->heights[i] = (ik_real)(0.4 * sin(x * 0.21) * cos(z * 0.17) + 0.15 * sin(x * 0.53 + z * 0.41));
  }
  w->ground = make_heightfield(v3(-10, 0, -10), (ik_real)0.5, 40, 40, w->heights);
  for (i = 0; i < BONES; i++) {
    ik_bone_desc_init(&d[i]);
    d[i].parent = crowd_parents[i];
    d[i].position = i == 0 ? v3(0, 1, 0) : jitter(r, crowd_offsets[i], 0.02);
    if (t_int(r, 0, 2) == 0)
      d[i].rotation = ik_quat_axis_angle(t_unit_vector(r), (ik_real)t_uniform(r, 0, 0.3));
  }
  w->sk_mem = malloc(size);
  assert_int_equal(ik_skeleton_init(w->sk_mem, size, d, BONES, &w->sk, &err), IK_OK);
  ik_crowd_chain_desc_init(&w->chains[0]);
  w->chains[0].count = 5;
  for (k = 0; k < 5; k++) w->chains[0].bones[k] = 1 + k;
  w->chains[0].iterations = t_int(r, 3, 15);
  if (t_int(r, 0, 3) == 0) w->chains[0].solver = t_int(r, 0, 1) ? IK_BONE_CHAIN_CCD : IK_BONE_CHAIN_DLS;
  w->chains[0].target_bone = 0;
  w->chains[0].target_offset = v3(t_uniform(r, -0.1, 0.1), t_uniform(r, 0.35, 0.55), t_uniform(r, 0, 0.2));
  for (j = 0; j < 2; j++) {
    ik_crowd_chain_desc *leg = &w->chains[1 + j], *arm = &w->chains[3 + j];
    ik_crowd_chain_desc_init(leg);
    ik_crowd_chain_desc_init(arm);
    for (k = 0; k < 3; k++) leg->bones[k] = legs[j][k], arm->bones[k] = arms[j][k];
    leg->pole_bone = 0;
    leg->pole_offset = v3(j ? -0.1 : 0.1, -0.4, t_uniform(r, 0.5, 1.5));
    leg->has_foot = 1;
    leg->foot.foot_offset = (ik_real)t_uniform(r, 0.05, 0.1);
    leg->foot.smooth_time = (ik_real)t_uniform(r, 0, 0.1);
    arm->target_bone = 0;
    arm->target_offset = v3(j ? -0.25 : 0.25, t_uniform(r, 0.1, 0.3), t_uniform(r, 0.1, 0.3));
    if (t_int(r, 0, 2)) {
      arm->pole_bone = 0;
      arm->pole_offset = v3(j ? -0.5 : 0.5, 0.4, -1);
    }
    {
      /* Mostly two-bone limbs, some FABRIK (lanes), CCD and DLS chains (one by one). */
      static const int solvers[3] = {IK_BONE_CHAIN_FABRIK, IK_BONE_CHAIN_CCD, IK_BONE_CHAIN_DLS};
      const int pick = t_int(r, 0, 5);
      if (pick < 3) arm->solver = solvers[pick];
    }
  }
  size = ik_crowd_template_size(BONES);
  w->tpl_mem = malloc(size);
  assert_int_equal(ik_crowd_template_init(w->tpl_mem, size, w->sk, w->chains, CHAINS, &w->t, &err), IK_OK);
  assert_int_equal(ik_crowd_template_passes(w->t), 2); /* the arms hang from the spine */
  assert_int_equal(ik_crowd_template_targets(w->t), 2);
}

static void free_world(world *w) {
  release(&w->ground);
  free(w->sk_mem);
  free(w->tpl_mem);
}

typedef struct owned_crowd {
  void *mem;
  ik_crowd *c;
} owned_crowd;

static owned_crowd make_crowd(const world *w, int capacity, int count, int threads) {
  const size_t size = ik_crowd_size(w->t, capacity);
  owned_crowd o;
  ik_error err;
  int i;
  o.mem = malloc(size);
  assert_int_equal(ik_crowd_init(o.mem, size, w->t, capacity, w->ground.g, &o.c, &err), IK_OK);
  assert_int_equal(ik_crowd_start(o.c, threads), IK_OK);
  for (i = 0; i < count; i++) assert_int_equal(ik_crowd_add(o.c), i);
  return o;
}

static void free_crowd(owned_crowd *o) {
  ik_crowd_stop(o->c);
  free(o->mem);
}

/* The per-object path's character: its own skeleton, nodes, chains and feet. */
typedef struct object {
  void *sk_mem;
  ik_skeleton *sk;
  ik_node target[CHAINS], pole[CHAINS], host[CHAINS];
  ik_bone_chain *chains[CHAINS];
  ik_foot_params params[CHAINS];
  ik_foot_state state[CHAINS];
  ik_foot_link link;
} object;

static void make_object(const world *w, object *o) {
  const size_t size = ik_skeleton_size(BONES);
  int j;
  o->sk_mem = malloc(size);
  memcpy(o->sk_mem, w->sk, size);
  o->sk = (ik_skeleton *)o->sk_mem;
  o->link.closed = NULL;
  o->link.ground = w->ground.g;
  o->link.ground_closed = NULL;
  for (j = 0; j < CHAINS; j++) {
    const ik_crowd_chain_desc *d = &w->chains[j];
    ik_bone_chain *c = ik_bone_chain_init(malloc(ik_bone_chain_size(d->count, 1)), d->count, 1);
    ik_vec3 tip;
    ik_ref ref;
    assert_int_equal(ik_bone_chain_set_bones(c, o->sk, d->bones, NULL), IK_OK);
    if (d->solver >= 0) c->solver = d->solver;
    c->iterations = d->iterations;
    c->tolerance = d->tolerance;
    if (d->target_bone >= 0) {
      assert_int_equal(ik_node_init(&o->target[j], d->target_offset, ik_quat_identity()), IK_OK);
      assert_int_equal(ik_node_set_parent_bone(&o->target[j], o->sk, d->target_bone), IK_OK);
      ref = ik_ref_node(&o->target[j], NULL);
    } else {
      ik_skeleton_get_world(o->sk, d->bones[d->count - 1], &tip, NULL);
      assert_int_equal(ik_node_init(&o->host[j], tip, ik_quat_identity()), IK_OK);
      ref = ik_ref_node(&o->host[j], NULL);
    }
    assert_int_equal(ik_bone_chain_set_target(c, ref), IK_OK);
    if (d->pole_bone >= 0) {
      assert_int_equal(ik_node_init(&o->pole[j], d->pole_offset, ik_quat_identity()), IK_OK);
      assert_int_equal(ik_node_set_parent_bone(&o->pole[j], o->sk, d->pole_bone), IK_OK);
      ref = ik_ref_node(&o->pole[j], NULL);
      assert_int_equal(ik_bone_chain_set_pole(c, &ref, NULL), IK_OK);
    }
    o->params[j] = d->foot;
    ik_foot_state_init(&o->state[j]);
    o->chains[j] = c;
  }
}

static void free_object(object *o) {
  int j;
  for (j = 0; j < CHAINS; j++) free(o->chains[j]);
  free(o->sk_mem);
}

/* Frame f's inputs for character k: the root walks and turns, the host's targets (the
 * feet) step about the rest ankles; some reach too far. */
static void inputs(const world *w, int k, int f, ik_real *root, ik_real *targets) {
  t_rng r = t_rng_make((uint64_t)(k * 7919 + f * 104729 + 1));
  const double t = f * (1.0 / 60);
  ik_quat q = ik_quat_axis_angle(v3(0, 1, 0), (ik_real)(0.3 * sin(t + k)));
  int j;
  root[0] = (ik_real)(k * 0.7 - 4), root[1] = (ik_real)(0.9 + 0.03 * cos(5 * t)),
  root[2] = (ik_real)(t * 1.4);
  root[3] = q.x, root[4] = q.y, root[5] = q.z, root[6] = q.w;
  for (j = 0; j < 2; j++) {
    const double s = 5 * t + k + j * 3.14159;
    targets[3 * j + 0] = root[0] + (ik_real)(j ? -0.1 : 0.1) + (ik_real)t_uniform(&r, -0.02, 0.02);
    targets[3 * j + 1] = (ik_real)(0.05 + 0.12 * fmax(0, sin(s)) + t_uniform(&r, -0.05, 0.05));
    targets[3 * j + 2] = root[2] + (ik_real)(0.25 * cos(s) + t_uniform(&r, -0.05, 0.4));
  }
  (void)w;
}

/* One frame of the per-object path for n characters: roots and host nodes set, then a
 * bone batch a pass. */
static void objects_frame(const world *w, object *objs, int n, int f) {
  int p, k, j;
  for (k = 0; k < n; k++) {
    ik_real root[7], targets[6];
    int slot = 0;
    inputs(w, k, f, root, targets);
    assert_int_equal(ik_skeleton_set_local_position(objs[k].sk, 0, ik_vec3_make(root[0], root[1], root[2])),
                     IK_OK);
    assert_int_equal(
        ik_skeleton_set_local_rotation(objs[k].sk, 0, ik_quat_make(root[3], root[4], root[5], root[6])),
        IK_OK);
    for (j = 0; j < CHAINS; j++) {
      if (w->chains[j].target_bone >= 0) continue;
      assert_int_equal(
          ik_node_set_world_position(&objs[k].host[j], ik_vec3_make(targets[3 * slot], targets[3 * slot + 1],
                                                                    targets[3 * slot + 2])),
          IK_OK);
      slot++;
    }
  }
  for (p = 0; p < 2; p++) {
    ik_bone_batch b;
    void *buffer = malloc(ik_bone_batch_buffer_size(n * CHAINS));
    void *scratch = malloc(ik_bone_batch_scratch_size(1));
    int reached;
    ik_bone_batch_init(&b);
    ik_bone_batch_place(&b, buffer, n * CHAINS);
    assert_int_equal(ik_bone_batch_start(&b, 1, scratch), IK_OK);
    for (k = 0; k < n; k++)
      for (j = 0; j < CHAINS; j++) {
        if ((j >= 3) != p) continue;
        ik_bone_batch_add(&b, objs[k].chains[j], w->chains[j].has_foot ? &objs[k].params[j] : NULL,
                          &objs[k].state[j], &objs[k].link);
      }
    assert_int_equal(ik_bone_batch_solve(&b, DT, &reached, NULL), IK_OK);
    ik_bone_batch_free(&b);
    free(buffer);
    free(scratch);
  }
}

static void crowd_inputs(const world *w, ik_crowd *c, int f) {
  ik_crowd_view roots = ik_crowd_get_view(c, IK_CROWD_ROOTS),
                targets = ik_crowd_get_view(c, IK_CROWD_TARGETS);
  int k;
  for (k = 0; k < roots.capacity; k++)
    if (ik_crowd_used(c, k))
      inputs(w, k, f, roots.data + k * roots.stride, targets.data + k * targets.stride);
}

/* Every bone of crowd instance k and of object o, bit for bit. */
static void assert_same(ik_crowd *c, int k, const object *o) {
  ik_crowd_view rot = ik_crowd_get_view(c, IK_CROWD_ROTATIONS),
                pos = ik_crowd_get_view(c, IK_CROWD_POSITIONS);
  int b, j;
  for (b = 0; b < BONES; b++) {
    ik_vec3 p;
    ik_quat q;
    ik_real want[7];
    ik_skeleton_get_world(o->sk, b, &p, NULL);
    ik_skeleton_get_local(o->sk, b, NULL, &q);
    want[0] = q.x, want[1] = q.y, want[2] = q.z, want[3] = q.w, want[4] = p.x, want[5] = p.y, want[6] = p.z;
    if (memcmp(want, rot.data + k * rot.stride + 4 * b, 4 * sizeof(ik_real)) != 0 ||
        memcmp(want + 4, pos.data + k * pos.stride + 3 * b, 3 * sizeof(ik_real)) != 0)
      fail_msg("instance %d bone %d: crowd (%.17g %.17g %.17g) per-object (%.17g %.17g %.17g)", k, b,
               (double)pos.data[k * pos.stride + 3 * b], (double)pos.data[k * pos.stride + 3 * b + 1],
               (double)pos.data[k * pos.stride + 3 * b + 2], (double)p.x, (double)p.y, (double)p.z);
  }
  for (j = 0; j < CHAINS; j++) {
    ik_result r;
    int grounded;
    assert_int_equal(ik_crowd_result(c, k, j, &r, &grounded), IK_OK);
    assert_true(memcmp(&r.distance, &o->chains[j]->now.result.distance, sizeof r.distance) == 0);
    assert_int_equal(r.reached, o->chains[j]->now.result.reached);
  }
}

static void matches_the_per_object_path(void **state) {
  /* More than a block of 32, the last group of 8 lanes part full. */
  const int cases = t_cases(6), n = 37, frames = 25;
  t_rng r = t_rng_make(22);
  int cs, threads;
  (void)state;
  for (cs = 0; cs < cases; cs++)
    for (threads = 1; threads <= 3; threads += 2) {
      world w;
      object objs[37];
      owned_crowd oc;
      int f, k, reached, planted = 0;
      make_world(&w, &r);
      oc = make_crowd(&w, n, n, threads);
      for (k = 0; k < n; k++) make_object(&w, &objs[k]);
      for (f = 0; f < frames; f++) {
        crowd_inputs(&w, oc.c, f);
        assert_int_equal(ik_crowd_solve(oc.c, DT, &reached, NULL), IK_OK);
        objects_frame(&w, objs, n, f);
        for (k = 0; k < n; k++) {
          int g;
          assert_same(oc.c, k, &objs[k]);
          ik_crowd_result(oc.c, k, 1, NULL, &g);
          planted += g;
        }
      }
      assert_true(planted > 0); /* the feet did meet the ground */
      for (k = 0; k < n; k++) free_object(&objs[k]);
      free_crowd(&oc);
      free_world(&w);
    }
}

static void thread_count_does_not_matter(void **state) {
  t_rng r = t_rng_make(7);
  world w;
  owned_crowd oc[3];
  const int threads[3] = {1, 2, 4}, n = 70; /* more than two blocks */
  int i, f;
  (void)state;
  make_world(&w, &r);
  for (i = 0; i < 3; i++) oc[i] = make_crowd(&w, n, n, threads[i]);
  for (f = 0; f < 10; f++) {
    for (i = 0; i < 3; i++) {
      crowd_inputs(&w, oc[i].c, f);
      assert_int_equal(ik_crowd_solve(oc[i].c, DT, NULL, NULL), IK_OK);
    }
    for (i = 1; i < 3; i++) {
      int v;
      for (v = IK_CROWD_ROTATIONS; v <= IK_CROWD_POSITIONS; v++) {
        ik_crowd_view a = ik_crowd_get_view(oc[0].c, v), b = ik_crowd_get_view(oc[i].c, v);
        assert_memory_equal(a.data, b.data, (size_t)n * (size_t)a.stride * sizeof(ik_real));
      }
    }
  }
  for (i = 0; i < 3; i++) free_crowd(&oc[i]);
  free_world(&w);
}

/* Removing instances leaves the others as a crowd that kept them all; an instance added
 * later starts at rest, as a new character does. */
static void instances_come_and_go(void **state) {
  t_rng r = t_rng_make(99);
  world w;
  owned_crowd all, some;
  object fresh;
  ik_crowd_view rot;
  int f, k;
  (void)state;
  make_world(&w, &r);
  all = make_crowd(&w, 8, 8, 2);
  some = make_crowd(&w, 8, 8, 2);
  assert_int_equal(ik_crowd_add(some.c), -1); /* full */
  for (f = 0; f < 30; f++) {
    if (f == 10) {
      assert_int_equal(ik_crowd_remove(some.c, 2), IK_OK);
      assert_int_equal(ik_crowd_remove(some.c, 5), IK_OK);
      assert_int_equal(ik_crowd_remove(some.c, 5), IK_E_PARAMETER);
      assert_int_equal(ik_crowd_remove(some.c, 8), IK_E_PARAMETER);
      assert_int_equal(ik_crowd_count(some.c), 6);
      assert_int_equal(ik_crowd_result(some.c, 5, 0, NULL, NULL), IK_E_PARAMETER);
    }
    if (f == 20) {
      assert_int_equal(ik_crowd_add(some.c), 2);
      make_object(&w, &fresh);
    }
    crowd_inputs(&w, all.c, f);
    crowd_inputs(&w, some.c, f);
    assert_int_equal(ik_crowd_solve(all.c, DT, NULL, NULL), IK_OK);
    assert_int_equal(ik_crowd_solve(some.c, DT, NULL, NULL), IK_OK);
    if (f >= 20) {
      /* Slot 2 is a new character whose first frame is 20: its per-object twin's. */
      object *one = &fresh;
      ik_real root[7], targets[6];
      inputs(&w, 2, f, root, targets);
      ik_skeleton_set_local_position(one->sk, 0, ik_vec3_make(root[0], root[1], root[2]));
      ik_skeleton_set_local_rotation(one->sk, 0, ik_quat_make(root[3], root[4], root[5], root[6]));
      ik_node_set_world_position(&one->host[1], ik_vec3_make(targets[0], targets[1], targets[2]));
      ik_node_set_world_position(&one->host[2], ik_vec3_make(targets[3], targets[4], targets[5]));
      {
        int p, j;
        for (p = 0; p < 2; p++) {
          ik_bone_batch b;
          void *buffer = malloc(ik_bone_batch_buffer_size(CHAINS)),
               *scratch = malloc(ik_bone_batch_scratch_size(1));
          int reached;
          ik_bone_batch_init(&b);
          ik_bone_batch_place(&b, buffer, CHAINS);
          assert_int_equal(ik_bone_batch_start(&b, 1, scratch), IK_OK);
          for (j = 0; j < CHAINS; j++)
            if ((j >= 3) == p)
              ik_bone_batch_add(&b, one->chains[j], w.chains[j].has_foot ? &one->params[j] : NULL,
                                &one->state[j], &one->link);
          assert_int_equal(ik_bone_batch_solve(&b, DT, &reached, NULL), IK_OK);
          ik_bone_batch_free(&b);
          free(buffer);
          free(scratch);
        }
      }
      assert_same(some.c, 2, one);
    }
    rot = ik_crowd_get_view(all.c, IK_CROWD_ROTATIONS);
    for (k = 0; k < 8; k++) {
      ik_crowd_view mine = ik_crowd_get_view(some.c, IK_CROWD_ROTATIONS);
      if (!ik_crowd_used(some.c, k) || (k == 2 && f >= 20)) continue;
      assert_memory_equal(rot.data + k * rot.stride, mine.data + k * mine.stride,
                          (size_t)rot.stride * sizeof(ik_real));
    }
  }
  free_object(&fresh);
  free_crowd(&all);
  free_crowd(&some);
  free_world(&w);
}

static void a_frame_allocates_nothing(void **state) {
  t_rng r = t_rng_make(5);
  world w;
  owned_crowd oc;
  int f;
  (void)state;
  make_world(&w, &r);
  oc = make_crowd(&w, 100, 100, 2);
  crowd_inputs(&w, oc.c, 0);
  assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, NULL), IK_OK);
  c_calls = 0;
  counting = 1;
  for (f = 1; f < 20; f++) {
    crowd_inputs(&w, oc.c, f);
    assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, NULL), IK_OK);
  }
  counting = 0;
  assert_int_equal(c_calls, 0);
  free_crowd(&oc);
  free_world(&w);
}

static void bad_input_is_refused_with_nothing_moved(void **state) {
  t_rng r = t_rng_make(3);
  world w;
  owned_crowd oc;
  ik_crowd_view roots, targets, pos;
  ik_real *before;
  size_t bytes;
  ik_error err;
  (void)state;
  make_world(&w, &r);
  oc = make_crowd(&w, 4, 3, 2);
  roots = ik_crowd_get_view(oc.c, IK_CROWD_ROOTS);
  targets = ik_crowd_get_view(oc.c, IK_CROWD_TARGETS);
  pos = ik_crowd_get_view(oc.c, IK_CROWD_POSITIONS);
  assert_int_equal(roots.width, 7);
  assert_int_equal(targets.width, 6);
  assert_int_equal(pos.width, 3 * BONES);
  assert_null(ik_crowd_get_view(oc.c, IK_CROWD_VIEWS).data);
  crowd_inputs(&w, oc.c, 0);
  assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, NULL), IK_OK);
  bytes = (size_t)pos.capacity * (size_t)pos.stride * sizeof(ik_real);
  before = malloc(bytes);
  memcpy(before, pos.data, bytes);
  crowd_inputs(&w, oc.c, 1);
  roots.data[2 * roots.stride + 1] = (ik_real)NAN;
  assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, &err), IK_E_NOT_FINITE);
  assert_string_equal(err.field, "roots");
  assert_int_equal(err.index, 2);
  assert_memory_equal(before, pos.data, bytes);
  roots.data[2 * roots.stride + 1] = 1;
  roots.data[1 * roots.stride + 3] = roots.data[1 * roots.stride + 4] = roots.data[1 * roots.stride + 5] =
      roots.data[1 * roots.stride + 6] = 0;
  assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "roots");
  assert_int_equal(err.index, 1);
  roots.data[1 * roots.stride + 6] = 1;
  targets.data[0 * targets.stride + 4] = (ik_real)1e300 * (ik_real)1e300;
  assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, &err), IK_E_NOT_FINITE);
  assert_string_equal(err.field, "targets");
  assert_int_equal(err.index, 0);
  targets.data[0 * targets.stride + 4] = IK_REAL_MAX_COORD * 2;
  assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, &err), IK_E_RANGE);
  targets.data[0 * targets.stride + 4] = 0;
  /* A free slot's values are not read. */
  roots.data[3 * roots.stride] = (ik_real)NAN;
  assert_int_equal(ik_crowd_solve(oc.c, -1, NULL, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "dt");
  assert_memory_equal(before, pos.data, bytes);
  assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, &err), IK_OK);
  ik_crowd_stop(oc.c);
  assert_int_equal(ik_crowd_solve(oc.c, DT, NULL, &err), IK_E_NULL);
  assert_string_equal(err.field, "threads");
  assert_int_equal(ik_crowd_start(oc.c, 0), IK_E_PARAMETER);
  assert_int_equal(ik_crowd_start(oc.c, IK_POOL_MAX_THREADS + 1), IK_E_PARAMETER);
  free(before);
  free_crowd(&oc);
  free_world(&w);
}

/* Template and crowd refusals: field and chain named. */
static void bad_templates_are_refused(void **state) {
  t_rng r = t_rng_make(4);
  world w;
  ik_crowd_chain_desc d[CHAINS];
  const size_t size = ik_crowd_template_size(BONES);
  void *mem = malloc(size);
  ik_crowd_template *t;
  ik_error err;
  size_t csize;
  void *cmem;
  ik_crowd *c;
  (void)state;
  make_world(&w, &r);
#define REFUSED(st, field_, index_)                                                     \
  do {                                                                                  \
    assert_int_equal(ik_crowd_template_init(mem, size, w.sk, d, CHAINS, &t, &err), st); \
    assert_string_equal(err.field, field_);                                             \
    assert_int_equal(err.index, index_);                                                \
    memcpy(d, w.chains, sizeof d);                                                      \
  } while (0)
  memcpy(d, w.chains, sizeof d);
  d[1].bones[2] = BONES;
  REFUSED(IK_E_PARAMETER, "bones", 1);
  d[0].solver = IK_BONE_CHAIN_TWO_BONE; /* 5 joints */
  REFUSED(IK_E_PARAMETER, "solver", 0);
  d[2].count = 1;
  REFUSED(IK_E_COUNT, "count", 2);
  d[3].target_bone = 7; /* the arm's own elbow: it would run away */
  REFUSED(IK_E_PARAMETER, "target", 3);
  d[4].pole_bone = 11;
  REFUSED(IK_E_PARAMETER, "pole", 4);
  d[4].pole_offset.y = (ik_real)NAN;
  REFUSED(IK_E_NOT_FINITE, "pole_offset", 4);
  d[1].foot.foot_offset = -1;
  REFUSED(IK_E_PARAMETER, "foot", 1);
  d[0].tolerance = 0;
  REFUSED(IK_E_PARAMETER, "tolerance", 0);
  assert_int_equal(ik_crowd_template_init(mem, size - 1, w.sk, d, CHAINS, &t, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "mem_size");
  assert_int_equal(ik_crowd_template_init(mem, size, w.sk, d, 0, &t, &err), IK_E_COUNT);
  assert_int_equal(ik_crowd_template_init(mem, size, w.sk, d, IK_CROWD_MAX_CHAINS + 1, &t, &err), IK_E_COUNT);
  /* Feet need a ground the threads may query. */
  assert_int_equal(ik_crowd_size(w.t, 0), 0);
  csize = ik_crowd_size(w.t, 2);
  cmem = malloc(csize);
  assert_int_equal(ik_crowd_init(cmem, csize, w.t, 2, NULL, &c, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "ground");
  assert_int_equal(ik_crowd_init(cmem, csize, w.t, 0, w.ground.g, &c, &err), IK_E_COUNT);
  assert_int_equal(ik_crowd_init(cmem, csize - 1, w.t, 2, w.ground.g, &c, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "mem_size");
#undef REFUSED
  free(cmem);
  free(mem);
  free_world(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_the_per_object_path),
      cmocka_unit_test(thread_count_does_not_matter),
      cmocka_unit_test(instances_come_and_go),
      cmocka_unit_test(a_frame_allocates_nothing),
      cmocka_unit_test(bad_input_is_refused_with_nothing_moved),
      cmocka_unit_test(bad_templates_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
