-- ik.watch: which watched files changed since the last poll, with inotify (Linux) and
-- with polling. Real files in a scratch folder per test.
local ik = require("ik")
local lfs = require("lfs")

local LINUX = io.open("/proc/self/stat", "r") ~= nil

local tmp = require("tmp_helper")

local mkdir_tmp, write = tmp.mkdir, tmp.write

-- tmp_helper's rmtree, when the folder is still there.
local function rmtree(dir)
  if lfs.attributes(dir, "mode") == "directory" then tmp.rmtree(dir) end
end

local function sorted(list)
  table.sort(list)
  return table.concat(list, " ")
end

describe("ik.watch", function()
  local dir

  before_each(function() dir = mkdir_tmp() end)
  after_each(function() rmtree(dir) end)

  it("uses inotify on Linux", function()
    if not LINUX then return pending("not Linux") end
    local w = ik.watch()
    assert.are.equal("inotify", w.backend)
    assert.are.equal("inotify", ik.watch{ backend = "inotify" }.backend)
    w:close()
  end)

  it("rejects an unknown backend", function()
    assert.has_error(function() ik.watch{ backend = "fsevents" } end,
      "ik.watch: bad field 'backend' (\"auto\", \"inotify\" or \"poll\" expected, got 'fsevents')")
    assert.has_error(function() ik.watch(1) end)
  end)

  for _, backend in ipairs({ "auto", "poll" }) do
    describe("(" .. backend .. ")", function()
      local w
      before_each(function() w = ik.watch{ backend = backend } end)
      after_each(function() w:close() end)

      it("reports a file written in place, once", function()
        local path = dir .. "/a.lua"
        write(path, "return 1")
        assert.is_true(w:add(path))
        assert.are.same({}, w:poll())
        write(path, "return 22")
        assert.are.same({ path }, w:poll())
        assert.are.same({}, w:poll())
      end)

      it("reports a rename-style save (a new file renamed over the old)", function()
        local path = dir .. "/a.lua"
        write(path, "return 1")
        w:add(path)
        write(dir .. "/a.lua.tmp~", "return 2")
        assert.is_true(os.rename(dir .. "/a.lua.tmp~", path))
        assert.are.same({ path }, w:poll())
      end)

      it("reports a deleted file, and a file created later", function()
        local path, later = dir .. "/a.lua", dir .. "/later.lua"
        write(path, "return 1")
        w:add(path)
        w:add(later)
        os.remove(path)
        assert.are.same({ path }, w:poll())
        write(later, "return 2")
        assert.are.same({ later }, w:poll())
      end)

      it("ignores files it does not watch, and removed ones", function()
        local a, b = dir .. "/a.lua", dir .. "/b.lua"
        write(a, "1")
        write(b, "1")
        w:add(a)
        w:add(b)
        write(dir .. "/other.lua", "x")
        assert.are.same({}, w:poll())
        assert.is_true(w:remove(b))
        assert.is_false(w:remove(b))
        write(b, "22")
        write(a, "22")
        assert.are.same({ a }, w:poll())
        assert.are.same({ a }, w:paths())
      end)

      it("watches files of several folders, each reported by the path it was given", function()
        local sub = dir .. "/sub"
        assert(lfs.mkdir(sub))
        local a, b = dir .. "/a.lua", sub .. "/../sub/b.lua"
        write(a, "1")
        write(b, "1")
        w:add(a)
        assert.is_false(w:add(a))
        w:add(b)
        write(a, "22")
        write(sub .. "/b.lua", "22")
        assert.are.equal(sorted({ a, b }), sorted(w:poll()))
      end)

      it("raises once closed", function()
        w:close()
        assert.has_error(function() w:poll() end, "attempt to use a closed ik.watch")
        assert.are.equal("ik.watch (closed)", tostring(w))
        w:close() -- twice is fine
      end)
    end)
  end

  it("polls a file whose folder cannot be watched yet, and sees it appear", function()
    local w = ik.watch()
    local sub = dir .. "/later"
    local path = sub .. "/a.lua"
    w:add(path)
    assert.is_truthy(tostring(w):find("1 polled", 1, true), tostring(w))
    assert(lfs.mkdir(sub))
    write(path, "1")
    assert.are.same({ path }, w:poll())
    w:close()
  end)

  it("falls back to polling when the watched folder goes away", function()
    local sub = dir .. "/sub"
    assert(lfs.mkdir(sub))
    local path = sub .. "/a.lua"
    write(path, "1")
    local w = ik.watch()
    w:add(path)
    os.remove(path)
    lfs.rmdir(sub)
    assert.are.same({ path }, w:poll())
    assert.are.same({}, w:poll())
    assert(lfs.mkdir(sub))
    write(path, "2")
    assert.are.same({ path }, w:poll())
    w:close()
  end)

  it("watches many files", function()
    local w = ik.watch()
    local paths = {}
    for i = 1, 40 do
      paths[i] = dir .. "/f" .. i .. ".lua"
      write(paths[i], "1")
      w:add(paths[i])
    end
    write(paths[33], "22")
    write(paths[7], "22")
    assert.are.same({ paths[7], paths[33] }, w:poll())
    assert.are.equal(40, #w:paths())
    w:close()
  end)

  it("gives its inotify instance back when collected", function()
    if not LINUX then return pending("not Linux") end
    for _ = 1, 300 do -- more than the usual limit of 128 instances a user
      local w = ik.watch()
      assert.are.equal("inotify", w.backend)
      w = nil -- luacheck: ignore 311
      collectgarbage()
    end
  end)

  it("takes only non-empty paths", function()
    local w = ik.watch()
    assert.has_error(function() w:add("") end)
    assert.has_error(function() w:add(nil) end)
    assert.has_error(function() w:add("a\0b") end)
    w:close()
  end)
end)
