local m = require("rig")
local c = require("canary")
dofile("rig.lua")
function update() state.m = m; state.c = c end
