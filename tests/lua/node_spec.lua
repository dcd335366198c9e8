-- ik.node: free transforms that may hang from a bone or another node. Defaults, world
-- transforms worked out by hand, following a moving parent, reparenting, cycles, the
-- setters, every error message (the stable part, found plain, so the same checks hold
-- on Lua 5.4, 5.1 and LuaJIT), closing, what a node keeps alive, and tostring.
local ik = require("ik")
local h = require("spec_helper")

local S = math.sqrt(0.5)
local RZ90 = { 0, 0, S, S } -- +X to +Y
local RZ180 = { 0, 0, 1, 0 }
local RY90 = { 0, S, 0, S }
local RX90 = { S, 0, 0, S } -- +Y to +Z
-- Rz90 * Ry90: x -> -z, y -> -x, z -> y.
local E = { -0.5, 0.5, 0.5, 0.5 }

local CLOSED = "attempt to use a closed ik.node"

local xyz, xyzw = h.xyz, h.xyzw

-- The arm of skeleton_spec: the hand sits at (0, 1.8, -0.25), turned by E.
local function arm()
  return ik.skeleton{
    { name = "shoulder", position = { 0, 1.5, 0 }, rotation = RZ90 },
    { name = "elbow", parent = "shoulder", position = { 0.3, 0, 0 }, rotation = RY90 },
    { name = "hand", parent = "elbow", position = { 0.25, 0, 0 } },
  }
end

local assert_world, assert_local = h.assert_world, h.assert_local

-- Everything a node reads, exactly.
local function state(n)
  return { xyz(n:get_position()), xyzw(n:get_rotation()), xyz(n:get_local_position()),
    xyzw(n:get_local_rotation()), n.parent }
end

