/*
 * test_batch.c: ik_batch_run leaves every job bit for bit as its own *_run does, for any
 * mix of jobs and any thread count; refused jobs and malformed batches; the pool.
 *
 * Every batch is built twice in two arenas of the same layout: one copy goes through
 * ik_batch_run, the other job by job through the *_run functions, and the arenas (every
 * position and length) and the results are then compared with memcmp.
 */
#define _POSIX_C_SOURCE 200112L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ik_batch_lanes.h"
#include "ik_fabrik_stages.h"
#include "ik_internal.h"
#include "ik_pool.h" /* ik_batch_run over threads */
#include "test_util.h"

/* ---- arenas: the memory of one batch, copied to make its twin ---- */

typedef struct arena {
  unsigned char *base;
  size_t used, size;
} arena;

static arena arena_make(size_t size) {
  arena a;
  a.base = (unsigned char *)calloc(1, size);
  assert_non_null(a.base);
  a.used = 0;
  a.size = size;
  return a;
}

static void *arena_take(arena *a, size_t bytes) {
  void *p;
  bytes = (bytes + 31) & ~(size_t)31;
  assert_true(a->used + bytes <= a->size);
  p = a->base + a->used;
  a->used += bytes;
  return p;
}

/* The same address in b as p has in a (NULL stays NULL). */
static void *rebase(const arena *a, const arena *b, const void *p) {
  if (p == NULL) return NULL;
  return b->base + ((const unsigned char *)p - a->base);
}

static arena arena_twin(const arena *a) {
  arena b = arena_make(a->size);
  memcpy(b.base, a->base, a->used);
  b.used = a->used;
  return b;
}

/* ---- random jobs ---- */

typedef struct jobs {
  ik_fabrik_job *fabrik;
  ik_two_bone_job *two_bone;
  ik_ccd_job *ccd;
  ik_dls_job *dls;
  int fabrik_count, two_bone_count, ccd_count, dls_count;
} jobs;

static int random_joints(t_rng *r) {
  switch (t_int(r, 0, 7)) {
    case 0:
      return t_int(r, 2, 4);
    case 1:
      return t_int(r, 62, 66);
    case 2:
      return t_int(r, 2, 150);
    default:
      return t_int(r, 3, 16);
  }
}

/* A chain of `count` joints in the arena, in one of the shapes the solvers name: bent at
 * random, straight (collinear), with coincident joints, or folded onto its root. */
static void random_chain(t_rng *r, arena *a, ik_chain *chain, int count) {
  ik_vec3 *p = (ik_vec3 *)arena_take(a, sizeof *p * (size_t)count);
  ik_real *len = (ik_real *)arena_take(a, sizeof *len * (size_t)count);
  int i;
  t_random_chain(r, p, len, count, 0.2, 1.5, t_uniform(r, 0, 3));
  switch (t_int(r, 0, 5)) {
    case 0:
      t_straight_chain(p, count, (ik_real)t_uniform(r, 0.5, 1.5));
      ik_measure_lengths(p, count, len);
      break;
    case 1:
      for (i = 1; i < count; i++)
        if (t_int(r, 0, 2) == 0) p[i] = p[i - 1];
      break;
    case 2:
      for (i = 1; i < count; i++) p[i] = p[0];
      break;
    default:
      break;
  }
  ik_chain_init(chain, p, count, len);
  if (t_int(r, 0, 4) == 0 && count > 2) {
    chain->has_pole = 1;
    chain->pole = ik_vec3_scale(t_unit_vector(r), (ik_real)t_uniform(r, 0.1, 3));
    chain->pole_weight = (ik_real)(t_int(r, 0, 1) ? 1 : t_uniform(r, 0, 1));
  }
  if (t_int(r, 0, 5) == 0) chain->base_direction = t_unit_vector(r);
  /* Measured lengths, unless that would measure a zero length (refused). */
  if (t_int(r, 0, 5) == 0 && ik_measure_lengths(p, count, NULL) > 0) {
    chain->derive_lengths = 1;
    for (i = 0; i + 1 < count; i++)
      if (!(ik_vec3_dist(p[i], p[i + 1]) > 0)) chain->derive_lengths = 0;
  }
}

/* Cones and hinges on some bones; hinge axes in a rest pose, the chain's own. */
static void random_constraints(t_rng *r, arena *a, ik_chain *chain) {
  ik_constraint *c = (ik_constraint *)arena_take(a, sizeof *c * (size_t)(chain->count - 1));
  ik_vec3 *rest = (ik_vec3 *)arena_take(a, sizeof *rest * (size_t)chain->count);
  int i;
  memcpy(rest, chain->positions, sizeof *rest * (size_t)chain->count);
  for (i = 0; i + 1 < chain->count; i++) {
    memset(&c[i], 0, sizeof c[i]);
    switch (t_int(r, 0, 3)) {
      case 0:
        c[i].type = IK_CONSTRAINT_CONE;
        c[i].angle = (ik_real)t_uniform(r, 0.1, 2.5);
        break;
      case 1:
        c[i].type = IK_CONSTRAINT_HINGE;
        c[i].axis = t_unit_vector(r);
        c[i].min = (ik_real)t_uniform(r, -2, 0);
        c[i].max = (ik_real)t_uniform(r, 0, 2);
        break;
      default:
        c[i].type = IK_CONSTRAINT_NONE;
        break;
    }
  }
  chain->constraints = c;
  chain->rest_positions = rest;
}

/* Where a target goes: within reach, beyond it, on the tip, on the root or a joint;
 * or, for the forward pass's degenerate steps, on joint count - 2 with joint count - 3
 * exactly where that step's fallback puts joint count - 2. */
static ik_vec3 random_target(t_rng *r, ik_chain *chain) {
  ik_vec3 *p = chain->positions;
  const int n = chain->count;
  ik_real reach = 0;
  int i;
  if (chain->derive_lengths)
    reach = ik_measure_lengths(p, n, NULL);
  else
    for (i = 0; i + 1 < n; i++) reach += chain->lengths[i];
  switch (t_int(r, 0, 9)) {
    case 0:
      return ik_vec3_madd(p[0], t_unit_vector(r), reach * (ik_real)t_uniform(r, 1, 2));
    case 1:
      return p[n - 1];
    case 2:
      return p[0];
    case 3:
      return p[t_int(r, 0, n - 1)];
    case 4:
      if (n >= 3 && !chain->derive_lengths) {
        const ik_vec3 target = ik_vec3_madd(p[0], t_unit_vector(r), reach * (ik_real)t_uniform(r, 0.1, 0.9));
        const ik_vec3 root_dir = ik_vec3_normalize(ik_vec3_sub(target, p[0]));
        p[n - 2] = target;
        p[n - 3] = ik_vec3_madd(target, ik_vec3_neg(root_dir), chain->lengths[n - 2]);
        return target;
      }
      /* fall through */
    default:
      return ik_vec3_madd(p[0], t_unit_vector(r), reach * (ik_real)t_uniform(r, 0.02, 0.99));
  }
}

static ik_real random_tolerance(t_rng *r) {
  static const double tolerances[] = {0, 1e-6, 1e-4, 1e-3, 1e-1};
  return (ik_real)tolerances[t_int(r, 0, 4)];
}

