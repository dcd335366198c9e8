function update(dt) state.t = (state.t or 0) + dt end
