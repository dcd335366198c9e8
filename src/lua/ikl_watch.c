/***
 * File change detection: `ik.watch`, what `ik.runtime` hot-reloads scripts with. A
 * watch holds a set of file paths; `poll` says, without blocking, which of them changed
 * since the last poll (written, replaced, created, deleted).
 *
 * On Linux it uses inotify on the files' directories, so editors that save by writing
 * a new file and renaming it over the old one are seen as well as those that write in
 * place. Elsewhere, or when inotify is unavailable (no more instances or watches, a
 * directory that does not exist yet), it compares each file's `stat` (modification
 * time, size, inode) at every poll. Events are not debounced here: a save may be
 * reported by two consecutive polls (ik.runtime waits for the file to settle).
 *
 * Fields: `backend` ("inotify" or "poll"), read only. A watch uses an inotify
 * instance (a file descriptor): close it when done, or let it be collected.
 * @classmod ik.watch
 */
#if defined(__linux__) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* stat's st_mtim under -std=c99 (other systems show it anyway) */
#endif

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#if defined(__linux__)
#include <sys/inotify.h>
#include <unistd.h>
#define IKL_HAVE_INOTIFY 1
#else
#define IKL_HAVE_INOTIFY 0
#endif

#include "ikl.h"

#define IKL_WATCH "ik.watch"

/* What a directory watch reports: anything that can change a file's contents or
 * replace it (in place, by rename, by delete and create), and the directory itself
 * going away. */
