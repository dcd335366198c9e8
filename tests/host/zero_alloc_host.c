/*
 * zero_alloc_host: the built-in demo run through the embedding API (ikrig_embed.h)
 * allocates nothing in a steady-state frame, in Lua and in C.
 *
 * Lua's allocations are counted by the lua_Alloc of a state this host makes itself;
 * malloc, calloc and realloc calls of our C code (this file, ikrig_embed, the ik and
 * scene libraries: everything linked statically) by wrapping them at link time
 * (-Wl,--wrap=malloc, ...). After a warm-up, 1,000 frames of ikrig_runtime_update must
 * count 0 of either. What reading the pose and writing JSON lines cost (output, not the
 * steady state) is printed, not asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "ikrig_embed.h"
#include "lauxlib.h"
#include "lualib.h"
#include "test_util.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

/* What is counted while `counting` is set. */
static int counting;
static long c_calls, lua_allocs;
static size_t lua_bytes;

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

/* Lua's allocator: a block made or grown is an allocation; freeing and shrinking are
 * not. */
static void *count_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    free(p);
    return NULL;
  }
  if (counting && (p == NULL || nsize > osize)) {
    lua_allocs++;
    lua_bytes += p == NULL ? nsize : nsize - osize;
  }
  return __real_realloc(p, nsize);
}

#define WARM_UP 200
/* 1,000 frames; fewer under valgrind, whose run only looks for memory errors (the
 * test command sets IK_TEST_SCALE there, as for the property tests). Set in main. */
static int n_frames;
#define DT (1.0 / 60)

typedef struct fixture {
  lua_State *L;
  ikrig_runtime *rt;
} fixture;

static fixture *start(int constraint_shapes) {
  static fixture f;
  ikrig_options opt;
  int i;
  f.L = lua_newstate(count_alloc, NULL);
  assert_non_null(f.L);
  luaL_openlibs(f.L);
  assert_int_equal(0, ikrig_open(f.L));
  ikrig_options_init(&opt);
  opt.constraint_shapes = constraint_shapes;
  f.rt = ikrig_runtime_new(f.L, NULL, 0, &opt);
  if (!f.rt) fail_msg("ikrig_runtime_new: %s", lua_tostring(f.L, -1));
  for (i = 0; i < WARM_UP; i++) assert_int_equal(0, ikrig_runtime_update(f.rt, DT));
  /* A collection shrinks Lua's call records, which the next frame grows back: Lua's
   * bookkeeping, not the frame's. */
  lua_gc(f.L, LUA_GCCOLLECT, 0);
  assert_int_equal(0, ikrig_runtime_update(f.rt, DT));
  return &f;
}

static void stop(fixture *f) {
  ikrig_runtime_free(f->rt);
  lua_close(f->L);
}

static void reset_counts(void) {
  c_calls = lua_allocs = 0;
  lua_bytes = 0;
}

/* The demo's frames, shapes left out: nothing allocated; every script ran every frame
 * and reported its chains. */
static void test_frame_allocates_nothing(void **state) {
  fixture *f = start(0);
  const ikrig_pose *pose;
  int i;
  (void)state;
  reset_counts();
  counting = 1;
  for (i = 0; i < n_frames; i++) assert_int_equal(0, ikrig_runtime_update(f->rt, DT));
  counting = 0;
  print_message("update, %d frames: %ld Lua allocations (%zu bytes), %ld C malloc/calloc/realloc calls\n",
                n_frames, lua_allocs, lua_bytes, c_calls);
  assert_int_equal(0, lua_allocs);
  assert_int_equal(0, c_calls);
  pose = ikrig_runtime_pose(f->rt);
  assert_non_null(pose);
  assert_int_equal(9, pose->n_chains); /* humanoid 4, walker 4 legs and the tail */
  for (i = 0; i < ikrig_runtime_script_count(f->rt); i++) {
    const ikrig_script *s = ikrig_runtime_script(f->rt, i);
    assert_true(s->active);
    assert_int_equal(WARM_UP + 1 + n_frames, s->frames);
  }
  stop(f);
}

/* What the output costs: the constraint shapes of the tail (read at each report), the
 * pose read back, the JSON line. Printed for the record. */
static void test_output_costs(void **state) {
  fixture *f = start(1);
  FILE *null = fopen("/dev/null", "w");
  int i;
  (void)state;
  assert_non_null(null);
  reset_counts();
  counting = 1;
  for (i = 0; i < n_frames; i++) assert_int_equal(0, ikrig_runtime_update(f->rt, DT));
  counting = 0;
  print_message("update with constraint shapes: %.1f Lua allocations (%.0f bytes) and %.1f C calls a frame\n",
                (double)lua_allocs / n_frames, (double)lua_bytes / n_frames, (double)c_calls / n_frames);
  assert_true(lua_allocs > 0); /* the shapes are new tables (ik.chain's constraint_shapes) */
  reset_counts();
  counting = 1;
  for (i = 0; i < n_frames; i++) {
    const ikrig_pose *pose;
    assert_int_equal(0, ikrig_runtime_update(f->rt, DT));
    pose = ikrig_runtime_pose(f->rt);
    assert_non_null(pose);
    assert_int_equal(0, ikrig_pose_write_json(pose, null));
  }
  counting = 0;
  print_message("update, pose and JSON line: %.1f Lua allocations (%.0f bytes) and %.1f C calls a frame\n",
                (double)lua_allocs / n_frames, (double)lua_bytes / n_frames, (double)c_calls / n_frames);
  fclose(null);
  stop(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_frame_allocates_nothing),
      cmocka_unit_test(test_output_costs),
  };
  n_frames = t_cases(1000);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
