// Package session is Switchboard's agent: conversations with a model that calls tools, each call
// passing the confirm gate.
//
// # Turns
//
// [Manager.Start] starts a turn and returns its conversation and turn ids at once; the turn runs in
// the background and reports [Event] values (the params of the switchboard/event notification).
// A conversation runs one turn at a time (a second Start gets [ErrBusy]); the same conversation id
// continues its history. [Manager.Cancel] cancels a turn: the model's HTTP request and the running
// tool calls end through the turn's context.
//
// One turn:
//
//  1. the user's prompt is appended to the history;
//  2. the model is called with the system prompt (base prompt plus each MCP server's
//     instructions, labelled with the server name and marked as third-party text, capped at 2 KiB
//     per server and 8 KiB in all), the history and every tool's schema (built-ins and
//     [Tools.Tools]); text deltas are emitted as they stream;
//  3. the tool calls of the answer run in parallel: for each, a toolCall event "pending", then
//     [Gate.Check] under the turn's mode, a toolCall event "allowed"/"denied", the call (built-in
//     or [Tools.Call]) and a toolResult event. Unknown tools get {"error":"Unknown tool: <name>"},
//     denied calls a result saying who denied them; nothing is an error of the turn. No retry
//     storms: within a turn, a call with the same name and the same arguments (canonical JSON)
//     that the gate denied is not asked again, and one that failed twice is not run again; it gets
//     a result saying why and a toolCall event "denied" by [ByRepeat]. Identical calls in one
//     response run one after the other;
//  4. the assistant message with its calls and the results, in call order, are appended as one
//     round, and the loop goes back to 2;
//  5. an answer without tool calls ends the turn (done). After MaxSteps rounds (default 25) one
//     last call asks for an answer without tools (done, stopReason "max_steps").
//
// Each turn ends with exactly one done event, preceded by an error event when it failed (missing
// API key, provider error, more than [MaxTools] tools sent). More than [WarnTools] tools sent cause
// one piece of advice through Options.Warn, once per Manager.
//
// # Usage and cost
//
// The done event's Usage is the turn's total over its model calls, ConversationUsage the
// conversation's: input tokens (all of them), of which cachedInputTokens were read from the
// provider's prompt cache and cacheWriteTokens written to it (Anthropic), output tokens, and the
// cost in US dollars when ProviderConfig.Prices has the model. Anthropic requests carry
// cache_control breakpoints on the tool list, the system prompt and the end of the conversation;
// OpenAI caches a stable prefix by itself.
//
// # Tool search
//
// With more tools than Options.ToolSearch.Threshold (default 40, built-ins included), the model
// gets the built-ins, the built-in search_tools, the pinned tools (ToolSearch.AlwaysLoaded), and the
// tools loaded in this conversation: those search_tools found and those called. Loaded tools are
// appended in load order, each once, so a step's tool list is a byte-identical prefix of the next
// step's and the system prompt does not change within a turn (prompt caches stay valid). Every tool
// stays reachable: a call to a tool that is not loaded runs (through the gate as always) and loads it.
//
// # History invariant
//
// A [History] is append-only. Every assistant message with tool calls is immediately followed by
// exactly one tool-result message per call id, in call order, also when a call was denied, failed,
// timed out or was cancelled; no tool result appears elsewhere. [History.Validate] checks it;
// the loop appends a call message and its results in one step, so the invariant holds at every
// point, including after a cancelled turn.
//
// # Tool results in the context
//
// The model sees at most ResultTokens (default 2000, ~4 bytes per token) of each result, with a
// note naming the built-in read_tool_result tool; the full text is kept in the conversation and
// read_tool_result pages through it.
//
// # Built-in tools
//
// read_file, list_files and search_files read the workspace (the editor's unsaved buffer when a
// file is open), confined to [Workspace.Folders] with symlink escapes refused; they pass the gate
// with ReadOnlyBuiltin set. edit_file changes a file through [Workspace.ApplyEdit] so the user sees
// and can undo it, and asks in single-confirm. read_tool_result pages kept results.
//
// # Providers
//
// [Provider] is the vendor-neutral model interface (defined in session/llm so the provider
// packages can implement it). Subpackages: openai (Chat Completions; OpenAI and compatible servers
// such as Ollama, llama.cpp, vLLM, LM Studio, OpenRouter), responses (the OpenAI Responses API,
// type "openai-responses": store false, encrypted reasoning items carried in
// [Message].Reasoning between steps, reasoning effort), anthropic (Messages API, with prompt-cache
// breakpoints) and script (a
// scripted provider for tests and editor end-to-end tests). [NewProvider] builds one from a
// [ProviderConfig].
package session
