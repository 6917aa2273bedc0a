// Package template holds what catalog templates share: their types and
// schemas, telling a template's type from its schema, and reading a
// template file strictly, so that every problem names the file, the line
// and the field at fault. Each template type is a package of its own below
// this one (basic, semver, substitutes), a parse and an expansion into the
// fbc model.
package template

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/yamldoc"
)

// Template types, as the command line names them, and the schemas that
// identify them in a template file (upstream's).
const (
	TypeBasic       = "basic"
	TypeSemver      = "semver"
	TypeSubstitutes = "substitutes"

	SchemaBasic       = "olm.template.basic"
	SchemaSemver      = "olm.semver"
	SchemaSubstitutes = "olm.template.substitutes"
)

// Types are the template types, sorted.
var Types = []string{TypeBasic, TypeSemver, TypeSubstitutes}

// SchemaOf is the schema of a template type ("" for an unknown type).
func SchemaOf(typ string) string {
	switch typ {
	case TypeBasic:
		return SchemaBasic
	case TypeSemver:
		return SchemaSemver
	case TypeSubstitutes:
		return SchemaSubstitutes
	}
	return ""
}

// TypeOf is the template type of a schema ("" for an unknown schema).
func TypeOf(schema string) string {
	for _, t := range Types {
		if SchemaOf(t) == schema {
			return t
		}
	}
	return ""
}

// RenderBundle turns a bundle image reference into its olm.bundle blob.
// Templates call it for every image they name; it must be safe to call
// from several goroutines.
type RenderBundle func(ctx context.Context, image string) (*fbc.Bundle, error)

// Error is one problem with a template: the file, the line (0 when not
// known), the field path (entries[2].image; "" for the whole file) and
// what is wrong, with how to fix it.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Document is a template file read into JSON values, with the line of
// each field.
type Document struct {
	// Source names the file in errors ("stdin" for standard input).
	Source string
	// Value is the template's top-level object.
	Value map[string]any
	line  int
	lines map[string]int
}

// Parse reads the one YAML or JSON document of a template file. source
// names it in errors; a name ending in .json is read as JSON.
func Parse(source string, data []byte) (*Document, error) {
	docs, err := yamldoc.Decode(source, data)
	if err != nil {
		var se *yamldoc.SyntaxError
		if errors.As(err, &se) {
			return nil, &Error{File: source, Line: se.Line, Msg: "not valid YAML or JSON: " + se.Msg}
		}
		return nil, &Error{File: source, Msg: err.Error()}
	}
	d := &Document{Source: source, lines: map[string]int{}}
	d.mapLines(data)
	switch len(docs) {
	case 0:
		return nil, &Error{File: source, Msg: "the template is empty: it needs an object with a schema, such as schema: " + SchemaBasic}
	case 1:
	default:
		return nil, &Error{File: source, Line: docs[1].Line, Msg: "a template file holds one document; this is a second one (render each template on its own)"}
	}
	m, ok := docs[0].Value.(map[string]any)
	if !ok {
		return nil, &Error{File: source, Line: docs[0].Line, Msg: "the template must be an object with a schema, not " + yamldoc.KindOf(docs[0].Value)}
	}
	d.Value = m
	d.line = docs[0].Line
	if d.line == 0 {
		d.line = d.lines[""]
	}
	// Bounded as catalog blobs are (--max-depth's default): a basic
	// template's entries are blobs, and output indents every level.
	if path, deep := deepest(m, "", 1, int(fbc.DefaultMaxDepth)); deep {
		e := d.Errorf(path, "nested more than %d deep, the template itself counted: real catalogs nest under 50; check what wrote it", fbc.DefaultMaxDepth).(*Error)
		if len(e.Field) > 60 {
			e.Field = e.Field[:60] + "..."
		}
		return nil, e
	}
	return d, nil
}

// deepest finds the field path of the first object or list nested more
// than max deep (v, at path, is depth deep), keys in sorted order.
func deepest(v any, path string, depth, max int) (string, bool) {
	if depth > max {
		return path, true
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := deepest(x[k], Join(path, k), depth+1, max); container(x[k]) && ok {
				return p, true
			}
		}
	case []any:
		for i, c := range x {
			if p, ok := deepest(c, Index(path, i), depth+1, max); container(c) && ok {
				return p, true
			}
		}
	}
	return "", false
}

