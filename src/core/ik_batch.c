/*
 * ik_batch.c: ik_batch_run_slice (ik_batch.h). Each thread of a pool takes one slice of
 * every job array (contiguous, by index). In its FABRIK slice it takes a chunk of jobs,
 * solves the constrained and the long ones as ik_fabrik_run would, and sorts the rest by
 * joint count; each joint count then goes through two lane groups. A chain enters a lane
 * of the sweep group as it is validated (in the same pass as its joints are loaded) and
 * begun (ik__fabrik_begin), and is swept there with the others until ik__fabrik_next
 * stops the sweeps; its lane is taken at once by the next chain waiting. The sweep tells
 * which lanes may stop, so _next runs for those only (and for lanes whose iteration
 * budget is spent). In refined mode a chain then moves to the polish group for the steps
 * of ik__fabrik_end (ik__fabrik_polish_begin, _next), taken there side by side with the
 * other polishing chains, and leaves for ik__fabrik_finish. Chains differ in how many
 * sweeps and steps they need; refilling keeps the lanes busy until the last few.
 *
 * Per chain, what is not the sweep itself is scalar work, a large share of the time
 * (docs/design-notes.md): validation, _begin's common case and the stop test are cut
 * down to one pass, inline tests and lane-wise vectors.
 */
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "ik_batch_lanes.h"
#include "ik_internal.h"

void ik_batch_init(ik_batch *batch) { memset(batch, 0, sizeof *batch); }

/* The lowest lane of a mask that has one. */
static int lowest_lane(ik__lane_mask m) {
#if defined(__GNUC__)
  return __builtin_ctzl(m);
#else
  int lane = 0;
  while (!(m >> lane & 1)) lane++;
  return lane;
#endif
}

/* A job that its lane reads, checks and sets up in one pass over its joints (load_checked):
 * no constraints and lengths given, the common case. Others are validated first, and
 * loaded after ik__fabrik_begin. */
static int checked_as_loaded(const ik_fabrik_job *job) {
  const ik_chain *chain = &job->chain;
  return chain->positions && chain->lengths && chain->count >= 2 &&
         chain->count <= IK_BATCH_LANE_MAX_JOINTS && !chain->constraints && !chain->derive_lengths;
}

/* The chain's positions and lengths into lane `lane`, checked as they are read: 1 when
 * ik_fabrik_validate would pass the job, with *total_len the lengths' sum (in
 * ik__total_length's order) and *longest_len the longest (the fold reach's, measured
 * once); 0 when validate must be asked (the lane then holds whatever
 * was read): it says what is wrong or, for a few odd valid inputs the quick tests do
 * not pass (a base rotation beyond IK_REAL_MAX_COORD), that nothing is. Validating and
 * loading in one pass reads the joints once, where validating the chunk first read them
 * twice, the first time often from memory. */
static int load_checked(ik__lane_rows *rows, int lane, const ik_fabrik_job *job, ik_real *total_len,
                        ik_real *longest_len) {
  const ik_vec3 *p = job->chain.positions;
  const ik_real *len = job->chain.lengths;
  const int count = job->chain.count, lanes = rows->lanes;
  ik_real *x = rows->x + lane, *y = rows->y + lane, *z = rows->z + lane, *l = rows->len + lane;
  ik_vec3 sums = ik_vec3_zero();
  ik_real total = 0, longest = 0;
  int i, ok = 1;
  for (i = 0; i < count; i++) {
    const ik_vec3 v = p[i];
    ik__add_magnitudes(&sums, v);
    x[i * lanes] = v.x;
    y[i * lanes] = v.y;
    z[i * lanes] = v.z;
  }
  /* Each length positive; in range then when the reach is (their sum is within it). */
  for (i = 0; i + 1 < count; i++) {
    const ik_real b = len[i];
    ok &= b > 0;
    total += b;
    if (b > longest) longest = b;
    l[i * lanes] = b;
  }
  *total_len = total;
  *longest_len = longest;
  return ok & ik__sums_in_range(sums) & ik__reach_ok(p[0], total) & ik__fabrik_settings_ok(job);
}

