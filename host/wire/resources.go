package wire

// MCP resources and prompts (PROTOCOL.md section 3, "Resources and prompts").

// ResourcesParams is arguments[0] of switchboard.resources and switchboard.prompts.
type ResourcesParams struct {
	Server string `json:"server,omitempty"` // "" = every ready server
}

// Resource is one resource a server lists.
type Resource struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// ResourceTemplate is one resource template (an RFC 6570 URI template) a server lists.
type ResourceTemplate struct {
	Server      string `json:"server"`
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// ResourcesResult is the result of switchboard.resources.
type ResourcesResult struct {
	Resources []Resource         `json:"resources"`
	Templates []ResourceTemplate `json:"templates"`
}

// ReadResourceParams is arguments[0] of switchboard.readResource.
type ReadResourceParams struct {
	Server string `json:"server,omitempty"` // "" = the one server that offers uri
	URI    string `json:"uri"`
	// Subscribe asks for switchboard/resourcesChanged (kind resourceUpdated) when the resource
	// changes, while it is open; switchboard.unsubscribe ends it.
	Subscribe bool `json:"subscribe,omitempty"`
}

// ResourceContent is one entry of a resource's contents: text (capped like a tool result's) or a
// base64 blob.
type ResourceContent struct {
	URI       string `json:"uri"`
	MIMEType  string `json:"mimeType,omitempty"`
	Text      string `json:"text,omitempty"`
	Blob      string `json:"blob,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Bytes     int    `json:"bytes"`
}

// ReadResourceResult is the result of switchboard.readResource.
type ReadResourceResult struct {
	Server   string            `json:"server"`
	URI      string            `json:"uri"`
	Contents []ResourceContent `json:"contents"`
}

// UnsubscribeParams is arguments[0] of switchboard.unsubscribe.
type UnsubscribeParams struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// Prompt is one prompt a server lists.
type Prompt struct {
	Server      string           `json:"server"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required"`
}

// GetPromptParams is arguments[0] of switchboard.getPrompt, and ChatParams.serverPrompt.
type GetPromptParams struct {
	Server    string            `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// PromptMessage is one message of a prompt: Text is a text block's text (capped), or a
// description of another block, which Content keeps as the server sent it.
type PromptMessage struct {
	Role    string `json:"role"` // user | assistant
	Text    string `json:"text"`
	Content any    `json:"content"`
}

// GetPromptResult is the result of switchboard.getPrompt.
type GetPromptResult struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Truncated   bool            `json:"truncated,omitempty"`
}

// CompleteParams is arguments[0] of switchboard.complete: the values of one argument of a prompt
// (prompt) or of a variable of a resource template (template).
type CompleteParams struct {
	Server   string            `json:"server"`
	Prompt   string            `json:"prompt,omitempty"`
	Template string            `json:"template,omitempty"` // the uriTemplate
	Argument string            `json:"argument"`
	Value    string            `json:"value"`             // what is typed so far
	Context  map[string]string `json:"context,omitempty"` // the other arguments already given
}

// CompleteResult is the result of switchboard.complete (at most 100 values).
type CompleteResult struct {
	Values []string `json:"values"`
}

// ResourceRef is one resource attached to a chat turn (ChatParams.attachments).
type ResourceRef struct {
	Server string `json:"server,omitempty"` // "" = the one server that offers uri
	URI    string `json:"uri"`
}

// ResourcesChangedParams is the params of switchboard/resourcesChanged.
type ResourcesChangedParams struct {
	Server string `json:"server"`
	Kind   string `json:"kind"`          // resourcesChanged | promptsChanged | resourceUpdated
	URI    string `json:"uri,omitempty"` // resourceUpdated: the subscribed resource
}
