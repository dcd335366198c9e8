function update()
  local co = coroutine.create(function() while true do end end)
  local ok, err = coroutine.resume(co)
  state.err = err
  while true do pcall(coroutine.resume, co) end
end