/* Breaks one input of a FABRIK job so validate refuses it (1 in `one_in`): each input a
 * lane checks as it loads a chain, and some it leaves to validate. */
static void maybe_refuse(t_rng *r, ik_fabrik_job *job, int one_in) {
  ik_chain *chain = &job->chain;
  const int joint = t_int(r, 0, chain->count - 1);
  if (t_int(r, 1, one_in) != 1) return;
  switch (t_int(r, 0, 12)) {
    case 5:
      chain->positions[joint].x = (ik_real)INFINITY;
      return;
    case 6:
      chain->positions[joint].y = -2 * IK_REAL_MAX_COORD;
      return;
    case 7: /* every length in range, the reach not */
      if (!chain->derive_lengths)
        chain->lengths[0] = IK_REAL_MAX_COORD;
      else /* measured from the positions */
        chain->positions[chain->count - 1].x = IK_REAL_MAX_COORD;
      return;
    case 8:
      chain->has_pole = 1;
      chain->pole_weight = 2;
      return;
    case 9:
      chain->base_rotation.w = (ik_real)NAN;
      return;
    case 10:
      job->mode = (ik_fabrik_mode)7;
      return;
    case 11:
      chain->has_pole = 1;
      chain->pole.x = (ik_real)NAN;
      return;
    case 12:
      chain->base_direction.z = (ik_real)-INFINITY;
      return;
    default:
      break;
  }
  switch (t_int(r, 0, 4)) {
    case 0:
      job->target.y = (ik_real)NAN;
      break;
    case 1:
      if (!job->chain.derive_lengths)
        job->chain.lengths[t_int(r, 0, job->chain.count - 2)] = 0;
      else
        job->max_iterations = 0;
      break;
    case 2:
      job->chain.positions = NULL;
      break;
    case 3:
      job->tolerance = -1;
      break;
    default:
      job->chain.count = 1;
      break;
  }
}

static void random_fabrik(t_rng *r, arena *a, ik_fabrik_job *job, int constrained_one_in, int refuse_one_in) {
  ik_chain chain;
  ik_vec3 target;
  random_chain(r, a, &chain, random_joints(r));
  if (constrained_one_in && t_int(r, 1, constrained_one_in) == 1) random_constraints(r, a, &chain);
  target = random_target(r, &chain);
  ik_fabrik_job_init(job, &chain, target);
  job->tolerance = random_tolerance(r);
  job->max_iterations = t_int(r, 1, 30);
  if (t_int(r, 0, 3) == 0) job->mode = IK_FABRIK_REFINED;
  /* Valid, yet past the lanes' quick checks (validate only asks a base rotation to be
   * finite): validate is asked, and says IK_OK. */
  if (t_int(r, 0, 24) == 0) job->chain.base_rotation = ik_quat_make(0, 0, 0, 10 * IK_REAL_MAX_COORD);
  maybe_refuse(r, job, refuse_one_in);
}

static void random_two_bone(t_rng *r, arena *a, ik_two_bone_job *job) {
  ik_vec3 *p = (ik_vec3 *)arena_take(a, sizeof *p * 3);
  ik_real len[2];
  t_random_chain(r, p, len, 3, 0.5, 2, 3);
  ik_two_bone_job_init(
      job, p, ik_vec3_madd(p[0], t_unit_vector(r), (ik_real)t_uniform(r, 0, 2 * (double)(len[0] + len[1]))));
  if (t_int(r, 0, 1)) {
    job->has_pole = 1;
    job->pole = ik_vec3_madd(p[0], t_unit_vector(r), (ik_real)t_uniform(r, 0.1, 3));
  }
  if (t_int(r, 0, 2) == 0) job->weight = (ik_real)t_uniform(r, 0, 1);
  if (t_int(r, 0, 2) == 0) job->softness = (ik_real)t_uniform(r, 0, 0.9);
  if (t_int(r, 0, 19) == 0) job->target.x = (ik_real)INFINITY;
  /* The lanes group jobs by pole flag and tolerance: runs of each, and refused ones. */
  if (t_int(r, 0, 3) == 0) job->tolerance = t_int(r, 0, 9) ? random_tolerance(r) : -1;
  job->has_pole *= t_int(r, 1, 3);
}

static void random_ccd_chain(t_rng *r, arena *a, ik_chain *chain, ik_vec3 *target) {
  random_chain(r, a, chain, t_int(r, 2, 12));
  if (t_int(r, 0, 2) == 0) random_constraints(r, a, chain);
  *target = random_target(r, chain);
}

/* The job arrays live outside the arenas (their pointers differ between twins). */
static void jobs_alloc(jobs *j) {
  j->fabrik = (ik_fabrik_job *)calloc((size_t)j->fabrik_count + 1, sizeof *j->fabrik);
  j->two_bone = (ik_two_bone_job *)calloc((size_t)j->two_bone_count + 1, sizeof *j->two_bone);
  j->ccd = (ik_ccd_job *)calloc((size_t)j->ccd_count + 1, sizeof *j->ccd);
  j->dls = (ik_dls_job *)calloc((size_t)j->dls_count + 1, sizeof *j->dls);
  assert_true(j->fabrik && j->two_bone && j->ccd && j->dls);
}

static void jobs_free(jobs *j) {
  free(j->fabrik);
  free(j->two_bone);
  free(j->ccd);
  free(j->dls);
}

/* A batch of the given sizes in a: FABRIK jobs mostly without constraints (the lanes'),
 * the others of every kind. */
static jobs random_jobs(t_rng *r, arena *a, int fabrik, int two_bone, int ccd, int dls) {
  jobs j;
  int i;
  j.fabrik_count = fabrik;
  j.two_bone_count = two_bone;
  j.ccd_count = ccd;
  j.dls_count = dls;
  jobs_alloc(&j);
  for (i = 0; i < fabrik; i++) random_fabrik(r, a, &j.fabrik[i], 6, 25);
  for (i = 0; i < two_bone; i++) random_two_bone(r, a, &j.two_bone[i]);
  for (i = 0; i < ccd; i++) {
    ik_chain chain;
    ik_vec3 target;
    random_ccd_chain(r, a, &chain, &target);
    ik_ccd_job_init(&j.ccd[i], &chain, target);
    j.ccd[i].tolerance = random_tolerance(r);
    j.ccd[i].max_iterations = t_int(r, 1, 20);
  }
  for (i = 0; i < dls; i++) {
    ik_chain chain;
    ik_vec3 target;
    random_ccd_chain(r, a, &chain, &target);
    ik_dls_job_init(&j.dls[i], &chain, target);
    j.dls[i].tolerance = random_tolerance(r);
    j.dls[i].max_iterations = t_int(r, 1, 20);
  }
  return j;
}

static void rebase_chain(const arena *a, const arena *b, ik_chain *chain) {
  chain->positions = (ik_vec3 *)rebase(a, b, chain->positions);
  chain->lengths = (ik_real *)rebase(a, b, chain->lengths);
  chain->constraints = (const ik_constraint *)rebase(a, b, chain->constraints);
  chain->rest_positions = (const ik_vec3 *)rebase(a, b, chain->rest_positions);
}

