function update(dt) error({ "a table, not a string" }) end
function on_reload() error(setmetatable({}, { __tostring = function() error("tostring fails") end })) end
