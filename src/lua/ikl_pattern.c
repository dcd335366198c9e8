/*
 * ikl_pattern.c: string.find, match, gmatch and gsub with Lua 5.4's patterns (the
 * reference manual's section 6.4.1), every matcher step charged to a budget: a count hook
 * does not fire inside a C function, so a sandbox needs a matcher that counts its own work.
 *
 * The matcher backtracks as the manual's definitions ask ('*' and '+' longest first, '-'
 * shortest first, '?' with the item first), reading the pattern as it goes: an error in a
 * part of the pattern the subject never reaches is not raised, as in Lua. Its recursion
 * (one level per capture boundary and per repeated item that matched at least once) is
 * limited to PM_DEPTH levels, which is also where Lua 5.4 says "pattern too complex".
 * Nothing is allocated but Lua values: a raise (a bad pattern, the budget) leaks nothing.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ikl.h"

#define PM_CAPTURES 32 /* LUA_MAXCAPTURES */
#define PM_DEPTH 200   /* nested matcher calls, as Lua 5.4's MAXCCALLS */
#define PM_CHUNK 1024  /* most steps between two charges */
#define PM_OPEN (-1)   /* a capture's length while it is open */
#define PM_POSITION (-2)
/* Bytes a memchr or memcmp goes through per step: they run far faster than a step. */
#define PM_BYTES_PER_STEP 16

#if LUA_VERSION_NUM >= 503
#define pm_typeerror luaL_typeerror
#else
#define pm_typeerror ikl_compat_typeerror
#endif

typedef struct pm_capture {
  const char *at;
  ptrdiff_t len; /* or PM_OPEN, PM_POSITION */
} pm_capture;

typedef struct pm {
  const char *s0, *s1; /* the subject */
  const char *p1;      /* the pattern's end */
  lua_State *L;
  const ikl_step_budget *budget;
  long steps; /* not charged yet */
  int depth;  /* matcher calls still allowed */
  int ncap;
  pm_capture cap[PM_CAPTURES];
} pm;

static void pm_charge(pm *m) {
  long n = m->steps;
  m->steps = 0;
  if (m->budget && n > 0) m->budget->charge(m->L, m->budget->ud, n);
}

static void pm_step(pm *m, long n) {
  m->steps += n;
  if (m->steps >= PM_CHUNK) pm_charge(m);
}

static void pm_init(pm *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
  m->L = L;
  m->s0 = s;
  m->s1 = s + ls;
  m->p1 = p + lp;
  m->budget = (const ikl_step_budget *)lua_touserdata(L, lua_upvalueindex(1));
  m->steps = 0;
}

/* A fresh attempt at one starting point. */
static void pm_restart(pm *m) {
  m->ncap = 0;
  m->depth = PM_DEPTH;
}

static int pm_uc(char c) { return (unsigned char)c; }

/* Whether c is in the class named by letter cl (%a ... %x, upper case the complement);
 * any other character stands for itself. %z (the NUL byte) is gone from the manual but
 * still in 5.4's library. */
static int pm_class(int c, int cl) {
  int in;
  switch (tolower(cl)) {
    case 'a':
      in = isalpha(c);
      break;
    case 'c':
      in = iscntrl(c);
      break;
    case 'd':
      in = isdigit(c);
      break;
    case 'g':
      in = isgraph(c);
      break;
    case 'l':
      in = islower(c);
      break;
    case 'p':
      in = ispunct(c);
      break;
    case 's':
      in = isspace(c);
      break;
    case 'u':
      in = isupper(c);
      break;
    case 'w':
      in = isalnum(c);
      break;
    case 'x':
      in = isxdigit(c);
      break;
    case 'z':
      in = c == 0;
      break;
    default:
      return cl == c;
  }
  return isupper(cl) ? !in : in != 0;
}

