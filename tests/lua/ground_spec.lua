-- ik.ground: plane, heightfield, mesh and custom grounds against hand-computed hits, a
-- heightfield and the mesh of its triangles agreeing on seeded random rays, a custom
-- ground's Lua function (arguments, answers, errors), closing, and the error messages
-- (their stable part, found plain, so the same checks hold on Lua 5.4, 5.1 and LuaJIT).
local ik = require("ik")
local h = require("spec_helper")

local double = ik.real == "double"
-- Absolute tolerance on positions, distances and normals of the small scenes here.
local EPS = double and 1e-9 or 1e-5
local S = math.sqrt(0.5)
local R5 = 1 / math.sqrt(5)
local DOWN = { 0, -1, 0 }

-- Checks a hit against the expected point, normal and distance.
local function assert_hit(expected_point, expected_normal, expected_distance, hit, point, normal, distance)
  assert.is_true(hit, "expected a hit")
  assert(h.vec_near(point, expected_point, EPS))
  assert(h.vec_near(normal, expected_normal, EPS))
  assert(h.near(distance, expected_distance, EPS))
end

local function assert_miss(hit, point, normal, distance)
  assert.are.equal(false, hit)
  assert.is_nil(point)
  assert.is_nil(normal)
  assert.is_nil(distance)
end

-- A deterministic generator (the same numbers on every Lua): a 31-bit LCG in [0, 1).
local function lcg(seed)
  local state = seed
  return function(a, b)
    state = (state * 1103515245 + 12345) % 2147483648
    return a + (b - a) * state / 2147483648
  end
end

