// Package yamldoc decodes YAML (and JSON) files into documents of
// JSON-compatible values, keeping lines so findings can point at them. Bundle
// manifests and file-based catalogs are both read through it.
package yamldoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// SyntaxError is a file that is not valid YAML or JSON. It is kept apart from
// other load errors so that a typo is never reported as "no CSV found".
type SyntaxError struct {
	File string
	Line int // 1-based; 0 when unknown
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: syntax error: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: syntax error: %s", e.File, e.Msg)
}

var yamlLineRe = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// parserErrors are the yaml.v3 messages raised by its parser rather than
// its scanner: yaml.v3 reports their line counted from 0, the scanner's
// from 1.
var parserErrors = []string{
	"did not find expected <document start>", "did not find expected node content",
	"did not find expected key", "did not find expected '-' indicator",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found undefined tag handle", "found duplicate %YAML directive",
	"found incompatible YAML document", "found duplicate %TAG directive",
}

func syntaxError(file string, data []byte, err error) *SyntaxError {
	msg := err.Error()
	line := 0
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		msg = m[2]
		if m[1] != "" {
			line, _ = strconv.Atoi(m[1])
			for _, p := range parserErrors {
				if strings.HasPrefix(msg, p) {
					line++
					break
				}
			}
		}
	}
	if line == 0 {
		// yaml.v3's reader errors (bad UTF-8, control characters) carry
		// no position: find the byte ourselves.
		if l, what := badByte(data); l > 0 {
			line = l
			msg += ": " + what
		}
	}
	return &SyntaxError{File: file, Line: line, Msg: msg}
}

// badByte finds the first byte YAML refuses outright: one that is not
// UTF-8, or a control character other than tab, line feed and carriage
// return. It returns its line and what it is, or 0.
func badByte(data []byte) (int, string) {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return line, fmt.Sprintf("byte 0x%02x at column %d is not UTF-8 (save the file as UTF-8)", data[i], col)
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r' || r == 0xFEFF:
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f && r != 0x85):
			name := fmt.Sprintf("U+%04X", r)
			if r == 0 {
				name = "NUL (U+0000)"
			}
			return line, fmt.Sprintf("control character %s at column %d (remove it; binary data or a UTF-16 file shows this)", name, col)
		}
		i += size
		col++
	}
	return 0, ""
}

// Document is one YAML document of a file, decoded into JSON-compatible values
// (map[string]any, []any, string, int64, float64, bool, nil). The node tree is
// kept so findings can point at a line.
type Document struct {
	Index int // position within the file, from 0
	Line  int // first line of the document in the file
	Value any
	// Ambiguous lists plain scalars that YAML 1.1 and YAML 1.2 tools read
	// differently; the value above follows Kubernetes (YAML 1.1 booleans).
	Ambiguous []Ambiguity
	// Duplicates lists keys given twice in one mapping (the last one wins).
	Duplicates []Ambiguity
	node       *yaml.Node
}

// Ambiguity is a plain (unquoted) scalar whose meaning depends on the YAML
// version of the reader.
type Ambiguity struct {
	Line  int
	Value string
	// Reading says how each kind of reader takes it.
	Reading string
	// Path is the field path of the value within its document, such as
	// metadata.name (set for Duplicates).
	Path string
}

// converter turns nodes into values and notes ambiguous scalars on the way.
type converter struct {
	file       string
	ambiguous  []Ambiguity
	duplicates []Ambiguity
	visited    int
	// path holds the keys (and [i] indexes) from the document root to the
	// node being converted, for Ambiguity.Path.
	path []pathSeg
	// cut is what cutLongScalars took out of the text (nil when nothing).
	cut *cuts
}

// pathSeg is a mapping key, or a list index when key is "" and idx >= 0.
type pathSeg struct {
	key string
	idx int
}