#if IKL_HAVE_INOTIFY
#define DIR_EVENTS                                                                                \
  (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | \
   IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#endif

/* One watched file. `path` points into a Lua string that the watch's uservalue table
 * keeps alive (Lua never moves strings). */
typedef struct watch_file {
  const char *path;
  size_t base; /* offset of the file name in path */
  int wd;      /* inotify watch of its directory, or -1: polled */
  int changed;
  /* the last stat, for polled files */
  int exists;
  unsigned long long dev, ino, size;
  long long mtime_s, mtime_ns;
} watch_file;

typedef struct ikl_watch {
  int fd; /* inotify instance, or -1 */
  int closed;
  int count, cap;
  watch_file *files; /* allocated with the state's allocator */
} ikl_watch;

static ikl_watch *check_open(lua_State *L, int arg) {
  ikl_watch *w = (ikl_watch *)luaL_checkudata(L, arg, IKL_WATCH);
  if (w->closed) luaL_error(L, "attempt to use a closed ik.watch");
  return w;
}

/* Reads the file's stat into f (exists = 0 when it cannot be read). */
static void snapshot(watch_file *f) {
  struct stat st;
  if (stat(f->path, &st) != 0) {
    f->exists = 0;
    f->dev = f->ino = f->size = 0;
    f->mtime_s = f->mtime_ns = 0;
    return;
  }
  f->exists = 1;
  f->dev = (unsigned long long)st.st_dev;
  f->ino = (unsigned long long)st.st_ino;
  f->size = (unsigned long long)st.st_size;
  f->mtime_s = (long long)st.st_mtime;
#if defined(__APPLE__)
  f->mtime_ns = (long long)st.st_mtimespec.tv_nsec;
#elif defined(_WIN32)
  f->mtime_ns = 0;
#else
  f->mtime_ns = (long long)st.st_mtim.tv_nsec;
#endif
}

/* Whether a polled file changed since its last stat (which it then updates). */
static int restat(watch_file *f) {
  watch_file now = *f;
  snapshot(&now);
  if (now.exists != f->exists || now.dev != f->dev || now.ino != f->ino || now.size != f->size ||
      now.mtime_s != f->mtime_s || now.mtime_ns != f->mtime_ns) {
    *f = now;
    return 1;
  }
  return 0;
}

static int find(const ikl_watch *w, const char *path) {
  int i;
  for (i = 0; i < w->count; i++)
    if (strcmp(w->files[i].path, path) == 0) return i;
  return -1;
}

#if IKL_HAVE_INOTIFY
/* Stops watching directory wd unless another file still needs it. */
static void release_dir(ikl_watch *w, int wd) {
  int i;
  if (wd < 0 || w->fd < 0) return;
  for (i = 0; i < w->count; i++)
    if (w->files[i].wd == wd) return;
  inotify_rm_watch(w->fd, wd);
}

/* The files of directory wd fall back to polling (the directory went away or moved):
 * they count as changed, and are compared by stat from now on. */
static void to_polling(ikl_watch *w, int wd) {
  int i;
  for (i = 0; i < w->count; i++) {
    if (w->files[i].wd == wd) {
      w->files[i].wd = -1;
      w->files[i].changed = 1;
      snapshot(&w->files[i]);
    }
  }
}

/* Reads every pending inotify event and marks the files they name. */
static void drain_events(ikl_watch *w) {
  union {
    struct inotify_event align;
    char buf[4096];
  } u;
  for (;;) {
    ssize_t n = read(w->fd, u.buf, sizeof u.buf);
    char *p;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* EAGAIN: nothing more */
    for (p = u.buf; p + sizeof(struct inotify_event) <= u.buf + n;) {
      struct inotify_event ev;
      const char *name = p + sizeof ev;
      int i;
      memcpy(&ev, p, sizeof ev);
      p += sizeof ev + ev.len;
      if (ev.mask & IN_Q_OVERFLOW) { /* events were lost: everything may have changed */
        for (i = 0; i < w->count; i++)
          if (w->files[i].wd >= 0) w->files[i].changed = 1;
      } else if (ev.mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
        to_polling(w, ev.wd);
        if (ev.mask & IN_MOVE_SELF) inotify_rm_watch(w->fd, ev.wd);
      } else if (ev.len > 0) {
        for (i = 0; i < w->count; i++) {
          watch_file *f = &w->files[i];
          if (f->wd == ev.wd && strcmp(f->path + f->base, name) == 0) f->changed = 1;
        }
      }
    }
  }
}
#endif

/* Frees what the watch holds; it is then closed. */
static void release(lua_State *L, ikl_watch *w) {
  void *ud;
  lua_Alloc alloc = lua_getallocf(L, &ud);
#if IKL_HAVE_INOTIFY
  if (w->fd >= 0) close(w->fd);
#endif
  w->fd = -1;
  if (w->files) alloc(ud, w->files, (size_t)w->cap * sizeof *w->files, 0);
  w->files = NULL;
  w->count = w->cap = 0;
  w->closed = 1;
}

/***
 * Makes a watch, watching no file yet.
 * @function ik.watch
 * @tparam[opt] table options `backend`: "auto" (the default: inotify where there is
 * one, else polling), "inotify" (raises where there is none) or "poll"
 * @treturn ik.watch
 * @usage local path = os.tmpname()
 * local function save(text)
 *   local f = assert(io.open(path, "w")); f:write(text); f:close()
 * end
 * save("return 1")
 * local w = ik.watch()
 * w:add(path)
 * assert(#w:poll() == 0)            -- nothing changed yet
 * save("return 22")
 * local changed = w:poll()
 * assert(changed[1] == path and #changed == 1)
 * assert(#w:poll() == 0)            -- reported once
 * w:close()
 * os.remove(path)
 */
static int watch_new(lua_State *L) {
  static const char *const backends[] = {"auto", "inotify", "poll", NULL};
  int backend = 0;
  ikl_watch *w;
  if (!lua_isnoneornil(L, 1)) {
    static const char *const keys[] = {"backend", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    ikl_check_keys(L, 1, "ik.watch", keys, "backend");
    lua_getfield(L, 1, "backend");
    if (!lua_isnil(L, -1)) {
      const char *s = lua_tostring(L, -1);
      for (backend = 0; backends[backend]; backend++)
        if (lua_type(L, -1) == LUA_TSTRING && strcmp(s, backends[backend]) == 0) break;
      if (!backends[backend] && lua_type(L, -1) == LUA_TSTRING) /* the name, as ik.chain's solver says it */
        return luaL_error(L,
                          "ik.watch: bad field 'backend' (\"auto\", \"inotify\" or \"poll\" expected, "
                          "got '%s')",
                          s);
      if (!backends[backend])
        return ikl_fielderror(L, "ik.watch", "backend", "\"auto\", \"inotify\" or \"poll\"", -1);
    }
    lua_pop(L, 1);
  }
  w = (ikl_watch *)ikl_newuserdata(L, sizeof *w);
  memset(w, 0, sizeof *w);
  w->fd = -1;
  w->closed = 1; /* until set up */
  luaL_setmetatable(L, IKL_WATCH);
  lua_newtable(L); /* the paths, kept alive */
  ikl_setuservalue(L, -2);
#if IKL_HAVE_INOTIFY
  if (backend != 2) {
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0 && backend == 1)
      return luaL_error(L, "ik.watch: inotify unavailable (%s)", strerror(errno));
  }
#else
  if (backend == 1) return luaL_error(L, "ik.watch: inotify unavailable on this system");
#endif
  w->closed = 0;
  return 1;
}

/***
 * Watches a file (once: adding it again does nothing): changes from then on are
 * reported. The file need not exist yet; its appearing is a change. Give paths as you will compare them:
 * `poll` returns them as given.
 * @function add
 * @tparam string path
 * @treturn boolean whether it was not watched yet
 */
static int watch_add(lua_State *L) {
  ikl_watch *w = check_open(L, 1);
  size_t len;
  const char *path = luaL_checklstring(L, 2, &len);
  const char *slash;
  watch_file *f;
  if (len == 0 || strlen(path) != len)
    return luaL_argerror(L, 2, "file path expected, got an empty string or one with a zero byte");
  if (find(w, path) >= 0) {
    lua_pushboolean(L, 0);
    return 1;
  }
  if (w->count == w->cap) {
    void *ud;
    lua_Alloc alloc = lua_getallocf(L, &ud);
    int cap = w->cap ? 2 * w->cap : 8;
    watch_file *files =
        (watch_file *)alloc(ud, w->files, (size_t)w->cap * sizeof *files, (size_t)cap * sizeof *files);
    if (!files) return luaL_error(L, "not enough memory");
    w->files = files;
    w->cap = cap;
  }
#if IKL_HAVE_INOTIFY
  /* Events queued so far are from before the file was watched: they go to the files
   * watched then, not to this one. */
  if (w->fd >= 0) drain_events(w);
#endif
  ikl_getuservalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3); /* anchors the string that path points into */
  lua_pop(L, 1);
  f = &w->files[w->count];
  memset(f, 0, sizeof *f);
  f->path = path;
  slash = strrchr(path, '/');
  f->base = slash ? (size_t)(slash - path) + 1 : 0;
  f->wd = -1;
#if IKL_HAVE_INOTIFY
  if (w->fd >= 0 && f->base < len) {
    if (slash == NULL) {
      lua_pushliteral(L, ".");
    } else if (slash == path) {
      lua_pushliteral(L, "/");
    } else {
      lua_pushlstring(L, path, (size_t)(slash - path));
    }
    f->wd = inotify_add_watch(w->fd, lua_tostring(L, -1), DIR_EVENTS); /* -1: polled instead */
    lua_pop(L, 1);
  }
#endif
  if (f->wd < 0) snapshot(f);
  w->count++;
  lua_pushboolean(L, 1);
  return 1;
}

