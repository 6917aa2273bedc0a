package fbc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/opmkit/opm/internal/rawjson"
)

// A fast path for Writer's JSON: the olm.package, olm.channel and
// olm.bundle blobs printed as json.Encoder (SetIndent("", "    "),
// SetEscapeHTML(false)) prints them, without its two passes a byte at a
// time over every property value (Marshal compacts each json.RawMessage,
// then Indent reformats the whole blob). Property values and other blobs
// go through rawjson.AppendIndentAt, which checks them as it goes; anything it is
// not sure of (a value that is not valid JSON, a string that needs
// escaping) makes appendBlobJSON say no, and the blob goes to
// encoding/json, which prints it or reports the error as before
// (TestBlobJSONMatchesEncoder, FuzzBlobJSON).

const blobIndent = "    "

type blobWriter struct {
	b []byte
	// str encodes a string that needs escaping, as the encoder does.
	str    bytes.Buffer
	strEnc *json.Encoder
}

func (w *blobWriter) newline(depth int) {
	w.b = append(w.b, '\n')
	for k := 0; k < depth; k++ {
		w.b = append(w.b, blobIndent...)
	}
}

// key starts member name (which needs no escaping) of an object nested
// depth deep; first is whether it is the object's first member.
func (w *blobWriter) key(depth int, first bool, name string) {
	if !first {
		w.b = append(w.b, ',')
	}
	w.newline(depth + 1)
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':', ' ')
}

// string appends s as encoding/json writes it without HTML escaping.
func (w *blobWriter) string(s string) bool {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		w.b = append(w.b, '"')
		w.b = append(w.b, s...)
		w.b = append(w.b, '"')
		return true
	}
	if w.strEnc == nil {
		w.strEnc = json.NewEncoder(&w.str)
		w.strEnc.SetEscapeHTML(false)
	}
	w.str.Reset()
	if w.strEnc.Encode(s) != nil {
		return false
	}
	w.b = append(w.b, bytes.TrimSuffix(w.str.Bytes(), []byte("\n"))...)
	return true
}

func (w *blobWriter) stringField(depth int, first bool, name, s string) bool {
	w.key(depth, first, name)
	return w.string(s)
}

// raw appends a json.RawMessage nested depth deep.
func (w *blobWriter) raw(v json.RawMessage, depth int) bool {
	if v == nil {
		w.b = append(w.b, "null"...)
		return true
	}
	var ok bool
	w.b, ok = rawjson.AppendIndentAt(w.b, v, "", blobIndent, depth)
	return ok
}

// properties appends a non-empty list of properties as the value of a
// member of an object nested depth deep.
func (w *blobWriter) properties(ps []Property, depth int) bool {
	w.b = append(w.b, '[')
	for i := range ps {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.newline(depth + 1)
		w.b = append(w.b, '{')
		if !w.stringField(depth+1, true, "type", ps[i].Type) {
			return false
		}
		w.key(depth+1, false, "value")
		if !w.raw(ps[i].Value, depth+2) {
			return false
		}
		w.newline(depth + 1)
		w.b = append(w.b, '}')
	}
	w.newline(depth)
	w.b = append(w.b, ']')
	return true
}

func (w *blobWriter) strings(ss []string, depth int) bool {
	if ss == nil {
		w.b = append(w.b, "null"...)
		return true
	}
	if len(ss) == 0 {
		w.b = append(w.b, '[', ']')
		return true
	}
	w.b = append(w.b, '[')
	for i, s := range ss {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.newline(depth + 1)
		if !w.string(s) {
			return false
		}
	}
	w.newline(depth)
	w.b = append(w.b, ']')
	return true
}