// pathString renders c.path followed by key like a finding's field path:
// a.b[2].c, with keys holding dots quoted in brackets.
func (c *converter) pathString(key string) string {
	var b strings.Builder
	for _, ps := range append(c.path, pathSeg{key: key, idx: -1}) {
		seg := ps.key
		switch {
		case ps.idx >= 0:
			b.WriteString("[" + strconv.Itoa(ps.idx) + "]")
		case strings.ContainsAny(seg, ".[]\"") || seg == "":
			b.WriteString("[" + strconv.Quote(seg) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		}
	}
	return b.String()
}

// Decode splits data into its YAML (or, for a .json file name, JSON)
// documents, decoded into JSON-compatible values with their lines. Empty
// documents (a stray `---`) are dropped. Files in the block-style subset
// bundle manifests and catalogs are written in take the fast path
// (fast.go); the others, and every error, go through yaml.v3. Errors are
// *SyntaxError.
func Decode(file string, data []byte) ([]Document, error) {
	if isJSONFile(file) {
		return decodeJSON(file, data)
	}
	// The fast path reads long base64 runs at memory speed: only yaml.v3
	// needs them cut out.
	if docs, ok := decodeFast(file, data); ok {
		return docs, nil
	}
	text, cut := cutLongScalars(data)
	return decodeYAML(file, data, text, cut)
}

// decodeFast is Decode through parseFast; ok is false when the
// text is not in its subset or a document does not convert (yaml.v3 then
// gives the error).
func decodeFast(file string, data []byte) ([]Document, bool) {
	roots, why := parseFast(data)
	if why != "" {
		return nil, false
	}
	docs := make([]Document, 0, len(roots))
	for _, root := range roots {
		d, keep, err := newDocument(file, root, nil, len(docs))
		if err != nil {
			return nil, false
		}
		if keep {
			docs = append(docs, d)
		}
	}
	return docs, true
}

// decodeYAML is Decode through yaml.v3; text is data with long
// scalars cut out.
func decodeYAML(file string, data, text []byte, cut *cuts) ([]Document, error) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var docs []Document
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntaxError(file, data, err)
		}
		if len(n.Content) == 0 {
			continue
		}
		d, keep, err := newDocument(file, n.Content[0], cut, len(docs))
		if err != nil {
			return nil, err
		}
		if keep {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// newDocument converts a document's root node; keep is false for an
// empty (null) document.
func newDocument(file string, root *yaml.Node, cut *cuts, index int) (d Document, keep bool, err error) {
	c := converter{file: file, cut: cut}
	v, err := c.value(root, 0)
	if err != nil {
		return Document{}, false, &SyntaxError{File: file, Line: errLine(err, root.Line), Msg: err.Error()}
	}
	if v == nil {
		return Document{}, false, nil
	}
	return Document{Index: index, Line: root.Line, Value: v, node: root, Ambiguous: c.ambiguous, Duplicates: c.duplicates}, true, nil
}

func isJSONFile(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".json") }

// decodeJSON reads a JSON file (possibly several concatenated values). It
// goes through the YAML parser when the JSON decoder fails, so the error
// carries a line number either way.
func decodeJSON(file string, data []byte) ([]Document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var docs []Document
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return nil, &SyntaxError{File: file, Line: lineAt(data, se.Offset), Msg: se.Error()}
			}
			return nil, &SyntaxError{File: file, Msg: err.Error()}
		}
		if v == nil {
			continue
		}
		docs = append(docs, Document{Index: len(docs), Value: normalizeJSON(v)})
	}
	return docs, nil
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func normalizeJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeJSON(e)
		}
	case []any:
		for i, e := range t {
			t[i] = normalizeJSON(e)
		}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

type nodeError struct {
	line int
	msg  string
}

func (e *nodeError) Error() string { return e.msg }

func errLine(err error, def int) int {
	var ne *nodeError
	if errors.As(err, &ne) && ne.line > 0 {
		return ne.line
	}
	return def
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 200

// maxNodes bounds the values one document may expand to.
const maxNodes = 5_000_000

// value converts a YAML node to JSON-compatible values the way the
// Kubernetes tooling does (YAML 1.2 core schema): timestamps stay strings,
// keys must be scalars, and aliases are expanded.
func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, &nodeError{n.Line, "document nested too deeply"}
	}
	if c.visited++; c.visited > maxNodes {
		// Aliases can expand a small file exponentially ("billion laughs").
		return nil, &nodeError{n.Line, "document expands to too many values (aliases nested too deeply?)"}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, &nodeError{n.Line, "unknown alias"}
		}
		return c.value(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		// explicit holds the keys written in this mapping itself: a key that
		// overrides one brought in by a merge key (`<<: *anchor`) is the
		// purpose of merging, not a duplicate.
		// Without merge keys it is the set of m's keys, and m serves.
		var explicit, mergedKeys map[string]bool
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				explicit, mergedKeys = make(map[string]bool, len(n.Content)/2), map[string]bool{}
				break
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				// `<<: *anchor` merges the anchor's keys; explicit keys win.
				merged, err := c.value(v, depth+1)
				if err != nil {
					return nil, err
				}
				// `<<: [*a, *b]` merges each in turn; earlier ones win.
				sources, _ := merged.([]any)
				if mm, ok := merged.(map[string]any); ok {
					sources = []any{mm}
				}
				for _, src := range sources {
					mm, _ := src.(map[string]any)
					for mk, mv := range mm {
						if !explicit[mk] && !mergedKeys[mk] {
							m[mk] = mv
							mergedKeys[mk] = true
						}
					}
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return nil, &nodeError{k.Line, "mapping key is not a scalar"}
			}
			c.path = append(c.path, pathSeg{key: k.Value, idx: -1})
			val, err := c.value(v, depth+1)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			key := k.Value
			dup := explicit[key]
			if explicit == nil {
				_, dup = m[key]
			}
			if dup {
				c.duplicates = append(c.duplicates, Ambiguity{Line: k.Line, Value: key, Path: c.pathString(key),
					Reading: "the key is defined twice in this mapping; Kubernetes keeps the last value, strict YAML readers refuse the file"})
			}
			if b, ok := yaml11Bool(k); ok {
				// Kubernetes reads `on:` as the key "true".
				key = strconv.FormatBool(b)
				c.ambiguous = append(c.ambiguous, Ambiguity{Line: k.Line, Value: k.Value,
					Reading: fmt.Sprintf("as a key, Kubernetes (YAML 1.1) reads it as %q, YAML 1.2 tools as %q", key, k.Value)})
			}
			m[key] = val
			if explicit != nil {
				explicit[key] = true
			}
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			c.path = append(c.path, pathSeg{idx: i})
			val, err := c.value(e, depth+1)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		return s, nil
	case yaml.ScalarNode:
		if b, ok := yaml11Bool(n); ok {
			c.ambiguous = append(c.ambiguous, Ambiguity{Line: n.Line, Value: n.Value,
				Reading: fmt.Sprintf("Kubernetes (YAML 1.1) reads it as the boolean %t, YAML 1.2 tools as the string %q", b, n.Value)})
			return b, nil
		}
		if n.Style == 0 && n.Value == "=" {
			c.ambiguous = append(c.ambiguous, Ambiguity{Line: n.Line, Value: n.Value,
				Reading: `YAML 1.1 parsers such as PyYAML refuse a plain "=" (the value tag); Go and YAML 1.2 tools read the string "="`})
		}
		if c.cut != nil && strings.Contains(n.Value, c.cut.prefix) {
			// Only strings hold tokens: see cutLongScalars.
			return c.cut.restore(n.Value), nil
		}
		return scalarValue(n)
	}
	return nil, &nodeError{n.Line, "unsupported YAML node"}
}