/* Copies of the jobs of `j`, pointing into b (a's twin) where j's point into a. */
static jobs twin_jobs(const arena *a, const arena *b, const jobs *j) {
  jobs t = *j;
  int i;
  jobs_alloc(&t);
  memcpy(t.fabrik, j->fabrik, sizeof *t.fabrik * (size_t)j->fabrik_count);
  memcpy(t.two_bone, j->two_bone, sizeof *t.two_bone * (size_t)j->two_bone_count);
  memcpy(t.ccd, j->ccd, sizeof *t.ccd * (size_t)j->ccd_count);
  memcpy(t.dls, j->dls, sizeof *t.dls * (size_t)j->dls_count);
  for (i = 0; i < j->fabrik_count; i++) rebase_chain(a, b, &t.fabrik[i].chain);
  for (i = 0; i < j->two_bone_count; i++)
    t.two_bone[i].positions = (ik_vec3 *)rebase(a, b, t.two_bone[i].positions);
  for (i = 0; i < j->ccd_count; i++) rebase_chain(a, b, &t.ccd[i].chain);
  for (i = 0; i < j->dls_count; i++) rebase_chain(a, b, &t.dls[i].chain);
  return t;
}

/* ---- running and comparing ---- */

typedef struct statuses {
  ik_status *fabrik, *two_bone, *ccd, *dls;
} statuses;

static statuses statuses_make(const jobs *j) {
  statuses s;
  s.fabrik = (ik_status *)calloc((size_t)j->fabrik_count + 1, sizeof(ik_status));
  s.two_bone = (ik_status *)calloc((size_t)j->two_bone_count + 1, sizeof(ik_status));
  s.ccd = (ik_status *)calloc((size_t)j->ccd_count + 1, sizeof(ik_status));
  s.dls = (ik_status *)calloc((size_t)j->dls_count + 1, sizeof(ik_status));
  return s;
}

static void statuses_free(statuses *s) {
  free(s->fabrik);
  free(s->two_bone);
  free(s->ccd);
  free(s->dls);
}

static void run_single(const jobs *j, statuses *s) {
  int i;
  for (i = 0; i < j->fabrik_count; i++) s->fabrik[i] = ik_fabrik_run(&j->fabrik[i]);
  for (i = 0; i < j->two_bone_count; i++) s->two_bone[i] = ik_two_bone_run(&j->two_bone[i]);
  for (i = 0; i < j->ccd_count; i++) s->ccd[i] = ik_ccd_run(&j->ccd[i]);
  for (i = 0; i < j->dls_count; i++) s->dls[i] = ik_dls_run(&j->dls[i]);
}

static ik_batch batch_of(const jobs *j, statuses *s) {
  ik_batch b;
  ik_batch_init(&b);
  b.fabrik = j->fabrik;
  b.fabrik_count = j->fabrik_count;
  b.two_bone = j->two_bone;
  b.two_bone_count = j->two_bone_count;
  b.ccd = j->ccd;
  b.ccd_count = j->ccd_count;
  b.dls = j->dls;
  b.dls_count = j->dls_count;
  if (s) {
    b.fabrik_status = s->fabrik;
    b.two_bone_status = s->two_bone;
    b.ccd_status = s->ccd;
    b.dls_status = s->dls;
  }
  return b;
}

/* Every job's result and status, and every byte of the arenas (positions, lengths). */
static void assert_same(const arena *a, const arena *b, const jobs *ja, const jobs *jb, const statuses *sa,
                        const statuses *sb) {
  int i;
  for (i = 0; i < ja->fabrik_count; i++) {
    assert_int_equal(sa->fabrik[i], sb->fabrik[i]);
    assert_memory_equal(&ja->fabrik[i].result, &jb->fabrik[i].result, sizeof(ik_result));
  }
  for (i = 0; i < ja->two_bone_count; i++) {
    assert_int_equal(sa->two_bone[i], sb->two_bone[i]);
    assert_memory_equal(&ja->two_bone[i].result, &jb->two_bone[i].result, sizeof(ik_result));
  }
  for (i = 0; i < ja->ccd_count; i++) {
    assert_int_equal(sa->ccd[i], sb->ccd[i]);
    assert_memory_equal(&ja->ccd[i].result, &jb->ccd[i].result, sizeof(ik_result));
  }
  for (i = 0; i < ja->dls_count; i++) {
    assert_int_equal(sa->dls[i], sb->dls[i]);
    assert_memory_equal(&ja->dls[i].result, &jb->dls[i].result, sizeof(ik_result));
  }
  assert_int_equal(a->used, b->used);
  assert_memory_equal(a->base, b->base, a->used);
}

/* Runs the jobs `ja` (their memory in `a`) through ik_batch_run on pool (NULL: none), or
 * when work is not NULL through ik_batch_run_slice in it, and a twin of them job by job;
 * everything must match. Frees both, and `a` with them. */
static void check_against_single_in(arena *a, jobs *ja, ik_pool *pool, ik_batch_lanes *work) {
  arena b = arena_twin(a);
  jobs jb = twin_jobs(a, &b, ja);
  statuses sa = statuses_make(ja), sb = statuses_make(&jb);
  ik_batch batch = batch_of(ja, &sa);
  if (work)
    ik_batch_run_slice(&batch, 0, 1, work);
  else
    assert_int_equal(ik_batch_run(&batch, pool), IK_OK);
  run_single(&jb, &sb);
  assert_same(a, &b, ja, &jb, &sa, &sb);
  statuses_free(&sa);
  statuses_free(&sb);
  jobs_free(ja);
  jobs_free(&jb);
  free(a->base);
  free(b.base);
}

static void check_against_single(arena *a, jobs *ja, ik_pool *pool) {
  check_against_single_in(a, ja, pool, NULL);
}

/* One random batch of the given sizes through ik_batch_run on `threads` threads (0: no
 * pool) and job by job; everything must match. */
static void check_batch(uint64_t seed, int threads, int fabrik, int two_bone, int ccd, int dls) {
  t_rng r = t_rng_make(seed);
  arena a = arena_make((size_t)(fabrik + two_bone + ccd + dls + 4) * 8192 + 65536);
  jobs ja = random_jobs(&r, &a, fabrik, two_bone, ccd, dls);
  ik_pool *pool = threads ? ik_pool_new(threads) : NULL;
  if (threads) assert_non_null(pool);
  check_against_single(&a, &ja, pool);
  ik_pool_free(pool);
}

/* ---- bit for bit as alone ---- */

static void test_fabrik_batches_match_single_runs(void **state) {
  /* Sizes around the lane count and a run's chunk on the stack, never all multiples of
   * the lanes. */
  const int sizes[] = {1, 2, IK__LANES - 1, IK__LANES + 1, 3 * IK__LANES + 5, 250, IK__STACK_CHUNK + 37};
  const int threads[] = {0, 1, 2, 3, 8};
  int s, t;
  (void)state;
  for (s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++)
    for (t = 0; t < (int)(sizeof threads / sizeof threads[0]); t++)
      check_batch(1000 + (uint64_t)s, threads[t], sizes[s], 0, 0, 0);
  /* A pool thread's chunk is larger than a run's on the stack: past its end too. */
  check_batch(1100, 1, IK__CHUNK + 37, 0, 0, 0);
}

