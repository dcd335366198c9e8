-- Scratch files for the specs that need real ones (runtime_spec, watch_spec):
-- `local tmp = require("tmp_helper")`.
local lfs = require("lfs")

local tmp = {}

--- Makes a new empty folder (named by os.tmpname()) and returns its path.
function tmp.mkdir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(lfs.mkdir(dir))
  return dir
end

--- Removes a folder and everything in it.
function tmp.rmtree(dir)
  for name in lfs.dir(dir) do
    if name ~= "." and name ~= ".." then
      local path = dir .. "/" .. name
      if lfs.attributes(path, "mode") == "directory" then tmp.rmtree(path) else os.remove(path) end
    end
  end
  lfs.rmdir(dir)
end

--- Writes text to a file, replacing it.
function tmp.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

return tmp