/* Whether c is in the set [...] from `open` (its '[') to `close` (its ']'). */
static int pm_in_set(int c, const char *open, const char *close) {
  const char *q = open + 1;
  int in = 1;
  if (*q == '^') {
    in = 0;
    q++;
  }
  for (; q < close; q++) {
    if (*q == '%') {
      q++;
      if (pm_class(c, pm_uc(*q))) return in;
    } else if (q[1] == '-' && q + 2 < close) {
      if (pm_uc(q[0]) <= c && c <= pm_uc(q[2])) return in;
      q += 2;
    } else if (pm_uc(*q) == c) {
      return in;
    }
  }
  return !in;
}

/* Where the single-character item at p (p < m->p1) ends: after '.', a character, %x or a
 * whole set. Raises for a '%' that ends the pattern or a set with no ']'. */
static const char *pm_item_end(pm *m, const char *p) {
  if (*p == '%') {
    if (p + 1 >= m->p1) luaL_error(m->L, "malformed pattern (ends with '%%')");
    return p + 2;
  }
  if (*p != '[') return p + 1;
  p++;
  if (p < m->p1 && *p == '^') p++;
  /* The set's first character is itself even when it is ']'. */
  do {
    if (p >= m->p1) luaL_error(m->L, "malformed pattern (missing ']')");
    if (*p++ == '%' && p < m->p1) p++;
  } while (p >= m->p1 || *p != ']');
  return p + 1;
}

/* Whether the item [p, ep) matches the subject's character at s: one step. */
static int pm_single(pm *m, const char *s, const char *p, const char *ep) {
  int c;
  pm_step(m, 1);
  if (s >= m->s1) return 0;
  c = pm_uc(*s);
  switch (*p) {
    case '.':
      return 1;
    case '%':
      return pm_class(c, pm_uc(p[1]));
    case '[':
      return pm_in_set(c, p, ep - 1);
    default:
      return pm_uc(*p) == c;
  }
}

static const char *pm_match(pm *m, const char *s, const char *p);

/* item* (lo = s) or item+ (lo = s + 1), the item known to match at s: the longest run
 * first, then one character shorter at a time. */
static const char *pm_longest(pm *m, const char *lo, const char *s, const char *p, const char *ep) {
  const char *q = s + 1, *r;
  while (pm_single(m, q, p, ep)) q++;
  for (;;) {
    if ((r = pm_match(m, q, ep + 1)) != NULL) return r;
    if (q == lo) return NULL;
    q--;
  }
}

/* item-: the rest of the pattern after as few of the item as it takes. */
static const char *pm_shortest(pm *m, const char *s, const char *p, const char *ep) {
  for (;;) {
    const char *r = pm_match(m, s, ep + 1);
    if (r) return r;
    if (!pm_single(m, s, p, ep)) return NULL;
    s++;
  }
}

static const char *pm_open_capture(pm *m, const char *s, const char *p, ptrdiff_t len) {
  const char *r;
  if (m->ncap >= PM_CAPTURES) luaL_error(m->L, "too many captures");
  m->cap[m->ncap].at = s;
  m->cap[m->ncap].len = len;
  m->ncap++;
  if ((r = pm_match(m, s, p)) == NULL) m->ncap--;
  return r;
}

static const char *pm_close_capture(pm *m, const char *s, const char *p) {
  int k = m->ncap - 1;
  const char *r;
  while (k >= 0 && m->cap[k].len != PM_OPEN) k--;
  if (k < 0) luaL_error(m->L, "invalid pattern capture");
  m->cap[k].len = s - m->cap[k].at;
  if ((r = pm_match(m, s, p)) == NULL) m->cap[k].len = PM_OPEN;
  return r;
}

/* %bxy at s: x, then up to the y that balances it. */
static const char *pm_balance(pm *m, const char *s, int x, int y) {
  int open = 1;
  if (s >= m->s1 || pm_uc(*s) != x) return NULL;
  while (++s < m->s1) {
    int c = pm_uc(*s);
    pm_step(m, 1);
    if (c == y) {
      if (--open == 0) return s + 1;
    } else if (c == x) {
      open++;
    }
  }
  return NULL;
}

