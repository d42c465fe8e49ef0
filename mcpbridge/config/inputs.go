package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// Input is one entry of a config file's "inputs" array (VS Code's format): a value the person is
// asked for the first time a server whose definition uses ${input:ID} starts. Its value is a
// secret like a ${env:X} value: definitions, statuses, prompts and logs keep the template; only
// [ServerConfig.Resolve] reads it, and only the token store ([tokenstore.Store], the OS keychain or a
// 0600 file) keeps it.
type Input struct {
	ID          string   `json:"id"`
	Type        string   `json:"type"` // InputPromptString or InputPickString
	Description string   `json:"description,omitempty"`
	Password    bool     `json:"password,omitempty"`
	Options     []string `json:"options,omitempty"` // pickString
	Default     string   `json:"default,omitempty"`
	// Key is where the value is kept: InputKey of the defining file and ID.
	Key string `json:"-"`
	// File is the file that declares the input (absolute), or SourceEditor.
	File string `json:"-"`
}

// The input types Switchboard asks for (VS Code's "command" inputs run editor commands: not here).
const (
	InputPromptString = "promptString"
	InputPickString   = "pickString"
)

// InputKey is the key an input's value is kept under: the absolute path of the file that
// declares it and its id. A file's inputs are its own: another workspace's file that declares an
// input of the same id (say "github-token") never reads this one's value; the person is asked
// again, for that file, and sees which server asks.
func InputKey(file, id string) string { return file + "#" + id }

// inputVarPrefix makes an input's key a name that no environment variable can have (it holds
// "="): [ServerConfig.Resolve] and [ServerConfig.Redact] read an input's value through their
// getenv under [InputVar], so the host answers it from its input store.
const inputVarPrefix = "switchboard-input="

// InputVar is the name under which Resolve and Redact ask their getenv for the input of key.
func InputVar(key string) string { return inputVarPrefix + key }

// InputKeyOfVar returns the key of an InputVar name; false for any other name.
func InputKeyOfVar(name string) (string, bool) { return strings.CutPrefix(name, inputVarPrefix) }

// inputAccountPrefix marks an input's entry in a tokenstore.Store; server names never hold ':'.
const inputAccountPrefix = "input:"

// LoadInput reads the value kept for key from store; tokenstore.ErrNoCredential when there is none.
func LoadInput(ctx context.Context, store tokenstore.Store, key string) (string, error) {
	c, err := store.Load(ctx, inputAccountPrefix+key)
	if err != nil {
		return "", err
	}
	if c.TokenType != "input" {
		return "", tokenstore.ErrNoCredential
	}
	return c.AccessToken, nil
}

// SaveInput keeps value for key in store (the same keychain entry or 0600 file as OAuth tokens).
func SaveInput(ctx context.Context, store tokenstore.Store, key, value string) error {
	return store.Save(ctx, inputAccountPrefix+key, tokenstore.Credential{AccessToken: value, TokenType: "input"})
}

// DeleteInput forgets the value kept for key.
func DeleteInput(ctx context.Context, store tokenstore.Store, key string) error {
	return store.Delete(ctx, inputAccountPrefix+key)
}

// ParseInputs reads a config file's "inputs" array. Entries of other types ("command") are
// returned with their type: a server that uses one fails to load with a message saying so.
func ParseInputs(file string, raw json.RawMessage) (map[string]Input, error) {
	var list []Input
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New(`must be an array of {"type", "id", "description", "password"} objects`)
	}
	abs := file
	if file != SourceEditor {
		if a, err := filepath.Abs(file); err == nil {
			abs = a
		}
	}
	out := make(map[string]Input, len(list))
	for i, in := range list {
		if in.ID == "" {
			return nil, fmt.Errorf("entry %d has no \"id\"", i+1)
		}
		if in.Type == InputPickString && len(in.Options) == 0 {
			return nil, fmt.Errorf("input %q: a pickString needs \"options\"", in.ID)
		}
		in.File = abs
		in.Key = InputKey(abs, in.ID)
		out[in.ID] = in
	}
	return out, nil
}