-- The mesh of a heightfield's triangles, split as the C layer documents: cell (c, r)
-- into {(c, r), (c, r + 1), (c + 1, r + 1)} and {(c, r), (c + 1, r + 1), (c + 1, r)}.
local function heightfield_mesh(origin, cell, columns, rows, heights)
  local vertices, triangles = {}, {}
  for r = 0, rows - 1 do
    for c = 0, columns - 1 do
      local y = origin[2] + heights[r * columns + c + 1]
      vertices[#vertices + 1] = { origin[1] + c * cell, y, origin[3] + r * cell }
    end
  end
  local function v(c, r) return r * columns + c + 1 end
  for r = 0, rows - 2 do
    for c = 0, columns - 2 do
      triangles[#triangles + 1] = { v(c, r), v(c, r + 1), v(c + 1, r + 1) }
      triangles[#triangles + 1] = { v(c, r), v(c + 1, r + 1), v(c + 1, r) }
    end
  end
  return ik.ground.mesh({ vertices = vertices, triangles = triangles })
end

describe("ik.ground", function()
  describe("plane", function()
    it("is the floor y = 0 by default", function()
      local g = ik.ground.plane()
      assert_hit({ 1, 0, 3 }, { 0, 1, 0 }, 2, g:raycast({ 1, 2, 3 }, DOWN, 10))
      assert.are.equal("plane", g.kind)
    end)

    it("hits a tilted plane where its equation says", function()
      -- x + y = 1, normal of any length
      local g = ik.ground.plane({ point = { 0, 1, 0 }, normal = { 3, 3, 0 } })
      assert_hit({ 0, 1, 0 }, { S, S, 0 }, 4, g:raycast({ 0, 5, 0 }, DOWN, 10))
      -- an oblique ray from (-2, 0, 1) along (1, 1, 0): meets x + y = 1 at t = 3 / sqrt(2)
      assert_hit({ -0.5, 1.5, 1 }, { -S, -S, 0 }, 3 * S, g:raycast({ -2, 0, 1 }, { 1, 1, 0 }, 10))
    end)

    it("is two-sided: the normal faces the ray", function()
      local g = ik.ground.plane({ point = { 0, 1, 0 } })
      assert_hit({ 0, 1, 0 }, { 0, -1, 0 }, 3, g:raycast({ 0, -2, 0 }, { 0, 1, 0 }, 10))
    end)

    it("measures the distance along the ray whatever the direction's length", function()
      local g = ik.ground.plane()
      assert_hit({ 2, 0, 0 }, { 0, 1, 0 }, 2 * math.sqrt(2), g:raycast({ 0, 2, 0 }, { 5, -5, 0 }, 10))
      assert_hit({ 0, 0, 0 }, { 0, 1, 0 }, 2, g:raycast({ 0, 2, 0 }, { 0, -1e-3, 0 }, 10))
    end)

    it("misses a ray pointing away, a parallel one, and one that stops short", function()
      local g = ik.ground.plane()
      assert_miss(g:raycast({ 0, 1, 0 }, { 0, 1, 0 }, 10))
      assert_miss(g:raycast({ 0, 1, 0 }, { 1, 0, 0 }, 10))
      assert_miss(g:raycast({ 0, 0, 0 }, { 1, 0, 0 }, 10)) -- even lying in it
      assert_miss(g:raycast({ 0, 1, 0 }, DOWN, 0.999))
    end)

    it("counts hits at both ends of the ray", function()
      local g = ik.ground.plane()
      assert_hit({ 0, 0, 0 }, { 0, 1, 0 }, 1, g:raycast({ 0, 1, 0 }, DOWN, 1))
      assert_hit({ 4, 0, 0 }, { 0, 1, 0 }, 0, g:raycast({ 4, 0, 0 }, DOWN, 0))
    end)

    it("takes any vec3-like point and normal, and copies them", function()
      local point, normal = { x = 0, y = 2, z = 0 }, ik.vec3(0, 1, 0)
      local g = ik.ground.plane({ point = point, normal = normal })
      point.y = 100
      assert_hit({ 0, 2, 0 }, { 0, 1, 0 }, 3, g:raycast({ 0, 5, 0 }, DOWN, 10))
    end)
  end)

  describe("heightfield", function()
    -- 3 x 3 samples 2 apart from (10, 1, 20), a bump of 1 in the middle sample (12, 2, 22).
    local function bump()
      return ik.ground.heightfield({
        origin = { 10, 1, 20 }, cell_size = 2, columns = 3, rows = 3,
        heights = { 0, 0, 0,
                    0, 1, 0,
                    0, 0, 0 },
      })
    end

    it("hits each triangle of a cell on its own plane", function()
      local g = bump()
      assert.are.equal("heightfield", g.kind)
      -- cell (0, 0): triangle {(0,0), (1,1), (1,0)} (below the diagonal) rises along z only,
      -- y = 1 + (z - 20) / 2, normal (0, 2, -1) / sqrt(5)
      assert_hit({ 11.5, 1.25, 20.5 }, { 0, 2 * R5, -R5 }, 3.75, g:raycast({ 11.5, 5, 20.5 }, DOWN, 10))
      -- triangle {(0,0), (0,1), (1,1)} (above it) rises along x only, y = 1 + (x - 10) / 2
      assert_hit({ 10.5, 1.25, 21.5 }, { -R5, 2 * R5, 0 }, 3.75, g:raycast({ 10.5, 5, 21.5 }, DOWN, 10))
      -- the peak (its normal depends on which triangle takes it: only facing up is sure)
      local hit, point, normal, distance = g:raycast({ 12, 5, 22 }, DOWN, 10)
      assert.is_true(hit)
      assert(h.vec_near(point, { 12, 2, 22 }, EPS))
      assert(h.near(distance, 3, EPS))
      assert.is_true(normal.y > 0)
      -- cell (0, 1) below its diagonal: y = 1 + ((x - 10) - (z - 22)) / 2, normal
      -- (-1, 2, 1) / sqrt(6); above it, flat at y = 1
      local R6 = 1 / math.sqrt(6)
      assert_hit({ 11.5, 1.5, 22.5 }, { -R6, 2 * R6, R6 }, 3.5, g:raycast({ 11.5, 5, 22.5 }, DOWN, 10))
      assert_hit({ 10.5, 1, 23.5 }, { 0, 1, 0 }, 4, g:raycast({ 10.5, 5, 23.5 }, DOWN, 10))
      -- cell (1, 1), coming down from the peak along x
      assert_hit({ 13.5, 1.25, 23.5 }, { R5, 2 * R5, 0 }, 3.75, g:raycast({ 13.5, 5, 23.5 }, DOWN, 10))
    end)

    it("marches a ray across cells", function()
      local g = bump()
      -- horizontal, at z = 21.5 and y = 1.5: meets y = 1 + (x - 10) / 2 at x = 11
      assert_hit({ 11, 1.5, 21.5 }, { -R5, 2 * R5, 0 }, 2, g:raycast({ 9, 1.5, 21.5 }, { 1, 0, 0 }, 10))
      -- from beyond the far side, going -x at y = 1.25, z = 23.5: y = 1 + (14 - x) / 2 at x = 13.5
      assert_hit({ 13.5, 1.25, 23.5 }, { R5, 2 * R5, 0 }, 2.5,
        g:raycast({ 16, 1.25, 23.5 }, { -1, 0, 0 }, 10))
      -- obliquely, from off the grid (z > 24) along (0, -1, -1): over the flat part of
      -- cell (0, 1) (y = 1) the ray comes down to it at z = 23, after 2 sqrt(2)
      assert_hit({ 10.2, 1, 23 }, { 0, 1, 0 }, 2 * math.sqrt(2),
        g:raycast({ 10.2, 3, 25 }, { 0, -1, -1 }, 10))
    end)

    it("has no ground outside its x/z extent", function()
      local g = bump()
      assert_miss(g:raycast({ 9.9, 5, 21 }, DOWN, 10))
      assert_miss(g:raycast({ 11, 5, 24.1 }, DOWN, 10))
      assert_miss(g:raycast({ 11, 5, 21 }, { 0, 1, 0 }, 10))
      assert_miss(g:raycast({ 11, 5, 21 }, DOWN, 3)) -- short of y = 1.5
    end)

    it("copies its heights", function()
      local heights = { 0, 0, 0, 0 }
      local g = ik.ground.heightfield({ cell_size = 1, columns = 2, rows = 2, heights = heights })
      heights[1] = 5
      assert_hit({ 0.5, 0, 0.5 }, { 0, 1, 0 }, 1, g:raycast({ 0.5, 1, 0.5 }, DOWN, 2))
    end)
  end)

  describe("mesh", function()
    it("hits a triangle, either winding, from either side", function()
      for _, tri in ipairs({ { 1, 2, 3 }, { 1, 3, 2 } }) do
        local g = ik.ground.mesh({ vertices = { { 0, 1, 0 }, { 4, 1, 0 }, { 0, 1, 4 } },
                                   triangles = { tri } })
        assert.are.equal("mesh", g.kind)
        assert_hit({ 1, 1, 1 }, { 0, 1, 0 }, 2, g:raycast({ 1, 3, 1 }, DOWN, 5))
        assert_hit({ 1, 1, 1 }, { 0, -1, 0 }, 1, g:raycast({ 1, 0, 1 }, { 0, 1, 0 }, 5))
        assert_miss(g:raycast({ 3, 3, 3 }, DOWN, 5)) -- beyond the hypotenuse x + z = 4
      end
    end)

    it("takes a flat index list as well as a nested one", function()
      local vertices = { { 0, 0, 0 }, { 1, 0, 0 }, { 1, 0, 1 }, { 0, 0, 1 }, { 0, 0.5, 0 } }
      local nested = ik.ground.mesh({ vertices = vertices, triangles = { { 1, 2, 3 }, { 1, 3, 4 } } })
      local flat = ik.ground.mesh({ vertices = vertices, triangles = { 1, 2, 3, 1, 3, 4 } })
      for _, g in ipairs({ nested, flat }) do
        assert_hit({ 0.8, 0, 0.2 }, { 0, 1, 0 }, 1, g:raycast({ 0.8, 1, 0.2 }, DOWN, 2))
        assert_hit({ 0.2, 0, 0.8 }, { 0, 1, 0 }, 1, g:raycast({ 0.2, 1, 0.8 }, DOWN, 2))
      end
    end)

    it("finds the nearest of stacked triangles, and hand-computed slopes", function()
      -- two floors (y = 0 and y = 1) and a ramp x = y between them, over x, z in [0, 2]
      local g = ik.ground.mesh({
        vertices = { { 0, 0, 0 }, { 2, 0, 0 }, { 2, 0, 2 }, { 0, 0, 2 },
                     { 0, 1, 0 }, { 2, 1, 0 }, { 2, 1, 2 }, { 0, 1, 2 },
                     { 0, 0, 0 }, { 2, 2, 0 }, { 2, 2, 2 }, { 0, 0, 2 } },
        triangles = { { 1, 2, 3 }, { 1, 3, 4 }, { 5, 6, 7 }, { 5, 7, 8 }, { 9, 10, 11 }, { 9, 11, 12 } },
      })
      assert_hit({ 1.5, 1.5, 1 }, { -S, S, 0 }, 1.5, g:raycast({ 1.5, 3, 1 }, DOWN, 5))
      assert_hit({ 0.5, 1, 1 }, { 0, 1, 0 }, 2, g:raycast({ 0.5, 3, 1 }, DOWN, 5))
      -- under the upper floor, the ramp
      assert_hit({ 0.5, 0.5, 1 }, { -S, S, 0 }, 0.49, g:raycast({ 0.5, 0.99, 1 }, DOWN, 5))
      -- a ray up from under the ramp meets its underside, at y = x = 0.25
      assert_hit({ 0.25, 0.25, 1 }, { S, -S, 0 }, 0.15, g:raycast({ 0.25, 0.1, 1 }, { 0, 1, 0 }, 5))
    end)

    it("never hits a triangle with no area", function()
      -- a degenerate triangle along the line y = 0, z = 0.5, over a real one at y = -1
      local g = ik.ground.mesh({ vertices = { { 0, 0, 0.5 }, { 1, 0, 0.5 }, { 2, 0, 0.5 },
                                              { 0, -1, 0 }, { 4, -1, 0 }, { 0, -1, 4 } },
                                 triangles = { { 1, 2, 3 }, { 4, 5, 6 } } })
      assert_hit({ 1, -1, 0.5 }, { 0, 1, 0 }, 2, g:raycast({ 1, 1, 0.5 }, DOWN, 5))
      assert_miss(g:raycast({ 1, 1, 0.5 }, DOWN, 1.5))
    end)

    it("copies its inputs", function()
      local vertices = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }
      local triangles = { { 1, 2, 3 } }
      local g = ik.ground.mesh({ vertices = vertices, triangles = triangles })
      vertices[1][2] = 5
      triangles[1][1] = 2
      assert_hit({ 0.2, 0, 0.2 }, { 0, 1, 0 }, 1, g:raycast({ 0.2, 1, 0.2 }, DOWN, 2))
    end)
  end)

  describe("heightfield and mesh of the same heights", function()
    it("agree on random rays", function()
      local rand = lcg(20240601)
      local columns, rows, cell = 13, 9, 0.5
      local origin = { -3, 0.25, -2 }
      local heights = {}
      for i = 1, columns * rows do heights[i] = rand(-0.6, 0.6) end
      local hf = ik.ground.heightfield({ origin = origin, cell_size = cell, columns = columns, rows = rows,
                                         heights = heights })
      local mesh = heightfield_mesh(origin, cell, columns, rows, heights)
      local hits, misses = 0, 0
      for i = 1, 400 do
        local o = { rand(-4, 4), rand(-1, 2), rand(-3, 3) }
        local d
        if i % 4 == 0 then
          d = { 0, -1, 0 } -- as a foot asks
        else
          d = { rand(-1, 1), rand(-1, 1), rand(-1, 1) }
        end
        local max = rand(0.5, 8)
        local a = { hf:raycast(o, d, max) }
        local b = { mesh:raycast(o, d, max) }
        assert.are.equal(a[1], b[1], "hit or miss differs for ray " .. i)
        if a[1] then
          hits = hits + 1
          assert(h.vec_near(a[2], b[2], EPS * 10))
          assert(h.vec_near(a[3], b[3], EPS * 10))
          assert(h.near(a[4], b[4], EPS * 10))
        else
          misses = misses + 1
        end
      end
      -- both outcomes were exercised
      assert.is_true(hits > 50, "hits: " .. hits)
      assert.is_true(misses > 50, "misses: " .. misses)
    end)
  end)

  describe("custom", function()
    it("calls the function with the ray: origin, unit direction, max distance", function()
      local got
      local g = ik.ground.custom(function(origin, direction, max_distance)
        got = { origin, direction, max_distance }
        return false
      end)
      assert.are.equal("custom", g.kind)
      assert_miss(g:raycast({ 1, 2, 3 }, { 0, -4, 0 }, 7.5))
      assert.are.equal(getmetatable(ik.vec3()), getmetatable(got[1]))
      assert(h.vec_near(got[1], { 1, 2, 3 }))
      assert(h.vec_near(got[2], { 0, -1, 0 }))
      assert.are.equal(7.5, got[3])
    end)

    it("turns the answer into a hit: point along the ray, unit normal facing it", function()
      local g = ik.ground.custom(function(origin, direction)
        return true, origin + direction * 2, { 0, -5, 0 } -- normal the wrong way round and long
      end)
      assert_hit({ 1, 0, 3 }, { 0, 1, 0 }, 2, g:raycast({ 1, 2, 3 }, { 0, -3, 0 }, 5))
      -- a point off the ray counts by its distance along it
      g = ik.ground.custom(function() return true, { 7, 0, 9 }, { 0, 1, 0 } end)
      assert_hit({ 0, 0, 0 }, { 0, 1, 0 }, 2, g:raycast({ 0, 2, 0 }, DOWN, 5))
    end)

    it("counts false, nil and a hit beyond max_distance as a miss", function()
      for _, answer in ipairs({ function() return false end, function() return nil end, function() end,
                                function(o, d) return true, o + d * 6, { 0, 1, 0 } end,
                                function(o, d) return true, o - d, { 0, 1, 0 } end }) do
        assert_miss(ik.ground.custom(answer):raycast({ 0, 2, 0 }, DOWN, 5))
      end
    end)

    it("counts a hit beyond the ray as a miss, whatever normal comes with it", function()
      for _, normal in ipairs({ { 0, 0, 0 }, { 0 / 0, 1, 0 }, "up" }) do
        for _, answer in ipairs({ function(o, d) return true, o + d * 6, normal end,
                                  function(o, d) return true, o - d, normal end }) do
          assert_miss(ik.ground.custom(answer):raycast({ 0, 2, 0 }, DOWN, 5))
        end
        -- within the ray, the normal is checked
        local g = ik.ground.custom(function(o, d) return true, o + d, normal end)
        assert(h.raises(function() local _ = g:raycast({ 0, 2, 0 }, DOWN, 5) end, "bad result #3"))
      end
    end)

    it("takes vec3-like answers", function()
      local g = ik.ground.custom(function() return 1, { x = 0, y = 0, z = 0 }, ik.vec3(0, 2, 0) end)
      assert_hit({ 0, 0, 0 }, { 0, 1, 0 }, 2, g:raycast({ 0, 2, 0 }, DOWN, 5))
    end)

    it("raises the function's error as it is", function()
      local g = ik.ground.custom(function() error("physics exploded") end)
      assert(h.raises(function() local _ = g:raycast({ 0, 2, 0 }, DOWN, 5) end, "physics exploded"))
      local token = {}
      g = ik.ground.custom(function() error(token) end)
      local ok, err = pcall(function() local _ = g:raycast({ 0, 2, 0 }, DOWN, 5) end)
      assert.is_false(ok)
      assert.is_true(rawequal(token, err))
    end)

    it("works again after an error", function()
      local fail = true
      local g = ik.ground.custom(function(o, d)
        if fail then error("not yet") end
        return true, o + d, { 0, 1, 0 }
      end)
      assert(h.raises(function() local _ = g:raycast({ 0, 2, 0 }, DOWN, 5) end, "not yet"))
      fail = false
      assert_hit({ 0, 1, 0 }, { 0, 1, 0 }, 1, g:raycast({ 0, 2, 0 }, DOWN, 5))
    end)

    it("refuses a bad answer, naming it", function()
      local function answer(...)
        local r = { n = select("#", ...), ... }
        return ik.ground.custom(function() return (table.unpack or unpack)(r, 1, r.n) end)
      end
      local function cast(g) return function() local _ = g:raycast({ 0, 2, 0 }, DOWN, 5) end end
      assert(h.raises(cast(answer(true)), "bad result #2 from the raycast function (vec3 expected, got nil)"))
      assert(h.raises(cast(answer(true,
        "here", { 0, 1, 0 })), "bad result #2", "(vec3 expected, got string)"))
      assert(h.raises(cast(answer(true, { 0, 0, 0 })), "bad result #3", "(vec3 expected, got nil)"))
      assert(h.raises(cast(answer(true, { 0, 0 / 0, 0 }, { 0, 1, 0 })), "bad result #2",
        "(finite vec3 expected, got NaN, inf or a huge component)"))
      assert(h.raises(cast(answer(true, { 0, 0, 0 }, { 0, math.huge, 0 })), "bad result #3", "(finite vec3"))
      assert(h.raises(cast(answer(true, { 0, 0, 0 }, { 0, 0, 0 })), "bad result #3",
        "(non-zero vec3 expected, got a zero vector)"))
    end)

    it("may be queried from inside its own function", function()
      local floor = ik.ground.plane()
      local g
      local depth = 0
      g = ik.ground.custom(function(o, d, max)
        depth = depth + 1
        if depth < 3 then
          local hit, point, normal = g:raycast(o, d, max)
          depth = depth - 1
          return hit, point, normal
        end
        depth = depth - 1
        return floor:raycast(o, d, max)
      end)
      assert_hit({ 0, 0, 0 }, { 0, 1, 0 }, 2, g:raycast({ 0, 2, 0 }, DOWN, 5))
      assert.are.equal(0, depth)
    end)

    it("may be queried from a coroutine, and its function may use one", function()
      local g = ik.ground.custom(function(o, d)
        local co = coroutine.wrap(function() coroutine.yield(o + d * 1.5) end)
        return true, co(), { 0, 1, 0 }
      end)
      local co = coroutine.wrap(function() return g:raycast({ 0, 2, 0 }, DOWN, 5) end)
      assert_hit({ 0, 0.5, 0 }, { 0, 1, 0 }, 1.5, co())
    end)

    it("raises when its function yields across the query", function()
      local g = ik.ground.custom(function() coroutine.yield() end)
      local co = coroutine.create(function() return g:raycast({ 0, 2, 0 }, DOWN, 5) end)
      local ok, err = coroutine.resume(co)
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("yield", 1, true), tostring(err))
    end)
  end)

  describe("objects", function()
    it("have __name, __tostring, and a read-only kind", function()
      local g = ik.ground.plane()
      assert.are.equal("ik.ground", getmetatable(g).__name)
      assert.are.equal("ik.ground(plane)", tostring(g))
      assert.are.equal("ik.ground(heightfield, 3 columns x 2 rows)",
        tostring(ik.ground.heightfield({ cell_size = 1, columns = 3, rows = 2,
                                         heights = { 0, 0, 0, 0, 0, 0 } })))
      assert.are.equal("ik.ground(mesh, 1 triangles)",
        tostring(ik.ground.mesh({ vertices = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 } },
                                  triangles = { 1, 2, 3 } })))
      assert.are.equal("ik.ground(custom)", tostring(ik.ground.custom(function() end)))
      assert(h.raises(function() g.kind = "mesh" end))
      assert.are.equal("plane", g.kind)
    end)

    it("close: later use raises", function()
      local g = ik.ground.plane()
      g:close()
      assert.are.equal("ik.ground (closed)", tostring(g))
      assert(h.raises(function() g:close() end, "attempt to use a closed ik.ground"))
      assert(h.raises(function() local _ = g:raycast({ 0, 1, 0 }, DOWN, 2) end,
        "attempt to use a closed ik.ground"))
      assert(h.raises(function() local _ = g.kind end, "attempt to use a closed ik.ground"))
    end)

    it("a closed custom ground lets go of its function", function()
      local weak = setmetatable({}, { __mode = "v" })
      local function make()
        local fn = function() return false end
        weak.fn = fn
        return ik.ground.custom(fn)
      end
      local g = make()
      collectgarbage()
      collectgarbage()
      assert.is_not_nil(weak.fn) -- kept by the ground
      assert.is_false((g:raycast({ 0, 1, 0 }, DOWN, 2)))
      g:close()
      collectgarbage()
      collectgarbage()
      assert.is_nil(weak.fn)
    end)

    it("close with <close> (Lua 5.4)", function()
      if _VERSION ~= "Lua 5.4" then return end
      local g = ik.ground.plane()
      assert(load("local g = ...; do local x <close> = g end"))(g)
      assert.are.equal("ik.ground (closed)", tostring(g))
    end)
  end)

  describe("errors", function()
    local function plane(spec) return function() local _ = ik.ground.plane(spec) end end
    local function hf(spec) return function() local _ = ik.ground.heightfield(spec) end end
    local function mesh(spec) return function() local _ = ik.ground.mesh(spec) end end
    local function hf_spec(changes)
      local spec = { origin = { 0, 0, 0 }, cell_size = 1, columns = 4, rows = 10, heights = {} }
      for i = 1, 40 do spec.heights[i] = 0 end
      for k, v in pairs(changes) do spec[k] = v end
      return spec
    end
    local TRI = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 }, { 1, 0, 1 } }

    it("plane: bad fields", function()
      assert(h.raises(plane({ normal = { 0, 0, 0 } }),
        "ik.ground.plane: bad field 'normal' (non-zero vec3 expected"))
      assert(h.raises(plane({ normal = "up" }),
        "ik.ground.plane: bad field 'normal' (vec3 expected, got string)"))
      assert(h.raises(plane({ point = { 0, 0 / 0, 0 } }),
        "ik.ground.plane: bad field 'point' (finite vec3 expected"))
      assert(h.raises(plane({ pont = { 0, 0, 0 } }),
        "ik.ground.plane: no field 'pont' (fields: point, normal)"))
      assert(h.raises(plane(5), "bad argument #1", "(table expected, got number)"))
    end)

    it("heightfield: the count of heights, with both numbers", function()
      local spec = hf_spec({})
      spec.heights[40] = nil
      assert(h.raises(hf(spec), "ik.ground.heightfield: bad field 'heights' (40 numbers expected, got 39)"))
      spec.heights[40], spec.heights[41] = 0, 0
      assert(h.raises(hf(spec), "ik.ground.heightfield: bad field 'heights' (40 numbers expected, got 41)"))
    end)

    it("heightfield: bad heights, named by index", function()
      local spec = hf_spec({})
      spec.heights[7] = "high"
      assert(h.raises(hf(spec),
        "ik.ground.heightfield: bad field 'heights' (number expected at index 7, got string)"))
      spec.heights[7] = 0 / 0
      assert(h.raises(hf(spec),
        "ik.ground.heightfield: bad field 'heights' (finite number expected at index 7, got nan)"))
      spec.heights[7] = -math.huge
      assert(h.raises(hf(spec), "(finite number expected at index 7, got -inf)"))
      assert(h.raises(hf(hf_spec({ heights = 3 })),
        "ik.ground.heightfield: bad field 'heights' (table expected, got 3)"))
    end)

    it("heightfield: bad grid", function()
      assert(h.raises(hf(hf_spec({ cell_size = 0 })),
        "ik.ground.heightfield: bad field 'cell_size' (positive number expected, got 0)"))
      assert(h.raises(hf(hf_spec({ cell_size = -1 })),
        "bad field 'cell_size' (positive number expected, got -1)"))
      assert(h.raises(hf(hf_spec({ cell_size = 0 / 0 })),
        "bad field 'cell_size' (positive number expected, got nan)"))
      assert(h.raises(hf(hf_spec({ cell_size = false })),
        "bad field 'cell_size' (positive number expected, got boolean)"))
      assert(h.raises(hf(hf_spec({ columns = 1 })),
        "ik.ground.heightfield: bad field 'columns' (integer >= 2 expected, got 1)"))
      assert(h.raises(hf(hf_spec({ columns = 2.5 })), "bad field 'columns' (integer >= 2 expected, got 2.5)"))
      assert(h.raises(hf(hf_spec({ rows = "ten" })), "bad field 'rows' (integer >= 2 expected, got string)"))
      assert(h.raises(hf(hf_spec({ origin = { 0, 0 } })), "bad field 'origin' (vec3 expected, got table)"))
      assert(h.raises(hf(hf_spec({ size = 3 })), "ik.ground.heightfield: no field 'size'"))
      assert(h.raises(function() local _ = ik.ground.heightfield() end,
        "bad argument #1", "(table expected, got no value)"))
      local spec = hf_spec({})
      spec.cell_size = nil
      assert(h.raises(hf(spec), "bad field 'cell_size' (positive number expected, got nil)"))
    end)

    it("mesh: bad vertices", function()
      assert(h.raises(mesh({ triangles = { 1, 2, 3 } }),
        "ik.ground.mesh: bad field 'vertices' (table expected, got nil)"))
      assert(h.raises(mesh({ vertices = { { 0, 0, 0 }, { 1, 0, 0 } }, triangles = { 1, 2, 3 } }),
        "ik.ground.mesh: bad field 'vertices' (at least 3 vertices expected, got 2)"))
      assert(h.raises(mesh({ vertices = { { 0, 0, 0 }, { 1, 0, 0 }, "v" }, triangles = { 1, 2, 3 } }),
        "ik.ground.mesh: bad field 'vertices' (vec3 expected at index 3, got string)"))
      assert(h.raises(mesh({ vertices = { { 0, 0, 0 }, { 1, 0 / 0, 0 }, { 0, 0, 1 } },
                             triangles = { 1, 2, 3 } }),
        "ik.ground.mesh: bad field 'vertices' (finite vec3 expected at index 2"))
    end)

    it("mesh: bad triangles, naming the index and the triangle", function()
      assert(h.raises(mesh({ vertices = TRI, triangles = { { 1, 2, 3 }, { 2, 5, 4 } } }),
        "ik.ground.mesh: bad field 'triangles' (vertex index 5 out of range 1..4, in triangle 2)"))
      assert(h.raises(mesh({ vertices = TRI, triangles = { 1, 2, 3, 2, 4, 0 } }),
        "ik.ground.mesh: bad field 'triangles' (vertex index 0 out of range 1..4, in triangle 2)"))
      assert(h.raises(mesh({ vertices = TRI, triangles = { { 1, 2, 3.5 } } }),
        "ik.ground.mesh: bad field 'triangles' (integer vertex index expected in triangle 1, got 3.5)"))
      assert(h.raises(mesh({ vertices = TRI, triangles = { 1, 2, 3, 4 } }),
        "ik.ground.mesh: bad field 'triangles' (a multiple of 3 vertex indices expected, got 4)"))
      assert(h.raises(mesh({ vertices = TRI, triangles = { { 1, 2 } } }),
        "ik.ground.mesh: bad field 'triangles' (3 vertex indices expected in triangle 1, got 2)"))
      assert(h.raises(mesh({ vertices = TRI, triangles = { { 1, 2, 3 }, 4 } }),
        "ik.ground.mesh: bad field 'triangles' ({i, j, k} expected at index 2, got number)"))
      assert(h.raises(mesh({ vertices = TRI, triangles = {} }),
        "ik.ground.mesh: bad field 'triangles' (at least 1 triangle expected, got 0)"))
      assert(h.raises(mesh({ vertices = TRI, triangles = { "abc" } }),
        "ik.ground.mesh: bad field 'triangles' ({i, j, k} or vertex index expected at index 1, got string)"))
      assert(h.raises(mesh({ vertices = TRI }),
        "ik.ground.mesh: bad field 'triangles' (table expected, got nil)"))
    end)

    it("custom: a function is needed", function()
      assert(h.raises(function() local _ = ik.ground.custom({}) end,
        "bad argument #1", "(function expected, got table)"))
    end)

    it("raycast: bad arguments, counted as Lua counts them for a method", function()
      local g = ik.ground.plane()
      assert(h.raises(function() local _ = g:raycast({ 0, 1, 0 }, { 0, 0, 0 }, 5) end,
        "bad argument #2 to 'raycast' (non-zero vec3 expected)"))
      assert(h.raises(function() local _ = g:raycast({ 0, 1, 0 }, "down", 5) end,
        "bad argument #2 to 'raycast' (vec3 expected, got string)"))
      assert(h.raises(function() local _ = g:raycast({ 0, 0 / 0, 0 }, DOWN, 5) end,
        "bad argument #1 to 'raycast' (finite vec3 expected"))
      assert(h.raises(function() local _ = g:raycast({ 0, 1, 0 }, DOWN, -1) end,
        "bad argument #3 to 'raycast' (non-negative number expected, got -1)"))
      assert(h.raises(function() local _ = g:raycast({ 0, 1, 0 }, DOWN, 0 / 0) end,
        "bad argument #3 to 'raycast' (finite number expected, got nan)"))
      assert(h.raises(function() local _ = g:raycast({ 0, 1, 0 }, DOWN) end,
        "bad argument #3 to 'raycast' (number expected, got no value)"))
      assert(h.raises(function() local _ = g.raycast(ik.vec3(), { 0, 1, 0 }, DOWN, 1) end,
        "bad argument #1 to 'raycast' (ik.ground expected"))
    end)
  end)
end)
