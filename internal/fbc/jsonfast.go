package fbc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/opmkit/opm/internal/bundle"
)

// Fast paths for decoding the two kinds of JSON a catalog conversion reads
// most: olm.bundle blobs and the heads of CSV and CRD manifests. Both pick
// the few fields they need out of JSON checked once with validValue and
// skip the rest (the base64 manifests, the CRDs' schemas), rather than have
// encoding/json check and walk every byte twice. Each gives up (ok false)
// on anything where encoding/json might read the input differently: a key
// in another letter case or with escapes, a key given twice, a value of
// another type than the field's, a null where it matters. The caller then
// decodes with encoding/json, so results and errors stay encoding/json's
// (TestFastDecodersMatchEncodingJSON, FuzzFastDecoders).

// members calls f with each member of the JSON object raw (valid JSON,
// checked already): the key as written between its quotes and the value.
// False when raw is not an object or f returns false.
func members(raw []byte, f func(key, val []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) && raw[i] == '"' {
		kEnd := skipValidString(raw, i)
		key := raw[i+1 : kEnd-1]
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		vEnd := skipValid(raw, i)
		if !f(key, raw[i:vEnd]) {
			return false
		}
		i = skipSpace(raw, vEnd)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
			continue
		}
		return i < len(raw) && raw[i] == '}'
	}
	return false
}

// elements calls f with each element of the JSON array raw (valid JSON,
// checked already). False when raw is not an array or f returns false.
func elements(raw []byte, f func(val []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return true
	}
	for i < len(raw) {
		end := skipValid(raw, i)
		if !f(raw[i:end]) {
			return false
		}
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
			continue
		}
		return i < len(raw) && raw[i] == ']'
	}
	return false
}

// fields matches an object's keys against a struct's JSON field names, as
// encoding/json would, but only where that is plain: each key exactly one
// name, at most once.
type fields struct {
	names []string
	seen  uint64
}

// match returns the index of key among the names, -1 for a key encoding/json
// ignores; ok is false when the key might match a name another way (letter
// case, escapes, non-ASCII folding) or repeats one.
func (fs *fields) match(key []byte) (int, bool) {
	for i, n := range fs.names {
		if string(key) == n {
			if fs.seen&(1<<i) != 0 {
				return 0, false
			}
			fs.seen |= 1 << i
			return i, true
		}
	}
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return 0, false
		}
	}
	for _, n := range fs.names {
		if bytes.EqualFold(key, []byte(n)) {
			return 0, false
		}
	}
	return -1, true
}

func newFields(names ...string) *fields { return &fields{names: names} }

// strMembers decodes the members of the JSON object raw named by names,
// all strings, into dsts (one for each name), skipping the others; false
// as match and str say.
func strMembers(raw []byte, names []string, dsts ...*string) bool {
	f := newFields(names...)
	return members(raw, func(key, val []byte) bool {
		i, ok := f.match(key)
		switch {
		case !ok:
			return false
		case i < 0:
			return true
		}
		return str(val, dsts[i])
	})
}

// str decodes a JSON string value into s; false for any other value
// (null included: encoding/json would leave s as it is, which the caller's
// fallback does).
func str(val []byte, s *string) bool {
	if len(val) < 2 || val[0] != '"' {
		return false
	}
	in := val[1 : len(val)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		*s = string(in)
		return true
	}
	return json.Unmarshal(val, s) == nil
}

// isNull reports whether a (valid) JSON value is null.
func isNull(val []byte) bool { return len(val) == 4 && string(val) == "null" }