describe("ik.node", function()
  describe("constructor", function()
    it("defaults to the origin, the identity and no parent", function()
      for _, n in ipairs({ ik.node(), ik.node({}), ik.node(nil) }) do
        assert.are.equal("userdata", type(n))
        assert.are.same({ 0, 0, 0 }, xyz(n:get_position()))
        assert.are.same({ 0, 0, 0, 1 }, xyzw(n:get_rotation()))
        assert.are.same({ 0, 0, 0 }, xyz(n:get_local_position()))
        assert.are.same({ 0, 0, 0, 1 }, xyzw(n:get_local_rotation()))
        assert.is_nil(n.parent)
      end
    end)

    it("takes a position and a rotation, world ones without a parent", function()
      local n = ik.node{ position = { 1, 2, 3 }, rotation = RZ90 }
      assert.are.same({ 1, 2, 3 }, xyz(n:get_position()))
      assert.are.same({ 1, 2, 3 }, xyz(n:get_local_position()))
      assert(h.quat_near(n:get_rotation(), RZ90))
      assert(h.quat_near(n:get_local_rotation(), RZ90))
    end)

    it("takes any vec3-like position and quat-like rotation, normalising the rotation", function()
      local n = ik.node{ position = ik.vec3(4, 5, 6), rotation = { 0, 0, 3, 3 } }
      assert.are.same({ 4, 5, 6 }, xyz(n:get_position()))
      assert(h.quat_near(n:get_local_rotation(), RZ90))
      n = ik.node{ position = { x = -1, y = 0, z = 0.5 }, rotation = ik.quat(0, 0, 0, 1) }
      assert.are.same({ -1, 0, 0.5 }, xyz(n:get_position()))
      n = ik.node{ rotation = { x = 0, y = 0, z = 0, w = 2 } }
      assert.are.same({ 0, 0, 0, 1 }, xyzw(n:get_rotation()))
    end)

    it("copies the spec", function()
      local spec = { position = { 1, 2, 3 }, rotation = { 0, 0, 0, 1 } }
      local n = ik.node(spec)
      spec.position[1] = 100
      spec.rotation[3] = 1
      assert.are.same({ 1, 2, 3 }, xyz(n:get_position()))
      assert.are.same({ 0, 0, 0, 1 }, xyzw(n:get_rotation()))
    end)

    it("makes independent nodes", function()
      local a, b = ik.node(), ik.node()
      assert.is_false(rawequal(a, b))
      a:set_position({ 1, 1, 1 })
      assert.are.same({ 0, 0, 0 }, xyz(b:get_position()))
    end)
  end)

  describe("hanging from a bone", function()
    it("sits at the bone's transform times its own", function()
      local sk = arm()
      local n = ik.node{ parent = sk:bone("hand"), position = { 0, 0, 0.5 }, rotation = RX90 }
      -- (0, 1.8, -0.25) + E (0, 0, 0.5) = (0, 2.3, -0.25); E * Rx90 = Ry90 (x -> x -> -z,
      -- y -> z -> y, z -> -y -> x)
      assert_world(n, { 0, 2.3, -0.25 }, RY90)
      assert_local(n, { 0, 0, 0.5 }, RX90)
      assert.is_true(rawequal(sk:bone("hand"), n.parent))
    end)

    it("follows the bone, and the bone's ancestors", function()
      local sk = arm()
      local n = ik.node{ parent = sk:bone("hand"), position = { 0, 0, 0.5 } }
      sk:bone("shoulder"):set_position({ 1, 0, 0 })
      assert_world(n, { 1, 0.8, -0.25 }, E)
      sk:bone("shoulder"):set_rotation(ik.quat())
      -- elbow (1.3, 0, 0) Ry90; hand (1.3, 0, -0.25); node + Ry90 (0, 0, 0.5) = (1.8, 0, -0.25)
      assert_world(n, { 1.8, 0, -0.25 }, RY90)
      sk:bone("hand"):set_local_rotation(RX90)
      -- hand Ry90 * Rx90; (0, 0, 0.5) -> Rx90 (0, -0.5, 0) -> Ry90 (0, -0.5, 0)
      assert_world(n, { 1.3, -0.5, -0.25 })
      sk:reset()
      assert_world(n, { 0, 2.3, -0.25 }, E)
      assert_local(n, { 0, 0, 0.5 }, { 0, 0, 0, 1 })
    end)

    it("ignores bones it does not hang from", function()
      local sk = ik.skeleton{ { name = "a" }, { name = "b", position = { 5, 0, 0 } } }
      local n = ik.node{ parent = sk:bone("a"), position = { 1, 0, 0 } }
      sk:bone("b"):set_position({ 9, 9, 9 })
      sk:bone("b"):set_rotation(RZ90)
      assert.are.same({ 1, 0, 0 }, xyz(n:get_position()))
    end)
  end)

  describe("hanging from a node", function()
    it("sits at the parent's transform times its own, down a chain", function()
      local a = ik.node{ position = { 1, 0, 0 }, rotation = RZ90 }
      local b = ik.node{ parent = a, position = { 1, 0, 0 } }
      local c = ik.node{ parent = b, position = { 0, 1, 0 }, rotation = RZ90 }
      assert_world(b, { 1, 1, 0 }, RZ90)
      assert_world(c, { 0, 1, 0 }, RZ180)
      assert.is_true(rawequal(a, b.parent))
      assert.is_true(rawequal(b, c.parent))
    end)

    it("follows its parents", function()
      local a = ik.node{ position = { 1, 0, 0 }, rotation = RZ90 }
      local b = ik.node{ parent = a, position = { 1, 0, 0 } }
      local c = ik.node{ parent = b, position = { 0, 1, 0 }, rotation = RZ90 }
      assert_world(c, { 0, 1, 0 }, RZ180) -- read once: the caches are filled
      a:set_position({ 0, 0, 5 })
      assert_world(c, { -1, 1, 5 }, RZ180)
      a:set_rotation(ik.quat())
      assert_world(b, { 1, 0, 5 }, { 0, 0, 0, 1 })
      assert_world(c, { 1, 1, 5 }, RZ90)
      b:set_local_position({ 0, 0, 0 })
      assert_world(c, { 0, 1, 5 }, RZ90)
    end)

    it("follows a bone through a node", function()
      local sk = arm()
      local a = ik.node{ parent = sk:bone("shoulder"), position = { 1, 0, 0 } }
      local b = ik.node{ parent = a, position = { 1, 0, 0 } }
      assert_world(b, { 0, 3.5, 0 }, RZ90)
      sk:bone("shoulder"):set_rotation(ik.quat())
      assert_world(b, { 2, 1.5, 0 }, { 0, 0, 0, 1 })
      sk:bone("shoulder"):set_position({ 0, 0, 0 })
      assert_world(b, { 2, 0, 0 })
    end)
  end)

  describe("set_parent", function()
    it("keeps the local transform, so the node jumps to the new parent", function()
      local sk = arm()
      local n = ik.node{ position = { 1, 0, 0 } }
      n:set_parent(sk:bone("shoulder"))
      assert.is_true(rawequal(sk:bone("shoulder"), n.parent))
      assert_local(n, { 1, 0, 0 }, { 0, 0, 0, 1 })
      assert_world(n, { 0, 2.5, 0 }, RZ90)
      local p = ik.node{ position = { 0, 0, -3 } }
      n:set_parent(p)
      assert.is_true(rawequal(p, n.parent))
      assert_world(n, { 1, 0, -3 }, { 0, 0, 0, 1 })
      n:set_parent(sk:bone("hand"))
      assert_world(n, { 0, 1.8, -1.25 }, E)
    end)

    it("detaches with nil or no argument: local becomes world", function()
      local sk = arm()
      local n = ik.node{ parent = sk:bone("hand"), position = { 1, 2, 3 } }
      n:set_parent(nil)
      assert.is_nil(n.parent)
      assert.are.same({ 1, 2, 3 }, xyz(n:get_position()))
      n:set_parent(sk:bone("hand"))
      n:set_parent()
      assert.is_nil(n.parent)
      assert.are.same({ 1, 2, 3 }, xyz(n:get_position()))
      sk:bone("shoulder"):set_position({ 7, 7, 7 })
      assert.are.same({ 1, 2, 3 }, xyz(n:get_position()))
    end)

    it("keeps the node in place when the world transform is set again", function()
      local sk = arm()
      local n = ik.node{ position = { 1, 2, 3 }, rotation = RX90 }
      local p, q = n:get_position(), n:get_rotation()
      n:set_parent(sk:bone("hand"))
      n:set_position(p)
      n:set_rotation(q)
      assert_world(n, { 1, 2, 3 }, RX90)
      sk:bone("hand"):set_local_position({ 0.25, 1, 0 }) -- the hand moves by E (0, 1, 0)
      assert_world(n, { 0, 2, 3 }, RX90)
    end)

    it("refuses a cycle and changes nothing", function()
      local a = ik.node{ position = { 1, 0, 0 } }
      local b = ik.node{ parent = a, position = { 0, 1, 0 } }
      local c = ik.node{ parent = b, position = { 0, 0, 1 } }
      local msg = "(a node cannot hang from itself or its own descendant)"
      local before = { state(a), state(b), state(c) }
      assert(h.raises(function() a:set_parent(a) end, "bad argument #1 to 'set_parent'", msg))
      assert(h.raises(function() a:set_parent(b) end, "bad argument #1 to 'set_parent'", msg))
      assert(h.raises(function() a:set_parent(c) end, msg))
      assert(h.raises(function() b:set_parent(c) end, msg))
      assert.are.same(before, { state(a), state(b), state(c) })
      assert.is_nil(a.parent)
      -- what is no cycle is allowed
      c:set_parent(a)
      assert.is_true(rawequal(a, c.parent))
      b:set_parent(c)
      assert.is_true(rawequal(c, b.parent))
      assert_world(b, { 1, 1, 1 })
    end)

    it("refuses what is no parent", function()
      local n = ik.node{ position = { 1, 2, 3 } }
      local function refuses(value, got)
        assert(h.raises(function() n:set_parent(value) end,
          "bad argument #1 to 'set_parent' (ik.bone, ik.node or nil expected, got " .. got .. ")"))
        assert.is_nil(n.parent)
        assert.are.same({ 1, 2, 3 }, xyz(n:get_position()))
      end
      refuses(5, "number")
      refuses("hand", "string")
      refuses({}, "table")
      refuses(ik.vec3(), "ik.vec3")
      refuses(arm(), "ik.skeleton")
    end)

    it("refuses a closed node", function()
      local n, p = ik.node(), ik.node{ position = { 1, 2, 3 } }
      p:close()
      assert(h.raises(function() n:set_parent(p) end, CLOSED))
      assert.is_nil(n.parent)
    end)
  end)

  describe("fields", function()
    it("parent is the bone or node given, or nil", function()
      local sk = arm()
      local p = ik.node()
      assert.is_nil(ik.node().parent)
      assert.is_true(rawequal(p, ik.node{ parent = p }.parent))
      assert.is_true(rawequal(sk:bone("elbow"), ik.node{ parent = sk:bone("elbow") }.parent))
    end)

    it("are read-only", function()
      local p = ik.node()
      local n = ik.node{ parent = p }
      local msg = "ik.node: fields are read-only"
      assert(h.raises(function() n.parent = nil end, msg))
      assert(h.raises(function() n.parent = ik.node() end, msg))
      assert(h.raises(function() n.position = { 1, 2, 3 } end, msg))
      assert(h.raises(function() n.get_position = print end, msg))
      assert.is_true(rawequal(p, n.parent))
      assert.are.same({ 0, 0, 0 }, xyz(n:get_position()))
      assert.are.equal("function", type(n.get_position))
    end)

    it("has methods and nothing else", function()
      local n = ik.node()
      assert.is_nil(n.foo)
      assert.is_nil(n.position)
      for _, name in ipairs({ "get_position", "get_rotation", "set_position", "set_rotation",
        "get_local_position", "get_local_rotation", "set_local_position", "set_local_rotation",
        "set_parent", "close" }) do
        assert.are.equal("function", type(n[name]))
      end
    end)
  end)

  describe("setters", function()
    it("set the world transform without a parent as the local one", function()
      local n = ik.node()
      n:set_position({ 1, 2, 3 })
      n:set_rotation({ 0, 0, 2, 2 })
      assert_local(n, { 1, 2, 3 }, RZ90)
      assert_world(n, { 1, 2, 3 }, RZ90)
    end)

    it("set the world transform relative to a turned parent", function()
      local p = ik.node{ position = { 1, 0, 0 }, rotation = RZ90 }
      local n = ik.node{ parent = p }
      n:set_position({ 1, 2, 0 })
      -- local = Rz90^-1 ((1, 2, 0) - (1, 0, 0)) = (2, 0, 0)
      assert_world(n, { 1, 2, 0 })
      assert_local(n, { 2, 0, 0 })
      n:set_rotation(RX90)
      -- local = Rz90^-1 * Rx90 = (0.5, -0.5, -0.5, 0.5)
      assert_world(n, { 1, 2, 0 }, RX90)
      assert_local(n, { 2, 0, 0 }, { 0.5, -0.5, -0.5, 0.5 })
      p:set_position({ 0, 0, 0 }) -- the node keeps its place relative to the parent
      assert_world(n, { 0, 2, 0 }, RX90)
    end)

    it("set the world transform relative to a bone", function()
      local sk = arm()
      local n = ik.node{ parent = sk:bone("hand") }
      n:set_position({ 1, 1, 1 })
      -- local = E^-1 ((1, 1, 1) - (0, 1.8, -0.25)) = E^-1 (1, -0.8, 1.25) = (-1.25, -1, -0.8)
      assert_world(n, { 1, 1, 1 }, E)
      assert_local(n, { -1.25, -1, -0.8 })
      n:set_rotation(ik.quat())
      assert_world(n, { 1, 1, 1 }, { 0, 0, 0, 1 })
      assert_local(n, { -1.25, -1, -0.8 }, { 0.5, -0.5, -0.5, 0.5 })
    end)

    it("set the local transform", function()
      local p = ik.node{ position = { 1, 0, 0 }, rotation = RZ90 }
      local n = ik.node{ parent = p }
      n:set_local_position(ik.vec3(1, 0, 0))
      n:set_local_rotation({ 0, 0, 5, 5 })
      assert_local(n, { 1, 0, 0 }, RZ90)
      assert_world(n, { 1, 1, 0 }, RZ180)
    end)

    it("refuse bad values and change nothing", function()
      local p = ik.node{ position = { 1, 0, 0 }, rotation = RZ90 }
      local n = ik.node{ parent = p, position = { 1, 2, 3 }, rotation = RX90 }
      local refuses = h.setter_refuser(n, function() return state(n) end)
      local NOT_FINITE_V = "(finite vec3 expected, got NaN, inf or a huge component)"
      local NOT_FINITE_Q = "(finite quat expected, got NaN, inf or a huge component)"
      for _, method in ipairs({ "set_position", "set_local_position" }) do
        refuses(method, { 0 / 0, 0, 0 }, NOT_FINITE_V)
        refuses(method, { 0, -math.huge, 0 }, NOT_FINITE_V)
        refuses(method, { 0, 0, 1e300 }, NOT_FINITE_V)
        refuses(method, nil, "(vec3 expected, got nil)")
        refuses(method, "up", "(vec3 expected, got string)")
      end
      for _, method in ipairs({ "set_rotation", "set_local_rotation" }) do
        refuses(method, { 0, 0 / 0, 0, 1 }, NOT_FINITE_Q)
        refuses(method, { 0, 0, 0, 0 }, "(non-zero quat expected)")
        refuses(method, { 1e-200, 0, 0, 0 }, "(non-zero quat expected)")
        refuses(method, nil, "(quat expected, got nil)")
        refuses(method, ik.vec3(), "(quat expected, got ik.vec3)")
      end
    end)

    it("refuse a world position whose local position would be too large", function()
      local M = ik.real == "float" and 1e15 or 1e140
      local n = ik.node{ parent = ik.node{ position = { -0.75 * M, 0, 0 } } }
      local before = state(n)
      assert(h.raises(function() n:set_position({ 0.75 * M, 0, 0 }) end,
        "bad argument #1 to 'set_position' (value too large)"))
      assert.are.same(before, state(n))
    end)
  end)

  describe("constructor errors", function()
    it("needs a table or nothing", function()
      assert(h.raises(function() ik.node("x") end, "bad argument #1", "(table expected, got string)"))
      assert(h.raises(function() ik.node(5) end, "(table expected, got number)"))
    end)

    it("refuses a bad position", function()
      assert(h.raises(function() ik.node{ position = "up" } end,
        "ik.node: bad field 'position' (vec3 expected, got string)"))
      assert(h.raises(function() ik.node{ position = ik.quat() } end,
        "ik.node: bad field 'position' (vec3 expected, got ik.quat)"))
      assert(h.raises(function() ik.node{ position = { 0, 0 / 0, 0 } } end,
        "ik.node: bad field 'position' (finite vec3 expected"))
      assert(h.raises(function() ik.node{ position = { 1e300, 0, 0 } } end,
        "ik.node: bad field 'position' (finite vec3 expected"))
    end)

    it("refuses a bad rotation", function()
      local function refuses(rotation, got)
        assert(h.raises(function() ik.node{ rotation = rotation } end,
          "ik.node: bad field 'rotation' (non-zero finite quat expected, got " .. got .. ")"))
      end
      refuses("q", "string")
      refuses(7, "7")
      refuses(ik.vec3(), "ik.vec3")
      refuses({ 0, 0, 0, 0 }, "table")
      refuses({ 0, 0, 1e-200, 0 }, "table")
      refuses({ 0, 0, 0 / 0, 1 }, "table")
      refuses({ math.huge, 0, 0, 1 }, "table")
      refuses({ 1e300, 0, 0, 1 }, "table") -- its squared length would overflow
    end)

    it("refuses a bad parent", function()
      local function refuses(parent, got)
        assert(h.raises(function() ik.node{ parent = parent } end,
          "ik.node: bad field 'parent' (ik.bone or ik.node expected, got " .. got .. ")"))
      end
      refuses(5, "5")
      refuses("hand", "string")
      refuses({}, "table")
      refuses(ik.vec3(), "ik.vec3")
      refuses(arm(), "ik.skeleton")
      local p = ik.node()
      p:close()
      assert(h.raises(function() ik.node{ parent = p } end, CLOSED))
      local sk = arm()
      local hand = sk:bone("hand")
      sk:close()
      assert(h.raises(function() ik.node{ parent = hand } end,
        "attempt to use a bone of a closed ik.skeleton"))
    end)
  end)

  describe("close", function()
    local METHODS = {
      get_position = {}, get_rotation = {}, set_position = { { 0, 0, 0 } }, set_rotation = { { 0, 0, 0, 1 } },
      get_local_position = {}, get_local_rotation = {}, set_local_position = { { 0, 0, 0 } },
      set_local_rotation = { { 0, 0, 0, 1 } }, set_parent = { nil }, close = {},
    }
    local unpack = table.unpack or unpack -- luacheck: ignore 143

    it("makes every later use raise, and still prints", function()
      local n = ik.node{ parent = ik.node(), position = { 1, 2, 3 } }
      local saved = {}
      for name in pairs(METHODS) do saved[name] = n[name] end
      n:close()
      assert.are.equal("ik.node (closed)", tostring(n))
      for name, args in pairs(METHODS) do
        if name ~= "close" then -- it is also __gc and __close, which never raise
          assert(h.raises(function() saved[name](n, unpack(args)) end, CLOSED))
        end
        assert(h.raises(function() return n[name] end, CLOSED))
      end
      assert(h.raises(function() n:close() end, CLOSED))
      assert(h.raises(function() return n.parent end, CLOSED))
      assert(h.raises(function() n.parent = nil end, CLOSED))
    end)

    it("closes only that node", function()
      local a, b = ik.node{ position = { 1, 2, 3 } }, ik.node{ position = { 1, 2, 3 } }
      a:close()
      assert.are.same({ 1, 2, 3 }, xyz(b:get_position()))
    end)

    it("refuses what is not a node", function()
      local close = ik.node().close
      assert(h.raises(function() close(ik.vec3()) end, "ik.node expected"))
    end)

    if _VERSION >= "Lua 5.4" then
      -- Loaded from a string: 5.1 and LuaJIT cannot parse <close>.
      local scoped = assert(load([[
        local ik, out = ...
        do
          local n <close> = ik.node{ position = { 1, 2, 3 } }
          out.node = n
          out.inside = tostring(n)
        end
      ]]))

      it("is called by a to-be-closed variable", function()
        local out = {}
        scoped(ik, out)
        assert.are.equal("ik.node(1, 2, 3)", out.inside)
        assert.are.equal("ik.node (closed)", tostring(out.node))
      end)
    else
      pending("to-be-closed variables need Lua 5.4")
    end
  end)

  describe("lifetime", function()
    -- In functions of their own, so that no register of the test holds the parents.
    local function node_on_dropped_skeleton(weak)
      local sk = arm()
      weak.sk, weak.hand = sk, sk:bone("hand")
      return ik.node{ parent = sk:bone("hand"), position = { 0, 0, 0.5 } }
    end

    local function node_on_dropped_node(weak)
      local p = ik.node{ position = { 1, 0, 0 }, rotation = RZ90 }
      weak.p = p
      return ik.node{ parent = p, position = { 1, 0, 0 } }
    end

    it("keeps its parent bone, and so its skeleton, alive", function()
      local weak = setmetatable({}, { __mode = "v" })
      local n = node_on_dropped_skeleton(weak)
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_not_nil(weak.sk)
      assert.is_not_nil(weak.hand)
      assert.is_true(rawequal(weak.hand, n.parent))
      assert_world(n, { 0, 2.3, -0.25 }, E)
      n.parent.parent.parent:set_position({ 0, 0, 0 }) -- the shoulder
      assert_world(n, { 0, 0.8, -0.25 }, E)
    end)

    it("keeps its parent node alive", function()
      local weak = setmetatable({}, { __mode = "v" })
      local n = node_on_dropped_node(weak)
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_not_nil(weak.p)
      assert.is_true(rawequal(weak.p, n.parent))
      assert_world(n, { 1, 1, 0 }, RZ90)
      n.parent:set_position({ 0, 0, 0 })
      assert_world(n, { 0, 1, 0 }, RZ90)
    end)

    it("lets its old parent go once detached", function()
      local weak = setmetatable({}, { __mode = "v" })
      local a, b = node_on_dropped_node(weak), node_on_dropped_skeleton(weak)
      a:set_parent(nil)
      b:set_parent(ik.node())
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_nil(weak.p)
      assert.is_nil(weak.hand)
      assert.is_nil(weak.sk)
      assert.are.same({ 1, 0, 0 }, xyz(a:get_position()))
      assert.are.same({ 0, 0, 0.5 }, xyz(b:get_position()))
    end)
  end)

  describe("tostring", function()
    it("shows the world position, the same on every Lua", function()
      assert.are.equal("ik.node(0, 0, 0)", tostring(ik.node()))
      assert.are.equal("ik.node(1, -2, 0.5)", tostring(ik.node{ position = { 1, -2, 0.5 } }))
      local sk = ik.skeleton{ { name = "root", position = { 1, 2, 0 } } }
      local n = ik.node{ parent = sk:bone("root"), position = { 0.5, 0, -0.25 } }
      assert.are.equal("ik.node(1.5, 2, -0.25)", tostring(n))
      sk:bone("root"):set_position({ 3, 0, 0 })
      assert.are.equal("ik.node(3.5, 0, -0.25)", tostring(n))
    end)

    it("says when the node is closed", function()
      local n = ik.node()
      n:close()
      assert.are.equal("ik.node (closed)", tostring(n))
    end)
  end)
end)
