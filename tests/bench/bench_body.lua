--- bench_body: µs per character per frame of ik.rigs.body, from Lua, driven by three
-- trackers (head and hands) and by six (also hips and feet), against the separate rigs
-- it replaces (ik.rigs.humanoid: root, chest, two legs with feet, pelvis, two arms and
-- look) on the same characters in the same run, and their ratio.
--
-- Each character is the built-in humanoid (23 bones, reset to its rest pose every frame)
-- on flat ground, its trackers playing the tracker paths of the specs
-- (tests/lua/body_paths.lua): stand, reach overhead, to the floor, behind, turn on the
-- spot, walk 2 m, crouch, look around, character i the i-th (round again from the
-- ninth), each played forth and back. The separate rigs follow the same trackers: root the hips
-- tracker (with three trackers a hips node kept under the head), chest the hands'
-- midpoint, look a point ahead of the head, the hands the hand trackers; they do not
-- step, crouch or turn the body.
--
-- Printed: median µs per character per frame (ik.clock, all characters of a frame timed
-- together), for each set-up, and the ratios. Timings are noisy on a busy machine: the
-- ratio, measured in one run, is the figure to compare.
--
--   scripts/env --build build/release lua5.4 tests/bench/bench_body.lua
--   scripts/env --lua jit --build build/release luajit tests/bench/bench_body.lua
-- Options: --quick (2 characters, 20 frames: the test suite's smoke run), --characters N,
-- --frames N. Exits 1 when the body misses its head target, 2 on bad options.

package.path = "tests/lua/?.lua;" .. package.path
local ik = require("ik")
local rigs = require("ik.rigs")
local paths_of = require("body_paths")

local ncharacters, nframes = 8, 600
do
  local i = 1
  while arg and arg[i] do
    local a, v = arg[i], tonumber(arg[i + 1])
    if a == "--quick" then
      ncharacters, nframes = 2, 20
    elseif (a == "--characters" or a == "--frames") and v and v >= 1 then
      if a == "--characters" then ncharacters = math.floor(v) else nframes = math.floor(v) end
      i = i + 1
    else
      io.stderr:write("usage: bench_body.lua [--quick] [--characters N] [--frames N]\n")
      os.exit(2)
    end
    i = i + 1
  end
end

local MAP = require("ik.demo.scene").humanoid_map
local DT = 1 / 60
local ground = ik.ground.plane()

-- A humanoid standing at the origin on the floor, and its trackers.
local function character()
  local sk = require("ik.demo.body_scene").new().skeletons.humanoid
  local nodes = { head = ik.node{}, left = ik.node{}, right = ik.node{}, hips = ik.node{},
                  left_foot = ik.node{}, right_foot = ik.node{}, chest = ik.node{}, look = ik.node{} }
  return sk, nodes
end

-- Sets the trackers at time t of character i's path: path i of the list, played forth
-- and back (so that it never jumps).
local function play(paths, i, t, nodes, body)
  local name = paths_of.names[(i - 1) % #paths_of.names + 1]
  local d = paths[name].duration
  local u = t % (2 * d)
  paths.apply(name, u < d and u or 2 * d - u, nodes)
  -- the extra trackers: hips under the head, feet where they stood, chest between the hands
  local h = ik.vec3(nodes.head:get_position())
  nodes.hips:set_position(h - body.up * (body.height * 0.45))
  nodes.hips:set_rotation(nodes.head:get_rotation())
  local l, r = ik.vec3(nodes.left:get_position()), ik.vec3(nodes.right:get_position())
  nodes.chest:set_position((l + r) * 0.5)
  nodes.look:set_position(h + body.forward * 2)
end

local function setup(kind)
  local list = {}
  for i = 1, ncharacters do
    local sk, nodes = character()
    local targets = { head = nodes.head, left_hand = nodes.left, right_hand = nodes.right }
    if kind == "six" then
      targets.hips = { target = nodes.hips, position_weight = 0.3, rotation_weight = 0.3 }
      targets.left_foot = { target = nodes.left_foot, position_weight = 0.2, rotation_weight = 0 }
      targets.right_foot = { target = nodes.right_foot, position_weight = 0.2, rotation_weight = 0 }
    end
    local body = rigs.body{ skeleton = sk, map = MAP, ground = ground, foot_offset = 0.08, reset_pose = true,
                            targets = targets }
    local c = { body = body, nodes = nodes, paths = paths_of.for_body(body), i = i }
    play(c.paths, i, 0, nodes, body)
    for _, side in ipairs({ "left", "right" }) do
      nodes[side .. "_foot"]:set_position(body.legs[side == "left" and 1 or 2].foot_bone:get_position())
    end
    if kind == "separate" then
      c.rig = rigs.humanoid{ skeleton = sk, map = MAP, ground = ground, foot_offset = 0.08, reset_pose = true,
                             targets = { root = nodes.hips, chest = nodes.chest, left_hand = nodes.left,
                                         right_hand = nodes.right, look = nodes.look } }
    else
      c.rig = body
    end
    list[i] = c
  end
  return list
end

local function median(t)
  table.sort(t)
  return t[math.floor(#t / 2) + 1]
end

-- The three set-ups run frame by frame in turn, so that a busy machine slows them alike.
local function run(kinds)
  local lists, times, worst = {}, {}, {}
  for k, kind in ipairs(kinds) do lists[k], times[k], worst[k] = setup(kind), {}, 0 end
  for f = 1, nframes do
    for k, kind in ipairs(kinds) do
      local list = lists[k]
      for _, c in ipairs(list) do play(c.paths, c.i, f * DT, c.nodes, c.body) end
      local t0 = ik.clock()
      for _, c in ipairs(list) do c.rig:update(DT) end
      times[k][f] = (ik.clock() - t0) / #list * 1e6
      if kind ~= "separate" then
        for _, c in ipairs(list) do
          local b = c.body.bones.head
          local d = (ik.vec3(b:get_position()) - ik.vec3(c.nodes.head:get_position())):length()
          if d > worst[k] then worst[k] = d end
        end
      end
    end
  end
  for k = 1, #kinds do times[k] = median(times[k]) end
  return times, worst
end

local interp = type(jit) == "table" and jit.version or _VERSION
print(string.format("bench_body (%s): %d characters, %d frames", interp, ncharacters, nframes))
local t, w = run({ "separate", "three", "six" })
local separate, three, six, w3, w6 = t[1], t[2], t[3], w[2], w[3]
local ROW = "  %-44s %9.1f us/character/frame  (x%.2f)"
print(string.format(ROW, "separate rigs (ik.rigs.humanoid, 7 rigs)", separate, 1))
print(string.format(ROW, "ik.rigs.body, 3 trackers", three, three / separate))
print(string.format(ROW, "ik.rigs.body, 6 trackers", six, six / separate))
print(string.format("  worst head miss: %.3g m (3 trackers), %.3g m (6)", w3, w6))
if w3 > 1e-3 then
  io.stderr:write("bench_body: the head missed its target\n")
  os.exit(1)
end
