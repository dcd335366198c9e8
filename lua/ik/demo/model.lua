--- The scene of `ikrig view` with a model file: a glTF/GLB/VRM character of the user's own,
-- imported (`ik.import`) and driven by `ik.rigs.humanoid` from its humanoid map.
--
-- The model's skeleton is the scene's skeleton `model`, at the file's rest pose and
-- place; the ground is a plane at its lowest rest point (the soles, when the file has
-- skinned feet). Three targets move by themselves in front of it, in the frame the rig
-- measures from the rest pose (so a VRM 0.x avatar, facing -Z, is served as well as a
-- glTF one facing +Z): `right_hand_target` and `left_hand_target` on loops within reach,
-- `look_target` drifting ahead above head height. The rig script `ik.demo.model_rig`
-- drives the legs (feet on the ground, pelvis), both arms and the look.
--
-- The file: `M.file` (the host sets it before making the scene: `--model FILE`). The
-- humanoid map is the file's (VRM), else read from the bones' names (a bone named as a
-- role in any case, "LeftUpperArm", or by Mixamo's names). A file that cannot be
-- imported, has no skin or no humanoid bones raises. `M.check(file)`
-- says the same without making a scene: `true`, or `nil, message`.
--
-- Beyond the scene contract (ik.demo.scene), `params.model` holds what the rig script
-- needs: `map` (role -> bone name), `vertex_bounds` and `look_offset` of the import,
-- and `view_model` tells the live view which skeleton the model's mesh follows.
-- @module ik.demo.model

local ik = require("ik")
local humanoid = require("ik.rigs.humanoid")

local M = {}

--- The model file to import (set by the host).
M.file = nil

--- The rig scripts that drive this scene, by module name.
M.scripts = { "ik.demo.model_rig" }

local sin, cos = math.sin, math.cos

-- Mixamo's names of the roles whose names differ from VRM's (after "mixamorig:").
local MIXAMO = { spine1 = "chest", spine2 = "upperChest", leftarm = "leftUpperArm",
                 leftforearm = "leftLowerArm", rightarm = "rightUpperArm", rightforearm = "rightLowerArm",
                 leftupleg = "leftUpperLeg",
                 leftleg = "leftLowerLeg", rightupleg = "rightUpperLeg", rightleg = "rightLowerLeg",
                 lefttoebase = "leftToes", righttoebase = "rightToes" }

-- A map from the bones' names, for a file without a VRM one: a bone named as a role
-- (any case, without "_", "-", "." or spaces: "LeftUpperArm", "left_upper_arm"), or by
-- Mixamo's names.
local function map_by_names(sk)
  local role_of = {}
  for _, role in ipairs(ik.humanoid_bones) do role_of[role:lower()] = role end
  for k, role in pairs(MIXAMO) do role_of[k] = role end
  local map = {}
  for _, b in ipairs(sk:bones()) do
    local key = b.name:gsub("^mixamorig%d*:", ""):gsub("[%s_%-%.]", ""):lower()
    local role = role_of[key]
    if role and not map[role] then map[role] = b.name end
  end
  return map
end

-- The imported model and its role -> name map, or nil and why.
local function load(file)
  if type(file) ~= "string" then return nil, "no model file given (ikrig view --model FILE)" end
  local model, err = ik.import(file)
  if not model then return nil, err end
  if #model.skins == 0 then return nil, "the file has no skin (a skinned mesh is what --model draws)" end
  local names = model.humanoid_names
  if not names.hips then names = map_by_names(model.skeleton) end
  if not (names.hips and (names.head or names.neck) and
          (names.leftUpperLeg and names.rightUpperLeg or names.leftUpperArm and names.rightUpperArm)) then
    return nil, "no humanoid bones found: no VRM bone map, and no bones named hips, head and upper "
      .. "legs or arms"
  end
  return model, names
end

--- Whether `file` can be the scene's model.
-- @string file
-- @treturn boolean|nil true, or nil and a message
-- @treturn string the message
function M.check(file)
  local model, err = load(file)
  if not model then return nil, err end
  return true
end

--- Makes the scene.
-- @treturn table the scene (ik.demo.scene's contract)
function M.new()
  local model, names = load(M.file)
  if not model then error(string.format("%s: %s", tostring(M.file), names), 2) end
  local sk = model.skeleton
  local frame = humanoid{ map = names, skeleton = sk } -- measures left, up, forward; makes no part
  local left, up, forward = frame.left, frame.up, frame.forward
  local lowest
  for _, b in pairs(model.vertex_bounds) do
    local h = b.min:dot(up)
    if not lowest or h < lowest then lowest = h end
  end
  for _, b in ipairs(sk:bones()) do
    local h = b:get_position():dot(up)
    if not lowest or h < lowest then lowest = h end
  end
  local head = sk:bone(names.head or names.neck):get_position()
  local hips = sk:bone(names.hips):get_position()
  local height = (head - hips):dot(up) -- hips to head: the scale of the paths (the hands' within reach)
  local shoulder = {}
  for side, role in pairs({ left = "leftUpperArm", right = "rightUpperArm" }) do
    shoulder[side] = names[role] and sk:bone(names[role]):get_position() or head
  end
  -- a point of the character's frame: x along its left, y up, z forward (times height)
  local function point(base, x, y, z, out)
    local p = base + left * (x * height) + up * (y * height) + forward * (z * height)
    if out then return out:set(p.x, p.y, p.z) end
    return p
  end
  local function hand_path(side, t, out)
    local s, a = side == "left" and 1 or -1, 0.9 * t + (side == "left" and 1.6 or 0)
    return point(shoulder[side], s * (0.08 + 0.12 * cos(a)), -0.3 + 0.18 * sin(2 * a),
                 0.4 + 0.12 * sin(a), out)
  end
  local function look_path(t, out)
    local b = 0.5 * t
    return point(head, -1.4 * sin(b), 0.3 + 0.3 * sin(2 * b + 0.5), 3 + 0.6 * cos(b), out)
  end
  local scene = {
    name = "model " .. tostring(M.file):match("[^/]*$"),
    skeletons = { model = sk },
    nodes = {
      right_hand_target = ik.node{ position = hand_path("right", 0) },
      left_hand_target = ik.node{ position = hand_path("left", 0) },
      look_target = ik.node{ position = look_path(0) },
    },
    ground = ik.ground.plane{ point = up * lowest, normal = up },
    targets = { "right_hand_target", "left_hand_target", "look_target" },
    poles = {},
    trails = { names.rightHand and "model." .. names.rightHand or nil },
    time = 0,
    params = { model = { map = names, vertex_bounds = model.vertex_bounds,
                         look_offset = model.look_offset, forward = forward } },
    view_model = { skeleton = "model" },
  }
  local at = ik.vec3()
  function scene:advance(dt)
    self.time = self.time + dt
    local t = self.time
    self.nodes.right_hand_target:set_position(hand_path("right", t, at))
    self.nodes.left_hand_target:set_position(hand_path("left", t, at))
    self.nodes.look_target:set_position(look_path(t, at))
  end
  return scene
end

return M