// decodeBundleFast decodes an olm.bundle blob (raw, trimmed) into b as
// json.Unmarshal would; false when it cannot say so (see above).
func decodeBundleFast(raw []byte, b *Bundle) bool {
	if end, ok := validValue(raw, 0); !ok || end != len(raw) {
		return false
	}
	fs := newFields("schema", "name", "package", "image", "properties", "relatedImages")
	return members(raw, func(key, val []byte) bool {
		i, ok := fs.match(key)
		switch {
		case !ok:
			return false
		case i == 0:
			return str(val, &b.Schema)
		case i == 1:
			return str(val, &b.Name)
		case i == 2:
			return str(val, &b.Package)
		case i == 3:
			return str(val, &b.Image)
		case i == 4:
			if isNull(val) {
				return false
			}
			b.Properties = []Property{}
			return elements(val, func(e []byte) bool {
				var p Property
				pf := newFields("type", "value")
				ok := members(e, func(key, val []byte) bool {
					i, ok := pf.match(key)
					switch {
					case !ok:
						return false
					case i == 0:
						return str(val, &p.Type)
					case i == 1:
						if isNull(val) {
							return false
						}
						p.Value = append(json.RawMessage(nil), val...)
					}
					return true
				})
				b.Properties = append(b.Properties, p)
				return ok
			})
		case i == 5:
			if isNull(val) {
				return false
			}
			b.RelatedImages = []RelatedImage{}
			return elements(val, func(e []byte) bool {
				var ri RelatedImage
				ok := strMembers(e, []string{"name", "image"}, &ri.Name, &ri.Image)
				b.RelatedImages = append(b.RelatedImages, ri)
				return ok
			})
		}
		return true
	})
}

// decodeManifestHeadFast decodes what ToIndex reads of a CSV or CRD
// manifest (o, any JSON) into h as json.Unmarshal would; false when it
// cannot say so (see above).
func decodeManifestHeadFast(o []byte, h *manifestHead) bool {
	start := skipSpace(o, 0)
	end, ok := validValue(o, start)
	if !ok || skipSpace(o, end) != len(o) {
		return false
	}
	o = o[start:end]
	// Smaller parts are left to encoding/json: they are few and short.
	part := func(val []byte, into any) bool { return json.Unmarshal(val, into) == nil }
	top := newFields("kind", "metadata", "spec")
	return members(o, func(key, val []byte) bool {
		i, ok := top.match(key)
		switch {
		case !ok:
			return false
		case i == 0:
			return str(val, &h.Kind)
		case i == 1:
			mf := newFields("annotations")
			return members(val, func(key, val []byte) bool {
				i, ok := mf.match(key)
				if !ok {
					return false
				}
				if i == 0 {
					return skipRangeOnly(val, &h.Metadata.Annotations)
				}
				return true
			})
		case i == 2:
			s := &h.Spec
			sf := newFields("replaces", "skips", "relatedImages", "customresourcedefinitions", "apiservicedefinitions",
				"group", "names", "versions", "version")
			return members(val, func(key, val []byte) bool {
				i, ok := sf.match(key)
				switch {
				case !ok:
					return false
				case i == 0:
					return str(val, &s.Replaces)
				case i == 1:
					return part(val, &s.Skips)
				case i == 2:
					return part(val, &s.RelatedImages)
				case i == 3:
					return ownedRequired(val, &s.CRDs.Owned, &s.CRDs.Required, crdDescFast)
				case i == 4:
					return ownedRequired(val, &s.APIs.Owned, &s.APIs.Required, apiDescFast)
				case i == 5:
					return str(val, &s.Group)
				case i == 6:
					return strMembers(val, []string{"kind", "plural"}, &s.Names.Kind, &s.Names.Plural)
				case i == 7:
					// Each version carries its whole schema: only the
					// names are read.
					if isNull(val) {
						return false
					}
					s.Versions = []crdVersion{}
					return elements(val, func(e []byte) bool {
						var name string
						ok := strMembers(e, []string{"name"}, &name)
						s.Versions = append(s.Versions, crdVersion{name})
						return ok
					})
				case i == 8:
					return str(val, &s.Version)
				}
				return true
			})
		}
		return true
	})
}

// skipRangeOnly reads a manifest's annotations (val) into *m keeping only
// olm.skipRange, all that ToIndex reads of them, as json.Unmarshal into
// a map would read it: false unless every value is a string and no key
// has escapes.
func skipRangeOnly(val []byte, m *map[string]string) bool {
	if isNull(val) {
		return false
	}
	if *m == nil {
		*m = map[string]string{}
	}
	return members(val, func(key, val []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 || len(val) == 0 || val[0] != '"' {
			return false
		}
		if string(key) != bundle.AnnotationSkipRange {
			return true
		}
		var v string
		if !str(val, &v) {
			return false
		}
		(*m)[bundle.AnnotationSkipRange] = v
		return true
	})
}