static void test_mixed_batches_match_single_runs(void **state) {
  const int threads[] = {0, 1, 2, 3, 8};
  int t, k;
  (void)state;
  for (t = 0; t < (int)(sizeof threads / sizeof threads[0]); t++)
    for (k = 0; k < 4; k++) check_batch(2000 + (uint64_t)k, threads[t], 67 + 40 * k, 13 + k, 5 + k, 7 + k);
}

/* Many chains of one length, as a crowd: every lane refilled many times over; groups of
 * 32, 16 and 8 lanes, and chains just too long for lanes. */
static void test_uniform_crowd_matches_single_runs(void **state) {
  const int counts[] = {2, 3, 10, 64, 65, 128, 129, IK_BATCH_LANE_MAX_JOINTS, IK_BATCH_LANE_MAX_JOINTS + 1};
  int c, t;
  (void)state;
  for (c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++) {
    for (t = 0; t < 3; t++) {
      t_rng r = t_rng_make(3000 + (uint64_t)c);
      const int n = counts[c], chains = 301;
      arena a = arena_make((size_t)chains * (size_t)n * 64 + 65536);
      jobs ja;
      ik_pool *pool = ik_pool_new(1 + t);
      int i;
      memset(&ja, 0, sizeof ja);
      ja.fabrik_count = chains;
      jobs_alloc(&ja);
      for (i = 0; i < chains; i++) {
        ik_vec3 *p = (ik_vec3 *)arena_take(&a, sizeof *p * (size_t)n);
        ik_real *len = (ik_real *)arena_take(&a, sizeof *len * (size_t)n);
        ik_chain chain;
        ik_real total;
        t_straight_chain(p, n, 1);
        total = ik_measure_lengths(p, n, len);
        ik_chain_init(&chain, p, n, len);
        ik_fabrik_job_init(&ja.fabrik[i], &chain,
                           ik_vec3_scale(t_unit_vector(&r), total * (ik_real)t_uniform(&r, 0.1, 0.95)));
        ja.fabrik[i].tolerance = (ik_real)1e-4 * total;
        ja.fabrik[i].max_iterations = 20;
      }
      check_against_single(&a, &ja, pool);
      ik_pool_free(pool);
    }
  }
}

/* A chain's joints and lengths into lane `lane` of rows. */
static void put_chain(ik__lane_rows *rows, int lane, const ik_vec3 *p, const ik_real *len, int n) {
  int i;
  for (i = 0; i < n; i++) {
    rows->x[i * rows->lanes + lane] = p[i].x;
    rows->y[i * rows->lanes + lane] = p[i].y;
    rows->z[i * rows->lanes + lane] = p[i].z;
    if (i + 1 < n) rows->len[i * rows->lanes + lane] = len[i];
  }
}

/* A lane's root direction and plane normal (zero: none), as the polish rows hold them. */
static void put_frame(ik__lane_rows *rows, int lane, ik_vec3 root_dir, ik_vec3 plane) {
  rows->root_dir_x[lane] = root_dir.x;
  rows->root_dir_y[lane] = root_dir.y;
  rows->root_dir_z[lane] = root_dir.z;
  rows->plane_x[lane] = plane.x;
  rows->plane_y[lane] = plane.y;
  rows->plane_z[lane] = plane.z;
}

/* Lane `lane` of rows holds the joints p, bit for bit. */
static void assert_lane_is(const ik__lane_rows *rows, int lane, const ik_vec3 *p, int n) {
  int i;
  for (i = 0; i < n; i++) {
    assert_memory_equal(&rows->x[i * rows->lanes + lane], &p[i].x, sizeof(ik_real));
    assert_memory_equal(&rows->y[i * rows->lanes + lane], &p[i].y, sizeof(ik_real));
    assert_memory_equal(&rows->z[i * rows->lanes + lane], &p[i].z, sizeof(ik_real));
  }
}

/* Lane `lane` of rows holds what it held in before, bit for bit. */
static void assert_lane_unchanged(const ik__lane_rows *rows, const ik__lane_rows *before, int lane, int n) {
  int i;
  for (i = 0; i < n; i++) {
    const int cell = i * rows->lanes + lane;
    assert_memory_equal(&rows->x[cell], &before->x[cell], sizeof(ik_real));
    assert_memory_equal(&rows->y[cell], &before->y[cell], sizeof(ik_real));
    assert_memory_equal(&rows->z[cell], &before->z[cell], sizeof(ik_real));
  }
}

/* Rows of every width a group uses (8, 16 and 32 lanes), some lanes left out of `live`
 * (the sweep must not care what they hold); then each live lane's stop test: the tip's
 * error kept, the previous one moved, and the lanes flagged exactly where it is within
 * tol2, or within near2 and above slow2 times the error before. */
static void check_lane_sweep(ik__sweep_fn sweep, uint64_t seed) {
  static ik__lane_rows rows;
  t_rng r = t_rng_make(seed);
  int trial;
  for (trial = 0; trial < 300; trial++) {
    const int n = t_int(&r, 2, 12);
    ik_vec3 p[IK__LANES][12];
    ik_real len[IK__LANES][12];
    ik_fabrik_job job[IK__LANES];
    ik__fabrik_state s[IK__LANES];
    ik_real before_err2[IK__LANES];
    ik__lane_mask live = 0, checks;
    int lane, i;
    rows.lanes = IK__LANES >> t_int(&r, 0, 2);
    for (lane = 0; lane < rows.lanes; lane++) {
      ik_chain chain;
      ik_vec3 target;
      t_random_chain(&r, p[lane], len[lane], n, 0.5, 1.5, 2);
      for (i = 1; i < n; i++)
        if (t_int(&r, 0, 1)) p[lane][i] = p[lane][t_int(&r, 0, i - 1)];
      target = p[lane][t_int(&r, 0, n - 1)];
      ik_chain_init(&chain, p[lane], n, len[lane]);
      ik_fabrik_job_init(&job[lane], &chain, target);
      memset(&s[lane], 0, sizeof s[lane]);
      s[lane].root_ws = p[lane][0];
      s[lane].root_dir = ik__root_fallback(&chain, target);
      put_chain(&rows, lane, p[lane], len[lane], n);
      rows.target_x[lane] = target.x;
      rows.target_y[lane] = target.y;
      rows.target_z[lane] = target.z;
      rows.root_x[lane] = p[lane][0].x;
      rows.root_y[lane] = p[lane][0].y;
      rows.root_z[lane] = p[lane][0].z;
      rows.root_dir[lane] = s[lane].root_dir;
      /* The stop test's inputs: thresholds about as far as the tip will be, or 0 and -1. */
      before_err2[lane] = rows.tip_err2[lane] = (ik_real)t_uniform(&r, 0, 4);
      rows.tol2[lane] = (ik_real)(t_int(&r, 0, 2) ? 0 : t_uniform(&r, 0, 2));
      rows.near2[lane] = (ik_real)(t_int(&r, 0, 2) ? -1 : t_uniform(&r, 0, 8));
      rows.slow2[lane] = t_int(&r, 0, 1) ? ik__fabrik_slow2() : -1;
      if (t_int(&r, 0, 3)) live |= (ik__lane_mask)1 << lane;
    }
    checks = sweep(&rows, n, live);
    assert_true((checks & ~live) == 0);
    for (lane = 0; lane < rows.lanes; lane++) {
      ik_real err2;
      if (!(live >> lane & 1)) continue;
      ik__fabrik_sweep(&job[lane], &s[lane]);
      assert_lane_is(&rows, lane, p[lane], n);
      /* The tip's error as ik__fabrik_next measures it, the one before kept. */
      err2 = ik_vec3_dist2(p[lane][n - 1], job[lane].target);
      assert_memory_equal(&rows.tip_err2[lane], &err2, sizeof err2);
      assert_memory_equal(&rows.prev_err2[lane], &before_err2[lane], sizeof err2);
      assert_int_equal(checks >> lane & 1,
                       err2 <= rows.tol2[lane] ||
                           (err2 < rows.near2[lane] && err2 > rows.slow2[lane] * before_err2[lane]));
    }
  }
}

