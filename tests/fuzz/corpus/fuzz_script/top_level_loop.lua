local x = 0
repeat x = x + 1 until false
function update() end
