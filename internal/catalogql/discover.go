// Package catalogql answers GraphQL queries over a file-based catalog the
// way catalogd's /api/v1/graphql does (operator-controller's
// GraphQLCatalogQueries gate): a schema discovered from the catalog's
// blobs, one query field per FBC schema (olm.bundle is olmbundles) with
// limit and offset, and a summary. The types, names and answers follow
// catalogd's, quirks included, so that queries written for catalogd get
// the same answers here; docs/olmv1.md says where they differ.
package catalogql

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// scalar is the GraphQL scalar a discovered field has (or its list
// elements have).
type scalar int

const (
	tString scalar = iota
	tInt
	tFloat
	tBoolean
)

// field is what discovery learnt of one (remapped) key of a schema's blobs.
type field struct {
	name string
	list bool
	typ  scalar
	// nested, for a list of objects, are the keys of those objects: the
	// field is then a list of an object type of its own.
	nested map[string]*field
}

// schemaInfo is what discovery learnt of one FBC schema.
type schemaInfo struct {
	fields map[string]*field
	total  int
}

// discovery accumulates the catalog's schemas, blob by blob, in catalog
// order: the first blob that has a field decides its type, later blobs add
// only the keys of nested objects not seen yet (as catalogd does).
type discovery struct {
	schemas map[string]*schemaInfo
}

func (d *discovery) add(schema string, blob []byte) {
	if schema == "" {
		return // catalogd serves only blobs with a schema
	}
	var obj map[string]any
	if err := json.Unmarshal(blob, &obj); err != nil {
		return // not counted: catalogd could not return it either
	}
	info := d.schemas[schema]
	if info == nil {
		info = &schemaInfo{fields: map[string]*field{}}
		d.schemas[schema] = info
	}
	info.total++
	for _, key := range sortedKeys(obj) {
		name := fieldName(key)
		f := topField(name, obj[key])
		old, ok := info.fields[name]
		if !ok {
			info.fields[name] = f
			continue
		}
		if f.nested == nil {
			continue
		}
		if old.nested == nil {
			old.nested = f.nested
		} else {
			addMissing(old.nested, f.nested)
		}
	}
}

// maxSampled bounds how many list elements are looked at to type a list.
const maxSampled = 10

// topField types a value of a blob's top level: lists are typed by their
// first non-null element, a mix of element kinds is a list of strings, and
// a list of objects gets the union of the keys of its first elements.
func topField(name string, v any) *field {
	list, ok := v.([]any)
	if !ok {
		return &field{name: name, typ: scalarOf(v)}
	}
	f := &field{name: name, list: true}
	var first any
	mixed := false
	for _, e := range list[:min(len(list), maxSampled)] {
		if e == nil {
			continue
		}
		if first == nil {
			first = e
		} else if kindOf(e) != kindOf(first) {
			mixed = true
		}
		if obj, ok := e.(map[string]any); ok {
			n := nestedFields(obj)
			if f.nested == nil {
				f.nested = n
			} else {
				addMissing(f.nested, n)
			}
		}
	}
	if first == nil || (mixed && f.nested == nil) {
		return f // a list of strings
	}
	f.typ = scalarOf(first)
	return f
}

// nestedFields types the keys of an object in a list: one level only, a
// list typed by its first element.
func nestedFields(obj map[string]any) map[string]*field {
	out := map[string]*field{}
	for _, key := range sortedKeys(obj) {
		name := fieldName(key)
		v := obj[key]
		f := &field{name: name}
		if list, ok := v.([]any); ok {
			f.list = true
			if len(list) > 0 && list[0] != nil {
				f.typ = scalarOf(list[0])
			}
		} else {
			f.typ = scalarOf(v)
		}
		out[name] = f
	}
	return out
}

func addMissing(into, from map[string]*field) {
	for k, v := range from {
		if _, ok := into[k]; !ok {
			into[k] = v
		}
	}
}

// scalarOf is the GraphQL scalar of a JSON value: a number is an Int when
// it is whole, objects and lists are strings (their JSON).
func scalarOf(v any) scalar {
	switch v := v.(type) {
	case bool:
		return tBoolean
	case float64:
		if v == float64(int64(v)) {
			return tInt
		}
		return tFloat
	}
	return tString
}

// kindOf tells JSON value kinds apart (for mixed lists).
func kindOf(v any) string { return fmt.Sprintf("%T", v) }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var (
	notNameChar  = regexp.MustCompile(`[^a-zA-Z0-9_]`)
	underscores  = regexp.MustCompile(`_+`)
	notAlnum     = regexp.MustCompile(`[^a-zA-Z0-9]`)
	leadingDigit = regexp.MustCompile(`^[0-9]+`)
)

// fieldName is catalogd's GraphQL name for a JSON key: camelCase of its
// words (a first word in capitals is lowered whole), "field_" before a
// name that would not start with a letter, "value" for the empty key.
func fieldName(key string) string {
	if key == "" {
		return "value"
	}
	s := strings.TrimLeft(underscores.ReplaceAllString(notNameChar.ReplaceAllString(key, "_"), "_"), "_")
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w == "" {
			continue
		}
		switch {
		case b.Len() > 0:
			b.WriteString(strings.ToUpper(w[:1]) + strings.ToLower(w[1:]))
		case strings.ToUpper(w) == w:
			b.WriteString(strings.ToLower(w))
		default:
			b.WriteString(strings.ToLower(w[:1]) + w[1:])
		}
	}
	out := b.String()
	if out == "" || !isLetter(out[0]) {
		out = "field_" + out
	}
	return out
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// typeName is catalogd's GraphQL type name for a schema or field name:
// its alphanumeric words capitalised and joined, leading digits dropped.
func typeName(s string) string {
	s = leadingDigit.ReplaceAllString(notAlnum.ReplaceAllString(s, "_"), "")
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + strings.ToLower(w[1:]))
		}
	}
	if b.Len() == 0 {
		return "Unknown"
	}
	return b.String()
}

// queryField is the root query field of a schema: its letters and digits,
// lower case, and an "s" (olm.bundle: olmbundles).
func queryField(schema string) string {
	return strings.ToLower(notAlnum.ReplaceAllString(schema, "")) + "s"
}
