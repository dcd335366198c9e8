-- The characters every humanoid rig spec runs on: the built-in demo's humanoid and each
-- test character (tests/data/characters/, scripts/gen_characters.py), imported, with a
-- role -> bone name map (the host's own for the demo and plain glTF files, the file's
-- for VRM: both are checked to agree in import_spec).
local ik = require("ik")

local DIR = "tests/data/characters/"

local BUILT_IN = require("ik.demo.scene").humanoid_map

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
