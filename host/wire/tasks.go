package wire

// Long calls: MCP tasks (PROTOCOL.md section 3, "Tasks").

// TaskInfo is one tool call that runs, or ran, as an MCP task.
type TaskInfo struct {
	ID        string `json:"id"` // the host's id: arguments[0].id of switchboard.cancelTask
	Server    string `json:"server"`
	Tool      string `json:"tool"`   // registered name
	TaskID    string `json:"taskId"` // the server's
	StartedBy string `json:"startedBy"`
	Started   string `json:"started"` // RFC 3339
	Updated   string `json:"updated"` // RFC 3339
	// State is running, completed, failed, cancelled or lost (the host could no longer follow it).
	State   string `json:"state"`
	Status  string `json:"status"`  // the server's last status: working, input_required, completed, failed, cancelled
	Message string `json:"message"` // the server's last status message (escaped)
	// Result is the result text of a task that finished after a restart of the host (nobody else
	// received it), or of a long one the person was told of (escaped); IsError says it is an
	// error result.
	Result  string `json:"result,omitempty"`
	IsError bool   `json:"isError,omitempty"`
	// ForAgent: the result waits for the agent; the next chat turn in its workspace gets it.
	ForAgent bool `json:"forAgent,omitempty"`
	// Here: this host follows it (it can be cancelled here).
	Here bool `json:"here"`
}

// TasksResult is the result of switchboard.tasks: running tasks and recent ones, newest first.
type TasksResult struct {
	Tasks []TaskInfo `json:"tasks"`
}

// CancelTaskParams is arguments[0] of switchboard.cancelTask.
type CancelTaskParams struct {
	ID string `json:"id"`
}
