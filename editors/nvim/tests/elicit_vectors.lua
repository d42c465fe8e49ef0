-- The shared elicitation vectors (mcpbridge/testdata/elicit_vectors.json, checked against the
-- host's validator by mcpbridge's TestElicitVectors) against the plugin's rules
-- (switchboard.elicitation: check, parse, check_content). No host needed.
local T = require('harness')

local function vectors()
  local dir = assert(os.getenv('SWITCHBOARD_PLUGIN_DIR'), 'SWITCHBOARD_PLUGIN_DIR not set')
  local text = T.read(dir .. '/../../mcpbridge/testdata/elicit_vectors.json')
  T.ok(text, 'the vectors file is readable')
  return vim.json.decode(text)
end

local function show(v)
  return vim.json.encode(v)
end

T.case('elicitation vectors: the plugin takes what the host takes and refuses what it refuses', function()
  local E = require('switchboard.elicitation')
  local vs = vectors()
  T.ok(#vs.fields > 0, 'field vectors')
  for _, v in ipairs(vs.fields) do
    for _, x in ipairs(v.accept) do
      T.eq(E.check(v.field, x), nil, ('%s = %s: the host takes it'):format(v.name, show(x)))
    end
    for _, x in ipairs(v.reject) do
      T.ok(E.check(v.field, x) ~= nil, ('%s = %s: the host refuses it'):format(v.name, show(x)))
    end
    for _, t in ipairs(v.text or {}) do
      local value, problem = E.parse(v.field, t['in'])
      if t.problem then
        T.ok(problem ~= nil, ('%s: text %q should be refused, got %s'):format(v.name, t['in'], show(value)))
      else
        T.eq(problem, nil, ('%s: text %q'):format(v.name, t['in']))
        T.eq(value, t.value, ('%s: text %q'):format(v.name, t['in']))
      end
    end
  end
  T.ok(#vs.content > 0, 'content vectors')
  for _, v in ipairs(vs.content) do
    local field = E.check_content(v.fields, v.content)
    local want = v.errorField
    if want == vim.NIL then
      want = nil
    end
    T.eq(field, want, v.name)
  end
end)