/* %1 ... %9 at s: the text capture k holds, again (never a position capture's). */
static const char *pm_backref(pm *m, const char *s, int k) {
  ptrdiff_t len;
  if (k < 0 || k >= m->ncap || m->cap[k].len == PM_OPEN)
    luaL_error(m->L, "invalid capture index %%%d", k + 1);
  len = m->cap[k].len;
  pm_step(m, 1 + len / PM_BYTES_PER_STEP);
  if (len < 0 || m->s1 - s < len || memcmp(m->cap[k].at, s, (size_t)len) != 0) return NULL;
  return s + len;
}

/* Where the pattern from p, matched from s, ends in the subject; NULL if it does not
 * match. Straight runs of items loop; a choice to come back to recurses. */
static const char *pm_match(pm *m, const char *s, const char *p) {
  if (m->depth-- == 0) luaL_error(m->L, "pattern too complex");
  while (s && p < m->p1) {
    const char *ep;
    int suffix;
    pm_step(m, 1);
    switch (*p) {
      case '(':
        if (p + 1 < m->p1 && p[1] == ')')
          s = pm_open_capture(m, s, p + 2, PM_POSITION);
        else
          s = pm_open_capture(m, s, p + 1, PM_OPEN);
        goto done;
      case ')':
        s = pm_close_capture(m, s, p + 1);
        goto done;
      case '$':
        if (p + 1 == m->p1) {
          if (s != m->s1) s = NULL;
          goto done;
        }
        break;
      case '%':
        if (p + 1 >= m->p1) break;
        if (p[1] == 'b') {
          if (p + 3 >= m->p1) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
          s = pm_balance(m, s, pm_uc(p[2]), pm_uc(p[3]));
          p += 4;
          continue;
        }
        if (p[1] == 'f') {
          const char *set = p + 2;
          int before, after;
          if (set >= m->p1 || *set != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
          ep = pm_item_end(m, set);
          before = s == m->s0 ? 0 : pm_uc(s[-1]);
          after = s < m->s1 ? pm_uc(*s) : 0;
          pm_step(m, 1);
          if (pm_in_set(before, set, ep - 1) || !pm_in_set(after, set, ep - 1)) s = NULL;
          p = ep;
          continue;
        }
        if (isdigit(pm_uc(p[1]))) {
          s = pm_backref(m, s, p[1] - '1');
          p += 2;
          continue;
        }
        break;
      default:
        break;
    }
    /* A single-character item, and what may follow it. */
    ep = pm_item_end(m, p);
    suffix = ep < m->p1 ? *ep : 0;
    if (!pm_single(m, s, p, ep)) {
      if (suffix == '*' || suffix == '?' || suffix == '-')
        p = ep + 1; /* none of it: no choice to come back to */
      else
        s = NULL;
      continue;
    }
    switch (suffix) {
      case '?': {
        const char *r = pm_match(m, s + 1, ep + 1);
        if (r) {
          s = r;
          goto done;
        }
        p = ep + 1;
        continue;
      }
      case '*':
        s = pm_longest(m, s, s, p, ep);
        goto done;
      case '+':
        s = pm_longest(m, s + 1, s, p, ep);
        goto done;
      case '-':
        s = pm_shortest(m, s, p, ep);
        goto done;
      default:
        s++;
        p = ep;
        continue;
    }
  }
done:
  m->depth++;
  return s;
}

/* Pushes capture k of a match [s, e), or the whole match for k 0 when there is none. */
static void pm_push_capture(pm *m, int k, const char *s, const char *e) {
  if (k >= m->ncap) {
    if (k != 0) luaL_error(m->L, "invalid capture index %%%d", k + 1);
    lua_pushlstring(m->L, s, (size_t)(e - s));
  } else if (m->cap[k].len == PM_OPEN) {
    luaL_error(m->L, "unfinished capture");
  } else if (m->cap[k].len == PM_POSITION) {
    lua_pushinteger(m->L, (lua_Integer)(m->cap[k].at - m->s0) + 1);
  } else {
    lua_pushlstring(m->L, m->cap[k].at, (size_t)m->cap[k].len);
  }
}

/* Pushes every capture (the whole match when there is none and s is not NULL). */
static int pm_push_captures(pm *m, const char *s, const char *e) {
  int n = m->ncap == 0 && s ? 1 : m->ncap, k;
  luaL_checkstack(m->L, n, "too many captures");
  for (k = 0; k < n; k++) pm_push_capture(m, k, s, e);
  return n;
}

/* An optional integer argument, taken as 5.4 takes it on every Lua: 5.1 would truncate
 * 1.5 where 5.4 raises. */
static lua_Integer pm_optint(lua_State *L, int arg, lua_Integer def) {
#if LUA_VERSION_NUM >= 503
  return luaL_optinteger(L, arg, def);
#else
  lua_Number n;
  if (lua_isnoneornil(L, arg)) return def;
  n = luaL_checknumber(L, arg);
  if (!(n >= -0x1p63 && n < 0x1p63) || n != floor(n))
    luaL_argerror(L, arg, "number has no integer representation");
  return (lua_Integer)n;
#endif
}

/* The 0-based start an init argument asks for: 1 for 0 or before the start, counted
 * from the end when negative; past the end stays past it. */
static size_t pm_start(lua_State *L, int arg, size_t len) {
  lua_Integer i = pm_optint(L, arg, 1);
  if (i > 0) return (size_t)i - 1 > len ? len + 1 : (size_t)i - 1;
  if (i == 0 || (size_t) - (i + 1) >= len) return 0;
  return len - (size_t) - (i + 1) - 1;
}

static int pm_has_specials(const char *p, size_t lp) {
  size_t i;
  for (i = 0; i < lp; i++)
    if (strchr("^$*+?.([%-", p[i]) && p[i] != '\0') return 1;
  return 0;
}

/* The first occurrence of needle in [s, s + ls), charged by the bytes it goes through
 * (memchr in windows of a chunk's worth, so that no charge comes late). */
static const char *pm_plain(pm *m, const char *s, size_t ls, const char *needle, size_t ln) {
  const size_t window = (size_t)PM_CHUNK * PM_BYTES_PER_STEP;
  const char *end = s + ls;
  if (ln == 0) return s;
  while ((size_t)(end - s) >= ln) {
    const size_t starts = (size_t)(end - s) - ln + 1, span = starts < window ? starts : window;
    const char *q = (const char *)memchr(s, needle[0], span);
    pm_step(m, 1 + (long)(((q ? (size_t)(q - s) : span) + ln) / PM_BYTES_PER_STEP));
    if (!q) {
      s += span;
      continue;
    }
    if (memcmp(q + 1, needle + 1, ln - 1) == 0) return q;
    s = q + 1;
  }
  return NULL;
}

static int pm_find_or_match(lua_State *L, int find) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = pm_start(L, 3, ls);
  const char *at;
  int anchored;
  pm m;
  if (init > ls) {
    lua_pushnil(L);
    return 1;
  }
  pm_init(&m, L, s, ls, p, lp);
  if (find && (lua_toboolean(L, 4) || !pm_has_specials(p, lp))) {
    at = pm_plain(&m, s + init, ls - init, p, lp);
    pm_charge(&m);
    if (!at) {
      lua_pushnil(L);
      return 1;
    }
    lua_pushinteger(L, (lua_Integer)(at - s) + 1);
    lua_pushinteger(L, (lua_Integer)(at - s + (ptrdiff_t)lp));
    return 2;
  }
  anchored = lp > 0 && *p == '^';
  for (at = s + init; at <= m.s1; at++) {
    const char *e;
    pm_restart(&m);
    if ((e = pm_match(&m, at, p + anchored)) != NULL) {
      pm_charge(&m);
      if (!find) return pm_push_captures(&m, at, e);
      lua_pushinteger(L, (lua_Integer)(at - s) + 1);
      lua_pushinteger(L, (lua_Integer)(e - s));
      return 2 + pm_push_captures(&m, NULL, NULL);
    }
    if (anchored) break;
  }
  pm_charge(&m);
  lua_pushnil(L);
  return 1;
}

