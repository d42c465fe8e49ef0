package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/tailscale/hujson"
)

// Entry is one server entry as written in a config file (the keys LoadConfig accepts).
type Entry struct {
	Type                  string            `json:"type,omitempty"`
	Command               string            `json:"command,omitempty"`
	Args                  []string          `json:"args,omitempty"`
	Env                   map[string]string `json:"env,omitempty"`
	EnvFile               string            `json:"envFile,omitempty"`
	Cwd                   string            `json:"cwd,omitempty"`
	URL                   string            `json:"url,omitempty"`
	Headers               map[string]string `json:"headers,omitempty"`
	Disabled              bool              `json:"disabled,omitempty"`
	StartupTimeoutSeconds float64           `json:"startupTimeoutSeconds,omitempty"`
	CallTimeoutSeconds    float64           `json:"callTimeoutSeconds,omitempty"`
	EnabledTools          []string          `json:"enabledTools,omitempty"`
	DisabledTools         []string          `json:"disabledTools,omitempty"`
	Protocol              string            `json:"protocol,omitempty"` // protocol.go
	Registry              *RegistryRef      `json:"registry,omitempty"` // registryref.go
}

// ErrServerExists and ErrServerNotFound are returned (wrapped) by AddServer and RemoveServer.
var (
	ErrServerExists   = errors.New("server already defined in this file")
	ErrServerNotFound = errors.New("server not defined in this file")
)

// CheckEntry parses e as LoadConfig would parse it in file (workspace: its folder, or "" for a
// user-level file), with every environment variable taken as set: the errors a file holding it
// would report, apart from variables missing from this shell.
func CheckEntry(file, workspace, name string, e Entry) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	l := loader{getenv: func(k string) (string, bool) {
		if k == "HOME" {
			return os.LookupEnv(k)
		}
		return "", true
	}}
	_, errs := l.parseEntry(file, workspace, name, raw)
	return errors.Join(errs...)
}

// FileServers returns the names of the servers path defines ("mcpServers" and "servers"), in
// file order. A missing file defines none.
func FileServers(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	root, err := parseConfigFile(path, data)
	if err != nil || root == nil {
		return nil, err
	}
	var names []string
	for _, key := range serverKeys {
		if obj := memberObject(root, key); obj != nil {
			for _, m := range obj.Members {
				names = append(names, m.Name.Value.(hujson.Literal).String())
			}
		}
	}
	return names, nil
}

var serverKeys = []string{"mcpServers", "servers"}

// AddServer adds server name with entry e to the config file at path (created when missing),
// under its "mcpServers" object (or "servers" when the file has only that). Everything else in
// the file (comments, order, formatting, trailing commas) stays byte for byte. It refuses a
// name the file already defines (ErrServerExists) and a malformed file. The write is atomic,
// under a lock on path + ".lock".
func AddServer(path, name string, e Entry) error {
	return AddServerInputs(path, name, e, nil)
}

// AddServerInputs is AddServer that also declares inputs in the file's "inputs" array (created
// when missing), in the same locked write: the ${input:ID} the entry uses. An input the file
// already declares the same way is kept as it is; one declared differently is an error (the
// entry would ask a question other than the one shown).
func AddServerInputs(path, name string, e Entry, inputs []Input) error {
	if err := ValidServerName(name); err != nil {
		return fmt.Errorf("mcpbridge: add %s: %w", name, err)
	}
	val, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return editFile(path, func(data []byte) ([]byte, error) {
		data, err := addServerEdit(path, name, val, data)
		if err != nil || len(inputs) == 0 {
			return data, err
		}
		return addInputsEdit(path, inputs, data)
	})
}

// addInputsEdit appends the inputs the file does not declare yet to its "inputs" array.
func addInputsEdit(path string, inputs []Input, data []byte) ([]byte, error) {
	root, err := parseConfigFile(path, data)
	if err != nil {
		return nil, err
	}
	obj := root.Value.(*hujson.Object)
	i := findMember(obj, "inputs")
	if i < 0 {
		val, err := json.Marshal(inputs)
		if err != nil {
			return nil, err
		}
		return insertMember(data, root, "inputs", val), nil
	}
	arrV := &obj.Members[i].Value
	arr, ok := arrV.Value.(*hujson.Array)
	if !ok {
		return nil, fmt.Errorf("%s: \"inputs\" must be an array", path)
	}
	declared := map[string]Input{}
	for _, el := range arr.Elements {
		var in Input
		std := el.Clone()
		std.Standardize()
		if json.Unmarshal(std.Pack(), &in) == nil && in.ID != "" {
			declared[in.ID] = in
		}
	}
	var add []Input
	for _, in := range inputs {
		have, ok := declared[in.ID]
		switch {
		case !ok:
			add = append(add, in)
			declared[in.ID] = in
		case have.Type != in.Type || have.Password != in.Password || have.Default != in.Default || !slices.Equal(have.Options, in.Options):
			return nil, fmt.Errorf("%s: input %q is already declared differently; remove it or pick another server name", path, in.ID)
		}
	}
	for _, in := range add {
		val, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		data = appendElement(data, arrV, val)
		if root, err = parseConfigFile(path, data); err != nil {
			return nil, err
		}
		obj = root.Value.(*hujson.Object)
		arrV = &obj.Members[findMember(obj, "inputs")].Value
	}
	return data, nil
}

