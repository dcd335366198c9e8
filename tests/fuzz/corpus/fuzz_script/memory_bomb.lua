local t = {}
function update() for i = 1, 1e7 do t[#t + 1] = { i } end end