/* Each instruction set's lane sweep (whichever this machine would pick) against
 * ik__fabrik_sweep, on poses chosen to have bones of no length mid-pass: coincident
 * joints, targets on joints and on the root. */
static void test_lane_sweeps_match_scalar_sweep_on_degenerate_poses(void **state) {
  int isa;
  (void)state;
  assert_non_null(ik__sweep_variant(0));
  for (isa = 0; isa < 4; isa++)
    if (ik__sweep_variant(isa)) check_lane_sweep(ik__sweep_variant(isa), 4000 + (uint64_t)isa);
}

/* A pose for a polish step, often a hard one: joints on joints, a chain in a plane (the
 * steps then turn about its normal only), a straight chain with the target on its line
 * (stuck: the lane hands its step back) or off it, the target on a joint. */
static ik_vec3 random_polish_pose(t_rng *r, ik_vec3 *p, ik_real *len, int n) {
  ik_vec3 target;
  int i;
  t_random_chain(r, p, len, n, 0.5, 1.5, 2);
  target = ik_vec3_madd(p[0], t_unit_vector(r), (ik_real)t_uniform(r, 0.1, 1.2) * (ik_real)n);
  switch (t_int(r, 0, 5)) {
    case 0:
      for (i = 1; i < n; i++)
        if (t_int(r, 0, 2) == 0) p[i] = p[t_int(r, 0, i - 1)];
      break;
    case 1:
      for (i = 0; i < n; i++) p[i].z = 0;
      target.z = 0;
      break;
    case 2: {
      const ik_vec3 dir = t_unit_vector(r);
      ik_real along = 0;
      for (i = 0; i < n; i++) {
        p[i] = ik_vec3_madd(p[0], dir, along);
        if (i + 1 < n) along += len[i];
      }
      /* Half the time off the line: then not stuck, but with J J^T singular (only the
       * damping keeps the solve's pivots positive). */
      if (t_int(r, 0, 1)) target = ik_vec3_madd(p[0], dir, along * (ik_real)t_uniform(r, 0.3, 0.9));
      break;
    }
    case 3:
      target = p[t_int(r, 0, n - 1)];
      break;
    default:
      break;
  }
  return target;
}

/* Rows of every width, some lanes left out of `live`: the lane plane step against
 * ik__plane_normal, bit for bit, on the polish's hard poses (planar chains, straight
 * ones with the target on their line or off it, joints on joints) and on planar ones
 * nudged off their plane by about the flatness bound; the other lanes keep their
 * planes. Both answers (a plane, none) must be seen. */
static void check_lane_plane(ik__polish_fns fns, uint64_t seed) {
  static ik__lane_rows rows, before;
  t_rng r = t_rng_make(seed);
  int trial, planes = 0, none = 0;
  for (trial = 0; trial < 300; trial++) {
    const int n = t_int(&r, 2, 12);
    ik_vec3 p[IK__LANES][12];
    ik_real len[IK__LANES][12];
    ik_vec3 target[IK__LANES];
    ik__lane_mask live = 0;
    int lane, i;
    rows.lanes = IK__LANES >> t_int(&r, 0, 2);
    for (lane = 0; lane < rows.lanes; lane++) {
      ik_real total = 0;
      target[lane] = random_polish_pose(&r, p[lane], len[lane], n);
      if (t_int(&r, 0, 3) == 0) { /* planar, then nudged near the bound */
        const ik_real nudge = (ik_real)t_uniform(&r, 0, 512) * IK_REAL_EPSILON * (ik_real)n;
        for (i = 0; i < n; i++) p[lane][i].z = 0;
        target[lane].z = 0;
        p[lane][t_int(&r, 0, n - 1)].z = nudge;
      }
      for (i = 0; i + 1 < n; i++) total += len[lane][i];
      put_chain(&rows, lane, p[lane], len[lane], n);
      rows.target_x[lane] = target[lane].x;
      rows.target_y[lane] = target[lane].y;
      rows.target_z[lane] = target[lane].z;
      rows.total[lane] = total;
      rows.plane_x[lane] = rows.plane_y[lane] = rows.plane_z[lane] = (ik_real)lane;
      if (t_int(&r, 0, 3)) live |= (ik__lane_mask)1 << lane;
    }
    before = rows;
    fns.plane(&rows, n, live);
    for (lane = 0; lane < rows.lanes; lane++) {
      ik_vec3 want, got = ik_vec3_make(rows.plane_x[lane], rows.plane_y[lane], rows.plane_z[lane]);
      ik_real total = 0;
      for (i = 0; i + 1 < n; i++) total += len[lane][i];
      want = live >> lane & 1
                 ? ik__plane_normal(p[lane], n, target[lane], total)
                 : ik_vec3_make(before.plane_x[lane], before.plane_y[lane], before.plane_z[lane]);
      assert_memory_equal(&got, &want, sizeof got);
      if (live >> lane & 1) {
        planes += ik_vec3_len2(want) > 0;
        none += ik_vec3_len2(want) == 0;
      }
    }
  }
  assert_true(planes > 0 && none > 0);
}

static void test_lane_planes_match_scalar_plane_normal(void **state) {
  int isa;
  (void)state;
  for (isa = 0; isa < 4; isa++)
    if (ik__polish_variant(isa).plane) check_lane_plane(ik__polish_variant(isa), 8000 + (uint64_t)isa);
}

/* Rows of every width, some lanes left out of `live`: the lane polish step (plan, then
 * apply on the lanes plan does not hand back) against ik__dls_step, lane by lane; the
 * lanes outside `live` untouched by apply. */