static int pm_find(lua_State *L) { return pm_find_or_match(L, 1); }

static int pm_match_f(lua_State *L) { return pm_find_or_match(L, 0); }

/* gmatch's iterator. Upvalues: budget, anchor, subject, pattern, where to start (a
 * 0-based offset), where the last match ended (or -1): 5.4 takes no empty match there. */
static int pm_gmatch_next(lua_State *L) {
  size_t ls, lp;
  const char *s = lua_tolstring(L, lua_upvalueindex(3), &ls);
  const char *p = lua_tolstring(L, lua_upvalueindex(4), &lp);
  lua_Integer from = lua_tointeger(L, lua_upvalueindex(5));
  lua_Integer last = lua_tointeger(L, lua_upvalueindex(6));
  const char *at;
  pm m;
  pm_init(&m, L, s, ls, p, lp);
  for (at = s + from; at <= m.s1; at++) {
    const char *e;
    pm_restart(&m);
    if ((e = pm_match(&m, at, p)) != NULL && e - s != last) {
      pm_charge(&m);
      lua_pushinteger(L, (lua_Integer)(e - s));
      lua_pushvalue(L, -1);
      lua_replace(L, lua_upvalueindex(5));
      lua_replace(L, lua_upvalueindex(6));
      return pm_push_captures(&m, at, e);
    }
  }
  pm_charge(&m);
  return 0;
}