/***
 * Stops watching a file.
 * @function remove
 * @tparam string path
 * @treturn boolean whether it was watched
 */
static int watch_remove(lua_State *L) {
  ikl_watch *w = check_open(L, 1);
  const char *path = luaL_checkstring(L, 2);
  int i = find(w, path), wd;
  if (i < 0) {
    lua_pushboolean(L, 0);
    return 1;
  }
  wd = w->files[i].wd;
  memmove(&w->files[i], &w->files[i + 1], (size_t)(w->count - i - 1) * sizeof *w->files);
  w->count--;
#if IKL_HAVE_INOTIFY
  release_dir(w, wd);
#else
  (void)wd;
#endif
  ikl_getuservalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushnil(L);
  lua_rawset(L, -3);
  lua_pushboolean(L, 1);
  return 1;
}

/***
 * The watched files that changed since the last poll, each once, in the order they
 * were added. Never blocks.
 * @function poll
 * @treturn {string,...} their paths (an empty table when none changed)
 */
static int watch_poll(lua_State *L) {
  ikl_watch *w = check_open(L, 1);
  int i, n = 0;
#if IKL_HAVE_INOTIFY
  if (w->fd >= 0) drain_events(w);
#endif
  for (i = 0; i < w->count; i++)
    if (w->files[i].wd < 0 && restat(&w->files[i])) w->files[i].changed = 1;
  lua_newtable(L);
  for (i = 0; i < w->count; i++) {
    if (w->files[i].changed) {
      w->files[i].changed = 0;
      lua_pushstring(L, w->files[i].path);
      lua_rawseti(L, -2, ++n);
    }
  }
  return 1;
}

/***
 * The watched paths, in the order they were added.
 * @function paths
 * @treturn {string,...}
 */
static int watch_paths(lua_State *L) {
  ikl_watch *w = check_open(L, 1);
  int i;
  lua_createtable(L, w->count, 0);
  for (i = 0; i < w->count; i++) {
    lua_pushstring(L, w->files[i].path);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/*** Closes the watch and its inotify instance: any later use but `close` raises.
 * @function close */
static int watch_close(lua_State *L) {
  ikl_watch *w = (ikl_watch *)luaL_checkudata(L, 1, IKL_WATCH);
  if (!w->closed) release(L, w);
  return 0;
}

/* Methods are found on a closed watch too (close may be called again); they raise. */
static int watch_index(lua_State *L) {
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "backend") == 0) {
    ikl_watch *w = check_open(L, 1);
    lua_pushstring(L, w->fd >= 0 ? "inotify" : "poll");
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int watch_tostring(lua_State *L) {
  ikl_watch *w = (ikl_watch *)luaL_checkudata(L, 1, IKL_WATCH);
  int i, polled = 0;
  if (w->closed) {
    lua_pushliteral(L, "ik.watch (closed)");
    return 1;
  }
  for (i = 0; i < w->count; i++) polled += w->files[i].wd < 0;
  lua_pushfstring(L, "ik.watch(%s, %d files, %d polled)", w->fd >= 0 ? "inotify" : "poll", w->count, polled);
  return 1;
}

static const luaL_Reg meth[] = {{"add", watch_add},     {"remove", watch_remove}, {"poll", watch_poll},
                                {"paths", watch_paths}, {"close", watch_close},   {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", watch_index},
                                    {"__tostring", watch_tostring},
                                    {"__gc", watch_close},
                                    {"__close", watch_close},
                                    {NULL, NULL}};

void ikl_open_watch(lua_State *L) {
  ikl_createmeta(L, IKL_WATCH, meth, metameth);
  lua_pop(L, 1);
  lua_pushcfunction(L, watch_new);
  lua_setfield(L, -2, "watch");
}