static void check_lane_polish(ik__polish_fns fns, uint64_t seed) {
  static ik__lane_rows rows, before;
  t_rng r = t_rng_make(seed);
  int trial, handed_back = 0, stepped = 0;
  for (trial = 0; trial < 300; trial++) {
    const int n = t_int(&r, 2, 12);
    ik_vec3 p[IK__LANES][12];
    ik_real len[IK__LANES][12];
    ik_vec3 target[IK__LANES];
    ik__dls_state dls[IK__LANES];
    ik_chain chain[IK__LANES];
    ik__lane_mask live = 0, alone;
    int lane, i;
    rows.lanes = IK__LANES >> t_int(&r, 0, 2);
    for (lane = 0; lane < rows.lanes; lane++) {
      ik_real total = 0, floor_len;
      target[lane] = random_polish_pose(&r, p[lane], len[lane], n);
      ik_chain_init(&chain[lane], p[lane], n, len[lane]);
      for (i = 0; i + 1 < n; i++) total += len[lane][i];
      ik__dls_begin(&dls[lane], &chain[lane], target[lane], (ik_real)0.01,
                    ik__root_fallback(&chain[lane], target[lane]), total, 0);
      floor_len = (ik_real)t_uniform(&r, 0, 0.1) * total;
      put_chain(&rows, lane, p[lane], len[lane], n);
      rows.target_x[lane] = target[lane].x;
      rows.target_y[lane] = target[lane].y;
      rows.target_z[lane] = target[lane].z;
      put_frame(&rows, lane, dls[lane].root_dir, dls[lane].plane_n);
      rows.max_step[lane] = dls[lane].max_step_len;
      rows.floor2[lane] = floor_len * floor_len;
      rows.err2[lane] = ik_vec3_dist2(p[lane][n - 1], target[lane]);
      if (t_int(&r, 0, 3)) live |= (ik__lane_mask)1 << lane;
    }
    alone = fns.plan(&rows, n, live);
    assert_true((alone & ~live) == 0);
    before = rows;
    fns.apply(&rows, n, live & ~alone);
    for (lane = 0; lane < rows.lanes; lane++) {
      if (!(live >> lane & 1) || (alone >> lane & 1)) {
        assert_lane_unchanged(&rows, &before, lane, n);
        handed_back += (int)(alone >> lane & 1);
        continue;
      }
      dls[lane].lambda2 = rows.floor2[lane] + rows.err2[lane];
      ik__dls_step(&dls[lane], &chain[lane], target[lane]);
      stepped++;
      assert_lane_is(&rows, lane, p[lane], n);
    }
  }
  /* Both kinds of lane were seen, but in scalar code (variant 2, or every variant without
   * vector extensions), which hands every lane back. */
  assert_true(handed_back > 0);
  if (fns.plan != ik__polish_variant(2).plan) assert_true(stepped > 0);
}

static void test_lane_polish_matches_scalar_step_on_hard_poses(void **state) {
  int isa;
  (void)state;
  assert_non_null(ik__polish_variant(0).plan);
  for (isa = 0; isa < 4; isa++)
    if (ik__polish_variant(isa).plan) check_lane_polish(ik__polish_variant(isa), 5000 + (uint64_t)isa);
}

/* Apply alone, on steps planned to turn joints by up to 3 rad: the turns of the series
 * and the large ones (sine and cosine, lane by lane) side by side in the vectors, some
 * chains in a plane; lanes outside `live` untouched. (Planned steps on random poses
 * hardly ever turn a joint past 1 rad: their chains are the stuck ones, handed back.) */
static void check_lane_turns(ik__polish_fns fns, uint64_t seed) {
  static ik__lane_rows rows, before;
  t_rng r = t_rng_make(seed);
  int trial, large = 0, small = 0;
  for (trial = 0; trial < 200; trial++) {
    const int n = t_int(&r, 2, 12);
    ik_vec3 p[IK__LANES][12], y[IK__LANES], root_dir[IK__LANES], plane[IK__LANES];
    ik_real len[IK__LANES][12];
    ik__lane_mask live = 0;
    int lane, i;
    rows.lanes = IK__LANES >> t_int(&r, 0, 2);
    for (lane = 0; lane < rows.lanes; lane++) {
      ik_real total = 0, turn2 = 0;
      t_random_chain(&r, p[lane], len[lane], n, 0.5, 1.5, 2);
      for (i = 0; i + 1 < n; i++) total += len[lane][i];
      y[lane] = ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0, 3) / total);
      root_dir[lane] = t_unit_vector(&r);
      plane[lane] = ik_vec3_zero();
      if (t_int(&r, 0, 2) == 0) { /* in the plane z = 0, turning about its normal */
        for (i = 0; i < n; i++) p[lane][i].z = 0;
        y[lane].z = 0;
        plane[lane] = ik_vec3_make(0, 0, 1);
      }
      for (i = 0; i < n; i++) {
        const ik_vec3 dtheta = ik_vec3_cross(ik_vec3_sub(p[lane][n - 1], p[lane][i]), y[lane]);
        if (ik_vec3_len2(dtheta) / 4 > turn2) turn2 = ik_vec3_len2(dtheta) / 4;
      }
      put_chain(&rows, lane, p[lane], len[lane], n);
      put_frame(&rows, lane, root_dir[lane], plane[lane]);
      rows.step_x[lane] = y[lane].x;
      rows.step_y[lane] = y[lane].y;
      rows.step_z[lane] = y[lane].z;
      if (t_int(&r, 0, 3)) {
        live |= (ik__lane_mask)1 << lane;
        if (turn2 > IK__DLS_SERIES_MAX_H2)
          large++;
        else
          small++;
      }
    }
    before = rows;
    fns.apply(&rows, n, live);
    for (lane = 0; lane < rows.lanes; lane++) {
      ik_chain chain;
      if (!(live >> lane & 1)) { /* left as it was */
        assert_lane_unchanged(&rows, &before, lane, n);
        continue;
      }
      ik_chain_init(&chain, p[lane], n, len[lane]);
      ik__dls_apply_step(&chain, y[lane], root_dir[lane], plane[lane]);
      assert_lane_is(&rows, lane, p[lane], n);
    }
  }
  assert_true(large > 0 && small > 0);
}

static void test_lane_polish_turns_as_the_scalar_step(void **state) {
  int isa;
  (void)state;
  /* Not the scalar variant (2, and every one without vector extensions): there every
   * step is ik__dls_step's, and apply does nothing. */
  for (isa = 0; isa < 4; isa++)
    if (isa != 2 && ik__polish_variant(isa).apply &&
        ik__polish_variant(isa).apply != ik__polish_variant(2).apply)
      check_lane_turns(ik__polish_variant(isa), 6000 + (uint64_t)isa);
}

/* Refined and plain chains in one crowd, every iteration budget from 1 to 20 (with 1,
 * 2 and 3 the polish has no room or one or two steps), all lane widths: the batch ends
 * every chain as ik_fabrik_run does. */
static void test_refined_crowd_matches_single_runs(void **state) {
  const int counts[] = {3, 10, 40, 100};
  int c;
  (void)state;
  for (c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++) {
    t_rng r = t_rng_make(6000 + (uint64_t)c);
    const int n = counts[c], chains = 400;
    arena a = arena_make((size_t)chains * (size_t)n * 64 + 65536);
    jobs ja;
    ik_pool *pool = ik_pool_new(1 + c % 2);
    int i;
    assert_non_null(pool);
    memset(&ja, 0, sizeof ja);
    ja.fabrik_count = chains;
    jobs_alloc(&ja);
    for (i = 0; i < chains; i++) {
      ik_vec3 *p = (ik_vec3 *)arena_take(&a, sizeof *p * (size_t)n);
      ik_real *len = (ik_real *)arena_take(&a, sizeof *len * (size_t)n);
      ik_chain chain;
      ik_real total;
      ik_vec3 target;
      t_straight_chain(p, n, 1);
      total = ik_measure_lengths(p, n, len);
      ik_chain_init(&chain, p, n, len);
      target = i % 7 == 0 ? ik_vec3_make(total * (ik_real)t_uniform(&r, 0.2, 0.9), 0, 0)
                          : ik_vec3_scale(t_unit_vector(&r), total * (ik_real)t_uniform(&r, 0.02, 0.99));
      ik_fabrik_job_init(&ja.fabrik[i], &chain, target);
      ja.fabrik[i].tolerance = (ik_real)(i % 3 == 0 ? 1e-6 : 1e-4) * total;
      ja.fabrik[i].max_iterations = i % 5 == 0 ? 20 : 1 + i % 20;
      ja.fabrik[i].mode = i % 4 == 0 ? IK_FABRIK_PLAIN : IK_FABRIK_REFINED;
    }
    check_against_single(&a, &ja, pool);
    ik_pool_free(pool);
  }
}