func container(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// mapLines records the line of every field of the first document. A file
// the YAML parser cannot read leaves the map empty: the values were read
// already, so only the lines are missing.
func (d *Document) mapLines(data []byte) {
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&n); err != nil || len(n.Content) == 0 {
		return
	}
	var walk func(n *yaml.Node, path string, depth int)
	walk = func(n *yaml.Node, path string, depth int) {
		if depth > 64 {
			return
		}
		if _, ok := d.lines[path]; !ok {
			d.lines[path] = n.Line
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				p := Join(path, k.Value)
				d.lines[p] = k.Line
				walk(n.Content[i+1], p, depth+1)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, Index(path, i), depth+1)
			}
		}
	}
	walk(n.Content[0], "", 0)
}

// Join is the field path of key inside path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index is the field path of item i of the list at path.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Line is the line of the field at path, or of the nearest enclosing one
// whose line is known.
func (d *Document) Line(path string) int {
	for {
		if l, ok := d.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			if l, ok := d.lines[""]; ok {
				return l
			}
			return d.line
		}
		path = path[:i]
	}
}

// Errorf is an *Error at the field path.
func (d *Document) Errorf(path, format string, args ...any) error {
	return &Error{File: d.Source, Line: d.Line(path), Field: path, Msg: fmt.Sprintf(format, args...)}
}

// CheckFields refuses a key of m (the object at path) that is not among
// known, naming the known ones (and the closest, for a typo).
func (d *Document) CheckFields(path string, m map[string]any, known ...string) error {
	var unknown []string
	for k := range m {
		if !contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Slice(unknown, func(i, j int) bool { return d.Line(Join(path, unknown[i])) < d.Line(Join(path, unknown[j])) })
	k := unknown[0]
	hint := ""
	for _, c := range known {
		if strings.EqualFold(c, k) {
			hint = fmt.Sprintf(" (did you mean %s? field names are case-sensitive)", c)
		}
	}
	return d.Errorf(Join(path, k), "unknown field %q%s; the fields here are %s", k, hint, strings.Join(known, ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String is the string field key of m (at path), "" when absent;
// anything but a string is an error.
func (d *Document) String(path string, m map[string]any, key string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", d.Errorf(Join(path, key), "must be a string, not %s", yamldoc.KindOf(v))
	}
	return s, nil
}

// List is the list field key of m (at path); absent is an empty list.
func (d *Document) List(path string, m map[string]any, key string) ([]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, d.Errorf(Join(path, key), "must be a list, not %s", yamldoc.KindOf(v))
	}
	return l, nil
}

// Object is item v (at path) as an object.
func (d *Document) Object(path string, v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, d.Errorf(path, "must be an object, not %s", yamldoc.KindOf(v))
	}
	return m, nil
}

// CheckSchema refuses a template whose schema is not want.
func (d *Document) CheckSchema(want string) error {
	s, err := d.String("", d.Value, "schema")
	if err != nil {
		return err
	}
	if s == want {
		return nil
	}
	if s == "" {
		return d.Errorf("schema", "missing: this template needs schema: %s", want)
	}
	if t := TypeOf(s); t != "" {
		return d.Errorf("schema", "%q is the schema of a %s template, not of a %s template (render it as %s, or omit the type to detect it)", s, t, TypeOf(want), t)
	}
	return d.Errorf("schema", "unknown schema %q: want %s", s, want)
}

// Detect tells the type of a template from its schema.
func Detect(source string, data []byte) (string, error) {
	d, err := Parse(source, data)
	if err != nil {
		return "", err
	}
	s, err := d.String("", d.Value, "schema")
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", d.Errorf("schema", "missing: a template names its type with schema (%s, %s or %s), or give the type on the command line", SchemaBasic, SchemaSemver, SchemaSubstitutes)
	}
	t := TypeOf(s)
	if t == "" {
		return "", d.Errorf("schema", "unknown template schema %q: the template schemas are %s, %s and %s", s, SchemaBasic, SchemaSemver, SchemaSubstitutes)
	}
	return t, nil
}

// Marshal is v as compact JSON the way upstream writes catalog blobs:
// without HTML escaping, object keys sorted.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