static void load_positions(ik__lane_rows *rows, int lane, const ik_fabrik_job *job) {
  const ik_vec3 *p = job->chain.positions;
  const int lanes = rows->lanes, count = job->chain.count;
  int i;
  for (i = 0; i < count; i++) {
    rows->x[i * lanes + lane] = p[i].x;
    rows->y[i * lanes + lane] = p[i].y;
    rows->z[i * lanes + lane] = p[i].z;
  }
}

static void load_lengths(ik__lane_rows *rows, int lane, const ik_fabrik_job *job) {
  const ik_real *len = job->chain.lengths;
  const int lanes = rows->lanes, count = job->chain.count;
  int i;
  for (i = 0; i + 1 < count; i++) rows->len[i * lanes + lane] = len[i];
}

/* A chain's target and root (where it stays, its fallback direction) into `lane`. */
static void load_ends(ik__lane_rows *rows, int lane, const ik_fabrik_job *job, const ik__fabrik_state *s) {
  rows->target_x[lane] = job->target.x;
  rows->target_y[lane] = job->target.y;
  rows->target_z[lane] = job->target.z;
  rows->root_x[lane] = s->root_ws.x;
  rows->root_y[lane] = s->root_ws.y;
  rows->root_z[lane] = s->root_ws.z;
  rows->root_dir[lane] = s->root_dir;
  rows->root_dir_x[lane] = s->root_dir.x;
  rows->root_dir_y[lane] = s->root_dir.y;
  rows->root_dir_z[lane] = s->root_dir.z;
}

/* Sweeps after which a lane's ik__fabrik_next must be asked whatever its sweeps flag:
 * when a refined chain's polish is due (near the target it then hands over however fast
 * it converges), else when its budget is spent. */
static int first_due(const ik__fabrik_state *s, const ik_fabrik_job *job) {
  return s->near2 >= 0 ? s->polish_due : job->max_iterations;
}

/* What a sweep and its stop test read of a chain besides its joints: its ends, and what
 * ik__fabrik_next tests, from the state ik__fabrik_begin left. */
static void load_settings(ik_batch_lanes *work, int lane, const ik_fabrik_job *job,
                          const ik__fabrik_state *s) {
  ik__lane_rows *rows = &work->rows;
  load_ends(rows, lane, job, s);
  rows->tip_err2[lane] = s->prev_err2;
  rows->tol2[lane] = s->tolerance_len2;
  rows->near2[lane] = ik__fabrik_near2(job, s);
  rows->slow2[lane] = ik__fabrik_slow2();
  work->entered[lane] = work->rounds;
  work->due_at[lane] = work->rounds + first_due(s, job);
  if (work->due_at[lane] < work->next_due) work->next_due = work->due_at[lane];
}

/* The positions of lane `lane` of rows back into the job's chain. */
static void store_positions(const ik__lane_rows *rows, int lane, ik_fabrik_job *job) {
  const int lanes = rows->lanes, count = job->chain.count;
  ik_vec3 *p = job->chain.positions;
  int i;
  for (i = 0; i < count; i++)
    p[i] = ik_vec3_make(rows->x[i * lanes + lane], rows->y[i * lanes + lane], rows->z[i * lanes + lane]);
}

/* A 3-joint chain's one-step polish (ik__fabrik_polish_closed), on its positions out of
 * the lane, then its finish; 0, positions stored but untouched, when it is to polish in
 * steps. */
static int polish_closed(const ik__lane_rows *rows, int lane, ik_fabrik_job *job, ik__fabrik_state *s) {
  store_positions(rows, lane, job);
  if (!ik__fabrik_polish_closed(job, s)) return 0;
  ik__fabrik_finish(job, s);
  return 1;
}

static ik_vec3 lane_point(const ik__lane_rows *rows, int joint, int lane) {
  const int cell = joint * rows->lanes + lane;
  return ik_vec3_make(rows->x[cell], rows->y[cell], rows->z[cell]);
}