static int pm_gmatch(lua_State *L) {
  size_t ls;
  size_t init;
  luaL_checklstring(L, 1, &ls);
  luaL_checkstring(L, 2);
  init = pm_start(L, 3, ls);
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1);
  lua_insert(L, 1);
  lua_pushinteger(L, (lua_Integer)init);
  lua_pushinteger(L, -1);
  lua_pushcclosure(L, pm_gmatch_next, 6);
  return 1;
}

/* Appends repl (a string) for the match [s, e): %0 ... %9 and %%. */
static void pm_add_template(pm *m, luaL_Buffer *b, const char *s, const char *e) {
  size_t lr;
  const char *r = lua_tolstring(m->L, 3, &lr), *end = r + lr;
  pm_step(m, 1 + (long)(lr / PM_BYTES_PER_STEP));
  while (r < end) {
    const char *pct = (const char *)memchr(r, '%', (size_t)(end - r));
    int c;
    if (!pct) {
      luaL_addlstring(b, r, (size_t)(end - r));
      return;
    }
    luaL_addlstring(b, r, (size_t)(pct - r));
    c = pct + 1 < end ? pm_uc(pct[1]) : -1;
    if (c == '%') {
      luaL_addchar(b, '%');
    } else if (c == '0') {
      pm_step(m, (long)((size_t)(e - s) / PM_BYTES_PER_STEP));
      luaL_addlstring(b, s, (size_t)(e - s));
    } else if (c >= '1' && c <= '9') {
      pm_push_capture(m, c - '1', s, e);
      luaL_addvalue(b);
    } else {
      luaL_error(m->L, "invalid use of '%%' in replacement string");
    }
    pm_step(m, 1);
    r = pct + 2;
  }
}

/* Appends the replacement of the match [s, e); repl (at 3) is of type tr. */
static void pm_add_replacement(pm *m, luaL_Buffer *b, const char *s, const char *e, int tr) {
  lua_State *L = m->L;
  if (tr == LUA_TFUNCTION) {
    int n;
    lua_pushvalue(L, 3);
    n = pm_push_captures(m, s, e);
    lua_call(L, n, 1);
  } else if (tr == LUA_TTABLE) {
    pm_push_capture(m, 0, s, e);
    lua_gettable(L, 3);
  } else {
    pm_add_template(m, b, s, e);
    return;
  }
  if (!lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    luaL_addlstring(b, s, (size_t)(e - s));
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  } else {
    luaL_addvalue(b);
  }
}