// appendElement adds val (compact JSON) as the last element of the array v, changing no other
// byte but the comma the previous element needs.
func appendElement(data []byte, v *hujson.Value, val []byte) []byte {
	arr := v.Value.(*hujson.Array)
	closing := v.EndOffset - 1 // the ']'
	var out bytes.Buffer
	n := len(arr.Elements)
	if n == 0 {
		out.Write(data[:closing])
		out.Write(val)
		out.Write(data[closing:])
		return out.Bytes()
	}
	last := arr.Elements[n-1]
	sep := ", "
	if bytes.IndexByte(last.BeforeExtra, '\n') >= 0 {
		sep = ",\n" + lineIndent(data, last.StartOffset)
	}
	if last.AfterExtra != nil { // a trailing comma: the new element goes after it, with its own
		at := last.EndOffset + len(last.AfterExtra) + 1
		out.Write(data[:at])
		out.WriteString(strings.TrimPrefix(sep, ",") + string(val) + ",")
		out.Write(data[at:])
		return out.Bytes()
	}
	out.Write(data[:last.EndOffset])
	out.WriteString(sep + string(val))
	out.Write(data[last.EndOffset:])
	return out.Bytes()
}

func addServerEdit(path, name string, val, data []byte) ([]byte, error) {
	{
		if len(bytes.TrimSpace(data)) == 0 {
			data = []byte("{\n  \"mcpServers\": {\n  }\n}\n")
		}
		root, err := parseConfigFile(path, data)
		if err != nil {
			return nil, err
		}
		for _, key := range serverKeys {
			if obj := memberObject(root, key); obj != nil && findMember(obj, name) >= 0 {
				return nil, fmt.Errorf("%s: %q: %w", path, name, ErrServerExists)
			}
		}
		key := "mcpServers"
		if memberObject(root, key) == nil && memberObject(root, "servers") != nil {
			key = "servers"
		}
		if memberObject(root, key) == nil {
			// A file without a servers object: add an empty one, then the entry into it.
			data = insertMember(data, root, key, []byte("{}"))
			if root, err = parseConfigFile(path, data); err != nil {
				return nil, err
			}
		}
		obj := root.Value.(*hujson.Object)
		for i := range obj.Members {
			if obj.Members[i].Name.Value.(hujson.Literal).String() == key {
				return insertMember(data, &obj.Members[i].Value, name, val), nil
			}
		}
		return nil, fmt.Errorf("%s: no %q object", path, key) // not reached
	}
}

// RemoveServer removes server name from the config file at path, with the comments before it
// and on its lines; the rest of the file stays byte for byte. ErrServerNotFound when the file
// does not define it.
func RemoveServer(path, name string) error {
	return editFile(path, func(data []byte) ([]byte, error) {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, fmt.Errorf("%s: %q: %w", path, name, ErrServerNotFound)
		}
		root, err := parseConfigFile(path, data)
		if err != nil {
			return nil, err
		}
		removed := false
		for _, key := range serverKeys {
			// Remove every definition (a name may be in both objects, or twice): the last one
			// would otherwise take over.
			for {
				obj := memberObject(root, key)
				if obj == nil {
					break
				}
				i := findMember(obj, name)
				if i < 0 {
					break
				}
				data, removed = removeMember(data, obj, i), true
				if root, err = parseConfigFile(path, data); err != nil {
					return nil, err
				}
			}
		}
		if !removed {
			return nil, fmt.Errorf("%s: %q: %w", path, name, ErrServerNotFound)
		}
		return data, nil
	})
}

// parseConfigFile parses a JSONC config file whose top level must be an object.
func parseConfigFile(path string, data []byte) (*hujson.Value, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, jsoncError(err))
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("%s: top level must be a JSON object", path)
	}
	return &v, nil
}

// memberObject is the object value of root's member key, or nil.
func memberObject(root *hujson.Value, key string) *hujson.Object {
	obj := root.Value.(*hujson.Object)
	if i := findMember(obj, key); i >= 0 {
		o, _ := obj.Members[i].Value.Value.(*hujson.Object)
		return o
	}
	return nil
}

