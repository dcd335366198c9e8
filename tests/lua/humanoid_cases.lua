-- The characters every humanoid rig spec runs on: the built-in demo's humanoid and each
-- test character (tests/data/characters/, scripts/gen_characters.py), imported, with a
-- role -> bone name map (the host's own for the demo and plain glTF files, the file's
-- for VRM: both are checked to agree in import_spec).
local ik = require("ik")

local DIR = "tests/data/characters/"

local BUILT_IN = {
  hips = "hips", spine = "spine", chest = "chest", neck = "neck", head = "head",
  leftShoulder = "l_shoulder", leftUpperArm = "l_upper_arm", leftLowerArm = "l_lower_arm",
  leftHand = "l_hand", rightShoulder = "r_shoulder", rightUpperArm = "r_upper_arm",
  rightLowerArm = "r_lower_arm", rightHand = "r_hand", leftUpperLeg = "l_upper_leg",
  leftLowerLeg = "l_lower_leg", leftFoot = "l_foot", leftToes = "l_toes",
  rightUpperLeg = "r_upper_leg", rightLowerLeg = "r_lower_leg", rightFoot = "r_foot",
  rightToes = "r_toes",
}

local C = {}

--- A fresh list of { name =, skeleton =, map = role -> bone name, model = (imported) }.
function C.all()
  local list = {
    { name = "built-in humanoid", skeleton = require("ik.demo.scene").new().skeletons.humanoid,
      map = BUILT_IN },
  }
  for _, c in ipairs(dofile(DIR .. "characters.lua")) do
    local model = assert(ik.import(DIR .. c.file))
    local map = {}
    for _, b in ipairs(c.bones) do
      if b.role then map[b.role] = b.name end
    end
    list[#list + 1] = { name = c.file, skeleton = model.skeleton, map = map, model = model }
  end
  return list
end

return C
