-- ik.import and ik.import_string: the test characters (scripts/gen_characters.py) come
-- back with the bone names, parents and world rest positions the generator placed (its
-- own numbers, tests/data/characters/characters.lua, not the file's encoding), in each
-- convention's axes; the humanoid maps of the VRM files; the same model from a file and
-- from its bytes; argument errors raise, bad files return nil, message, kind.
local ik = require("ik")
local h = require("spec_helper")

local DIR = "tests/data/characters/"
local CHARACTERS = dofile(DIR .. "characters.lua")
local TOL = ik.real == "float" and 1e-4 or 1e-6

local function read(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("*a")
  f:close()
  return data
end

local function count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

-- The first child listed of each bone: the one a bone-along-+Y tool points it at.
local function main_children(bones)
  local out = {}
  for _, b in ipairs(bones) do
    if b.parent and not out[b.parent] then out[b.parent] = b end
  end
  return out
end

describe("ik.import", function()
  for _, c in ipairs(CHARACTERS) do
    describe(c.file, function()
      local model = assert(ik.import(DIR .. c.file))

      it("keeps every bone's name and parent, at its world rest position", function()
        local sk = model.skeleton
        assert.equal(#c.bones, #sk)
        for _, b in ipairs(c.bones) do
          local bone = sk:bone(b.name)
          assert.equal(b.parent, bone.parent and bone.parent.name)
          assert(h.vec_near(bone:get_position(), b.position, TOL))
        end
      end)

      it("has the rest rotations of its convention", function()
        local children = main_children(c.bones)
        for _, b in ipairs(c.bones) do
          local q = model.skeleton:bone(b.name):get_rotation()
          if c.convention == "vrm1" or c.convention == "vrm0" then
            assert(h.quat_near(q, { 0, 0, 0, 1 }, TOL))
          elseif c.convention == "blender" and children[b.name] then
            local to = children[b.name].position
            local d = ik.vec3(to[1] - b.position[1], to[2] - b.position[2], to[3] - b.position[3])
            assert(h.vec_near(q:rotate(ik.vec3(0, 1, 0)), d / d:length(), TOL))
          end
        end
      end)

      it("reads the humanoid map of a VRM file, and none from plain glTF", function()
        if c.convention == "vrm1" or c.convention == "vrm0" then
          assert.equal(c.convention == "vrm1" and "1.0" or "0.x", model.vrm)
          local roles = 0
          for _, b in ipairs(c.bones) do
            if b.role then
              roles = roles + 1
              assert.equal(b.name, model.humanoid_names[b.role])
              assert.equal(model.skeleton:bone(b.name), model.humanoid[b.role])
            end
          end
          assert.equal(roles, count(model.humanoid))
          assert.equal(c.upper_chest, model.humanoid.upperChest ~= nil)
          assert.equal(c.toes, model.humanoid.leftToes ~= nil)
          assert(h.vec_near(model.forward, { 0, 0, c.convention == "vrm0" and -1 or 1 }, 0))
          -- the eye point from the head (its space: no rest rotation): between the eyes, 1 cm ahead
          local at = {}
          for _, b in ipairs(c.bones) do at[b.name] = b.position end
          local z = (at.LeftEye[3] + at.RightEye[3]) / 2 - at.Head[3]
          assert.equal("Head", model.look_offset.bone)
          assert(h.vec_near(model.look_offset.offset, { 0, (at.LeftEye[2] + at.RightEye[2]) / 2 - at.Head[2],
                                                        z + (z > 0 and 0.01 or -0.01) }, TOL))
        else
          assert.is_nil(model.vrm)
          assert.is_nil(model.look_offset)
          assert.same({}, model.humanoid)
          assert(h.vec_near(model.forward, { 0, 0, 1 }, 0))
        end
      end)

      it("measures each bone's skinned vertices at rest", function()
        -- the generator's mesh: a box of 12 triangles along each bone, wholly that bone's
        for _, b in ipairs(c.bones) do
          local box = model.vertex_bounds[b.name]
          assert.equal(36, box.count)
          assert(h.vec_near(box.min, b.box.min, 1e-5))
          assert(h.vec_near(box.max, b.box.max, 1e-5))
        end
      end)

      it("lists its skin with a skeleton of its own", function()
        assert.equal(1, #model.skins)
        assert.equal("Skin", model.skins[1].name)
        assert.equal(#c.bones, #model.skins[1].joints)
        assert.equal(c.bones[1].name, model.skins[1].joints[1])
        assert.equal(#c.bones, #model.skins[1].skeleton)
      end)
    end)
  end

  it("gives skeletons that pose like any other", function()
    local sk = assert(ik.import(DIR .. "vrm1_tpose.vrm")).skeleton
    local hand = sk:bone("LeftHand")
    local rest = hand:get_position()
    sk:bone("LeftUpperArm"):set_rotation(ik.quat.axis_angle(ik.vec3(0, 0, 1), -math.pi / 2))
    assert(h.vec_near(hand:get_position(), { 0.17, 1.45 - 0.53, -0.03 }, TOL))
    sk:reset()
    assert(h.vec_near(hand:get_position(), rest, 0))
  end)
end)

describe("ik.humanoid_bones", function()
  it("lists the 24 roles in order", function()
    assert.equal(24, #ik.humanoid_bones)
    assert.equal("hips", ik.humanoid_bones[1])
    assert.equal("upperChest", ik.humanoid_bones[4])
    assert.equal("rightToes", ik.humanoid_bones[24])
  end)
end)

describe("ik.import_string", function()
  it("reads a file's bytes as ik.import reads the file", function()
    for _, file in ipairs({ "blender_tpose.glb", "blender_apose.gltf", "vrm0_tpose.vrm" }) do
      local a = assert(ik.import(DIR .. file))
      local b = assert(ik.import_string(read(DIR .. file)))
      assert.equal(#a.skeleton, #b.skeleton)
      for i, bone in ipairs(a.skeleton:bones()) do
        local other = b.skeleton:bone(i)
        assert.equal(bone.name, other.name)
        assert(h.vec_near(other:get_position(), bone:get_position(), 0))
      end
    end
  end)

  it("finds external buffers in base_dir only", function()
    local data = read(DIR .. "mixamo_tpose.gltf")
    local message = "buffers[0].uri: external file 'mixamo_tpose.bin' and no base directory to find it in"
    assert.same({ nil, message, "io" }, { ik.import_string(data) })
    assert(ik.import_string(data, { base_dir = DIR }))
  end)
end)

describe("import errors", function()
  it("raises for bad arguments", function()
    assert(h.raises(function() ik.import() end, "bad argument #1 to 'import'", "string expected"))
    assert(h.raises(function() ik.import({}) end, "bad argument #1 to 'import'", "string expected"))
    assert(h.raises(function() ik.import("x.glb", 5) end, "bad argument #2 to 'import'",
                    "table expected, got number"))
    assert(h.raises(function() ik.import("") end, "bad argument #1 to 'import' (file path expected"))
    assert(h.raises(function() ik.import("a\0b") end, "bad argument #1 to 'import' (file path expected"))
    assert(h.raises(function() ik.import("x.glb", { base_dir = "." }) end,
                    "ik.import: opts: no field 'base_dir'"))
    assert(h.raises(function() ik.import("x.glb", { max_nodes = 0 }) end,
                    "ik.import: opts: bad field 'max_nodes' (integer in 1..2^31-1 expected, got 0)"))
    assert(h.raises(function() ik.import("x.glb", { max_nodes = 1.5 }) end, "bad field 'max_nodes'"))
    assert(h.raises(function() ik.import_string(nil) end, "bad argument #1 to 'import_string'"))
    assert(h.raises(function() ik.import_string("{}", { base_dir = 1 }) end,
                    "ik.import_string: opts: bad field 'base_dir' (string expected, got 1)"))
  end)

  it("returns nil, message, kind for a file it cannot use", function()
    assert.same({ nil, "cannot open 'no/such.glb' (No such file or directory)", "io" },
                { ik.import("no/such.glb") })
    assert.same({ nil, "nodes[0].rotation: expected 4 numbers", "format" },
                { ik.import_string('{"asset":{"version":"2.0"},"nodes":[{"rotation":[0,0,1]}]}') })
    local cyclic = '{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[0]}]}'
    assert.same({ nil, "nodes[1].children: node 0 is its own ancestor (a cycle)", "format" },
                { ik.import_string(cyclic) })
    assert.same({ nil, "GLB: 10 bytes, shorter than the 12-byte header", "format" },
                { ik.import_string("glTF\2\0\0\0\0\0") })
    local far = '{"asset":{"version":"2.0"},"nodes":[{"translation":[1e200,0,0]}]}'
    local model, message, kind = ik.import_string(far)
    assert.is_nil(model)
    assert.equal("limit", kind)
    assert.equal("nodes[0]: position beyond ", message:sub(1, 26))
    local glb = read(DIR .. "blender_tpose.glb")
    message = select(2, ik.import_string(glb:sub(1, 1000)))
    assert.equal("GLB: header says " .. #glb .. " bytes, the file has 1000 (truncated)", message)
    assert.same({ nil, "nodes: 26 entries, more than the limit of 5", "limit" },
                { ik.import(DIR .. "blender_tpose.glb", { max_nodes = 5 }) })
  end)
end)
