package bundle

import (
	"encoding/json"
	"strings"

	"github.com/opmkit/opm/internal/yamldoc"
)

// Object is one Kubernetes object of a bundle, with the file it came from so
// that every message can name it.
type Object struct {
	File       string // slash-separated path relative to the bundle root
	Doc        yamldoc.Document
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
}

func newObject(file string, doc yamldoc.Document) *Object {
	o := &Object{File: file, Doc: doc}
	m := o.Map()
	o.APIVersion = Str(m, "apiVersion")
	o.Kind = Str(m, "kind")
	o.Name = Str(m, "metadata", "name")
	o.Namespace = Str(m, "metadata", "namespace")
	return o
}

// Map is the object's content; nil when the document is not a mapping.
func (o *Object) Map() map[string]any {
	m, _ := o.Doc.Value.(map[string]any)
	return m
}

// JSON is the object as compact JSON, unknown fields and all.
func (o *Object) JSON() ([]byte, error) { return json.Marshal(o.Doc.Value) }

// Group is the API group of the object's apiVersion ("" for the core group).
func (o *Object) Group() string {
	if i := strings.IndexByte(o.APIVersion, '/'); i >= 0 {
		return o.APIVersion[:i]
	}
	return ""
}

// Line is the line of the field at path, for messages.
func (o *Object) Line(path string) int { return o.Doc.LineOf(path) }

// Lookup walks nested maps by key and returns the value and whether every key
// was present.
func Lookup(v any, keys ...string) (any, bool) {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return v, true
}

// Str is Lookup for a string; non-strings give "".
func Str(v any, keys ...string) string {
	x, _ := Lookup(v, keys...)
	s, _ := x.(string)
	return s
}

// Slice is Lookup for a list; anything else gives nil.
func Slice(v any, keys ...string) []any {
	x, _ := Lookup(v, keys...)
	s, _ := x.([]any)
	return s
}

// MapAt is Lookup for a mapping; anything else gives nil.
func MapAt(v any, keys ...string) map[string]any {
	x, _ := Lookup(v, keys...)
	m, _ := x.(map[string]any)
	return m
}