/* The refined crowd's chains (plain and refined, 3 to 200 joints: every lane width, and
 * for floats a group narrower than AVX-512's vectors) through a lane workspace made to
 * run each instruction set this machine has, whichever it would pick: every one ends
 * every chain as ik_fabrik_run does, so each ends them as the others do. */
static void test_each_instruction_set_solves_a_crowd_alike(void **state) {
  const int counts[] = {3, 10, 100, 200};
  ik_batch_lanes *work;
  void *mem;
  int isa, c, ran = 0;
  (void)state;
  assert_int_equal(posix_memalign(&mem, IK_BATCH_LANES_ALIGN, ik_batch_lanes_size()), 0);
  work = ik_batch_lanes_init(mem);
  assert_non_null(work->sweep);
  assert_true(work->sweep == ik__sweep_variant(ik__best_isa()));
  for (isa = 0; isa < 4; isa++) {
    if (!ik__sweep_variant(isa)) continue;
    work->sweep = ik__sweep_variant(isa);
    work->polish_fns = ik__polish_variant(isa);
    ran++;
    for (c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++) {
      t_rng r = t_rng_make(7000 + (uint64_t)c);
      const int n = counts[c], chains = 120;
      arena a = arena_make((size_t)chains * (size_t)n * 64 + 65536);
      jobs ja;
      int i;
      memset(&ja, 0, sizeof ja);
      ja.fabrik_count = chains;
      jobs_alloc(&ja);
      for (i = 0; i < chains; i++) {
        ik_vec3 *p = (ik_vec3 *)arena_take(&a, sizeof *p * (size_t)n);
        ik_real *len = (ik_real *)arena_take(&a, sizeof *len * (size_t)n);
        ik_chain chain;
        ik_real total;
        t_straight_chain(p, n, 1);
        total = ik_measure_lengths(p, n, len);
        ik_chain_init(&chain, p, n, len);
        ik_fabrik_job_init(&ja.fabrik[i], &chain,
                           ik_vec3_scale(t_unit_vector(&r), total * (ik_real)t_uniform(&r, 0.02, 0.99)));
        ja.fabrik[i].tolerance = (ik_real)1e-4 * total;
        ja.fabrik[i].max_iterations = 1 + i % 20;
        ja.fabrik[i].mode = i % 3 == 0 ? IK_FABRIK_PLAIN : IK_FABRIK_REFINED;
      }
      check_against_single_in(&a, &ja, NULL, work);
    }
  }
  assert_true(ran >= 2); /* the baseline and the scalar code at least */
  free(mem);
}

/* ---- refused jobs, malformed batches ---- */

static void test_refused_jobs_are_untouched_and_the_rest_solved(void **state) {
  ik_vec3 p[5][4], before[5][4];
  ik_real len[5][3];
  ik_fabrik_job job[5];
  ik_fabrik_job copy[5];
  ik_status status[5];
  ik_batch batch;
  int i;
  (void)state;
  for (i = 0; i < 5; i++) {
    ik_chain chain;
    memset(&chain, 0, sizeof chain); /* padding too: the jobs copy it, and are compared byte for byte */
    t_straight_chain(p[i], 4, 1);
    p[i][1].y = (ik_real)0.1;
    ik_measure_lengths(p[i], 4, len[i]);
    ik_chain_init(&chain, p[i], 4, len[i]);
    ik_fabrik_job_init(&job[i], &chain, ik_vec3_make(1, 1, 0));
  }
  job[1].target.z = (ik_real)NAN;
  len[2][1] = 0;
  job[3].chain.positions = NULL;
  memcpy(before, p, sizeof p);
  memcpy(copy, job, sizeof job);
  ik_batch_init(&batch);
  batch.fabrik = job;
  batch.fabrik_count = 5;
  batch.fabrik_status = status;
  assert_int_equal(ik_batch_run(&batch, NULL), IK_OK);
  assert_int_equal(status[0], IK_OK);
  assert_int_equal(status[1], IK_E_NOT_FINITE);
  assert_int_equal(status[2], IK_E_BONE_LENGTH);
  assert_int_equal(status[3], IK_E_NULL);
  assert_int_equal(status[4], IK_OK);
  for (i = 1; i <= 3; i++) {
    assert_memory_equal(&job[i], &copy[i], sizeof job[i]);
    assert_memory_equal(p[i], before[i], sizeof p[i]);
  }
  assert_true(job[0].result.reached && job[4].result.reached);
  assert_true(job[0].result.iterations > 0);
}

static void test_malformed_batch_is_refused_whole(void **state) {
  ik_vec3 p[3] = {{0, 0, 0}, {1, (ik_real)0.1, 0}, {2, 0, 0}}, before[3];
  ik_two_bone_job tb;
  ik_two_bone_job tb_before;
  ik_batch batch;
  (void)state;
  memcpy(before, p, sizeof p);
  memset(&tb, 0, sizeof tb); /* padding too: compared byte for byte */
  ik_two_bone_job_init(&tb, p, ik_vec3_make(1, 1, 0));
  memcpy(&tb_before, &tb, sizeof tb);
  assert_int_equal(ik_batch_run(NULL, NULL), IK_E_NULL);

  ik_batch_init(&batch);
  batch.two_bone = &tb;
  batch.two_bone_count = 1;
  batch.fabrik_count = 3; /* no array */
  assert_int_equal(ik_batch_run(&batch, NULL), IK_E_NULL);
  batch.fabrik_count = 0;
  batch.dls_count = -1;
  assert_int_equal(ik_batch_run(&batch, NULL), IK_E_COUNT);
  batch.dls_count = 0;
  batch.ccd_count = 2;
  assert_int_equal(ik_batch_run(&batch, NULL), IK_E_NULL);
  batch.ccd_count = 0;
  batch.two_bone_count = -5;
  assert_int_equal(ik_batch_run(&batch, NULL), IK_E_COUNT);
  assert_memory_equal(p, before, sizeof p);
  assert_memory_equal(&tb, &tb_before, sizeof tb);

  /* Well formed again: solved. */
  batch.two_bone_count = 1;
  assert_int_equal(ik_batch_run(&batch, NULL), IK_OK);
  assert_true(tb.result.reached);
}

