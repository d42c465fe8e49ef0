-- luacheck . (run by tests/run-all.sh)
std = 'luajit'
globals = { 'vim' }
max_line_length = false
