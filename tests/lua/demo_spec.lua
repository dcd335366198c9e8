-- The built-in demo (lua/ik/demo): the scene keeps the contract ikrig reads, and its rig
-- scripts, run through ik.runtime the way ikrig runs them (scene:advance, then the
-- scripts, every frame at 60 Hz), make a humanoid that stands on the stairs and a robot
-- dog that walks its loop: no script errors, feet on the ground, the hand on its target,
-- planted feet that never slide, no NaN, nothing jumping from one frame to the next.
local ik = require("ik")
local runtime = require("ik.runtime")
local demo = require("ik.demo.scene")
local terrain = require("ik.demo.terrain")

local DT = 1 / 60
local double = ik.real == "double"
local SLIDE_TOL = double and 1e-6 or 1e-4 -- per frame, a planted walker foot
local GROUND_TOL = 1e-2 -- the humanoid's soles against the course's height
local MAX_JUMP = 0.05 -- m any bone or node may move in one frame
local atan2 = math.atan2 or math.atan -- 5.1 has atan2; 5.4's atan takes two arguments

-- The file of a module on package.path (Lua 5.1 has no package.searchpath).
local function find_module(name)
  local file = name:gsub("%.", "/")
  for template in package.path:gmatch("[^;]+") do
    local candidate = template:gsub("%?", file)
    local f = io.open(candidate, "rb")
    if f then
      f:close()
      return candidate
    end
  end
  return nil
end

local function finite(...)
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then return false end
  end
  return true
end

