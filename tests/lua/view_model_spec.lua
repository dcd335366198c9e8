-- The models the live view draws: the built-in demo's skinned humanoid
-- (src/host/view/humanoid.glb, scripts/gen_demo_humanoid.py) has the demo humanoid's
-- skeleton, and the scene of `--model FILE` (ik.demo.model) takes a user's character,
-- finds its humanoid bones and refuses what it cannot draw.
local ik = require("ik")

local function pos(t) return ik.vec3(t:get_position()) end

describe("the demo's skinned humanoid", function()
  local model = assert(ik.import("src/host/view/humanoid.glb"))
  local demo = require("ik.demo.scene").new().skeletons.humanoid

  it("has the demo humanoid's bones and parents, as one skin", function()
    local b = demo:bones()
    assert.equal(#b, #model.skeleton:bones())
    for i = 1, #b do
      local f = model.skeleton:bone(b[i].name)
      assert.equal(b[i].parent and b[i].parent.name, f.parent and f.parent.name)
    end
    assert.equal(1, #model.skins)
    assert.equal(#b, #model.skins[1].joints)
  end)

  it("places them as the demo does, turned and moved as a whole", function()
    -- the demo stands its humanoid somewhere, turned; the file at the origin, unturned
    local hips, file_hips = demo:bone("hips"), model.skeleton:bone("hips")
    local turn = ik.quat(hips:get_rotation())
    for _, b in ipairs(demo:bones()) do
      local f = model.skeleton:bone(b.name)
      local want = turn:inverse() * (pos(b) - pos(hips))
      assert.is_true((pos(f) - pos(file_hips) - want):length() < 1e-6, b.name)
      -- every bone's rest rotation is the hips' turn in the demo, none in the file
      assert.is_true(ik.quat(b:get_rotation()):angle_to(turn) < 1e-9, b.name)
      assert.is_true(ik.quat(f:get_rotation()):angle_to(ik.quat()) < 1e-9, b.name)
    end
  end)

  it("stands on its soles, the demo's foot offset below the ankles", function()
    local foot = model.skeleton:bone("l_foot")
    local lowest = math.huge
    for _, box in pairs(model.vertex_bounds) do lowest = math.min(lowest, box.min.y) end
    assert.is_true(math.abs(lowest) < 1e-6)
    local foot_offset = require("ik.demo.scene").new().params.humanoid.foot_offset
    assert.is_true(math.abs(pos(foot).y - foot_offset) < 1e-6)
    -- every bone but the nose and head top carries part of the mesh
    for _, b in ipairs(demo:bones()) do
      if b.name ~= "nose" and b.name ~= "head_top" then
        assert.is_truthy(model.vertex_bounds[b.name], b.name)
      end
    end
  end)
end)

describe("ik.demo.model (ikrig view --model FILE)", function()
  local M = require("ik.demo.model")
  local DIR = "tests/data/characters/"

  it("takes every test character, by its VRM map or its bones' names", function()
    for _, c in ipairs(dofile(DIR .. "characters.lua")) do
      assert.is_true(M.check(DIR .. c.file))
      M.file = DIR .. c.file
      local scene = M.new()
      for _, b in ipairs(c.bones) do
        if b.role then assert.equal(b.name, scene.params.model.map[b.role], c.file .. " " .. b.role) end
      end
      assert.equal("model", scene.view_model.skeleton)
      -- the hand targets start within reach of their shoulders
      local sk = scene.skeletons.model
      for side, target in pairs({ Left = "left_hand_target", Right = "right_hand_target" }) do
        local s = pos(sk:bone(side .. "UpperArm"))
        local reach = (pos(sk:bone(side .. "LowerArm")) - s):length() + (pos(sk:bone(side .. "Hand"))
          - pos(sk:bone(side .. "LowerArm"))):length()
        for t = 0, 7, 0.5 do
          scene:advance(0.5)
          assert.is_true((pos(scene.nodes[target]) - s):length() < reach, c.file .. " " .. side .. " " .. t)
        end
      end
      M.file = nil
    end
  end)

  it("reads Mixamo's bone names", function()
    local names = { "mixamorig:Hips", "mixamorig:Spine", "mixamorig:Spine1", "mixamorig:Neck",
                    "mixamorig:Head", "mixamorig:LeftArm", "mixamorig:RightArm", "mixamorig:LeftUpLeg",
                    "mixamorig:RightUpLeg" }
    local nodes, joints = {}, {}
    for i, n in ipairs(names) do
      nodes[i] = { name = n, translation = { (i % 3) * 0.1, i * 0.1, 0 } }
      joints[i] = i - 1
    end
    local json = string.format('{"asset":{"version":"2.0"},"nodes":%s,"skins":[{"joints":[%s]}]}',
      "[" .. table.concat((function()
        local out = {}
        for i, n in ipairs(nodes) do
          out[i] = string.format('{"name":"%s","translation":[%g,%g,%g]}', n.name, n.translation[1],
            n.translation[2], n.translation[3])
        end
        return out
      end)(), ",") .. "]", table.concat(joints, ","))
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(json)
    f:close()
    M.file = path
    local scene = M.new()
    M.file = nil
    os.remove(path)
    local map = scene.params.model.map
    assert.equal("mixamorig:Spine1", map.chest)
    assert.equal("mixamorig:LeftArm", map.leftUpperArm)
    assert.equal("mixamorig:RightUpLeg", map.rightUpperLeg)
    assert.is_nil(map.leftLowerArm)
  end)

  it("refuses what it cannot draw, saying why", function()
    local ok, err = M.check("tests/data/no_such_file.glb")
    assert.is_nil(ok)
    assert.equal("cannot open 'tests/data/no_such_file.glb' (No such file or directory)", err)
    ok, err = M.check(nil)
    assert.is_nil(ok)
    assert.equal("no model file given (ikrig view --model FILE)", err)
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write('{"asset":{"version":"2.0"},"nodes":[{"name":"a"},{"name":"b"}],"skins":[{"joints":[0,1]}]}')
    f:close()
    ok, err = M.check(path)
    assert.is_nil(ok)
    assert.equal("no humanoid bones found: no VRM bone map, and no bones named hips, head and upper "
                 .. "legs or arms", err)
    f = assert(io.open(path, "w"))
    f:write('{"asset":{"version":"2.0"},"nodes":[{"name":"Hips"}]}')
    f:close()
    ok, err = M.check(path)
    assert.is_nil(ok)
    assert.equal("the file has no skin (a skinned mesh is what --model draws)", err)
    M.file = path
    assert.error_matches(function() M.new() end, "the file has no skin", 1, true)
    M.file = nil
    os.remove(path)
  end)
end)
