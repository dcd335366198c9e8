function update() local s = string.rep("x", 2 ^ 30); state.s = s .. s end