/* Lane `from`'s chain into lane `to` of the sweep group: a lane that never held a
 * chain copies one that does, so that the sweep reads no uninitialised memory (its
 * results are not used), and a draining group packs its chains (pack_lanes). */
static void copy_lane(ik__lane_rows *rows, int count, int to, int from) {
  const int lanes = rows->lanes;
  int i;
  for (i = 0; i < count; i++) {
    rows->x[i * lanes + to] = rows->x[i * lanes + from];
    rows->y[i * lanes + to] = rows->y[i * lanes + from];
    rows->z[i * lanes + to] = rows->z[i * lanes + from];
  }
  for (i = 0; i + 1 < count; i++) rows->len[i * lanes + to] = rows->len[i * lanes + from];
  rows->target_x[to] = rows->target_x[from];
  rows->target_y[to] = rows->target_y[from];
  rows->target_z[to] = rows->target_z[from];
  rows->root_x[to] = rows->root_x[from];
  rows->root_y[to] = rows->root_y[from];
  rows->root_z[to] = rows->root_z[from];
  rows->root_dir[to] = rows->root_dir[from];
  rows->tip_err2[to] = rows->tip_err2[from];
  rows->tol2[to] = rows->tol2[from];
  rows->near2[to] = rows->near2[from];
  rows->slow2[to] = rows->slow2[from];
}

/* The polish group's rows for `count`-joint chains, zero: a step computes lanes that hold
 * no chain beside those that do (and throws their results away). */
static void clear_rows(ik__lane_rows *rows, int count) {
  const size_t cells = sizeof(ik_real) * (size_t)(count * rows->lanes);
  memset(rows->x, 0, cells);
  memset(rows->y, 0, cells);
  memset(rows->z, 0, cells);
  memset(rows->len, 0, cells);
  memset(rows->target_x, 0, sizeof rows->target_x);
  memset(rows->target_y, 0, sizeof rows->target_y);
  memset(rows->target_z, 0, sizeof rows->target_z);
  memset(rows->root_dir_x, 0, sizeof rows->root_dir_x);
  memset(rows->root_dir_y, 0, sizeof rows->root_dir_y);
  memset(rows->root_dir_z, 0, sizeof rows->root_dir_z);
  memset(rows->plane_x, 0, sizeof rows->plane_x);
  memset(rows->plane_y, 0, sizeof rows->plane_y);
  memset(rows->plane_z, 0, sizeof rows->plane_z);
  memset(rows->total, 0, sizeof rows->total);
  memset(rows->max_step, 0, sizeof rows->max_step);
  memset(rows->floor2, 0, sizeof rows->floor2);
  memset(rows->err2, 0, sizeof rows->err2);
}

/* The jobs of one joint count, in order, waiting for a lane. */
typedef struct queue {
  ik_fabrik_job *jobs;
  ik_status *status; /* the batch's, or NULL */
  const int *order;
  int next, count;
} queue;

/* Jobs ahead of the one entering a lane whose joints are asked for: entering is the first
 * touch of a chain's positions, often a cache miss. (A prefetch never faults, whatever
 * the job holds.) */
#define PREFETCH_AHEAD 4