// yaml11Bool reports whether n is a plain scalar that YAML 1.1 (and so
// sigs.k8s.io/yaml, which kubectl and OLM use) reads as a boolean while YAML
// 1.2 reads it as a string: y, yes, on, off and the like.
func yaml11Bool(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Style != 0 || n.Tag != "!!str" {
		return false, false
	}
	switch n.Value {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return n.Value, nil
	case "!!int":
		s := strings.ReplaceAll(n.Value, "_", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return i, nil
		}
		if strings.HasPrefix(s, "0o") || strings.HasPrefix(s, "-0o") {
			if i, err := strconv.ParseInt(strings.Replace(s, "0o", "0", 1), 0, 64); err == nil {
				return i, nil
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
		return n.Value, nil
	case "!!float":
		switch strings.ToLower(n.Value) {
		case ".inf", "+.inf", ".nan", "-.inf":
			// JSON has no infinities or NaN; keep the text.
			return n.Value, nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) {
			return n.Value, nil
		}
		return f, nil
	case "!!binary":
		// Kubernetes objects carry base64 as plain strings.
		return n.Value, nil
	}
	return n.Value, nil
}

// Line returns the line of the value at a field path such as
// `spec.installModes[2].type` within the document, or the document's line
// when the path does not resolve.
func (d *Document) LineOf(path string) int {
	if d.node == nil {
		return d.Line
	}
	n := d.node
	best := d.Line
	for _, seg := range splitPath(path) {
		var line int
		n, line = childNode(n, seg)
		if n == nil {
			break
		}
		best = line
	}
	return best
}

// childNode returns the child at seg and the line that names it: the key's
// line for a mapping entry (a block value starts a line later), the item's
// line for a list entry.
func childNode(n *yaml.Node, seg string) (*yaml.Node, int) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil {
		return nil, 0
	}
	if strings.HasPrefix(seg, "[") {
		i, err := strconv.Atoi(strings.Trim(seg, "[]"))
		if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
			return nil, 0
		}
		return n.Content[i], n.Content[i].Line
	}
	if n.Kind != yaml.MappingNode {
		return nil, 0
	}
	// The last entry of a key given twice is the one Kubernetes keeps.
	for i := len(n.Content) - 2; i >= 0; i -= 2 {
		if n.Content[i].Value == seg {
			return n.Content[i+1], n.Content[i].Line
		}
	}
	return nil, 0
}

// splitPath turns `a.b[2].c` into [a b [2] c]. Keys holding dots can be
// written in brackets with quotes: metadata.annotations["olm.skipRange"].
func splitPath(p string) []string {
	var out []string
	for len(p) > 0 {
		switch {
		case p[0] == '.':
			p = p[1:]
		case strings.HasPrefix(p, `["`):
			// The closing `"]` comes after the opening `["`: in `["]"]`
			// the key is "]".
			end := strings.Index(p[2:], `"]`)
			if end < 0 {
				return append(out, p[2:])
			}
			end += 2
			out = append(out, p[2:end])
			p = p[end+2:]
		case p[0] == '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return append(out, p)
			}
			out = append(out, p[:end+1])
			p = p[end+1:]
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			out = append(out, p[:end])
			p = p[end:]
		}
	}
	return out
}
