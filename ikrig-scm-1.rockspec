-- LuaRocks: `luarocks make` in a checkout builds ik.core for the Lua LuaRocks runs on
-- (one module, with that Lua's headers) and installs it with lua/ik/*.lua into the rock.
rockspec_format = "3.0"
package = "ikrig"
version = "scm-1"
source = {
  -- No public host of the repository is known yet: the address has the form LuaRocks
  -- clones from, with the project's name; put the real host here once there is one.
  -- `luarocks make` in a checkout does not read it.
  url = "git+https://github.com/ikrig/ikrig.git",
}
description = {
  summary = "Inverse kinematics for Lua: a fast, allocation-free C solver core",
  detailed = [[
The module `ik`: vectors, quaternions, chains solved by FABRIK, CCD, damped least squares
or analytic two-bone IK, poles and joint constraints, on a C core that allocates nothing
per solve. Works with Lua 5.1 to 5.4 and LuaJIT.]],
}
dependencies = {
  "lua >= 5.1",
}
build = {
  type = "cmake",
  -- Names the project's CMake honours (CMakeLists.txt, src/lua/CMakeLists.txt).
  variables = {
    IK_LUA_INCDIR = "$(LUA_INCDIR)",     -- build the one module, for this Lua
    IK_LUA_CMOD_DIR = "$(LIBDIR)",       -- ik/core.so goes here
    IK_LUA_LMOD_DIR = "$(LUADIR)",       -- ik/*.lua go here
    IK_INSTALL_CORE = "OFF",             -- the rock carries the module, not libik and headers
    CMAKE_BUILD_TYPE = "Release",
    IK_BUILD_TESTS = "OFF",
    IK_BUILD_BENCH = "OFF",
    IK_VIEW = "OFF",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
  },
}
