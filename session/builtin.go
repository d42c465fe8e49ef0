package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// Built-in tool names. They carry no mcp__ prefix.
const (
	ToolReadFile       = "read_file"
	ToolListFiles      = "list_files"
	ToolSearchFiles    = "search_files"
	ToolEditFile       = "edit_file"
	ToolReadToolResult = "read_tool_result"
	// ToolSearchTools: see toolsearch.go.
)

// Limits of the built-in tools.
const (
	maxReadBytes      = 8 << 20 // read_file, edit_file: larger files are refused
	maxListEntries    = 1000
	maxSearchResults  = 200
	maxSearchFiles    = 20000
	maxSearchFileSize = 2 << 20
	maxSearchLine     = 300
)

// builtin is one built-in tool.
type builtin struct {
	tool     mcpbridge.Tool
	readOnly bool // ReadOnlyBuiltin in the gate request
	// run executes the call. conv is nil for direct calls (switchboard.callTool).
	run func(ctx context.Context, m *Manager, conv *convo, args json.RawMessage) (string, error)
	// runResult, when set instead of run, returns a whole result (content blocks such as images).
	runResult func(ctx context.Context, m *Manager, conv *convo, args json.RawMessage) (mcpbridge.Result, error)
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

var builtins = []builtin{
	{
		tool: mcpbridge.Tool{Name: ToolReadFile, Tool: ToolReadFile,
			Description: "Read a text file of the workspace. Returns the editor's unsaved text when the file is open. " +
				"Paths are relative to the first workspace folder, or absolute inside a workspace folder. " +
				"Use offset/limit (1-based line numbers) for parts of large files.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"file path"},"offset":{"type":"integer","description":"first line (1-based)"},"limit":{"type":"integer","description":"number of lines"}},"required":["path"]}`)},
		readOnly: true,
		run:      readFile,
	},
	{
		tool: mcpbridge.Tool{Name: ToolListFiles, Tool: ToolListFiles,
			Description: "List files and folders (folders end with /) under a workspace path, optionally recursively. .git is skipped.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"folder, default the workspace root"},"recursive":{"type":"boolean"}}}`)},
		readOnly: true,
		run:      listFiles,
	},
	{
		tool: mcpbridge.Tool{Name: ToolSearchFiles, Tool: ToolSearchFiles,
			Description: "Search text files under a workspace path for a regular expression (RE2 syntax). Returns path:line: text, at most 200 matches.",
			InputSchema: schema(`{"type":"object","properties":{"pattern":{"type":"string","description":"RE2 regular expression"},"path":{"type":"string","description":"folder or file, default the workspace root"},"glob":{"type":"string","description":"only files whose name matches this glob, e.g. *.go"}},"required":["pattern"]}`)},
		readOnly: true,
		run:      searchFiles,
	},
	{
		tool: mcpbridge.Tool{Name: ToolEditFile, Tool: ToolEditFile,
			Description: "Change a workspace file through the editor (the user sees the change and can undo it). " +
				"Either replace old_string (which must occur exactly once, or set replace_all) by new_string, " +
				"or give content to replace the whole file or create it.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"},"content":{"type":"string","description":"the whole new text (instead of old_string/new_string)"}},"required":["path"]}`)},
		run: editFile,
	},
	{
		tool: mcpbridge.Tool{Name: ToolReadToolResult, Tool: ToolReadToolResult,
			Description: "Read more of an earlier tool result that was cut to fit the context. Give the call id and the byte offset the cut note names (or page, counted from 0).",
			InputSchema: schema(`{"type":"object","properties":{"id":{"type":"string","description":"the tool call id"},"offset":{"type":"integer","description":"byte offset"},"page":{"type":"integer","description":"page number; page n starts at n times the page size"}},"required":["id"]}`)},
		readOnly: true,
		run:      readToolResult,
	},
}

var builtinByName = func() map[string]*builtin {
	m := make(map[string]*builtin, len(builtins))
	for i := range builtins {
		m[builtins[i].tool.Name] = &builtins[i]
	}
	m[ToolSearchTools] = &searchToolsBuiltin   // offered only above the tool-search threshold
	m[ToolReadResource] = &readResourceBuiltin // offered when the Tools can read resources
	return m
}()

func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("bad arguments: %v", err)
	}
	return nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// evalExisting resolves symlinks of p, or of its longest existing ancestor when p does not exist.
func evalExisting(p string) (string, error) {
	rest := ""
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// resolve maps a tool's path argument to an absolute path inside a workspace folder. A relative
// path is taken against the first folder where it exists (else the first folder). Symlinks that
// lead out of every folder are refused.
func (m *Manager) resolve(p string) (string, error) {
	ws := m.opts.Workspace
	if ws == nil {
		return "", errors.New("no workspace: the editor has not opened a folder")
	}
	folders := ws.Folders()
	if len(folders) == 0 {
		return "", errors.New("no workspace folder is open")
	}
	if p == "" {
		p = "."
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(folders[0], p)
		for _, f := range folders {
			c := filepath.Join(f, p)
			if _, err := os.Lstat(c); err == nil {
				abs = c
				break
			}
		}
	}
	inside := false
	for _, f := range folders {
		if within(filepath.Clean(f), abs) {
			inside = true
			break
		}
	}
	if !inside {
		return "", fmt.Errorf("%s is outside the workspace folders", p)
	}
	real, err := evalExisting(abs)
	if err != nil {
		return "", err
	}
	for _, f := range folders {
		rf, err := filepath.EvalSymlinks(f)
		if err != nil {
			continue
		}
		if within(rf, real) {
			return abs, nil
		}
	}
	return "", fmt.Errorf("%s leads outside the workspace folders (symlink)", p)
}

// text returns the editor's buffer of abs when open, else the file on disk.
func (m *Manager) text(abs string) (string, error) {
	if t, ok := m.opts.Workspace.Buffer(abs); ok {
		return t, nil
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a folder (use list_files)", abs)
	}
	if fi.Size() > maxReadBytes {
		return "", fmt.Errorf("%s has %d bytes; files over %d bytes are not read", abs, fi.Size(), maxReadBytes)
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func readFile(_ context.Context, m *Manager, _ *convo, args json.RawMessage) (string, error) {
	var a struct {
		Path          string
		Offset, Limit int
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	if a.Path == "" {
		return "", errors.New("path is required")
	}
	abs, err := m.resolve(a.Path)
	if err != nil {
		return "", err
	}
	t, err := m.text(abs)
	if err != nil {
		return "", err
	}
	if a.Offset <= 0 && a.Limit <= 0 {
		return t, nil
	}
	lines := strings.SplitAfter(t, "\n")
	from := max(a.Offset, 1) - 1
	if from >= len(lines) {
		return "", fmt.Errorf("offset %d is past the end (%d lines)", a.Offset, len(lines))
	}
	to := len(lines)
	if a.Limit > 0 {
		to = min(to, from+a.Limit)
	}
	return strings.Join(lines[from:to], ""), nil
}

func skipDir(name string) bool { return name == ".git" }

func listFiles(_ context.Context, m *Manager, _ *convo, args json.RawMessage) (string, error) {
	var a struct {
		Path      string
		Recursive bool
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	abs, err := m.resolve(a.Path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	n, more := 0, 0
	add := func(rel string, dir bool) {
		if n >= maxListEntries {
			more++
			return
		}
		n++
		b.WriteString(filepath.ToSlash(rel))
		if dir {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	if !a.Recursive {
		ents, err := os.ReadDir(abs)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			if !(e.IsDir() && skipDir(e.Name())) {
				add(e.Name(), e.IsDir())
			}
		}
	} else {
		err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == abs {
				return nil // ignore error: unreadable entries are skipped
			}
			if d.IsDir() && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(abs, p)
			add(rel, d.IsDir())
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "[%d more entries not shown]\n", more)
	}
	if n == 0 {
		return "(empty)", nil
	}
	return b.String(), nil
}

func searchFiles(ctx context.Context, m *Manager, _ *convo, args json.RawMessage) (string, error) {
	var a struct {
		Pattern, Path, Glob string
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return "", fmt.Errorf("bad pattern: %v", err)
	}
	abs, err := m.resolve(a.Path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	matches, files, more := 0, 0, false
	errStop := errors.New("stop")
	walkErr := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // ignore error: unreadable entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p != abs && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if a.Glob != "" {
			if ok, _ := filepath.Match(a.Glob, d.Name()); !ok {
				return nil
			}
		}
		if files++; files > maxSearchFiles {
			more = true
			return errStop
		}
		var text string
		if t, ok := m.opts.Workspace.Buffer(p); ok {
			text = t
		} else {
			fi, err := d.Info()
			if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSearchFileSize {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil || bytes.IndexByte(data, 0) >= 0 {
				return nil // unreadable or binary
			}
			text = string(data)
		}
		rel, _ := filepath.Rel(abs, p)
		if rel == "." {
			rel = filepath.Base(p)
		}
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(nil, maxSearchFileSize+1)
		for line := 1; sc.Scan(); line++ {
			if !re.MatchString(sc.Text()) {
				continue
			}
			if matches >= maxSearchResults {
				more = true
				return errStop
			}
			matches++
			l := sc.Text()
			if len(l) > maxSearchLine {
				l = cutUTF8(l, maxSearchLine) + "..."
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", filepath.ToSlash(rel), line, l)
		}
		return nil
	})
	if walkErr != nil && walkErr != errStop {
		return "", walkErr
	}
	if more {
		fmt.Fprintf(&b, "[search stopped at %d matches / %d files: narrow the pattern, path or glob]\n", matches, min(files, maxSearchFiles))
	}
	if matches == 0 {
		return "no matches", nil
	}
	return b.String(), nil
}

func editFile(ctx context.Context, m *Manager, _ *convo, args json.RawMessage) (string, error) {
	var a struct {
		Path       string  `json:"path"`
		OldString  *string `json:"old_string"`
		NewString  *string `json:"new_string"`
		ReplaceAll bool    `json:"replace_all"`
		Content    *string `json:"content"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	if a.Path == "" {
		return "", errors.New("path is required")
	}
	abs, err := m.resolve(a.Path)
	if err != nil {
		return "", err
	}
	var newText string
	switch {
	case a.Content != nil && a.OldString == nil:
		newText = *a.Content
	case a.OldString != nil && a.NewString != nil && a.Content == nil:
		if *a.OldString == "" {
			return "", errors.New("old_string is empty (use content to write a whole file)")
		}
		cur, err := m.text(abs)
		if err != nil {
			return "", err
		}
		n := strings.Count(cur, *a.OldString)
		switch {
		case n == 0:
			return "", fmt.Errorf("old_string not found in %s", a.Path)
		case n > 1 && !a.ReplaceAll:
			return "", fmt.Errorf("old_string occurs %d times in %s: give more context or set replace_all", n, a.Path)
		}
		newText = strings.Replace(cur, *a.OldString, *a.NewString, -1)
	default:
		return "", errors.New("give either old_string and new_string, or content")
	}
	ok, err := m.opts.Workspace.ApplyEdit(ctx, abs, newText)
	if err != nil {
		return "", fmt.Errorf("the editor could not apply the edit: %v", err)
	}
	if !ok {
		return "", errors.New("the editor did not apply the edit")
	}
	return fmt.Sprintf("edited %s (%d bytes)", a.Path, len(newText)), nil
}

func readToolResult(_ context.Context, m *Manager, conv *convo, args json.RawMessage) (string, error) {
	var a struct {
		ID           string
		Offset, Page int
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	if conv == nil {
		return "", errors.New("read_tool_result only works inside a conversation")
	}
	full, ok := conv.result(a.ID)
	if !ok {
		return "", fmt.Errorf("no kept tool result with id %q (only results that were cut are kept)", a.ID)
	}
	budget := m.resultBudget()
	off := a.Offset
	if a.Page > 0 && off == 0 {
		off = a.Page * budget
	}
	return page(a.ID, full, off, budget), nil
}
