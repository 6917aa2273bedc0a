package rawjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// Canonical JSON is what encoding/json writes for a value it decoded
// (numbers kept as json.Number) when HTML escaping is off: compact, object
// keys sorted and each once (the last of duplicates), strings escaped only
// where the encoder must (quote, backslash, control characters, U+2028 and
// U+2029; invalid UTF-8 becomes U+FFFD). Upstream re-encodes every blob of
// a catalog it reads this way (through a map, numbers as float64, which is
// where opm differs: it keeps numbers as written), so the same value
// written with other escapes (\u003e, \u00e4, \/) or another key order is
// one value to both.

// Canonical returns v in canonical form: v itself when it is so already
// (checked at memory speed: the usual case), else v decoded and
// re-encoded. Two values that mean the same have the same canonical form.
// v must hold one JSON value; an error says it does not.
func Canonical(v []byte) ([]byte, error) {
	if isCanonical(v) {
		return v, nil
	}
	return recodeJSON(v)
}

// recodeJSON is Canonical through encoding/json.
func recodeJSON(v []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: more than one value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// isCanonical says whether v is one JSON value in canonical form. It
// accepts no more than that (FuzzCanonical holds it to recodeJSON).
func isCanonical(v []byte) bool {
	end, ok := canonValue(v, 0, 0)
	return ok && end == len(v)
}

// canonValue checks the canonical value at v[i] and returns the offset
// past it.
func canonValue(v []byte, i, depth int) (int, bool) {
	if i >= len(v) {
		return 0, false
	}
	switch v[i] {
	case '"':
		return canonString(v, i)
	case '{':
		return canonObject(v, i, depth)
	case '[':
		i++
		if i < len(v) && v[i] == ']' {
			return i + 1, true
		}
		if depth >= MaxDepth {
			return 0, false
		}
		for {
			var ok bool
			if i, ok = canonValue(v, i, depth+1); !ok || i >= len(v) {
				return 0, false
			}
			switch v[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case 't':
		return literal(v, i, "true")
	case 'f':
		return literal(v, i, "false")
	case 'n':
		return literal(v, i, "null")
	}
	// A json.Number is written as it was read.
	return skipNumber(v, i)
}

// canonObject checks the object at v[i]: its keys must be in increasing
// byte order (which is the encoder's order, and rules out duplicates). A
// key with an escape sends the value to recodeJSON.
func canonObject(v []byte, i, depth int) (int, bool) {
	i++
	if i < len(v) && v[i] == '}' {
		return i + 1, true
	}
	if depth >= MaxDepth {
		return 0, false
	}
	var prev []byte
	for first := true; ; first = false {
		if i >= len(v) || v[i] != '"' {
			return 0, false
		}
		end, ok := canonString(v, i)
		if !ok {
			return 0, false
		}
		key := v[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 || (!first && bytes.Compare(prev, key) >= 0) {
			return 0, false
		}
		prev = key
		if end >= len(v) || v[end] != ':' {
			return 0, false
		}
		if i, ok = canonValue(v, end+1, depth+1); !ok || i >= len(v) {
			return 0, false
		}
		switch v[i] {
		case ',':
			i++
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// canonString checks the string at v[i] (a quote): only the escapes the
// encoder writes, no U+2028 or U+2029 left as they are, valid UTF-8.
func canonString(v []byte, i int) (int, bool) {
	i++
	for {
		// Plain ASCII runs a word at a time.
		for i+8 <= len(v) {
			w := binary.LittleEndian.Uint64(v[i:])
			if special(w) || w&hi != 0 {
				break
			}
			i += 8
		}
		if i >= len(v) {
			return 0, false
		}
		c := v[i]
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			n, ok := canonEscape(v, i)
			if !ok {
				return 0, false
			}
			i += n
		case c < 0x20:
			return 0, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(v[i:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				return 0, false
			}
			i += size
		}
	}
}

// canonEscape returns the length of the escape at v[i] (a backslash) when
// it is one the encoder writes.
func canonEscape(v []byte, i int) (int, bool) {
	if i+1 >= len(v) {
		return 0, false
	}
	switch v[i+1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
	default:
		return 0, false
	}
	if i+6 > len(v) {
		return 0, false
	}
	u := string(v[i+2 : i+6])
	if u == "2028" || u == "2029" {
		return 6, true
	}
	// \u00XX, lower-case hex, for a control character without a short
	// escape.
	if u[0] != '0' || u[1] != '0' || (u[2] != '0' && u[2] != '1') || !lowerHex(u[3]) {
		return 0, false
	}
	switch c := unhex(u[2])<<4 | unhex(u[3]); c {
	case '\b', '\f', '\n', '\r', '\t':
		return 0, false
	}
	return 6, true
}

func lowerHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// CanonicalStrings returns v (valid JSON) with each string, keys included,
// escaped as in canonical form, and everything else as it is: for values
// whose key order carries meaning to their reader. v itself when no
// string needs it.
func CanonicalStrings(v []byte) ([]byte, error) {
	var out []byte
	done := 0 // v[:done] is in out (when out is not nil)
	for i := 0; i < len(v); i++ {
		if v[i] != '"' {
			continue
		}
		end, ok := canonString(v, i)
		if ok {
			i = end - 1
			continue
		}
		if end, ok = skipString(v, i); !ok {
			return nil, errors.New("invalid JSON string")
		}
		enc, err := recodeJSON(v[i:end])
		if err != nil {
			return nil, err
		}
		out = append(append(out, v[done:i]...), enc...)
		done = end
		i = end - 1
	}
	if out == nil {
		return v, nil
	}
	return append(out, v[done:]...), nil
}