static void prefetch_positions(const ik_fabrik_job *job) {
#if defined(__GNUC__)
  const char *p = (const char *)job->chain.positions;
  int bytes = 512, b;
  if (p == NULL) return;
  if (job->chain.count < bytes / (int)sizeof(ik_vec3)) bytes = job->chain.count * (int)sizeof(ik_vec3);
  for (b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
#else
  (void)job;
#endif
}

/* Job j into `lane`: checked as it is loaded when it can be (its status written then),
 * begun; 1 when it needs sweeps, else it is refused or finished on the way. */
static int enter_lane(ik_batch_lanes *work, int lane, ik_fabrik_job *job, ik_status *status) {
  ik__fabrik_state *s = &work->state[lane];
  const int quick = checked_as_loaded(job);
  ik_real total_len, longest_len;
  int begun;
  work->job[lane] = job;
  if (quick && load_checked(&work->rows, lane, job, &total_len, &longest_len)) {
    if (status) *status = IK_OK;
    begun = ik__fabrik_begin_known(job, s, total_len, longest_len);
    if (begun == 2) load_positions(&work->rows, lane, job);
  } else {
    if (quick) { /* not validated with its chunk: validate says why the quick checks failed */
      const ik_status st = ik_fabrik_validate(job, NULL);
      if (status) *status = st;
      if (st != IK_OK) return 0;
    }
    begun = ik__fabrik_begin(job, s);
    if (begun) {
      load_positions(&work->rows, lane, job);
      load_lengths(&work->rows, lane, job);
    }
  }
  if (!begun) {
    ik__fabrik_end(job, s, NULL);
    return 0;
  }
  load_settings(work, lane, job, s);
  return 1;
}

/* Puts the next job that needs sweeps into `lane`; 0 when none is left. */
static int fill_lane(ik_batch_lanes *work, int lane, queue *q) {
  while (q->next < q->count) {
    const int j = q->order[q->next++];
    if (q->next + PREFETCH_AHEAD < q->count) prefetch_positions(&q->jobs[q->order[q->next + PREFETCH_AHEAD]]);
    if (enter_lane(work, lane, &q->jobs[j], q->status ? &q->status[j] : NULL)) return 1;
  }
  return 0;
}

/* The lanes of `live` whose iteration budget the last sweep spent, or whose polish it
 * made due (from then on their sweeps flag every near sweep: slow2 -1, and their next
 * due count is their budget's); the next count at which another's will be goes to
 * work->next_due. */
static ik__lane_mask due_lanes(ik_batch_lanes *work, ik__lane_mask live) {
  ik__lane_mask due = 0, m;
  long long next_due = LLONG_MAX;
  for (m = live; m; m &= m - 1) {
    const int lane = lowest_lane(m);
    if (work->due_at[lane] <= work->rounds) {
      due |= m & -m;
      if (work->rows.slow2[lane] > -1 && work->rows.near2[lane] >= 0) { /* the polish's */
        work->rows.slow2[lane] = -1;
        work->due_at[lane] = work->entered[lane] + work->job[lane]->max_iterations;
      }
    }
    if (work->due_at[lane] > work->rounds && work->due_at[lane] < next_due) next_due = work->due_at[lane];
  }
  work->next_due = next_due;
  return due;
}

/* The dls state's plane into polish lane `lane` (the vector steps read it there). */
static void put_plane(ik_batch_lanes *work, int lane) {
  const ik_vec3 n = work->dls[lane].plane_n;
  work->polish.plane_x[lane] = n.x;
  work->polish.plane_y[lane] = n.y;
  work->polish.plane_z[lane] = n.z;
}

/* A chain whose sweeps handed over (its positions still in sweep lane `from`, its tip
 * err2 from the target, polish set up in dls) into the free polish lane `lane`: lane to
 * lane, not through the job's memory. */
static void enter_polish(ik_batch_lanes *work, int lane, int from, ik_real err2, ik_fabrik_job *job,
                         const ik__fabrik_state *s, const ik__dls_state *dls) {
  ik__lane_rows *rows = &work->polish;
  const ik__lane_rows *sweep = &work->rows;
  const int count = job->chain.count, lanes = rows->lanes;
  int i;
  work->polish_job[lane] = job;
  work->polish_state[lane] = *s;
  work->dls[lane] = *dls;
  for (i = 0; i < count; i++) {
    rows->x[i * lanes + lane] = sweep->x[i * lanes + from];
    rows->y[i * lanes + lane] = sweep->y[i * lanes + from];
    rows->z[i * lanes + lane] = sweep->z[i * lanes + from];
  }
  for (i = 0; i + 1 < count; i++) rows->len[i * lanes + lane] = sweep->len[i * lanes + from];
  load_ends(rows, lane, job, s);
  rows->total[lane] = s->total_len;
  work->unplaned |= (ik__lane_mask)1 << lane; /* its plane is found before the next step */
  rows->max_step[lane] = dls->max_step_len;
  rows->floor2[lane] = ik__fabrik_polish_floor2(s);
  rows->err2[lane] = err2;
}

/* One polish step of every chain of the polish group (`polishing`), then those that are
 * done leave for ik__fabrik_finish; returns the lanes still polishing. A lane that may
 * be stuck takes ik__dls_step's step, from its positions outside the lane. */
static ik__lane_mask polish_round(ik_batch_lanes *work, int joints, ik__lane_mask polishing) {
  ik__lane_rows *rows = &work->polish;
  ik__lane_mask alone, m;
  if (work->unplaned) { /* the chains that came in: their ik__dls_state's plane_n, in lanes */
    work->polish_fns.plane(rows, joints, work->unplaned);
    for (m = work->unplaned; m; m &= m - 1) {
      const int lane = lowest_lane(m);
      work->dls[lane].plane_n = ik_vec3_make(rows->plane_x[lane], rows->plane_y[lane], rows->plane_z[lane]);
    }
    work->unplaned = 0;
  }
  alone = work->polish_fns.plan(rows, joints, polishing);
  for (m = alone; m; m &= m - 1) store_positions(rows, lowest_lane(m), work->polish_job[lowest_lane(m)]);
  work->polish_fns.apply(rows, joints, polishing & ~alone);
  for (m = alone; m; m &= m - 1) {
    const int lane = lowest_lane(m);
    ik_fabrik_job *job = work->polish_job[lane];
    work->dls[lane].lambda2 = rows->floor2[lane] + rows->err2[lane];
    ik__dls_step(&work->dls[lane], &job->chain, job->target);
    load_positions(rows, lane, job);
    put_plane(work, lane);
  }
  for (m = polishing; m; m &= m - 1) {
    const int lane = lowest_lane(m);
    ik_fabrik_job *job = work->polish_job[lane];
    const ik_real err2 = ik_vec3_dist2(lane_point(rows, joints - 1, lane), job->target);
    if (ik__fabrik_polish_next(job, &work->polish_state[lane], err2)) {
      rows->err2[lane] = err2;
      continue;
    }
    polishing &= ~(m & -m);
    store_positions(rows, lane, job);
    ik__fabrik_finish(job, &work->polish_state[lane]);
  }
  return polishing;
}

/* The highest lane of a mask that has one. */
static int highest_lane(ik__lane_mask m) {
#if defined(__GNUC__)
  return (int)(8 * sizeof m) - 1 - __builtin_clzl(m);
#else
  int lane = 0;
  while (m >> 1) {
    m >>= 1;
    lane++;
  }
  return lane;
#endif
}

/* Once the queue is empty the sweep group drains, and a vector is swept while any of its
 * lanes is live: chains still sweeping move down into the lanes that emptied, so that
 * the sweeps work on as few vectors as they can (docs/design-notes.md). Lanes are
 * independent: a chain ends the same in any lane. Returns the lanes now sweeping. */
static ik__lane_mask pack_lanes(ik_batch_lanes *work, int joints, ik__lane_mask sweeping) {
  int live = 0, top;
  ik__lane_mask m;
  for (m = sweeping; m; m &= m - 1) live++;
  /* Not before a vector's worth of lanes (AVX2's) is empty below the top one. */
  if (!sweeping || (top = highest_lane(sweeping)) + 1 - live < (int)(32 / sizeof(ik_real))) return sweeping;
  while (top >= live) {
    const int to = lowest_lane(~sweeping);
    copy_lane(&work->rows, joints, to, top);
    work->job[to] = work->job[top];
    work->state[to] = work->state[top];
    work->entered[to] = work->entered[top];
    work->due_at[to] = work->due_at[top];
    sweeping = (sweeping | (ik__lane_mask)1 << to) & ~((ik__lane_mask)1 << top);
    top = highest_lane(sweeping);
  }
  return sweeping;
}

/* The chains of one joint count through two lane groups: the sweep group, refilled from
 * the queue as chains leave it, and the polish group, which takes refined chains after
 * their sweeps and takes a step when it is full (or nothing else is left), so that both
 * work on full vectors but for the last few chains. */
static void run_lanes(ik_batch_lanes *work, queue *q, int joints) {
  const int lanes = ik__lanes_for(joints);
  const ik__lane_mask all = (((ik__lane_mask)1 << (lanes - 1)) << 1) - 1;
  ik__lane_mask sweeping = 0, polishing = 0, m;
  int lane, first = -1;
  work->rows.lanes = work->polish.lanes = lanes;
  work->rounds = 0;
  work->next_due = LLONG_MAX;
  work->unplaned = 0;
  clear_rows(&work->polish, joints);
  for (lane = 0; lane < lanes; lane++) {
    if (fill_lane(work, lane, q)) {
      sweeping |= (ik__lane_mask)1 << lane;
      if (first < 0) first = lane;
    }
  }
  for (lane = 0; first >= 0 && lane < lanes; lane++)
    if (!(sweeping >> lane & 1)) copy_lane(&work->rows, joints, lane, first);
  while (sweeping) {
    /* Only lanes the sweep flags, and those whose budget it spent, may stop: the others'
     * ik__fabrik_next would only count the sweep, and their count is kept by rounds. */
    ik__lane_mask checks = work->sweep(&work->rows, joints, sweeping);
    if (++work->rounds >= work->next_due) checks |= due_lanes(work, sweeping);
    for (m = checks; m; m &= m - 1) {
      ik__dls_state dls;
      ik_fabrik_job *job = work->job[(lane = lowest_lane(m))];
      ik__fabrik_state *s = &work->state[lane];
      s->iterations = (int)(work->rounds - 1 - work->entered[lane]);
      s->prev_err2 = work->rows.prev_err2[lane];
      if (ik__fabrik_next(job, s, lane_point(&work->rows, joints - 1, lane))) continue;
      sweeping &= ~(m & -m);
      /* The sweep's tip_err2 is ik_vec3_dist2(tip, target), bit for bit. */
      if (!ik__fabrik_polish_begin_planeless(job, s, work->rows.tip_err2[lane], &dls)) {
        store_positions(&work->rows, lane, job);
        ik__fabrik_finish(job, s);
      } else if (!(joints == 3 && !s->kinds && polish_closed(&work->rows, lane, job, s))) {
        int free_lane;
        while (polishing == all) polishing = polish_round(work, joints, polishing);
        free_lane = lowest_lane(~polishing & all);
        enter_polish(work, free_lane, lane, work->rows.tip_err2[lane], job, s, &dls);
        polishing |= (ik__lane_mask)1 << free_lane;
      }
      if (fill_lane(work, lane, q)) sweeping |= m & -m;
    }
    if (q->next == q->count) sweeping = pack_lanes(work, joints, sweeping);
  }
  while (polishing) polishing = polish_round(work, joints, polishing);
}

/* Sorts jobs [begin, end) (at most work->chunk) by joint count, solving at once those
 * that do not go to lanes, then runs the others, one joint count after the other. A job
 * checked as its lane loads it is validated then; the others now. */
static void fabrik_chunk(ik_batch_lanes *work, ik_fabrik_job *jobs, ik_status *status, int begin, int end) {
  int start[IK_BATCH_LANE_MAX_JOINTS + 2] = {0};
  int j, joints;
  for (j = begin; j < end; j++) {
    ik_fabrik_job *job = &jobs[j];
    work->joints[j - begin] = 0;
    if (!checked_as_loaded(job)) {
      const ik_status st = ik_fabrik_validate(job, NULL);
      if (status) status[j] = st;
      if (st != IK_OK) continue;
      if (job->chain.count > IK_BATCH_LANE_MAX_JOINTS || ik__constraint_kinds(&job->chain)) {
        ik__fabrik_run_valid(job);
        continue;
      }
    }
    work->joints[j - begin] = (short)job->chain.count;
    start[job->chain.count + 1]++;
  }
  for (joints = 1; joints <= IK_BATCH_LANE_MAX_JOINTS; joints++) start[joints + 1] += start[joints];
  /* start[n] is where joint count n begins in order; it ends at start[n + 1]. */
  {
    int fill[IK_BATCH_LANE_MAX_JOINTS + 1];
    memcpy(fill, start, sizeof fill);
    for (j = begin; j < end; j++)
      if (work->joints[j - begin]) work->order[fill[work->joints[j - begin]]++] = j;
  }
  for (joints = 2; joints <= IK_BATCH_LANE_MAX_JOINTS; joints++) {
    queue q;
    if (start[joints] == start[joints + 1]) continue;
    q.jobs = jobs;
    q.status = status;
    q.order = work->order + start[joints];
    q.next = 0;
    q.count = start[joints + 1] - start[joints];
    run_lanes(work, &q, joints);
  }
}

/* Slice `slice` of `slices` of [0, count): the same split as the scene's ik_pool_run. */
static void slice_range(int count, int slice, int slices, int *begin, int *end) {
  *begin = (int)((long long)count * slice / slices);
  *end = (int)((long long)count * (slice + 1) / slices);
}

size_t ik_batch_lanes_size(void) {
  return sizeof(ik_batch_lanes) + (sizeof(int) + sizeof(short)) * (size_t)IK__CHUNK;
}

/* The widest instruction set's sweep and polish step into work. */
static void pick_isa(ik_batch_lanes *work) {
  const int isa = ik__best_isa();
  work->sweep = ik__sweep_variant(isa);
  work->polish_fns = ik__polish_variant(isa);
}

ik_batch_lanes *ik_batch_lanes_init(void *mem) {
  ik_batch_lanes *work = (ik_batch_lanes *)mem;
  pick_isa(work);
  work->chunk = IK__CHUNK;
  work->order = (int *)(void *)(work + 1); /* the struct is aligned for ints at least */
  work->joints = (short *)(void *)(work->order + IK__CHUNK);
  return work;
}

/* Two-bone jobs of full weight and no softness, the crowd's, go through the lane kernel
 * (ik__two_bone_run_lanes, bit for bit ik_two_bone_run), gathered IK__TWO_BONE_LANES at a
 * time by pole flag and tolerance (the kernel's lanes share both); the rest run one by
 * one. */
typedef struct two_bone_group {
  ik__two_bone_lanes l;
  int job[IK__TWO_BONE_LANES]; /* the lane's job index */
} two_bone_group;

static int two_bone_lane_able(const ik_two_bone_job *job) {
  return job->positions != NULL && job->weight == 1 && job->softness == 0;
}

/* The group's jobs solved and written back as ik_two_bone_run writes them. */
static void two_bone_flush(ik_batch *b, two_bone_group *g) {
  int e;
  if (g->l.n == 0) return;
  ik__two_bone_run_lanes(&g->l);
  for (e = 0; e < g->l.n; e++) {
    ik_two_bone_job *job = &b->two_bone[g->job[e]];
    const ik_status st = ik__two_bone_lane_result(&g->l, e, &job->result);
    if (st == IK_OK) {
      job->positions[1] = ik_vec3_make(g->l.p[1][0][e], g->l.p[1][1][e], g->l.p[1][2][e]);
      job->positions[2] = ik_vec3_make(g->l.p[2][0][e], g->l.p[2][1][e], g->l.p[2][2][e]);
    }
    if (b->two_bone_status) b->two_bone_status[g->job[e]] = st;
  }
  g->l.n = 0;
}

static void two_bone_add(ik_batch *b, two_bone_group *g, int j) {
  const ik_two_bone_job *job = &b->two_bone[j];
  /* Read first: the lane stores could alias the job's positions for the compiler. */
  const ik_vec3 p0 = job->positions[0], p1 = job->positions[1], p2 = job->positions[2];
  const ik_vec3 t = job->target, q = job->pole;
  const ik_real tolerance = job->tolerance;
  int e;
  if (g->l.n > 0 && !(tolerance == g->l.tolerance)) two_bone_flush(b, g);
  e = g->l.n;
  g->l.tolerance = tolerance;
  g->l.p[0][0][e] = p0.x, g->l.p[0][1][e] = p0.y, g->l.p[0][2][e] = p0.z;
  g->l.p[1][0][e] = p1.x, g->l.p[1][1][e] = p1.y, g->l.p[1][2][e] = p1.z;
  g->l.p[2][0][e] = p2.x, g->l.p[2][1][e] = p2.y, g->l.p[2][2][e] = p2.z;
  g->l.target[0][e] = t.x, g->l.target[1][e] = t.y, g->l.target[2][e] = t.z;
  g->l.pole[0][e] = q.x, g->l.pole[1][e] = q.y, g->l.pole[2][e] = q.z;
  g->job[e] = j;
  if (++g->l.n == IK__TWO_BONE_LANES) two_bone_flush(b, g);
}

static void two_bone_range(ik_batch *b, int begin, int end) {
  two_bone_group g[2]; /* without a pole, with one */
  int j;
  g[0].l.n = g[1].l.n = 0;
  g[0].l.has_pole = 0, g[1].l.has_pole = 1;
  for (j = begin; j < end; j++) {
    ik_two_bone_job *job = &b->two_bone[j];
    if (two_bone_lane_able(job)) {
      two_bone_add(b, &g[job->has_pole != 0], j);
    } else {
      const ik_status st = ik_two_bone_run(job);
      if (b->two_bone_status) b->two_bone_status[j] = st;
    }
  }
  two_bone_flush(b, &g[0]);
  two_bone_flush(b, &g[1]);
}

/* Slice `slice` of every array, in work's lanes. */
static void run_slice(ik_batch *b, int slice, int slices, ik_batch_lanes *work) {
  int begin, end, j;
  slice_range(b->fabrik_count, slice, slices, &begin, &end);
  for (j = begin; j < end; j += work->chunk)
    fabrik_chunk(work, b->fabrik, b->fabrik_status, j, end - j < work->chunk ? end : j + work->chunk);
  slice_range(b->two_bone_count, slice, slices, &begin, &end);
  two_bone_range(b, begin, end);
  slice_range(b->ccd_count, slice, slices, &begin, &end);
  for (j = begin; j < end; j++) {
    const ik_status st = ik_ccd_run(&b->ccd[j]);
    if (b->ccd_status) b->ccd_status[j] = st;
  }
  slice_range(b->dls_count, slice, slices, &begin, &end);
  for (j = begin; j < end; j++) {
    const ik_status st = ik_dls_run(&b->dls[j]);
    if (b->dls_status) b->dls_status[j] = st;
  }
}

void ik_batch_run_slice(ik_batch *batch, int slice, int slices, ik_batch_lanes *lanes) {
  ik_batch_lanes own;
  int order[IK__STACK_CHUNK];
  short joints[IK__STACK_CHUNK];
  if (lanes) {
    run_slice(batch, slice, slices, lanes);
    return;
  }
  pick_isa(&own);
  own.chunk = IK__STACK_CHUNK;
  own.order = order;
  own.joints = joints;
  run_slice(batch, slice, slices, &own);
}

/* IK_OK, or what is wrong with one array of the batch. */
static ik_status check_array(const void *jobs, int count) {
  if (count < 0) return IK_E_COUNT;
  if (count > 0 && jobs == NULL) return IK_E_NULL;
  return IK_OK;
}

ik_status ik_batch_check(const ik_batch *batch) {
  ik_status st;
  if (batch == NULL) return IK_E_NULL;
  if ((st = check_array(batch->fabrik, batch->fabrik_count)) != IK_OK ||
      (st = check_array(batch->two_bone, batch->two_bone_count)) != IK_OK ||
      (st = check_array(batch->ccd, batch->ccd_count)) != IK_OK ||
      (st = check_array(batch->dls, batch->dls_count)) != IK_OK)
    return st;
  return IK_OK;
}
