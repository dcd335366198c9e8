function update(dt) if then end