static void test_empty_batch(void **state) {
  ik_batch batch;
  ik_pool *pool = ik_pool_new(3);
  (void)state;
  ik_batch_init(&batch);
  assert_null(batch.fabrik);
  assert_int_equal(batch.fabrik_count + batch.two_bone_count + batch.ccd_count + batch.dls_count, 0);
  assert_int_equal(ik_batch_run(&batch, NULL), IK_OK);
  assert_int_equal(ik_batch_run(&batch, pool), IK_OK);
  ik_pool_free(pool);
}

/* ---- the pool ---- */

static void test_pool_thread_counts(void **state) {
  ik_pool *pool;
  (void)state;
  assert_null(ik_pool_new(0));
  assert_null(ik_pool_new(-1));
  assert_null(ik_pool_new(IK_POOL_MAX_THREADS + 1));
  assert_int_equal(ik_pool_threads(NULL), 1);
  ik_pool_free(NULL);
  pool = ik_pool_new(IK_POOL_MAX_THREADS);
  assert_non_null(pool);
  assert_int_equal(ik_pool_threads(pool), IK_POOL_MAX_THREADS);
  ik_pool_free(pool);
}

typedef struct coverage {
  int hits[1001];
  int range_begin[1001];
} coverage;

static void mark(void *ctx, int begin, int end) {
  coverage *c = (coverage *)ctx;
  int i;
  for (i = begin; i < end; i++) {
    c->hits[i]++;
    c->range_begin[i] = begin;
  }
}

static void test_pool_run_covers_every_index_once(void **state) {
  static coverage c;
  int threads, count, i;
  (void)state;
  for (threads = 1; threads <= 8; threads++) {
    ik_pool *pool = ik_pool_new(threads);
    assert_non_null(pool);
    for (count = 0; count <= 1000; count++) {
      memset(&c, 0, sizeof c);
      ik_pool_run(pool, count, mark, &c);
      for (i = 0; i < count; i++) {
        /* Range t is [count * t / threads, count * (t + 1) / threads). */
        int t = 0;
        while ((long)count * (t + 1) / threads <= i) t++;
        assert_int_equal(c.hits[i], 1);
        assert_int_equal(c.range_begin[i], (int)((long)count * t / threads));
      }
      assert_int_equal(c.hits[count], 0);
    }
    ik_pool_free(pool);
  }
  memset(&c, 0, sizeof c);
  ik_pool_run(NULL, 10, mark, &c);
  for (i = 0; i < 10; i++) assert_int_equal(c.range_begin[i], 0);
  ik_pool_run(NULL, -3, mark, &c);
  assert_int_equal(c.hits[0], 1);
}

/* One pool, many runs of batches of every size: the same answers each time. */
static void test_pool_reused_for_many_runs(void **state) {
  ik_pool *pool = ik_pool_new(3);
  int run;
  (void)state;
  assert_non_null(pool);
  for (run = 0; run < 60; run++) {
    t_rng r = t_rng_make(5000 + (uint64_t)run);
    const int n = t_int(&r, 0, 70);
    arena a = arena_make((size_t)(n + 4) * 8192 + 65536), b;
    jobs ja = random_jobs(&r, &a, n, run % 3, run % 2, 0), jb;
    statuses sa = statuses_make(&ja), sb;
    ik_batch batch;
    b = arena_twin(&a);
    jb = twin_jobs(&a, &b, &ja);
    sb = statuses_make(&jb);
    batch = batch_of(&ja, run % 4 ? &sa : NULL);
    assert_int_equal(ik_batch_run(&batch, pool), IK_OK);
    run_single(&jb, &sb);
    if (run % 4 == 0) memcpy(sa.fabrik, sb.fabrik, sizeof(ik_status) * (size_t)n);
    if (run % 4 == 0) {
      memcpy(sa.two_bone, sb.two_bone, sizeof(ik_status) * (size_t)ja.two_bone_count);
      memcpy(sa.ccd, sb.ccd, sizeof(ik_status) * (size_t)ja.ccd_count);
    }
    assert_same(&a, &b, &ja, &jb, &sa, &sb);
    statuses_free(&sa);
    statuses_free(&sb);
    jobs_free(&ja);
    jobs_free(&jb);
    free(a.base);
    free(b.base);
  }
  ik_pool_free(pool);
}

/* Two threads running batches on one pool at once: the runs take turns (they share the
 * pool's workspaces) and both come out as their jobs would alone. */
typedef struct racer {
  ik_pool *pool;
  uint64_t seed;
} racer;

static void *race(void *arg) {
  const racer *rc = (const racer *)arg;
  int k;
  for (k = 0; k < 20; k++) {
    t_rng r = t_rng_make(rc->seed + (uint64_t)k);
    arena a = arena_make(200 * 8192 + 65536), b;
    jobs ja = random_jobs(&r, &a, 150, 10, 2, 2), jb;
    statuses sa = statuses_make(&ja), sb;
    ik_batch batch;
    b = arena_twin(&a);
    jb = twin_jobs(&a, &b, &ja);
    sb = statuses_make(&jb);
    batch = batch_of(&ja, &sa);
    if (ik_batch_run(&batch, rc->pool) != IK_OK) return (void *)1;
    run_single(&jb, &sb);
    if (a.used != b.used || memcmp(a.base, b.base, a.used) ||
        memcmp(sa.fabrik, sb.fabrik, 150 * sizeof(ik_status)))
      return (void *)1;
    statuses_free(&sa);
    statuses_free(&sb);
    jobs_free(&ja);
    jobs_free(&jb);
    free(a.base);
    free(b.base);
  }
  return NULL;
}

static void test_runs_on_one_pool_from_two_threads_take_turns(void **state) {
  ik_pool *pool = ik_pool_new(3);
  racer rc[2];
  pthread_t other;
  void *other_result = NULL;
  (void)state;
  assert_non_null(pool);
  rc[0].pool = rc[1].pool = pool;
  rc[0].seed = 6000;
  rc[1].seed = 7000;
  assert_int_equal(pthread_create(&other, NULL, race, &rc[1]), 0);
  assert_null(race(&rc[0]));
  assert_int_equal(pthread_join(other, &other_result), 0);
  assert_null(other_result);
  ik_pool_free(pool);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fabrik_batches_match_single_runs),
      cmocka_unit_test(test_mixed_batches_match_single_runs),
      cmocka_unit_test(test_uniform_crowd_matches_single_runs),
      cmocka_unit_test(test_lane_sweeps_match_scalar_sweep_on_degenerate_poses),
      cmocka_unit_test(test_lane_polish_matches_scalar_step_on_hard_poses),
      cmocka_unit_test(test_lane_polish_turns_as_the_scalar_step),
      cmocka_unit_test(test_lane_planes_match_scalar_plane_normal),
      cmocka_unit_test(test_refined_crowd_matches_single_runs),
      cmocka_unit_test(test_each_instruction_set_solves_a_crowd_alike),
      cmocka_unit_test(test_refused_jobs_are_untouched_and_the_rest_solved),
      cmocka_unit_test(test_malformed_batch_is_refused_whole),
      cmocka_unit_test(test_empty_batch),
      cmocka_unit_test(test_pool_thread_counts),
      cmocka_unit_test(test_pool_run_covers_every_index_once),
      cmocka_unit_test(test_pool_reused_for_many_runs),
      cmocka_unit_test(test_runs_on_one_pool_from_two_threads_take_turns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
