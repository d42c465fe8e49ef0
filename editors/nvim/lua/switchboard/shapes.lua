-- The fields of each wire struct (host/wire/types.go) that this plugin reads from the host's
-- messages. The plugin reads decoded tables directly; this list is what its tests check against the
-- contract (host/wire/shapes.json, generated from the Go structs), so that a field renamed or
-- dropped on the host side fails a test here rather than reading nil in front of a user.
-- Add a field here when the plugin starts reading it.
return {
  ServerStatus = { 'name', 'state', 'transport', 'source', 'tools', 'error', 'stderrTail', 'command', 'sandbox', 'blocked', 'policy', 'shared', 'protocolVersion' },
  PolicyRef = { 'rule' },
  SharedStatus = { 'windows', 'warning' },
  ServersChangedParams = { 'servers' },
  ToolInfo = { 'name', 'server', 'description', 'allowlisted', 'view', 'appOnly', 'policy' },
  ToolResult = { 'name', 'isError', 'text', 'truncated' },
  Approval = { 'id', 'tool', 'server', 'arguments', 'mode', 'turn', 'requestedAt' },
  ApprovalResolvedParams = { 'id', 'decision', 'by' },
  PromptAbout = { 'approval', 'trustServer' },
  AllowlistGetResult = { 'path', 'entries', 'error' },
  ChatResult = { 'conversation', 'turn', 'viewContext' },
  ViewContextNote = { 'tool', 'text' },
  Event = { 'turn', 'conversation', 'kind', 'text', 'toolCall', 'result', 'error', 'stopReason', 'usage', 'conversationUsage' },
  Usage = { 'inputTokens', 'outputTokens', 'cachedInputTokens', 'cacheWriteTokens', 'cost' },
  ModelsResult = { 'current', 'models' },
  ModelInfo = { 'id', 'displayName' },
  ToolCallEvent = { 'id', 'name', 'arguments', 'approval', 'decidedBy', 'reason' },
  ToolResultEvent = { 'id', 'name', 'isError', 'text', 'truncated', 'bytes' },
  Elicitation = { 'id', 'server', 'message', 'fields', 'requestedAt' },
  ElicitField = {
    'name', 'title', 'description', 'type', 'required', 'enum', 'enumTitles', 'format',
    'minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems', 'default',
  },
  ElicitationResolvedParams = { 'id', 'action', 'by' },
  PinsResult = { 'file', 'problem', 'servers' },
  ServerPins = { 'server', 'changed', 'new', 'removed' },
  PinChange = { 'tool', 'diff' },
  PinsChangedParams = { 'server', 'message' },
  TasksResult = { 'tasks' },
  TaskInfo = { 'id', 'tool', 'startedBy', 'started', 'state', 'message', 'result', 'isError', 'forAgent', 'here' },
  CancelTaskParams = { 'id' },
  -- resources.lua
  ResourcesResult = { 'resources', 'templates' },
  Resource = { 'server', 'uri', 'name', 'description' },
  ResourceTemplate = { 'server', 'uriTemplate', 'name', 'description' },
  ReadResourceResult = { 'server', 'contents' },
  ResourceContent = { 'text', 'blob', 'mimeType', 'bytes' },
  Prompt = { 'server', 'name', 'description', 'arguments' },
  PromptArgument = { 'name', 'required' },
  CompleteResult = { 'values' },
  ResourcesChangedParams = { 'server', 'kind', 'uri' },
}
