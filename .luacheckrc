-- luacheck settings for all of the project's Lua.
std = "max"
max_line_length = 110
exclude_files = { "build/**" }
files["tests/lua/**"] = { std = "+busted" }