static int pm_gsub(lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  const char *at, *last = NULL;
  int tr = lua_type(L, 3);
  lua_Integer most = pm_optint(L, 4, (lua_Integer)ls + 1), n = 0;
  int anchored = lp > 0 && *p == '^';
  luaL_Buffer b;
  pm m;
  if (tr != LUA_TNUMBER && tr != LUA_TSTRING && tr != LUA_TFUNCTION && tr != LUA_TTABLE)
    pm_typeerror(L, 3, "string/function/table");
  pm_init(&m, L, s, ls, p, lp);
  luaL_buffinit(L, &b);
  at = s;
  while (n < most) {
    const char *e;
    pm_restart(&m);
    if ((e = pm_match(&m, at, p + anchored)) != NULL && e != last) {
      n++;
      pm_add_replacement(&m, &b, at, e, tr);
      at = last = e;
    } else if (at < m.s1) {
      luaL_addchar(&b, *at++);
    } else {
      break;
    }
    if (anchored) break;
  }
  pm_step(&m, 1 + (m.s1 - at) / PM_BYTES_PER_STEP);
  pm_charge(&m);
  luaL_addlstring(&b, at, (size_t)(m.s1 - at));
  luaL_pushresult(&b);
  lua_pushinteger(L, n);
  return 2;
}

/* Sets the four functions in the table at -1, each with upvalues budget (a light
 * userdata, or nil) and anchor (the value at -1 - 1 when anchored: what keeps the
 * budget alive; else nil). */
static void pm_setfuncs(lua_State *L, const ikl_step_budget *b, int anchored) {
  static const luaL_Reg funcs[] = {
      {"find", pm_find}, {"match", pm_match_f}, {"gmatch", pm_gmatch}, {"gsub", pm_gsub}, {NULL, NULL}};
  if (b)
    lua_pushlightuserdata(L, (void *)b);
  else
    lua_pushnil(L);
  if (anchored)
    lua_pushvalue(L, -3);
  else
    lua_pushnil(L);
  luaL_setfuncs(L, funcs, 2);
}

void ikl_pattern_setfuncs(lua_State *L, const ikl_step_budget *b) { pm_setfuncs(L, b, 0); }

/* ---- ik.core._sandbox_patterns: the functions on a budget of their own ---- */

typedef struct pm_limit {
  ikl_step_budget budget;
  lua_Number limit; /* < 0: none */
  lua_Number used;
} pm_limit;

static void pm_limit_charge(lua_State *L, void *ud, long steps) {
  pm_limit *l = (pm_limit *)ud;
  l->used += (lua_Number)steps;
  if (l->limit >= 0 && l->used > l->limit) luaL_error(L, "pattern step budget exceeded");
}

static int pm_limit_steps(lua_State *L) {
  const pm_limit *l = (const pm_limit *)lua_touserdata(L, lua_upvalueindex(1));
  lua_pushinteger(L, (lua_Integer)l->used);
  return 1;
}

static int pm_sandbox_patterns(lua_State *L) {
  lua_Number limit = -1;
  pm_limit *l;
  if (!lua_isnoneornil(L, 1)) {
    limit = luaL_checknumber(L, 1);
    luaL_argcheck(L, limit >= 0 && limit < 0x1p53, 1, "number of steps in [0, 2^53) expected");
  }
  l = (pm_limit *)ikl_newuserdata0(L, sizeof *l);
  l->budget.charge = pm_limit_charge;
  l->budget.ud = l;
  l->limit = limit;
  l->used = 0;
  lua_newtable(L);
  pm_setfuncs(L, &l->budget, 1);
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, pm_limit_steps, 1);
  lua_setfield(L, -2, "steps");
  return 1;
}

void ikl_open_pattern(lua_State *L) {
  lua_pushcfunction(L, pm_sandbox_patterns);
  lua_setfield(L, -2, "_sandbox_patterns");
}
