for _, sk in pairs(scene.skeletons) do sk:close() end
for _, n in pairs(scene.nodes) do n:close() end
if scene.ground then scene.ground:close() end
scene.report = nil
function update() scene.report("x", true, 0) end
