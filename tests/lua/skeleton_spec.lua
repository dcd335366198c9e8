-- ik.skeleton and ik.bone: construction in any order, forward kinematics worked out by
-- hand, the setters (children follow rigidly), reset, the bone handles and their fields,
-- every error message (the stable part, found plain, so the same checks hold on Lua 5.4,
-- 5.1 and LuaJIT), closing, and what keeps a skeleton alive.
local ik = require("ik")
local h = require("spec_helper")

local S = math.sqrt(0.5)
local RZ90 = { 0, 0, S, S } -- +X to +Y
local RY90 = { 0, S, 0, S } -- +Z to +X, +X to -Z
local RX90 = { S, 0, 0, S } -- +Y to +Z

local CLOSED = "attempt to use a closed ik.skeleton"
local CLOSED_BONE = "attempt to use a bone of a closed ik.skeleton"

local xyz, xyzw = h.xyz, h.xyzw

-- The arm every FK check works on, parents first. By hand, with E = Rz90 * Ry90 =
-- quat(-0.5, 0.5, 0.5, 0.5) (x -> -z, y -> -x, z -> y):
--   shoulder (0, 1.5, 0), Rz90
--   elbow    (0, 1.5, 0) + Rz90 (0.3, 0, 0) = (0, 1.8, 0), E
--   hand     (0, 1.8, 0) + E (0.25, 0, 0)  = (0, 1.8, -0.25), E
--   tip      (0, 1.8, -0.25) + E (0, 0.1, 0) = (-0.1, 1.8, -0.25), E
-- (Ry90 * Rz90, the wrong order, would put the hand at (0, 2.05, 0).)
local ARM = {
  { name = "shoulder", position = { 0, 1.5, 0 }, rotation = RZ90 },
  { name = "elbow", parent = "shoulder", position = { 0.3, 0, 0 }, rotation = RY90 },
  { name = "hand", parent = "elbow", position = { 0.25, 0, 0 } },
  { name = "tip", parent = "hand", position = { 0, 0.1, 0 } },
}
local E = { -0.5, 0.5, 0.5, 0.5 }
local ARM_WS = {
  shoulder = { { 0, 1.5, 0 }, RZ90 },
  elbow = { { 0, 1.8, 0 }, E },
  hand = { { 0, 1.8, -0.25 }, E },
  tip = { { -0.1, 1.8, -0.25 }, E },
}

local function arm() return ik.skeleton(ARM) end

-- Every bone's world transform by name, exactly as read.
local function pose(sk)
  local t = {}
  for _, b in ipairs(sk:bones()) do
    t[b.name] = { xyz(b:get_position()), xyzw(b:get_rotation()), xyz(b:get_local_position()),
      xyzw(b:get_local_rotation()) }
  end
  return t
end

local assert_world = h.assert_world

-- The shuffled arm: children before parents, the root third.
local SHUFFLED = { ARM[4], ARM[3], ARM[1], ARM[2] }

