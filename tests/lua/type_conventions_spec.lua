-- One sweep over every type of the binding: assignments fail alike. Every metatable the
-- module registers ("ik.*" in the registry) must have an instance below, so a new type
-- is held to the same rule: assigning a field raises "<type>: no field 'k' (fields:
-- ...)" or "<type>: fields are read-only (...)", whatever the key, and changes nothing;
-- reading a field the type does not have gives nil.
local ik = require("ik")
local h = require("spec_helper")

-- One live instance of each type, made fresh for each test.
local function instances()
  local sk = ik.skeleton{ { name = "a" }, { name = "b", parent = "a", position = { 0, 1, 0 } } }
  local template = ik.crowd_template{ skeleton = sk, chains = { { bones = { "a", "b" } } } }
  local crowd = ik.crowd{ template = template, count = 1 }
  return {
    ["ik.crowd_template"] = template,
    ["ik.crowd"] = crowd,
    ["ik.crowd_buffer"] = crowd:buffer("roots"),
    ["ik.vec3"] = ik.vec3(1, 2, 3),
    ["ik.quat"] = ik.quat(0, 0, 0, 1),
    ["ik.pole"] = ik.pole{ position = { 0, 1, 0 } },
    ["ik.cone"] = ik.cone{ angle = 1 },
    ["ik.hinge"] = ik.hinge{ axis = { 1, 0, 0 } },
    ["ik.chain"] = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } } },
    ["ik.tree"] = ik.tree{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, parents = { 0, 1 } },
    ["ik.batch"] = ik.batch(),
    ["ik.skeleton"] = sk,
    ["ik.bone"] = sk:bone("b"),
    ["ik.node"] = ik.node{ position = { 1, 0, 0 } },
    ["ik.ground"] = ik.ground.plane(),
    ["ik.foot"] = ik.foot{ ground = ik.ground.plane() },
    ["ik.pelvis"] = ik.pelvis(),
    ["ik.watch"] = ik.watch(),
    ["ik.sandbox"] = ik.sandbox{ dir = ".", ik_path = "lua/?.lua", scene = {} },
  }
end

-- The names of the metatables the module registered.
local function registered_types()
  local names = {}
  for k, v in pairs(debug.getregistry()) do
    if type(k) == "string" and k:sub(1, 3) == "ik." and type(v) == "table" and rawget(v, "__name") == k then
      names[#names + 1] = k
    end
  end
  table.sort(names)
  return names
end

-- Whether err is one of the two assignment errors of type `name` for key `key`.
local function assignment_error(err, name, key)
  err = tostring(err)
  local readonly = name .. ": fields are read-only ("
  local unknown = ("%s: no field '%s' (fields: "):format(name, key)
  if err:find(readonly, 1, true) or err:find(unknown, 1, true) then return true end
  return false, ("%s: %q is neither %q nor %q"):format(name, err, readonly, unknown)
end

describe("every type of the binding", function()
  it("has an instance in this spec", function()
    local have = instances()
    for _, name in ipairs(registered_types()) do
      assert.is_true(have[name] ~= nil, name .. " is registered but not swept here")
    end
    for name, o in pairs(have) do assert.are.equal(name, getmetatable(o).__name) end
  end)

  it("refuses a field it does not have with its name first, and changes nothing", function()
    for name, o in pairs(instances()) do
      local before = tostring(o)
      local ok, err = pcall(function() o.no_such_field = 1 end)
      assert.is_false(ok, name .. " took an unknown field")
      assert(assignment_error(err, name, "no_such_field"))
      assert.are.equal(before, tostring(o))
      assert.is_nil(o.no_such_field)
    end
  end)

  it("refuses a number key as it refuses a name", function()
    for name, o in pairs(instances()) do
      local ok, err = pcall(function() o[1] = 1 end)
      assert.is_false(ok, name .. " took o[1]")
      assert(assignment_error(err, name, "1"))
    end
  end)

  it("refuses any other key with an error of its own, never Lua's 'attempt to index'", function()
    for name, o in pairs(instances()) do
      local ok, err = pcall(function() o[{}] = 1 end)
      assert.is_false(ok, name .. " took a table key")
      err = tostring(err)
      assert.is_nil(err:find("attempt to index", 1, true), name .. ": " .. err)
      assert(err:find(name .. ": ", 1, true) or err:find("bad argument #2 to '__newindex'", 1, true),
             name .. ": " .. err)
    end
  end)

  it("raises the same way for its read-only types' known fields", function()
    local o = instances()
    local cases = {
      { "ik.vec3", "x", 5, "a value" },
      { "ik.quat", "w", 0, "a value" },
      { "ik.cone", "angle", 0.5, "immutable" },
      { "ik.bone", "name", "c", "use set_position" },
      { "ik.batch", "threads", 2, "make a new batch" },
      { "ik.ground", "kind", "mesh", "use its methods" },
      { "ik.watch", "backend", "x", "use its methods" },
      { "ik.skeleton", "count", 3, "use its methods" },
    }
    for _, c in ipairs(cases) do
      local name, field, value, hint = c[1], c[2], c[3], c[4]
      assert(h.raises(function() o[name][field] = value end, name .. ": fields are read-only (" .. hint))
    end
    assert.are.equal("plane", o["ik.ground"].kind)
  end)
end)
