// Package clusterstate reads what a cluster holds for OLM v0's resolver
// (Subscriptions, ClusterServiceVersions, as `oc get -o yaml` writes them,
// or as flags spell them) and groups it into resolve.Questions, one per
// namespace.
package clusterstate

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/yamldoc"
)

// FieldError is a file's object that cannot be read: the file, the line,
// the field path within the document (items[2].spec.name) and what is
// wrong with it.
type FieldError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return loc + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

// object is one Kubernetes object of a file: a document, or an item of a
// List document.
type object struct {
	file string
	doc  *yamldoc.Document
	path string // of the object within its document: "" or "items[3]"
	m    map[string]any
}

// objects are the objects of a file: a List's items (kind List, or any
// kind ending in List that has items, as oc writes them), a document
// holding one object, several documents.
func objects(file string, data []byte) ([]object, error) {
	docs, err := yamldoc.Decode(file, data)
	if err != nil {
		return nil, err
	}
	var out []object
	for i := range docs {
		d := &docs[i]
		m, ok := d.Value.(map[string]any)
		if !ok {
			return nil, &FieldError{File: file, Line: d.Line, Msg: fmt.Sprintf("document %d is a %s, not an object (a Kubernetes object or a List of them)", d.Index+1, yamldoc.TypeName(d.Value))}
		}
		kind, _ := m["kind"].(string)
		items, hasItems := m["items"]
		if !strings.HasSuffix(kind, "List") || !hasItems {
			out = append(out, object{file: file, doc: d, m: m})
			continue
		}
		list, ok := items.([]any)
		if !ok && items != nil {
			return nil, &FieldError{File: file, Line: d.LineOf("items"), Field: "items", Msg: fmt.Sprintf("is a %s, want a list of objects", yamldoc.TypeName(items))}
		}
		for j, it := range list {
			path := fmt.Sprintf("items[%d]", j)
			im, ok := it.(map[string]any)
			if !ok {
				return nil, &FieldError{File: file, Line: d.LineOf(path), Field: path, Msg: fmt.Sprintf("is a %s, want an object", yamldoc.TypeName(it))}
			}
			out = append(out, object{file: file, doc: d, path: path, m: im})
		}
	}
	return out, nil
}

// field is the path of a field of o within its document.
func (o object) field(f string) string {
	if o.path == "" {
		return f
	}
	return o.path + "." + f
}

func (o object) errorf(f, format string, args ...any) error {
	return &FieldError{File: o.file, Line: o.doc.LineOf(o.field(f)), Field: o.field(f), Msg: fmt.Sprintf(format, args...)}
}

// checkKind refuses an object of another kind than want (of group
// operators.coreos.com), so that a file given to the wrong flag says so.
func (o object) checkKind(want string) error {
	kind, _ := o.m["kind"].(string)
	api, _ := o.m["apiVersion"].(string)
	if kind != want {
		if kind == "" {
			return o.errorf("kind", "missing: want %s (operators.coreos.com/v1alpha1)", want)
		}
		return o.errorf("kind", "is %s, want %s (operators.coreos.com/v1alpha1)", kind, want)
	}
	if api != "" && !strings.HasPrefix(api, "operators.coreos.com/") {
		return o.errorf("apiVersion", "is %s, want operators.coreos.com/v1alpha1", api)
	}
	return nil
}

// str is the string at a dotted path under o ("" when absent); a value
// of another type is an error naming the field.
func (o object) str(path string) (string, error) {
	v, ok := lookup(o.m, path)
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", o.errorf(path, "is a %s, want a string", yamldoc.TypeName(v))
	}
	return s, nil
}

// mapAt is the mapping at a dotted path under o (nil when absent).
func (o object) mapAt(path string) (map[string]any, error) {
	v, ok := lookup(o.m, path)
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, o.errorf(path, "is a %s, want a mapping", yamldoc.TypeName(v))
	}
	return m, nil
}

// listAt is the list at a dotted path under o (nil when absent).
func (o object) listAt(path string) ([]any, error) {
	v, ok := lookup(o.m, path)
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, o.errorf(path, "is a %s, want a list", yamldoc.TypeName(v))
	}
	return l, nil
}

func lookup(m map[string]any, path string) (any, bool) {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