// inputRef is the id of an ${input:ID} reference ("" when m is not one).
func inputRef(m string) string {
	id, _ := strings.CutPrefix(m[2:len(m)-1], "input:")
	if id == m[2:len(m)-1] {
		return ""
	}
	return id
}

// InputRefs lists the ids of the inputs c uses, in the order of first use (command, args, cwd,
// url, env by key, headers by name, the OAuth client secret).
func (c ServerConfig) InputRefs() []string {
	var out []string
	add := func(s string) {
		if !strings.Contains(s, "${") { // no reference: the regexp is not needed
			return
		}
		for _, m := range varRE.FindAllString(s, -1) {
			if id := inputRef(m); id != "" && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	add(c.Command)
	for _, a := range c.Args {
		add(a)
	}
	add(c.Cwd)
	add(c.URL)
	for _, k := range sortedKeys(c.Env) {
		add(c.Env[k])
	}
	for _, k := range sortedKeys(c.Headers) {
		add(c.Headers[k])
	}
	if c.OAuth != nil {
		add(c.OAuth.ClientSecret)
	}
	return out
}

// usedInputs checks that every input cfg uses is declared in declared and supported, and returns
// them in order of use.
func usedInputs(cfg ServerConfig, declared map[string]Input, bad func(key, format string, args ...any)) []Input {
	var out []Input
	for _, id := range cfg.InputRefs() {
		in, ok := declared[id]
		switch {
		case !ok:
			// expand reported it
		case in.Type != InputPromptString && in.Type != InputPickString:
			bad("", `input %q has type %q: Switchboard asks for promptString and pickString inputs only`, id, in.Type)
		default:
			out = append(out, in)
		}
	}
	return out
}

// inputKey is the key of c's input id.
func (c ServerConfig) inputKey(id string) string {
	for _, in := range c.Inputs {
		if in.ID == id {
			return in.Key
		}
	}
	return InputKey(c.Source, id)
}

// inputRedactions are the Redact pairs for c's input values: each becomes "${input:ID}".
func (c ServerConfig) inputRedactions(s string, getenv func(string) (string, bool)) [][2]string {
	var pairs [][2]string
	for _, in := range c.Inputs {
		v, ok := getenv(InputVar(in.Key))
		if !ok || len(v) < minSecret {
			continue
		}
		for _, f := range secretForms(v) {
			if strings.Contains(s, f) {
				pairs = append(pairs, [2]string{f, "${input:" + in.ID + "}"})
			}
		}
	}
	return pairs
}

// InputSentence is the trust prompt's sentence about the inputs c asks for ("" when none).
func (c ServerConfig) InputSentence() string {
	if len(c.Inputs) == 0 {
		return ""
	}
	parts := make([]string, len(c.Inputs))
	for i, in := range c.Inputs {
		parts[i] = "'" + shownKey(in.ID) + "'"
		if in.Password {
			parts[i] += " (a password)"
		}
	}
	return "It asks you for input " + strings.Join(parts, ", ") + " when it starts."
}

// ConfigFiles are the files LoadConfig reads for userFile ("" = DefaultUserFile) and folders, in
// reading order (a missing one included).
func ConfigFiles(userFile string, folders []string, getenv func(string) (string, bool)) []string {
	if userFile == "" {
		userFile = DefaultUserFile(getenv)
	}
	out := []string{userFile}
	for _, folder := range folders {
		for _, f := range workspaceFiles {
			out = append(out, filepath.Join(folder, filepath.FromSlash(f)))
		}
	}
	return out
}

// FileInputs reads the "inputs" a config file declares (JSONC), by id; nil when it has none.
func FileInputs(path string) (map[string]Input, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if data, err = standardizeJSONC(data); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %s", path, jsonErrorAt(data, err))
	}
	raw, ok := top["inputs"]
	if !ok {
		return nil, nil
	}
	in, err := ParseInputs(path, raw)
	if err != nil {
		return nil, fmt.Errorf("%s: inputs: %v", path, err)
	}
	return in, nil
}
