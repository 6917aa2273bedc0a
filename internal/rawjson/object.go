package rawjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Members calls f with each member of the JSON object raw (valid JSON,
// checked already): the key as written between its quotes and the value.
// False when raw is not an object or f returns false.
func Members(raw []byte, f func(key, val []byte) bool) bool {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) && raw[i] == '"' {
		kEnd := skipValidString(raw, i)
		key := raw[i+1 : kEnd-1]
		i = SkipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = SkipSpace(raw, i+1)
		vEnd := SkipValid(raw, i)
		if !f(key, raw[i:vEnd]) {
			return false
		}
		i = SkipSpace(raw, vEnd)
		if i < len(raw) && raw[i] == ',' {
			i = SkipSpace(raw, i+1)
			continue
		}
		return i < len(raw) && raw[i] == '}'
	}
	return false
}

// Elements calls f with each element of the JSON array raw (valid JSON,
// checked already). False when raw is not an array or f returns false.
func Elements(raw []byte, f func(val []byte) bool) bool {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	i = SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return true
	}
	for i < len(raw) {
		end := SkipValid(raw, i)
		if !f(raw[i:end]) {
			return false
		}
		i = SkipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = SkipSpace(raw, i+1)
			continue
		}
		return i < len(raw) && raw[i] == ']'
	}
	return false
}

// fields matches an object's keys against a struct's JSON field names, as
// encoding/json would, but only where that is plain: each key exactly one
// name, at most once.
type Fields struct {
	names []string
	seen  uint64
}

// match returns the index of key among the names, -1 for a key encoding/json
// ignores; ok is false when the key might match a name another way (letter
// case, escapes, non-ASCII folding) or repeats one.
func (fs *Fields) Match(key []byte) (int, bool) {
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

func NewFields(names ...string) *Fields { return &Fields{names: names} }

// StrMembers decodes the Members of the JSON object raw named by names,
// all strings, into dsts (one for each name), skipping the others; false
// as match and str say.
func StrMembers(raw []byte, names []string, dsts ...*string) bool {
	f := NewFields(names...)
	return Members(raw, func(key, val []byte) bool {
		i, ok := f.Match(key)
		switch {
		case !ok:
			return false
		case i < 0:
			return true
		}
		return Str(val, dsts[i])
	})
}

// str decodes a JSON string value into s; false for any other value
// (null included: encoding/json would leave s as it is, which the caller's
// fallback does).
func Str(val []byte, s *string) bool {
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

// IsNull reports whether a (valid) JSON value is null.
func IsNull(val []byte) bool { return len(val) == 4 && string(val) == "null" }