// findMember is the index of the last member named name, or -1.
func findMember(obj *hujson.Object, name string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// lineIndent is the run of spaces and tabs that starts the line holding offset off.
func lineIndent(data []byte, off int) string {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// insertMember inserts "name": val (compact JSON, re-indented to fit) as the last member of the
// object v, changing no other byte but the one comma the previous member needs.
func insertMember(data []byte, v *hujson.Value, name string, val []byte) []byte {
	obj := v.Value.(*hujson.Object)
	objIndent := lineIndent(data, v.StartOffset)
	unit := "  "
	indent := objIndent + unit
	if n := len(obj.Members); n > 0 {
		first := obj.Members[0].Name
		if bytes.IndexByte(first.BeforeExtra, '\n') >= 0 {
			indent = lineIndent(data, first.StartOffset)
			if u, ok := strings.CutPrefix(indent, objIndent); ok && u != "" {
				unit = u
			}
		}
	}
	closing := v.EndOffset - 1 // the '}'
	after := obj.AfterExtra    // extra before '}'
	multiline := bytes.IndexByte(after, '\n') >= 0
	if n := len(obj.Members); n > 0 {
		multiline = multiline || bytes.IndexByte(obj.Members[n-1].Value.AfterExtra, '\n') >= 0
	}
	q, _ := json.Marshal(name) // ignore error: strings always marshal
	member := string(q) + ": " + string(val)
	if multiline {
		var ind bytes.Buffer
		json.Indent(&ind, val, indent, unit) // ignore error: val is valid JSON from json.Marshal
		member = string(q) + ": " + ind.String()
	}
	var out bytes.Buffer
	switch n := len(obj.Members); {
	case n == 0 && multiline:
		at := closing - len(after) + bytes.LastIndexByte(after, '\n')
		out.Write(data[:at])
		out.WriteString("\n" + indent + member)
		out.Write(data[at:])
	case n == 0:
		out.Write(data[:closing])
		out.WriteString(member)
		out.Write(data[closing:])
	default:
		last := obj.Members[n-1].Value
		trailing := last.AfterExtra != nil
		at := closing
		if multiline {
			at = closing - len(after) + bytes.LastIndexByte(after, '\n')
		}
		sep := " "
		if multiline {
			sep = "\n" + indent
		}
		if trailing {
			out.Write(data[:at])
			out.WriteString(sep + member + ",")
			out.Write(data[at:])
		} else if multiline {
			out.Write(data[:last.EndOffset])
			out.WriteString(",")
			out.Write(data[last.EndOffset:at])
			out.WriteString(sep + member)
			out.Write(data[at:])
		} else {
			out.Write(data[:last.EndOffset])
			out.WriteString(", " + member)
			out.Write(data[last.EndOffset:])
		}
	}
	return out.Bytes()
}

// removeMember cuts member i of obj out of data: from the end of the previous comma (or the
// '{') through its own comma, plus whatever follows on its last line (a comment about it).
func removeMember(data []byte, obj *hujson.Object, i int) []byte {
	m := obj.Members[i]
	start := m.Name.StartOffset - len(m.Name.BeforeExtra)
	if nl := bytes.IndexByte(m.Name.BeforeExtra, '\n'); nl >= 0 {
		start += nl // what is on the previous member's line is about that member
	}
	var end int
	var following hujson.Extra
	switch {
	case i+1 < len(obj.Members):
		next := obj.Members[i+1].Name
		end = next.StartOffset - len(next.BeforeExtra)
		following = next.BeforeExtra
	case m.Value.AfterExtra != nil: // last, with a trailing comma
		end = m.Value.EndOffset + len(m.Value.AfterExtra) + 1
		following = obj.AfterExtra
	case i > 0: // last, no trailing comma: the previous member's comma goes too
		prev := obj.Members[i-1].Value
		start = prev.EndOffset + len(prev.AfterExtra)
		end = m.Value.EndOffset
		following = obj.AfterExtra
	default: // the only member
		end = m.Value.EndOffset
		following = obj.AfterExtra
	}
	if nl := bytes.IndexByte(following, '\n'); nl >= 0 {
		end += nl
	}
	return append(append([]byte(nil), data[:start]...), data[end:]...)
}

// editLockTimeout bounds how long a writer waits for another process's lock.
const editLockTimeout = 30 * time.Second

// editFile changes the file at path under a lock on path + ".lock" (not on the file itself: the
// atomic rename replaces its inode): read it again, apply edit, check the result still parses,
// write it atomically (temp file in the same folder, fsync, rename; a plain write on Windows).
// A new file gets mode 0600; an existing one keeps its mode.
func editFile(path string, edit func([]byte) ([]byte, error)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("mcpbridge: %w", err)
	}
	l := flock.New(path+".lock", flock.SetPermissions(0o600))
	ctx, cancel := context.WithTimeout(context.Background(), editLockTimeout)
	defer cancel()
	ok, err := l.TryLockContext(ctx, 2*time.Millisecond)
	if err != nil || !ok {
		l.Close()
		return fmt.Errorf("mcpbridge: lock %s: another process holds it (%v)", path, err)
	}
	defer func() { l.Unlock(); l.Close() }()

	data, err := os.ReadFile(path)
	perm := fs.FileMode(0o600)
	if err == nil {
		if fi, serr := os.Stat(path); serr == nil {
			perm = fi.Mode().Perm()
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mcpbridge: %w", err)
	}
	out, err := edit(data)
	if err != nil {
		return fmt.Errorf("mcpbridge: %w", err)
	}
	if _, err := standardizeJSONC(out); err != nil {
		return fmt.Errorf("mcpbridge: %s: the edit would break the file (not written): %v", path, err)
	}
	if err := writeFileAtomic(path, out, perm); err != nil {
		return fmt.Errorf("mcpbridge: write %s: %w", path, err)
	}
	return nil
}