// ownedRequired reads {"owned": [...], "required": [...]} of a CSV's
// customresourcedefinitions or apiservicedefinitions, each element with
// one.
func ownedRequired[T any](val []byte, owned, required *[]T, one func([]byte, *T) bool) bool {
	f := newFields("owned", "required")
	return members(val, func(key, val []byte) bool {
		i, ok := f.match(key)
		if !ok {
			return false
		}
		if i < 0 {
			return true
		}
		if isNull(val) {
			return false
		}
		list := []T{}
		ok = elements(val, func(e []byte) bool {
			var d T
			ok := one(e, &d)
			list = append(list, d)
			return ok
		})
		if i == 0 {
			*owned = list
		} else {
			*required = list
		}
		return ok
	})
}

func crdDescFast(raw []byte, d *crdDesc) bool {
	return strMembers(raw, []string{"name", "kind", "version"}, &d.Name, &d.Kind, &d.Version)
}

func apiDescFast(raw []byte, d *apiDesc) bool {
	return strMembers(raw, []string{"group", "version", "kind", "name"}, &d.Group, &d.Version, &d.Kind, &d.Name)
}

// decodeCSVIconsFast decodes a CSV's icons into c as json.Unmarshal would;
// false when it cannot say so (see above).
func decodeCSVIconsFast(o []byte, c *csvIcons) bool {
	start := skipSpace(o, 0)
	end, ok := validValue(o, start)
	if !ok || skipSpace(o, end) != len(o) {
		return false
	}
	top := newFields("spec")
	return members(o[start:end], func(key, val []byte) bool {
		i, ok := top.match(key)
		if !ok || i < 0 {
			return ok
		}
		sf := newFields("icon")
		return members(val, func(key, val []byte) bool {
			i, ok := sf.match(key)
			if !ok || i < 0 {
				return ok
			}
			if isNull(val) {
				return false
			}
			c.Spec.Icon = []csvIcon1{}
			return elements(val, func(e []byte) bool {
				var ic csvIcon1
				ok := strMembers(e, []string{"base64data", "mediatype"}, &ic.Data, &ic.MediaType)
				c.Spec.Icon = append(c.Spec.Icon, ic)
				return ok
			})
		})
	})
}

// csvRelatedImagesFast is csvRelatedImages without decoding the whole CSV
// (its CRD descriptions and base64 icon make most of it): the CSV is
// checked with validValue and only spec.relatedImages is decoded, by
// encoding/json. False where encoding/json might read the CSV another way
// (see fields.match, a spec that is neither an object nor null, a
// relatedImages it does not decode cleanly).
func csvRelatedImagesFast(csvJSON []byte) ([]RelatedImage, bool) {
	start := skipSpace(csvJSON, 0)
	end, ok := validValue(csvJSON, start)
	if !ok || skipSpace(csvJSON, end) != len(csvJSON) || csvJSON[start] != '{' {
		return nil, false
	}
	// member returns the value of the object's member name (nil when
	// there is none).
	member := func(obj []byte, name string) (val []byte, ok bool) {
		f := newFields(name)
		ok = members(obj, func(key, v []byte) bool {
			i, ok := f.match(key)
			if ok && i == 0 {
				val = v
			}
			return ok
		})
		return val, ok
	}
	spec, ok := member(csvJSON[start:end], "spec")
	switch {
	case !ok:
		return nil, false
	case spec == nil || isNull(spec):
		return nil, true
	case spec[0] != '{':
		return nil, false
	}
	raw, ok := member(spec, "relatedImages")
	if !ok {
		return nil, false
	}
	if raw == nil {
		return nil, true
	}
	var out []RelatedImage
	if json.Unmarshal(raw, &out) != nil {
		return nil, false
	}
	return out, true
}