-- Every transform of the scene, named "skeleton.bone" or by its node name, in a fixed
-- order.
local function transforms(scene)
  local out, names = {}, {}
  for name in pairs(scene.skeletons) do names[#names + 1] = name end
  table.sort(names)
  for _, sk in ipairs(names) do
    for _, b in ipairs(scene.skeletons[sk]:bones()) do out[#out + 1] = { sk .. "." .. b.name, b } end
  end
  names = {}
  for name in pairs(scene.nodes) do names[#names + 1] = name end
  table.sort(names)
  for _, n in ipairs(names) do out[#out + 1] = { n, scene.nodes[n] } end
  return out
end

-- A fresh demo in a runtime, as ikrig makes it: the scene, scene.report, the scripts.
local function start(scripts)
  local scene = demo.new()
  local run = { scene = scene, events = {}, reports = {}, frame = 0 }
  scene.report = function(name, reached, distance, iterations, shapes) -- as the runtime hands them on
    local r = run.reports
    r[#r + 1] = { frame = run.frame, name = name, reached = reached, distance = distance,
                  iterations = iterations, shapes = shapes }
  end
  local paths = {}
  for i, module in ipairs(scripts or demo.scripts) do paths[i] = assert(find_module(module), module) end
  run.paths = paths
  run.rt = runtime.new{ scene = scene, scripts = paths, watch = false,
                        on_event = function(ev) run.events[#run.events + 1] = ev end }
  return run
end

local function step(run)
  run.frame = run.frame + 1
  run.scene:advance(DT)
  run.rt:update(DT)
end

-- How many steps a walker rig's legs have finished (its step_count(), from a copy of the
-- script's state: the rig lives in the script's own Lua state, its methods with it).
local function step_count(rig)
  local n = 0
  for _, leg in ipairs(rig.legs) do n = n + leg.steps end
  return n
end

-- A copy of the state of the script whose path ends with `file`.
local function state_of(run, file)
  for _, info in ipairs(run.rt:scripts()) do
    if info.path:sub(-#file) == file then return info.state end
  end
  return nil
end

local function problems(run)
  local out = {}
  for _, ev in ipairs(run.events) do
    if ev.kind ~= "load" and ev.kind ~= "reload" then
      out[#out + 1] = ev.kind .. ": " .. tostring(ev.message)
    end
  end
  for _, info in ipairs(run.rt:scripts()) do
    if info.status ~= "running" then out[#out + 1] = info.path .. " is " .. info.status end
  end
  return out
end

-- Runs the demo for `seconds` and measures what the specs check, frame by frame.
local function measure(seconds, scripts)
  local run = start(scripts)
  local scene = run.scene
  local all = transforms(scene)
  local s = { frames = 0, nonfinite = {}, max_jump = 0, jump_at = "", max_slide = 0, slides = 0,
              ground_error = 0, toes_error = 0, min_knee_ahead = math.huge, max_pelvis_drop = -math.huge,
              min_pelvis_drop = math.huge, chains = {}, walker_steps = 0, walker_off_course = 0,
              walker_ground_error = 0, walker_in_air_pairs = 0, walker_max_x = -math.huge,
              tail_excess = 0, tail_bend = 0, tail_apex_error = 0, shaped = {} }
  local prev = {}
  local hum = scene.skeletons.humanoid
  local foot_offset = scene.params.humanoid.foot_offset
  local rest_hips = ik.vec3(hum:bone("hips"):get_position())
  local wsk = scene.skeletons.walker
  local walker_prev = {}
  local frames = math.floor(seconds / DT + 0.5)
  for f = 1, frames do
    local first = #run.reports + 1
    step(run)
    s.frames = f

    -- chain reports: per name, count and reached
    for i = first, #run.reports do
      local r = run.reports[i]
      local c = s.chains[r.name] or { reports = 0, reached = 0, worst = 0 }
      s.chains[r.name] = c
      c.reports = c.reports + 1
      if r.reached then c.reached = c.reached + 1 end
      if type(r.distance) == "number" and r.distance > c.worst then c.worst = r.distance end
      if r.shapes then s.shaped[r.name] = (s.shaped[r.name] or 0) + 1 end
      -- the tail: each of its bones within its cone (as the chain reports it), and how far
      -- the cones let it bend at most
      if r.name == "tail" and r.shapes then
        local tail = scene.params.walker.tail
        if #r.shapes ~= #tail - 1 then s.tail_excess = math.huge end
        for _, k in ipairs(r.shapes) do
          local a = ik.vec3(scene.skeletons.walker:bone(tail[k.bone]):get_position())
          local b = ik.vec3(scene.skeletons.walker:bone(tail[k.bone + 1]):get_position())
          local dir = (b - a):normalized()
          local bend = atan2(dir:cross(k.direction):length(), dir:dot(k.direction))
          s.tail_apex_error = math.max(s.tail_apex_error, (k.apex - a):length())
          s.tail_excess = math.max(s.tail_excess, bend - k.angle)
          s.tail_bend = math.max(s.tail_bend, bend)
        end
      end
    end

    -- every transform: finite, and no jump
    for _, t in ipairs(all) do
      local p, q = t[2]:get_position(), t[2]:get_rotation()
      if not finite(p.x, p.y, p.z, q.x, q.y, q.z, q.w) then
        if #s.nonfinite < 5 then s.nonfinite[#s.nonfinite + 1] = ("frame %d: %s"):format(f, t[1]) end
      else
        local was = prev[t[1]]
        if was then
          local d = math.sqrt((p.x - was[1]) ^ 2 + (p.y - was[2]) ^ 2 + (p.z - was[3]) ^ 2)
          if d > s.max_jump then s.max_jump, s.jump_at = d, ("%s at frame %d"):format(t[1], f) end
        end
        prev[t[1]] = { p.x, p.y, p.z }
      end
    end

    -- the humanoid: soles on the ground, toes neither in it nor above it, knees ahead of
    -- the line from hip to ankle (it faces +X), hips lowered
    for _, side in ipairs({ "l", "r" }) do
      local ankle = ik.vec3(hum:bone(side .. "_foot"):get_position())
      local toes = ik.vec3(hum:bone(side .. "_toes"):get_position())
      local g = terrain.height(ankle.x, ankle.z)
      local e = g and math.abs(ankle.y - foot_offset - g) or math.huge
      if e > s.ground_error then s.ground_error = e end
      local gt = terrain.height(toes.x, toes.z)
      local te = gt and math.abs(toes.y - gt - 0.02) or math.huge -- the ball is 2 cm above the sole
      if te > s.toes_error then s.toes_error = te end
      local hip = ik.vec3(hum:bone(side .. "_upper_leg"):get_position())
      local knee = ik.vec3(hum:bone(side .. "_lower_leg"):get_position())
      local line = ankle - hip
      local k = (knee - hip):dot(line) / line:dot(line)
      local ahead = (knee - (hip + line * k)).x
      if ahead < s.min_knee_ahead then s.min_knee_ahead = ahead end
    end
    local drop = rest_hips.y - hum:bone("hips"):get_position().y
    if drop > s.max_pelvis_drop then s.max_pelvis_drop = drop end
    if drop < s.min_pelvis_drop then s.min_pelvis_drop = drop end

    -- the walker: planted feet still and on the ground, on the course, never two
    -- neighbours in the air
    local wstate = state_of(run, "walker.lua")
    local rig = wstate and wstate.rig
    if rig then
      local air = {}
      for i, leg in ipairs(rig.legs) do
        local p = ik.vec3(wsk:bone("foot_" .. leg.name):get_position())
        local was = walker_prev[i]
        if leg.planted then
          if was and was.planted and was.steps == leg.steps then
            local d = (p - was.p):length()
            if d > s.max_slide then s.max_slide = d end
            if d > SLIDE_TOL then s.slides = s.slides + 1 end
          end
          if p.x > s.walker_max_x then s.walker_max_x = p.x end
          local g = terrain.height(p.x, p.z)
          if not g then
            s.walker_off_course = s.walker_off_course + 1
          else
            local e = math.abs(p.y - scene.params.walker.foot_offset - g)
            if e > s.walker_ground_error then s.walker_ground_error = e end
          end
        else
          air[i] = true
        end
        walker_prev[i] = { p = p, planted = leg.planted, steps = leg.steps }
      end
      for i, leg in ipairs(rig.legs) do
        for _, nb in ipairs(leg.neighbours) do
          if air[i] and air[nb] then s.walker_in_air_pairs = s.walker_in_air_pairs + 1 end
        end
      end
      s.walker_steps = step_count(rig)
    end
  end
  s.problems = problems(run)
  s.run = run
  return s
end

describe("the built-in demo", function()
  describe("the scene module", function()
    it("keeps the scene contract", function()
      assert.is_function(demo.new)
      assert.is_table(demo.scripts)
      assert.is_true(#demo.scripts >= 1)
      for _, name in ipairs(demo.scripts) do
        assert.is_string(name)
        assert.is_truthy(find_module(name), "script module " .. name .. " not on package.path")
      end
      local scene = demo.new()
      assert.is_string(scene.name)
      assert.is_table(scene.skeletons)
      local bones = 0
      for _, sk in pairs(scene.skeletons) do
        local list = sk:bones()
        assert.is_true(#list > 0)
        local names = {}
        for _, b in ipairs(list) do
          assert.is_string(b.name)
          names[b.name] = true
          assert.is_truthy(b:get_position() and b:get_rotation())
        end
        for _, b in ipairs(list) do
          if b.parent ~= nil then assert.is_true(names[b.parent.name], b.name .. "'s parent") end
        end
        bones = bones + #list
      end
      assert.is_table(scene.nodes)
      for name, node in pairs(scene.nodes) do
        assert.is_string(name)
        assert.is_truthy(node:get_position() and node:get_rotation())
      end
      assert.is_function(scene.ground.raycast)
      for _, field in ipairs({ "targets", "poles" }) do
        assert.is_table(scene[field])
        for _, name in ipairs(scene[field]) do assert.is_truthy(scene.nodes[name], field .. ": " .. name) end
      end
      assert.is_table(scene.trails)
      assert.is_true(#scene.trails > 0)
      for _, t in ipairs(scene.trails) do
        local sk, bone = t:match("^([^.]+)%.(.+)$")
        if sk then
          local ok, found = pcall(function() return scene.skeletons[sk]:bone(bone) end)
          assert.is_truthy(ok and found, "trail " .. t)
        else
          assert.is_truthy(scene.nodes[t], "trail " .. t)
        end
      end
      assert.is_function(scene.advance)
      assert.is_nil(scene.report) -- the host adds it
    end)

    it("has a humanoid of about 20 bones and a four- or six-legged walker", function()
      local scene = demo.new()
      local hum = scene.skeletons.humanoid
      local n = #hum:bones()
      assert.is_true(n >= 18 and n <= 26, n .. " bones")
      for _, name in ipairs({ "hips", "spine", "chest", "neck", "head", "l_shoulder", "r_shoulder",
                              "l_upper_arm", "l_lower_arm", "l_hand", "r_upper_arm", "r_lower_arm", "r_hand",
                              "l_upper_leg", "l_lower_leg", "l_foot", "l_toes", "r_upper_leg",
                              "r_lower_leg", "r_foot", "r_toes" }) do
        assert.is_truthy(hum:bone(name), name)
      end
      local legs = #scene.params.walker.legs
      assert.is_true(legs == 4 or legs == 6)
    end)

    it("makes a fresh scene each time", function()
      local a, b = demo.new(), demo.new()
      a:advance(1)
      assert.are.equal(0, b.time)
      assert.are_not.equal(a.skeletons.walker, b.skeletons.walker)
      local pa = a.skeletons.walker:bone("body"):get_position()
      local pb = b.skeletons.walker:bone("body"):get_position()
      assert.is_true((pa - pb):length() > 0.01, "the first scene's walker did not move")
    end)

    it("stands on a course whose mesh answers rays as its height function says", function()
      local ground = terrain.ground()
      local down = ik.vec3(0, -1, 0)
      for i = 0, 400 do
        -- a fixed spread over the course, off the risers and the ledge face
        local x = terrain.X_START + 0.013 + (terrain.X_END - terrain.X_START - 0.03) * ((i * 0.618034) % 1)
        local z = terrain.Z_MIN + 0.01 + (terrain.Z_MAX - terrain.Z_MIN - 0.02) * ((i * 0.414214) % 1)
        local hit, point = ground:raycast(ik.vec3(x, 5, z), down, 10)
        assert.is_true(hit, ("no ground at %g, %g"):format(x, z))
        assert.is_true(math.abs(point.y - terrain.height(x, z)) < 1e-5, ("at %g, %g"):format(x, z))
      end
      -- the features are there: risers, a 20 degree slope, a ledge
      assert.are.equal(terrain.RISE, terrain.height(terrain.STAIRS_X + 0.01, 0))
      local nx, ny = terrain.normal(terrain.SLOPE_X + 0.5, 0)
      assert.is_true(math.abs(math.deg(math.atan(-nx / ny)) - 20) < 1e-9)
      local drop = terrain.height(terrain.LEDGE_X - 0.01, 0) - terrain.height(terrain.LEDGE_X + 0.01, 0)
      assert.is_true(drop > 1)
    end)
  end)

  describe("run through ik.runtime for 10 s", function()
    local cached
    local function result()
      cached = cached or measure(10)
      return cached
    end

    it("runs its scripts without an error", function()
      local s = result()
      assert.are.same({}, s.problems)
      assert.are.equal(2, #s.run.rt:scripts())
    end)

    it("reports every chain every frame", function()
      local s = result()
      for _, name in ipairs({ "right_arm", "left_leg", "right_leg", "look" }) do
        assert.are.equal(s.frames, s.chains[name] and s.chains[name].reports, name)
      end
      for _, leg in ipairs(s.run.scene.params.walker.legs) do
        assert.are.equal(s.frames, s.chains["leg_" .. leg.name].reports, leg.name)
      end
      assert.are.equal(s.frames, s.chains.tail and s.chains.tail.reports, "tail")
      -- only the tail comes with its chain, every frame
      assert.are.same({ tail = s.frames }, s.shaped)
    end)

    it("wags the robot's tail within its cones, bending them visibly", function()
      local s = result()
      assert.is_true(s.tail_apex_error < (double and 1e-9 or 1e-5),
                     "a cone " .. s.tail_apex_error .. " m off its joint")
      assert.is_true(s.tail_excess < (double and 1e-6 or 1e-3),
                     "a tail bone " .. s.tail_excess .. " rad outside its cone")
      assert.is_true(s.tail_bend > math.rad(15),
                     "the tail bends " .. math.deg(s.tail_bend) .. " degrees at most")
    end)

    it("keeps the humanoid's feet on the ground, one on a higher step, the hips lowered", function()
      local s = result()
      assert.is_true(s.ground_error < GROUND_TOL, "a sole " .. s.ground_error .. " m off the ground")
      assert.is_true(s.toes_error < GROUND_TOL, "toes " .. s.toes_error .. " m off the ground")
      local hum = s.run.scene.skeletons.humanoid
      local l, r = hum:bone("l_foot"):get_position(), hum:bone("r_foot"):get_position()
      assert.is_true(math.abs(l.y - r.y - terrain.RISE) < 1e-3, "the left foot is not a step above the right")
      -- the pelvis rig lowered the hips by the lower foot's deficit, all the time
      assert.is_true(s.min_pelvis_drop > 0.05, "hips lowered by " .. s.min_pelvis_drop)
      assert.is_true(s.max_pelvis_drop < 0.15, "hips lowered by " .. s.max_pelvis_drop)
    end)

    it("bends the humanoid's knees forward", function()
      local s = result()
      assert.is_true(s.min_knee_ahead > 0.01, "a knee " .. s.min_knee_ahead .. " m ahead of its leg's line")
    end)

    it("keeps the hand on the reach target most frames", function()
      local s = result()
      local arm = s.chains.right_arm
      local share = arm.reached / arm.reports
      -- measured: 100% of 600 frames (the target stays within reach)
      assert.is_true(share >= 0.95, ("reached %.1f%% of frames"):format(100 * share))
      local hand = s.run.scene.skeletons.humanoid:bone("r_hand"):get_position()
      local target = s.run.scene.nodes.reach_target:get_position()
      assert.is_true((hand - target):length() < 1e-3)
    end)

    it("looks at the look target", function()
      local s = result()
      local look = s.chains.look
      assert.is_true(look.reached / look.reports >= 0.95,
        ("looked at it %d of %d frames"):format(look.reached, look.reports))
    end)

    it("walks the robot without its planted feet sliding", function()
      local s = result()
      assert.is_true(s.walker_steps >= 20, "only " .. s.walker_steps .. " steps")
      assert.are.equal(0, s.slides, "planted feet slid (at most " .. s.max_slide .. " m in a frame)")
      assert.are.equal(0, s.walker_off_course)
      assert.is_true(s.walker_ground_error < 1e-3, "a planted foot " .. s.walker_ground_error .. " m off")
      assert.are.equal(0, s.walker_in_air_pairs)
      -- it climbed the stairs and most of the slope
      local body = s.run.scene.skeletons.walker:bone("body"):get_position()
      assert.is_true(body.x > terrain.SLOPE_X + 1 and body.y > terrain.LANDING_Y + 0.7,
        "the walker is at x " .. body.x)
    end)

    it("has no NaN", function()
      local s = result()
      assert.are.same({}, s.nonfinite)
    end)

    it("moves no bone more than 5 cm from one frame to the next", function()
      local s = result()
      assert.is_true(s.max_jump <= MAX_JUMP, ("%.3f m: %s"):format(s.max_jump, s.jump_at))
    end)
  end)

  it("walks the whole loop, down the stairs too, turning before the ledge", function()
    -- one lap and a little: the walker's script alone (the humanoid is checked above)
    local s = measure(45, { "ik.demo.walker" })
    assert.are.same({}, s.problems)
    assert.are.same({}, s.nonfinite)
    assert.are.equal(0, s.slides, "planted feet slid (at most " .. s.max_slide .. " m in a frame)")
    assert.are.equal(0, s.walker_off_course)
    assert.is_true(s.walker_ground_error < 1e-3)
    assert.are.equal(0, s.walker_in_air_pairs)
    assert.is_true(s.max_jump <= MAX_JUMP, ("%.3f m: %s"):format(s.max_jump, s.jump_at))
    assert.is_true(s.walker_max_x < terrain.LEDGE_X - 0.2, "a foot planted at x " .. s.walker_max_x)
    assert.is_true(s.walker_max_x > terrain.PLATEAU_X + 1, "it turned at x " .. s.walker_max_x)
    local x, z = demo.loop_point(0)
    assert.is_true(s.run.scene.walked > demo.LOOP_LENGTH + 1, "walked " .. s.run.scene.walked .. " m")
    assert.is_truthy(x and z)
  end)

  it("keeps the rigs and what they were doing across a reload", function()
    local run = start()
    for _ = 1, 240 do step(run) end
    local rigs = state_of(run, "humanoid.lua").rigs
    local steps = step_count(state_of(run, "walker.lua").rig)
    assert.is_true(steps > 0)
    for _, path in ipairs(run.paths) do assert.is_true(run.rt:reload(path)) end
    step(run)
    -- the same rigs went on (a rebuilt walker would have counted its steps from 0)
    assert.are.same(rigs.arm.options, state_of(run, "humanoid.lua").rigs.arm.options)
    assert.is_true(step_count(state_of(run, "walker.lua").rig) >= steps)
    assert.are.same({}, problems(run))
  end)

  it("is deterministic: two runs give the same poses", function()
    local function poses()
      local run = start()
      local out = {}
      for _ = 1, 120 do step(run) end
      for _, t in ipairs(transforms(run.scene)) do
        local p, q = t[2]:get_position(), t[2]:get_rotation()
        out[#out + 1] = ("%s %.17g %.17g %.17g %.17g %.17g %.17g %.17g"):format(t[1], p.x, p.y, p.z, q.x, q.y,
          q.z, q.w)
      end
      return table.concat(out, "\n")
    end
    assert.are.equal(poses(), poses())
  end)
end)
