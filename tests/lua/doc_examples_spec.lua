-- Every `@usage` example of the reference (LDoc comments in src/lua/*.c, lua/ik/*.lua and
-- the packages under it: rigs, runtime, demo) and every Lua block of the Markdown pages
-- (*.md at the root and in docs/) runs, one `it` per example, so the docs cannot show
-- code that does not work.
--
-- In Markdown, a block fenced as ```lua runs as an @usage example does (below); one
-- fenced as ```lua rig is a rig script: it runs through ik.runtime in the built-in demo
-- scene (`ik.demo.scene`, with a `scene.report` that records) for 30 frames, and passes
-- when it is still running then, with no error or pause reported. Lua meant not to run
-- is not an example: fence it as ```text.
--
-- An example runs as a chunk of its own, in a fresh environment holding `ik`
-- (`require("ik")`) and Lua's standard globals, nothing else: an example must set up
-- what it uses. It passes when it runs without error; use `assert` in it to check
-- results. Error lines are those of the source file. An example using syntax newer
-- than the running Lua (`<close>`, `<const>`, `//`, `goto`) is pending on older ones.
--
-- Extraction follows LDoc: in C, a doc comment opens with `/***` and its lines start
-- with ` * `; in Lua it is a run of `--` lines opened by `---`. A tag counts only at the
-- start of a line; `@usage`'s text runs to the next tag or the end of the comment.
local ik = require("ik")
local lfs = require("lfs") -- busted depends on it: present wherever the specs run

-- The repository root: this file is <root>/tests/lua/doc_examples_spec.lua, whether
-- busted was given a relative or an absolute path; else the working directory (ctest
-- runs busted from the root).
local function repo_root()
  local source = debug.getinfo(1, "S").source
  local dir = source:sub(1, 1) == "@" and source:sub(2):match("^(.*)tests[/\\]lua[/\\][^/\\]+$")
  if dir and dir ~= "" then return dir end
  return "./"
end

local ROOT = repo_root()

-- Files whose name matches pattern in dir (relative to the root), sorted.
local function list(dir, pattern)
  local names = {}
  local ok, iter, state = pcall(lfs.dir, ROOT .. dir)
  if not ok then return names end
  for name in iter, state do
    if name:match(pattern) then names[#names + 1] = dir .. "/" .. name end
  end
  table.sort(names)
  return names
end

-- The doc comments of a C file: a list of comments, each a list of { n, text } with n
-- the line number and text the line without its comment markers.
local function c_comments(lines)
  local comments, current = {}, nil
  for n, line in ipairs(lines) do
    local text
    if not current then
      local rest = line:match("^%s*/%*%*%*(.*)$")
      if rest and not rest:match("^%*") then -- /**** is a banner, not a doc comment
        current = {}
        comments[#comments + 1] = current
        text = rest:gsub("^ ", "")
      end
    else
      text = line:gsub("^%s*%* ?", "", 1)
      if line:match("^%s*%*/") then text = "*/" end
    end
    if current then
      local before_end = text:match("^(.-)%s*%*/")
      current[#current + 1] = { n, before_end or text }
      if before_end then current = nil end
    end
  end
  return comments
end

-- The doc comments of a Lua file: runs of `--` lines opened by a `---` line.
local function lua_comments(lines)
  local comments, current = {}, nil
  for n, line in ipairs(lines) do
    local opening = line:match("^%s*%-%-%-(.*)$")
    if opening and not opening:match("^%-") then
      current = { { n, (opening:gsub("^ ", "")) } }
      comments[#comments + 1] = current
    elseif current and line:match("^%s*%-%-") then
      current[#current + 1] = { n, (line:match("^%s*%-%-(.*)$"):gsub("^ ", "")) }
    else
      current = nil
    end
  end
  return comments
end

-- The examples of one file: { file =, line = the @usage tag's line, code = }.
local function examples_of(path)
  local lines = {}
  local f = assert(io.open(ROOT .. path, "r"))
  for line in f:lines() do lines[#lines + 1] = line end
  f:close()
  local comments = (path:match("%.lua$") and lua_comments or c_comments)(lines)
  local found = {}
  for _, comment in ipairs(comments) do
    local current
    for _, entry in ipairs(comment) do
      local n, text = entry[1], entry[2]
      if text:match("^%s*@%a") then current = nil end -- any tag ends the example
      local first = text:match("^%s*@usage%s?(.*)$")
      if first then
        current = { file = path, line = n, lines = { first } }
        found[#found + 1] = current
      elseif current then
        current.lines[#current.lines + 1] = text
      end
    end
  end
  for _, ex in ipairs(found) do
    while #ex.lines > 0 and ex.lines[#ex.lines]:match("^%s*$") do ex.lines[#ex.lines] = nil end
    ex.code = table.concat(ex.lines, "\n")
  end
  return found
end

local STANDARD = {
  "assert", "collectgarbage", "dofile", "error", "getmetatable", "ipairs", "load", "loadfile",
  "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset", "require",
  "select", "setmetatable", "tonumber", "tostring", "type", "xpcall", "_VERSION", "warn",
  "unpack", "loadstring", "setfenv", "getfenv", "module", "gcinfo", "newproxy",
  "string", "table", "math", "io", "os", "coroutine", "debug", "package", "utf8", "bit", "jit",
}

local function fresh_env()
  local env = { ik = ik }
  for _, name in ipairs(STANDARD) do env[name] = rawget(_G, name) end
  env._G = env
  return env
end

-- Compiles an example so that its line numbers are the file's; nil and the message when
-- it does not compile.
local function compile(ex, env)
  local source = string.rep("\n", ex.line - 1) .. ex.code
  local chunkname = "@" .. ex.file
  if setfenv then -- 5.1 and LuaJIT
    local fn, err = loadstring(source, chunkname)
    if fn then setfenv(fn, env) end
    return fn, err
  end
  return load(source, chunkname, "t", env)
end

-- Syntax an older Lua cannot compile, or nil.
local function needs_newer_lua(code)
  if _VERSION == "Lua 5.4" then return nil end
  if code:match("<%s*close%s*>") or code:match("<%s*const%s*>") then return "Lua 5.4 (<close>, <const>)" end
  if _VERSION == "Lua 5.1" and not jit and (code:match("//") or code:match("%f[%w]goto%f[%W]")) then
    return "Lua 5.3 or LuaJIT (// or goto)"
  end
  return nil
end

local examples = {}
for _, path in ipairs(list("src/lua", "%.c$")) do
  for _, ex in ipairs(examples_of(path)) do examples[#examples + 1] = ex end
end
for _, dir in ipairs({ "lua/ik", "lua/ik/rigs", "lua/ik/runtime", "lua/ik/demo" }) do
  for _, path in ipairs(list(dir, "%.lua$")) do
    for _, ex in ipairs(examples_of(path)) do examples[#examples + 1] = ex end
  end
end

-- The Lua blocks of a Markdown file: { file =, line = the first code line, code =, rig = }.
local function markdown_examples(path)
  local found, current = {}, nil
  local f = assert(io.open(ROOT .. path, "r"))
  local n = 0
  for line in f:lines() do
    n = n + 1
    if current then
      if line:match("^%s*```%s*$") then
        current.code = table.concat(current.lines, "\n")
        current = nil
      else
        current.lines[#current.lines + 1] = line
      end
    else
      local info = line:match("^%s*```([^`]*)$") -- a fence: ``` and its info string
      if info then
        local lang, rest = info:match("^%s*(%S*)%s*(.-)%s*$")
        current = { file = path, line = n + 1, lines = {}, lang = lang, rig = rest == "rig" }
        if lang == "lua" then found[#found + 1] = current end
        if lang == "lua" and rest ~= "" and rest ~= "rig" then
          error(path .. ":" .. n .. ": unknown kind of Lua block '" .. rest .. "' (lua or lua rig)")
        end
      end
    end
  end
  f:close()
  if current then error(path .. ":" .. (current.line - 1) .. ": a code block is not closed") end
  return found
end

local pages = list(".", "%.md$")
for _, page in ipairs(list("docs", "%.md$")) do pages[#pages + 1] = page end
for i, page in ipairs(pages) do pages[i] = page:gsub("^%./", "") end

local markdown = {}
for _, path in ipairs(pages) do
  for _, ex in ipairs(markdown_examples(path)) do markdown[#markdown + 1] = ex end
end

local DT = 1 / 60

-- Runs an example as a chunk of its own, in a fresh environment.
local function run_chunk(ex)
  local fn, err = compile(ex, fresh_env())
  assert(fn, "the example does not compile: " .. tostring(err))
  local ok, run_err = pcall(fn)
  assert(ok, "the example fails: " .. tostring(run_err) .. "\n--- example:\n" .. ex.code)
end

-- Runs a rig script example in the demo scene: true, or nil and what went wrong.
-- The scratch file has the example at its line in the page, so errors name that line.
local function run_rig(ex)
  local runtime = require("ik.runtime")
  local demo = require("ik.demo.scene")
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(string.rep("\n", ex.line - 1), ex.code, "\n")
  f:close()
  local scene = demo.new()
  local problems = {}
  scene.report = function() end
  local function on_event(ev)
    if ev.kind == "error" or ev.kind == "paused" then
      problems[#problems + 1] = ev.kind .. ": " .. tostring(ev.message)
    end
  end
  local rt = runtime.new{ scene = scene, scripts = { path }, watch = false, on_event = on_event }
  for _ = 1, 30 do
    scene:advance(DT)
    rt:update(DT)
  end
  local _, status = rt:script_info(1)
  rt:close()
  os.remove(path)
  if status ~= "running" or #problems > 0 then
    return nil, ("status %s; %s"):format(tostring(status), table.concat(problems, "; "))
  end
  return true
end

describe("the Markdown pages' Lua blocks", function()
  it("are found (" .. table.concat(pages, ", ") .. ")", function()
    assert.is_true(#markdown > 0, "no Lua block found in the Markdown pages under " .. ROOT)
  end)

  for _, ex in ipairs(markdown) do
    local name = ex.file .. ":" .. ex.line .. (ex.rig and " (rig script)" or "")
    local newer = needs_newer_lua(ex.code)
    if newer then
      pending(name .. " needs " .. newer)
    elseif ex.rig then
      it(name, function()
        local ok, err = run_rig(ex)
        assert(ok, "the rig script fails in the demo scene: " .. tostring(err) .. "\n---\n" .. ex.code)
      end)
    else
      it(name, function() run_chunk(ex) end)
    end
  end
end)

-- The relative links of a Markdown page, outside code: { line =, target = path from the root }.
local function relative_links(path)
  local links, n, fenced = {}, 0, false
  local dir = path:match("^(.*)/[^/]*$") or ""
  for line in io.lines(ROOT .. path) do
    n = n + 1
    if line:match("^%s*```") then fenced = not fenced end
    if not fenced then
      for target in line:gsub("`[^`]*`", ""):gmatch("%]%(([^)%s]+)%)") do
        target = target:gsub("#.*$", "")
        if target ~= "" and not target:match("^%a[%w+.-]*:") then
          local parts = {}
          for part in ((dir ~= "" and dir .. "/" or "") .. target):gmatch("[^/]+") do
            if part == ".." then parts[#parts] = nil elseif part ~= "." then parts[#parts + 1] = part end
          end
          links[#links + 1] = { line = n, target = table.concat(parts, "/") }
        end
      end
    end
  end
  return links
end

describe("the Markdown pages' links", function()
  for _, path in ipairs(pages) do
    for _, link in ipairs(relative_links(path)) do
      local name = path .. ":" .. link.line .. " links " .. link.target
      local exists = lfs.attributes(ROOT .. link.target, "mode") ~= nil
      it(name, function() assert(exists, name .. ", which does not exist") end)
    end
  end
end)

describe("the reference's @usage examples", function()
  it("are found (src/lua/*.c, lua/ik/**.lua from " .. ROOT .. ")", function()
    assert.is_true(#examples > 0, "no @usage example found under " .. ROOT)
  end)

  for _, ex in ipairs(examples) do
    local name = ex.file .. ":" .. ex.line
    local newer = needs_newer_lua(ex.code)
    if newer then
      pending(name .. " needs " .. newer)
    else
      it(name, function() run_chunk(ex) end)
    end
  end
end)