describe("ik.skeleton", function()
  describe("constructor", function()
    it("takes bones parents first, indexed in the order given", function()
      local sk = arm()
      assert.are.equal("userdata", type(sk))
      assert.are.equal(4, #sk)
      for i, spec in ipairs(ARM) do
        local b = sk:bone(i)
        assert.are.equal(spec.name, b.name)
        assert.are.equal(i, b.index)
        assert.are.equal(spec.parent, b.parent and b.parent.name)
      end
      assert.is_nil(sk:bone(1).parent)
    end)

    it("takes bones in any order, still indexed in the order given", function()
      local sk = ik.skeleton(SHUFFLED)
      assert.are.equal(4, #sk)
      local names = {}
      for i = 1, #sk do names[i] = sk:bone(i).name end
      assert.are.same({ "tip", "hand", "shoulder", "elbow" }, names)
      for i, spec in ipairs(SHUFFLED) do
        assert.are.equal(i, sk:bone(spec.name).index)
        assert.are.equal(spec.parent, sk:bone(i).parent and sk:bone(i).parent.name)
      end
      assert.is_true(rawequal(sk:bone(2), sk:bone(1).parent))
      assert.is_true(rawequal(sk:bone(4), sk:bone(2).parent))
      assert.is_true(rawequal(sk:bone(3), sk:bone(4).parent))
    end)

    it("gives the same pose whatever the order", function()
      local a, b = pose(arm()), pose(ik.skeleton(SHUFFLED))
      assert.are.same(a, b)
      for name, ws in pairs(ARM_WS) do
        assert(h.vec_near(b[name][1], ws[1]))
        assert(h.quat_near(b[name][2], ws[2]))
      end
    end)

    it("takes a long chain given leaf first", function()
      local specs = {}
      local n = 300
      for i = 1, n do -- bone i hangs from bone i + 1, one unit further along x
        specs[i] = { name = "b" .. i, parent = i < n and "b" .. (i + 1) or nil, position = { 1, 0, 0 } }
      end
      local sk = ik.skeleton(specs)
      assert.are.equal(n, #sk)
      for i = 1, n, 37 do
        assert.are.equal("b" .. i, sk:bone(i).name)
        assert.are.same({ n - i + 1, 0, 0 }, xyz(sk:bone(i):get_position()))
      end
      assert.is_nil(sk:bone(n).parent)
    end)

    it("takes several roots", function()
      local sk = ik.skeleton{
        { name = "l", position = { -1, 0, 0 } },
        { name = "lc", parent = "l", position = { 0, 1, 0 } },
        { name = "r", position = { 1, 0, 0 } },
        { name = "rc", parent = "r", position = { 0, 2, 0 } },
      }
      assert.is_nil(sk:bone("l").parent)
      assert.is_nil(sk:bone("r").parent)
      assert.are.same({ -1, 1, 0 }, xyz(sk:bone("lc"):get_position()))
      assert.are.same({ 1, 2, 0 }, xyz(sk:bone("rc"):get_position()))
    end)

    it("defaults to the origin and the identity, relative to the parent", function()
      local sk = ik.skeleton{ { name = "root" }, { name = "child", parent = "root" } }
      for _, b in ipairs(sk:bones()) do
        assert.are.same({ 0, 0, 0 }, xyz(b:get_position()))
        assert.are.same({ 0, 0, 0, 1 }, xyzw(b:get_rotation()))
        assert.are.same({ 0, 0, 0 }, xyz(b:get_local_position()))
        assert.are.same({ 0, 0, 0, 1 }, xyzw(b:get_local_rotation()))
      end
    end)

    it("takes any vec3-like position and quat-like rotation, normalising the rotation", function()
      local sk = ik.skeleton{
        { name = "a", position = ik.vec3(1, 2, 3), rotation = ik.quat(0, 0, S, S) },
        { name = "b", parent = "a", position = { x = 1, y = 0, z = 0 }, rotation = { 0, 0, 2, 2 } },
        { name = "c", parent = "b", rotation = { x = 0, y = 0, z = 0, w = 5 } },
      }
      assert.are.same({ 1, 2, 3 }, xyz(sk:bone("a"):get_position()))
      assert(h.vec_near(sk:bone("b"):get_position(), { 1, 3, 3 }))
      assert(h.quat_near(sk:bone("b"):get_local_rotation(), RZ90))
      assert(h.quat_near(sk:bone("b"):get_rotation(), { 0, 0, 1, 0 }))
      assert.are.same({ 0, 0, 0, 1 }, xyzw(sk:bone("c"):get_local_rotation()))
    end)

    it("copies the specs", function()
      local specs = { { name = "a", position = { 1, 2, 3 } }, { name = "b", parent = "a" } }
      local sk = ik.skeleton(specs)
      specs[1].position[1] = 100
      specs[1].name = "z"
      specs[2].parent = nil
      assert.are.equal("a", sk:bone(1).name)
      assert.are.same({ 1, 2, 3 }, xyz(sk:bone("b"):get_position()))
      assert.is_true(rawequal(sk:bone("a"), sk:bone("b").parent))
    end)
  end)

  describe("forward kinematics", function()
    it("puts a known arm where the hand computation says", function()
      local sk = arm()
      for name, ws in pairs(ARM_WS) do assert_world(sk:bone(name), ws[1], ws[2]) end
    end)

    it("turns a bone about its own position with set_rotation; children follow", function()
      local sk = arm()
      sk:bone("shoulder"):set_rotation(ik.quat())
      -- elbow (0.3, 1.5, 0) Ry90; hand + Ry90 (0.25, 0, 0); tip + Ry90 (0, 0.1, 0)
      assert_world(sk:bone("shoulder"), { 0, 1.5, 0 }, { 0, 0, 0, 1 })
      assert_world(sk:bone("elbow"), { 0.3, 1.5, 0 }, RY90)
      assert_world(sk:bone("hand"), { 0.3, 1.5, -0.25 }, RY90)
      assert_world(sk:bone("tip"), { 0.3, 1.6, -0.25 }, RY90)
    end)

    it("set_rotation on a child takes a world rotation", function()
      local sk = arm()
      local elbow = sk:bone("elbow")
      elbow:set_rotation(RX90)
      -- local = Rz90^-1 * Rx90 = (0.5, -0.5, -0.5, 0.5); the elbow stays where it was
      assert_world(elbow, { 0, 1.8, 0 }, RX90)
      assert(h.quat_near(elbow:get_local_rotation(), { 0.5, -0.5, -0.5, 0.5 }))
      assert_world(sk:bone("hand"), { 0.25, 1.8, 0 }, RX90)
      assert_world(sk:bone("tip"), { 0.25, 1.8, 0.1 }, RX90)
      assert_world(sk:bone("shoulder"), { 0, 1.5, 0 }, RZ90)
    end)

    it("set_position moves the bone and carries its children, turning nothing", function()
      local sk = arm()
      sk:bone("shoulder"):set_position({ 1, 2, 3 })
      assert_world(sk:bone("shoulder"), { 1, 2, 3 }, RZ90)
      assert_world(sk:bone("elbow"), { 1, 2.3, 3 }, E)
      assert_world(sk:bone("hand"), { 1, 2.3, 2.75 }, E)
      assert_world(sk:bone("tip"), { 0.9, 2.3, 2.75 }, E)
    end)

    it("set_position on a child takes a world position and leaves the parent", function()
      local sk = arm()
      local hand = sk:bone("hand")
      hand:set_position(ik.vec3(1, 1, 1))
      -- local = E^-1 ((1, 1, 1) - (0, 1.8, 0)) = (-1, -1, -0.8)
      assert_world(hand, { 1, 1, 1 }, E)
      assert(h.vec_near(hand:get_local_position(), { -1, -1, -0.8 }))
      assert_world(sk:bone("elbow"), { 0, 1.8, 0 }, E)
      assert_world(sk:bone("tip"), { 0.9, 1, 1 }, E)
    end)

    it("children follow rigidly: their local transforms do not change", function()
      local sk = arm()
      local before = pose(sk)
      local q = ik.quat.axis_angle({ 1, 2, 3 }, 0.7)
      sk:bone("shoulder"):set_rotation(q)
      sk:bone("shoulder"):set_position({ -2, 0.5, 4 })
      local after = pose(sk)
      for _, name in ipairs({ "elbow", "hand", "tip" }) do
        assert.are.same(before[name][3], after[name][3])
        assert.are.same(before[name][4], after[name][4])
      end
      -- each child sits at parent + parent rotation * local, turned by parent * local
      for _, name in ipairs({ "elbow", "hand", "tip" }) do
        local b = sk:bone(name)
        local p = b.parent
        assert(h.vec_near(b:get_position(), p:get_position() + p:get_rotation() * b:get_local_position()))
        assert(h.quat_near(b:get_rotation(), p:get_rotation() * b:get_local_rotation()))
      end
      assert(h.quat_near(sk:bone("shoulder"):get_rotation(), q))
      assert(h.near((sk:bone("tip"):get_position() - sk:bone("shoulder"):get_position()):length(),
        (ik.vec3(-0.1, 1.8, -0.25) - ik.vec3(0, 1.5, 0)):length()))
    end)

    it("leaves other branches alone", function()
      local sk = ik.skeleton{
        { name = "root", position = { 0, 1, 0 } },
        { name = "left", parent = "root", position = { -1, 0, 0 } },
        { name = "left_hand", parent = "left", position = { -1, 0, 0 } },
        { name = "right", parent = "root", position = { 1, 0, 0 } },
        { name = "right_hand", parent = "right", position = { 1, 0, 0 } },
      }
      local before = pose(sk)
      sk:bone("left"):set_rotation(RZ90)
      sk:bone("left"):set_position({ -1, 5, 0 })
      local after = pose(sk)
      assert.are.same(before.root, after.root)
      assert.are.same(before.right, after.right)
      assert.are.same(before.right_hand, after.right_hand)
      assert(h.vec_near(after.left_hand[1], { -1, 4, 0 }))
    end)

    it("reads the local transform, as given", function()
      local sk = arm()
      local elbow = sk:bone("elbow")
      assert(h.vec_near(elbow:get_local_position(), { 0.3, 0, 0 }))
      assert(h.quat_near(elbow:get_local_rotation(), RY90))
      assert.are.equal(getmetatable(ik.vec3()), getmetatable(elbow:get_local_position()))
      assert.are.equal(getmetatable(ik.quat()), getmetatable(elbow:get_local_rotation()))
      assert.are.same(xyz(sk:bone("shoulder"):get_position()), xyz(sk:bone("shoulder"):get_local_position()))
    end)

    it("sets the local position; children follow", function()
      local sk = arm()
      local elbow = sk:bone("elbow")
      elbow:set_local_position({ 0.5, 0, 0 })
      assert.are.same({ 0.5, 0, 0 }, xyz(elbow:get_local_position()))
      assert_world(elbow, { 0, 2, 0 }, E)
      assert_world(sk:bone("hand"), { 0, 2, -0.25 }, E)
    end)

    it("sets the local rotation, normalised; children follow", function()
      local sk = arm()
      local elbow = sk:bone("elbow")
      elbow:set_local_rotation({ 0, 0, 0, 3 })
      assert.are.same({ 0, 0, 0, 1 }, xyzw(elbow:get_local_rotation()))
      assert_world(elbow, { 0, 1.8, 0 }, RZ90)
      assert_world(sk:bone("hand"), { 0, 2.05, 0 }, RZ90)
      assert_world(sk:bone("tip"), { -0.1, 2.05, 0 }, RZ90)
      elbow:set_local_rotation(ik.quat(0, 2, 0, 2))
      assert(h.quat_near(elbow:get_local_rotation(), RY90))
      assert_world(sk:bone("hand"), ARM_WS.hand[1], E)
    end)

    it("set_rotation normalises too", function()
      local sk = arm()
      sk:bone("hand"):set_rotation({ 0, 0, 0, 10 })
      assert(h.quat_near(sk:bone("hand"):get_rotation(), { 0, 0, 0, 1 }))
      assert_world(sk:bone("tip"), { 0, 1.9, -0.25 }, { 0, 0, 0, 1 })
    end)

    it("reads as new ik.vec3 and ik.quat values", function()
      local hand = arm():bone("hand")
      local a, b = hand:get_position(), hand:get_position()
      assert.are.equal(getmetatable(ik.vec3()), getmetatable(a))
      assert.is_true(a == b)
      assert.is_false(rawequal(a, b))
      assert.are.equal(getmetatable(ik.quat()), getmetatable(hand:get_rotation()))
    end)
  end)

  describe("reset", function()
    it("brings every bone back to rest exactly", function()
      local sk = arm()
      local rest = pose(sk)
      sk:bone("shoulder"):set_rotation(ik.quat.axis_angle({ 1, 2, 3 }, 0.7))
      sk:bone("elbow"):set_local_position({ 4, 5, 6 })
      sk:bone("hand"):set_position({ -1, 2, -3 })
      sk:bone("tip"):set_local_rotation(ik.quat.euler(0.3, -1.2, 2.2))
      assert.are_not.same(rest, pose(sk))
      sk:reset()
      assert.are.same(rest, pose(sk))
    end)

    it("keeps the skeleton usable", function()
      local sk = arm()
      sk:reset()
      sk:bone("shoulder"):set_position({ 0, 0, 0 })
      assert_world(sk:bone("elbow"), { 0, 0.3, 0 }, E)
      sk:reset()
      assert_world(sk:bone("elbow"), ARM_WS.elbow[1], E)
    end)
  end)

  describe("bones", function()
    it("are cached: the same handle each time, by name or index", function()
      local sk = arm()
      assert.is_true(rawequal(sk:bone("elbow"), sk:bone("elbow")))
      assert.is_true(rawequal(sk:bone("elbow"), sk:bone(2)))
      assert.is_true(rawequal(sk:bone("shoulder"), sk:bone("elbow").parent))
      assert.is_true(rawequal(sk:bone("shoulder"), sk:bone("elbow").parent))
      local all = sk:bones()
      for i = 1, #sk do assert.is_true(rawequal(sk:bone(i), all[i])) end
    end)

    it("take integral float indices", function()
      local sk = arm()
      assert.is_true(rawequal(sk:bone(2), sk:bone(2.0)))
    end)

    it("are listed in the order given by sk:bones(), in a new table each time", function()
      local sk = ik.skeleton(SHUFFLED)
      local all = sk:bones()
      assert.are.equal(4, #all)
      for i, spec in ipairs(SHUFFLED) do assert.are.equal(spec.name, all[i].name) end
      assert.is_false(rawequal(all, sk:bones()))
      all[1] = nil
      assert.are.equal("tip", sk:bones()[1].name)
    end)

    it("have name, parent and index fields", function()
      local sk = arm()
      local hand = sk:bone("hand")
      assert.are.equal("hand", hand.name)
      assert.are.equal(3, hand.index)
      assert.are.equal("elbow", hand.parent.name)
      assert.are.equal("shoulder", hand.parent.parent.name)
      assert.is_nil(hand.parent.parent.parent)
      assert.is_nil(hand.foo)
      assert.are.equal("function", type(hand.get_position))
      assert.are.equal("function", type(hand.set_local_rotation))
    end)

    it("have read-only fields", function()
      local sk = arm()
      local hand = sk:bone("hand")
      local msg = "ik.bone: fields are read-only"
      assert(h.raises(function() hand.name = "x" end, msg))
      assert(h.raises(function() hand.parent = sk:bone("tip") end, msg))
      assert(h.raises(function() hand.index = 1 end, msg))
      assert(h.raises(function() hand.foo = 1 end, msg))
      assert(h.raises(function() hand.get_position = print end, msg))
      assert.are.equal("hand", hand.name)
      assert.are.equal("elbow", hand.parent.name)
      assert.are.equal(3, hand.index)
      assert.is_nil(hand.foo)
      assert.are.equal("function", type(hand.get_position))
    end)

    it("belong to their own skeleton", function()
      local a, b = arm(), arm()
      assert.is_false(rawequal(a:bone("hand"), b:bone("hand")))
      a:bone("shoulder"):set_position({ 9, 9, 9 })
      assert_world(b:bone("hand"), ARM_WS.hand[1], E)
    end)
  end)

  describe("tostring", function()
    it("shows the bone count and the bone name", function()
      local sk = arm()
      assert.are.equal("ik.skeleton(4 bones)", tostring(sk))
      assert.are.equal("ik.skeleton(1 bone)", tostring(ik.skeleton{ { name = "x" } }))
      assert.are.equal("ik.bone('elbow')", tostring(sk:bone("elbow")))
    end)
  end)

  describe("errors", function()
    it("needs a table of at least one bone", function()
      assert(h.raises(function() ik.skeleton() end, "bad argument #1", "(table expected, got no value)"))
      assert(h.raises(function() ik.skeleton("arm") end, "(table expected, got string)"))
      assert(h.raises(function() ik.skeleton{} end, "ik.skeleton: at least one bone expected, got none"))
    end)

    it("needs each bone to be a table with a name", function()
      assert(h.raises(function() ik.skeleton{ { name = "a" }, 5 } end,
        "ik.skeleton: bone #2: table expected, got number"))
      assert(h.raises(function() ik.skeleton{ { position = { 0, 0, 0 } } } end,
        "ik.skeleton: bone #1: bad field 'name' (string expected, got nil)"))
      assert(h.raises(function() ik.skeleton{ { name = "a" }, { name = 7 } } end,
        "ik.skeleton: bone #2: bad field 'name' (string expected, got number)"))
    end)

    it("refuses a duplicate name", function()
      local specs = { { name = "a" }, { name = "b", parent = "a" }, { name = "a" } }
      assert(h.raises(function() ik.skeleton(specs) end, "ik.skeleton: duplicate bone name 'a'"))
    end)

    it("refuses an unknown parent, or one that is no name", function()
      assert(h.raises(function() ik.skeleton{ { name = "a" }, { name = "b", parent = "c" } } end,
        "ik.skeleton: bone 'b' has unknown parent 'c'"))
      assert(h.raises(function() ik.skeleton{ { name = "a" }, { name = "b", parent = 1 } } end,
        "ik.skeleton: bone 'b': bad field 'parent' (bone name expected, got number)"))
    end)

    it("refuses a parent cycle, naming a bone on it", function()
      assert(h.raises(function() ik.skeleton{ { name = "a", parent = "a" } } end,
        "ik.skeleton: bone 'a' is its own ancestor (a parent cycle)"))
      assert(h.raises(function()
        ik.skeleton{ { name = "root" }, { name = "a", parent = "b" }, { name = "b", parent = "a" } }
      end, "is its own ancestor (a parent cycle)"))
      -- the first bone hangs from the cycle without being on it
      local ok, err = pcall(ik.skeleton, {
        { name = "leaf", parent = "x" }, { name = "x", parent = "y" }, { name = "y", parent = "z" },
        { name = "z", parent = "x" },
      })
      assert.is_false(ok)
      assert.is_truthy(err:find("(a parent cycle)", 1, true))
      assert.is_nil(err:find("'leaf'", 1, true))
    end)

    it("refuses a bad position, naming the bone", function()
      assert(h.raises(function() ik.skeleton{ { name = "a", position = "up" } } end,
        "ik.skeleton: bone 'a': bad field 'position' (vec3 expected, got string)"))
      assert(h.raises(function() ik.skeleton{ { name = "a" }, { name = "b", position = { 1, 2 } } } end,
        "ik.skeleton: bone 'b': bad field 'position' (vec3 expected, got table)"))
      assert(h.raises(function() ik.skeleton{ { name = "a", position = ik.quat() } } end,
        "ik.skeleton: bone 'a': bad field 'position' (vec3 expected, got ik.quat)"))
      assert(h.raises(function() ik.skeleton{ { name = "a", position = { 0, 0 / 0, 0 } } } end,
        "ik.skeleton: bone 'a': bad field 'position' (finite vec3 expected"))
      assert(h.raises(function() ik.skeleton{ { name = "a", position = { math.huge, 0, 0 } } } end,
        "ik.skeleton: bone 'a': bad field 'position' (finite vec3 expected"))
      assert(h.raises(function() ik.skeleton{ { name = "a", position = { 1e300, 0, 0 } } } end,
        "ik.skeleton: bone 'a': bad field 'position' (finite vec3 expected"))
    end)

    it("refuses a bad rotation, naming the bone", function()
      local function refuses(rotation, got)
        assert(h.raises(function() ik.skeleton{ { name = "a" }, { name = "b", rotation = rotation } } end,
          "ik.skeleton: bone 'b': bad field 'rotation' (non-zero finite quat expected, got " .. got .. ")"))
      end
      refuses("q", "string")
      refuses(ik.vec3(1, 2, 3), "ik.vec3")
      refuses({ 0, 0, 1 }, "table")
      refuses({ 0, 0, 0, 0 }, "table") -- zero
      refuses({ 0, 0, 0, 1e-200 }, "table") -- too short to normalise
      refuses({ 0 / 0, 0, 0, 1 }, "table")
      refuses({ 0, 0, 0, -math.huge }, "table")
      refuses({ 1e300, 0, 0, 1 }, "table") -- its squared length would overflow
    end)

    it("sk:bone refuses a bad index or an unknown name", function()
      local sk = arm()
      local function refuses(value, fragment)
        assert(h.raises(function() local _ = sk:bone(value) end, "bad argument #1 to 'bone'", fragment))
      end
      refuses(0, "(index out of range: 1..4)")
      refuses(5, "(index out of range: 1..4)")
      refuses(-1, "(index out of range: 1..4)")
      refuses(1.5, "(index out of range: 1..4)")
      refuses(0 / 0, "(index out of range: 1..4)")
      refuses(math.huge, "(index out of range: 1..4)")
      refuses("knee", "(no bone named 'knee')")
      refuses("1", "(no bone named '1')")
      refuses(nil, "(bone name or index expected, got nil)")
      refuses({}, "(bone name or index expected, got table)")
      refuses(sk:bone(1), "(bone name or index expected, got ik.bone)")
    end)

    it("methods refuse what is not theirs", function()
      local sk = arm()
      assert(h.raises(function() sk.bone(ik.vec3(), 1) end, "ik.skeleton expected"))
      assert(h.raises(function() sk:bone(1).get_position(sk) end, "ik.bone expected"))
    end)

    it("a refused setter leaves the pose unchanged", function()
      local sk = arm()
      local elbow = sk:bone("elbow")
      local refuses = h.setter_refuser(elbow, function() return pose(sk) end)
      local NOT_FINITE_V = "(finite vec3 expected, got NaN, inf or a huge component)"
      local NOT_FINITE_Q = "(finite quat expected, got NaN, inf or a huge component)"
      for _, method in ipairs({ "set_position", "set_local_position" }) do
        refuses(method, { 0 / 0, 0, 0 }, NOT_FINITE_V)
        refuses(method, { 0, math.huge, 0 }, NOT_FINITE_V)
        refuses(method, { 0, 0, 1e300 }, NOT_FINITE_V)
        refuses(method, nil, "(vec3 expected, got nil)")
        refuses(method, "up", "(vec3 expected, got string)")
        refuses(method, ik.quat(), "(vec3 expected, got ik.quat)")
      end
      for _, method in ipairs({ "set_rotation", "set_local_rotation" }) do
        refuses(method, { 0 / 0, 0, 0, 1 }, NOT_FINITE_Q)
        refuses(method, { 0, 0, 0, math.huge }, NOT_FINITE_Q)
        refuses(method, { 0, 0, 0, 0 }, "(non-zero quat expected)")
        refuses(method, { 0, 0, 0, 1e-200 }, "(non-zero quat expected)")
        refuses(method, nil, "(quat expected, got nil)")
        refuses(method, ik.vec3(), "(quat expected, got ik.vec3)")
      end
    end)

    it("refuses a world position whose local position would be too large", function()
      local M = ik.real == "float" and 1e15 or 1e140
      local sk = ik.skeleton{ { name = "a", position = { -0.75 * M, 0, 0 } }, { name = "b", parent = "a" } }
      local before = pose(sk)
      assert(h.raises(function() sk:bone("b"):set_position({ 0.75 * M, 0, 0 }) end,
        "bad argument #1 to 'set_position' (value too large)"))
      assert.are.same(before, pose(sk))
    end)
  end)

  describe("close", function()
    local METHODS = { bone = { 1 }, bones = {}, reset = {}, close = {} }
    local BONE_METHODS = {
      get_position = {}, get_rotation = {}, set_position = { { 0, 0, 0 } }, set_rotation = { { 0, 0, 0, 1 } },
      get_local_position = {}, get_local_rotation = {}, set_local_position = { { 0, 0, 0 } },
      set_local_rotation = { { 0, 0, 0, 1 } },
    }
    local unpack = table.unpack or unpack -- luacheck: ignore 143

    it("makes the skeleton and its bones raise, and still print", function()
      local sk = arm()
      local hand = sk:bone("hand")
      local saved = {}
      for name in pairs(METHODS) do saved[name] = sk[name] end
      local bone_saved = {}
      for name in pairs(BONE_METHODS) do bone_saved[name] = hand[name] end
      sk:close()
      assert.are.equal("ik.skeleton (closed)", tostring(sk))
      assert.are.equal("ik.bone('hand')", tostring(hand))
      for name, args in pairs(METHODS) do
        if name ~= "close" then -- it is also __gc and __close, which never raise
          assert(h.raises(function() saved[name](sk, unpack(args)) end, CLOSED))
        end
        assert(h.raises(function() return sk[name] end, CLOSED))
      end
      assert(h.raises(function() sk:close() end, CLOSED))
      assert(h.raises(function() return #sk end, CLOSED))
      for name, args in pairs(BONE_METHODS) do
        assert(h.raises(function() bone_saved[name](hand, unpack(args)) end, CLOSED_BONE))
      end
      assert(h.raises(function() return hand.name end, CLOSED_BONE))
      assert(h.raises(function() return hand.parent end, CLOSED_BONE))
      assert(h.raises(function() return hand.get_position end, CLOSED_BONE))
      assert(h.raises(function() hand.name = "x" end, CLOSED_BONE))
    end)

    it("refuses a bone of a closed skeleton as a node parent", function()
      local sk = arm()
      local hand = sk:bone("hand")
      sk:close()
      assert(h.raises(function() ik.node{ parent = hand } end, CLOSED_BONE))
      local n = ik.node()
      assert(h.raises(function() n:set_parent(hand) end, CLOSED_BONE))
      assert.is_nil(n.parent)
    end)

    it("closes only that skeleton", function()
      local a, b = arm(), arm()
      a:close()
      assert.are.equal(4, #b)
      assert_world(b:bone("hand"), ARM_WS.hand[1], E)
    end)

    it("refuses what is not a skeleton", function()
      local close = arm().close
      assert(h.raises(function() close(ik.vec3()) end, "ik.skeleton expected"))
    end)

    if _VERSION >= "Lua 5.4" then
      -- Loaded from a string: 5.1 and LuaJIT cannot parse <close>.
      local scoped = assert(load([[
        local ik, specs, out = ...
        do
          local sk <close> = ik.skeleton(specs)
          out.sk, out.hand = sk, sk:bone("hand")
        end
      ]]))

      it("is called by a to-be-closed variable", function()
        local out = {}
        scoped(ik, ARM, out)
        assert.are.equal("ik.skeleton (closed)", tostring(out.sk))
        assert(h.raises(function() return out.hand:get_position() end, CLOSED_BONE))
      end)
    else
      pending("to-be-closed variables need Lua 5.4")
    end
  end)

  describe("lifetime", function()
    -- In a function of its own, so that no register of the test holds the skeleton.
    local function bone_of_dropped_skeleton(weak)
      local sk = arm()
      weak.sk = sk
      return sk:bone("hand")
    end

    it("a bone keeps its skeleton alive", function()
      local weak = setmetatable({}, { __mode = "v" })
      local hand = bone_of_dropped_skeleton(weak)
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_not_nil(weak.sk)
      assert.are.equal("hand", hand.name)
      assert.are.equal("elbow", hand.parent.name)
      assert_world(hand, ARM_WS.hand[1], E)
      hand.parent:set_rotation(RX90)
      assert_world(hand, { 0.25, 1.8, 0 }, RX90)
      assert.is_true(rawequal(weak.sk:bone("hand"), hand))
    end)

    it("a skeleton goes once nothing holds it or its bones", function()
      local weak = setmetatable({}, { __mode = "v" })
      local hand = bone_of_dropped_skeleton(weak)
      weak.hand = hand
      hand = nil -- luacheck: ignore 311
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_nil(weak.hand)
      assert.is_nil(weak.sk)
    end)
  end)
end)