func (w *blobWriter) pkg(p *Package) bool {
	if !w.stringField(0, true, "schema", p.Schema) ||
		!w.stringField(0, false, "name", p.Name) ||
		!w.stringField(0, false, "defaultChannel", p.DefaultChannel) {
		return false
	}
	if p.Icon != nil {
		w.key(0, false, "icon")
		w.b = append(w.b, '{')
		w.key(1, true, "base64data")
		if p.Icon.Data == nil {
			w.b = append(w.b, "null"...)
		} else {
			w.b = append(w.b, '"')
			w.b = base64.StdEncoding.AppendEncode(w.b, p.Icon.Data)
			w.b = append(w.b, '"')
		}
		if !w.stringField(1, false, "mediatype", p.Icon.MediaType) {
			return false
		}
		w.newline(1)
		w.b = append(w.b, '}')
	}
	if p.Description != "" && !w.stringField(0, false, "description", p.Description) {
		return false
	}
	if len(p.Properties) > 0 {
		w.key(0, false, "properties")
		if !w.properties(p.Properties, 1) {
			return false
		}
	}
	return true
}

func (w *blobWriter) channel(c *Channel) bool {
	if !w.stringField(0, true, "schema", c.Schema) ||
		!w.stringField(0, false, "name", c.Name) ||
		!w.stringField(0, false, "package", c.Package) {
		return false
	}
	w.key(0, false, "entries")
	switch {
	case c.Entries == nil:
		w.b = append(w.b, "null"...)
	case len(c.Entries) == 0:
		w.b = append(w.b, '[', ']')
	default:
		w.b = append(w.b, '[')
		for i := range c.Entries {
			e := &c.Entries[i]
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.newline(2)
			w.b = append(w.b, '{')
			if !w.stringField(2, true, "name", e.Name) {
				return false
			}
			if e.Replaces != "" && !w.stringField(2, false, "replaces", e.Replaces) {
				return false
			}
			if len(e.Skips) > 0 {
				w.key(2, false, "skips")
				if !w.strings(e.Skips, 3) {
					return false
				}
			}
			if e.SkipRange != "" && !w.stringField(2, false, "skipRange", e.SkipRange) {
				return false
			}
			w.newline(2)
			w.b = append(w.b, '}')
		}
		w.newline(1)
		w.b = append(w.b, ']')
	}
	if len(c.Properties) > 0 {
		w.key(0, false, "properties")
		if !w.properties(c.Properties, 1) {
			return false
		}
	}
	return true
}

func (w *blobWriter) bundle(b *Bundle) bool {
	if !w.stringField(0, true, "schema", b.Schema) ||
		!w.stringField(0, false, "name", b.Name) ||
		!w.stringField(0, false, "package", b.Package) ||
		!w.stringField(0, false, "image", b.Image) {
		return false
	}
	if len(b.Properties) > 0 {
		w.key(0, false, "properties")
		if !w.properties(b.Properties, 1) {
			return false
		}
	}
	if len(b.RelatedImages) > 0 {
		w.key(0, false, "relatedImages")
		w.b = append(w.b, '[')
		for i := range b.RelatedImages {
			ri := &b.RelatedImages[i]
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.newline(2)
			w.b = append(w.b, '{')
			if !w.stringField(2, true, "name", ri.Name) || !w.stringField(2, false, "image", ri.Image) {
				return false
			}
			w.newline(2)
			w.b = append(w.b, '}')
		}
		w.newline(1)
		w.b = append(w.b, ']')
	}
	return true
}

// appendBlobJSON appends v (a blob as Writer gets it) and a newline to w.b
// as the indenting encoder prints it; false when it leaves v to the
// encoder (w.b is then to be reset by the caller).
func (w *blobWriter) appendBlobJSON(v any) bool {
	var ok bool
	switch x := v.(type) {
	case *Package:
		w.b = append(w.b, '{')
		ok = w.pkg(x)
	case *Channel:
		w.b = append(w.b, '{')
		ok = w.channel(x)
	case *Bundle:
		w.b = append(w.b, '{')
		ok = w.bundle(x)
	case Meta:
		// Meta marshals as its blob verbatim.
		if x.Blob == nil {
			return false
		}
		w.b, ok = rawjson.AppendIndentAt(w.b, x.Blob, "", blobIndent, 0)
		if ok {
			w.b = append(w.b, '\n')
		}
		return ok
	default:
		return false
	}
	if !ok {
		return false
	}
	w.newline(0)
	w.b = append(w.b, '}', '\n')
	return true
}
