package fbc

import (
	"bytes"
	"encoding/json"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/rawjson"
)

// Fast paths for decoding the two kinds of JSON a catalog conversion reads
// most: olm.bundle blobs and the heads of CSV and CRD manifests. Both pick
// the few fields they need out of JSON checked once with rawjson.ValidValue and
// skip the rest (the base64 manifests, the CRDs' schemas), rather than have
// encoding/json check and walk every byte twice. Each gives up (ok false)
// on anything where encoding/json might read the input differently: a key
// in another letter case or with escapes, a key given twice, a value of
// another type than the field's, a null where it matters. The caller then
// decodes with encoding/json, so results and errors stay encoding/json's
// (TestFastDecodersMatchEncodingJSON, FuzzFastDecoders).

// decodeBundleFast decodes an olm.bundle blob (raw, trimmed) into b as
// json.Unmarshal would; false when it cannot say so (see above).
func decodeBundleFast(raw []byte, b *Bundle) bool {
	if end, ok := rawjson.ValidValue(raw, 0); !ok || end != len(raw) {
		return false
	}
	fs := rawjson.NewFields("schema", "name", "package", "image", "properties", "relatedImages")
	return rawjson.Members(raw, func(key, val []byte) bool {
		i, ok := fs.Match(key)
		switch {
		case !ok:
			return false
		case i == 0:
			return rawjson.Str(val, &b.Schema)
		case i == 1:
			return rawjson.Str(val, &b.Name)
		case i == 2:
			return rawjson.Str(val, &b.Package)
		case i == 3:
			return rawjson.Str(val, &b.Image)
		case i == 4:
			if rawjson.IsNull(val) {
				return false
			}
			b.Properties = []Property{}
			return rawjson.Elements(val, func(e []byte) bool {
				var p Property
				pf := rawjson.NewFields("type", "value")
				ok := rawjson.Members(e, func(key, val []byte) bool {
					i, ok := pf.Match(key)
					switch {
					case !ok:
						return false
					case i == 0:
						return rawjson.Str(val, &p.Type)
					case i == 1:
						if rawjson.IsNull(val) {
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
			if rawjson.IsNull(val) {
				return false
			}
			b.RelatedImages = []RelatedImage{}
			return rawjson.Elements(val, func(e []byte) bool {
				var ri RelatedImage
				ok := rawjson.StrMembers(e, []string{"name", "image"}, &ri.Name, &ri.Image)
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
	start := rawjson.SkipSpace(o, 0)
	end, ok := rawjson.ValidValue(o, start)
	if !ok || rawjson.SkipSpace(o, end) != len(o) {
		return false
	}
	o = o[start:end]
	// Smaller parts are left to encoding/json: they are few and short.
	part := func(val []byte, into any) bool { return json.Unmarshal(val, into) == nil }
	top := rawjson.NewFields("kind", "metadata", "spec")
	return rawjson.Members(o, func(key, val []byte) bool {
		i, ok := top.Match(key)
		switch {
		case !ok:
			return false
		case i == 0:
			return rawjson.Str(val, &h.Kind)
		case i == 1:
			mf := rawjson.NewFields("annotations")
			return rawjson.Members(val, func(key, val []byte) bool {
				i, ok := mf.Match(key)
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
			sf := rawjson.NewFields("replaces", "skips", "relatedImages", "customresourcedefinitions", "apiservicedefinitions",
				"group", "names", "versions", "version")
			return rawjson.Members(val, func(key, val []byte) bool {
				i, ok := sf.Match(key)
				switch {
				case !ok:
					return false
				case i == 0:
					return rawjson.Str(val, &s.Replaces)
				case i == 1:
					return part(val, &s.Skips)
				case i == 2:
					return part(val, &s.RelatedImages)
				case i == 3:
					return ownedRequired(val, &s.CRDs.Owned, &s.CRDs.Required, crdDescFast)
				case i == 4:
					return ownedRequired(val, &s.APIs.Owned, &s.APIs.Required, apiDescFast)
				case i == 5:
					return rawjson.Str(val, &s.Group)
				case i == 6:
					return rawjson.StrMembers(val, []string{"kind", "plural"}, &s.Names.Kind, &s.Names.Plural)
				case i == 7:
					// Each version carries its whole schema: only the
					// names are read.
					if rawjson.IsNull(val) {
						return false
					}
					s.Versions = []crdVersion{}
					return rawjson.Elements(val, func(e []byte) bool {
						var name string
						ok := rawjson.StrMembers(e, []string{"name"}, &name)
						s.Versions = append(s.Versions, crdVersion{name})
						return ok
					})
				case i == 8:
					return rawjson.Str(val, &s.Version)
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
	if rawjson.IsNull(val) {
		return false
	}
	if *m == nil {
		*m = map[string]string{}
	}
	return rawjson.Members(val, func(key, val []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 || len(val) == 0 || val[0] != '"' {
			return false
		}
		if string(key) != bundle.AnnotationSkipRange {
			return true
		}
		var v string
		if !rawjson.Str(val, &v) {
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
	f := rawjson.NewFields("owned", "required")
	return rawjson.Members(val, func(key, val []byte) bool {
		i, ok := f.Match(key)
		if !ok {
			return false
		}
		if i < 0 {
			return true
		}
		if rawjson.IsNull(val) {
			return false
		}
		list := []T{}
		ok = rawjson.Elements(val, func(e []byte) bool {
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
	return rawjson.StrMembers(raw, []string{"name", "kind", "version"}, &d.Name, &d.Kind, &d.Version)
}

func apiDescFast(raw []byte, d *apiDesc) bool {
	return rawjson.StrMembers(raw, []string{"group", "version", "kind", "name"}, &d.Group, &d.Version, &d.Kind, &d.Name)
}

// decodeCSVIconsFast decodes a CSV's icons into c as json.Unmarshal would;
// false when it cannot say so (see above).
func decodeCSVIconsFast(o []byte, c *csvIcons) bool {
	start := rawjson.SkipSpace(o, 0)
	end, ok := rawjson.ValidValue(o, start)
	if !ok || rawjson.SkipSpace(o, end) != len(o) {
		return false
	}
	top := rawjson.NewFields("spec")
	return rawjson.Members(o[start:end], func(key, val []byte) bool {
		i, ok := top.Match(key)
		if !ok || i < 0 {
			return ok
		}
		sf := rawjson.NewFields("icon")
		return rawjson.Members(val, func(key, val []byte) bool {
			i, ok := sf.Match(key)
			if !ok || i < 0 {
				return ok
			}
			if rawjson.IsNull(val) {
				return false
			}
			c.Spec.Icon = []csvIcon1{}
			return rawjson.Elements(val, func(e []byte) bool {
				var ic csvIcon1
				ok := rawjson.StrMembers(e, []string{"base64data", "mediatype"}, &ic.Data, &ic.MediaType)
				c.Spec.Icon = append(c.Spec.Icon, ic)
				return ok
			})
		})
	})
}

// csvRelatedImagesFast is csvRelatedImages without decoding the whole CSV
// (its CRD descriptions and base64 icon make most of it): the CSV is
// checked with rawjson.ValidValue and only spec.relatedImages is decoded, by
// encoding/json. False where encoding/json might read the CSV another way
// (see fields.match, a spec that is neither an object nor null, a
// relatedImages it does not decode cleanly).
func csvRelatedImagesFast(csvJSON []byte) ([]RelatedImage, bool) {
	start := rawjson.SkipSpace(csvJSON, 0)
	end, ok := rawjson.ValidValue(csvJSON, start)
	if !ok || rawjson.SkipSpace(csvJSON, end) != len(csvJSON) || csvJSON[start] != '{' {
		return nil, false
	}
	// member returns the value of the object's member name (nil when
	// there is none).
	member := func(obj []byte, name string) (val []byte, ok bool) {
		f := rawjson.NewFields(name)
		ok = rawjson.Members(obj, func(key, v []byte) bool {
			i, ok := f.Match(key)
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
	case spec == nil || rawjson.IsNull(spec):
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
