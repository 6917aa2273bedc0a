package httpcatalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The canonical form of a blob is what catalogd stores: what decoding it
// into Go's map[string]any and encoding it again without HTML escaping
// writes (keys sorted, the last of duplicate keys kept, numbers as float64,
// strings in Go's escaping, no white space). canonParser works on the
// bytes, copying strings and numbers that already read as Go writes them
// (almost all of a catalog, the large base64 manifests included) instead of
// building the maps: storing a catalog is then about as fast as reading
// it. Anything unusual (an escape, a number Go would spell otherwise) goes
// through encoding/json, so the result is the same.

// blob appends the canonical form of one blob and leaves its top-level
// members in p.top.
func (p *canonParser) blob(dst []byte) ([]byte, error) {
	p.skipSpace()
	dst, err := p.value(dst)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return nil, errors.New("text after the JSON value")
	}
	return dst, nil
}

type canonParser struct {
	data  []byte
	i     int
	depth int
	// top is the members of the outermost object, for its schema,
	// package and name.
	top []member
}

var errSyntax = errors.New("invalid JSON")

func (p *canonParser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *canonParser) value(dst []byte) ([]byte, error) {
	if p.i >= len(p.data) {
		return nil, errSyntax
	}
	switch p.data[p.i] {
	case '{':
		return p.object(dst)
	case '[':
		return p.array(dst)
	case '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return appendString(dst, s)
	case 't':
		return p.literal(dst, "true")
	case 'f':
		return p.literal(dst, "false")
	case 'n':
		return p.literal(dst, "null")
	default:
		return p.number(dst)
	}
}

func (p *canonParser) literal(dst []byte, lit string) ([]byte, error) {
	if !bytes.HasPrefix(p.data[p.i:], []byte(lit)) {
		return nil, errSyntax
	}
	p.i += len(lit)
	return append(dst, lit...), nil
}

// str returns the raw string token, quotes included, and moves past it.
func (p *canonParser) str() ([]byte, error) {
	start := p.i
	p.i++
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			return p.data[start:p.i], nil
		default:
			p.i++
		}
	}
	return nil, errSyntax
}

// appendString writes a raw string token as Go writes the string: as is
// when it has no escape, no U+2028/U+2029 and is valid UTF-8 (Go would
// write those bytes back unchanged), else decoded and encoded again.
func appendString(dst, tok []byte) ([]byte, error) {
	if plainString(tok) {
		return append(dst, tok...), nil
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return nil, err
	}
	return appendEncoded(dst, s)
}

// plainString reports whether Go writes the string token's value back as
// the same bytes: no escape, valid UTF-8, no U+2028 or U+2029 (which Go
// escapes). Raw control characters cannot be in a valid token.
func plainString(tok []byte) bool {
	body := tok[1 : len(tok)-1]
	return bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) &&
		!bytes.Contains(body, []byte("\u2028")) && !bytes.Contains(body, []byte("\u2029"))
}

func appendEncoded(dst []byte, v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...), nil
}

// number writes a number as Go writes the float64 it decodes to: short
// integers are already spelled that way; anything else is converted.
func (p *canonParser) number(dst []byte) ([]byte, error) {
	start := p.i
	for p.i < len(p.data) && strings.IndexByte("+-0123456789.eE", p.data[p.i]) >= 0 {
		p.i++
	}
	tok := p.data[start:p.i]
	if len(tok) == 0 {
		return nil, errSyntax
	}
	digits := bytes.TrimPrefix(tok, []byte("-"))
	simple := len(digits) > 0 && len(digits) <= 15 && (digits[0] != '0' || len(digits) == 1)
	for _, c := range digits {
		simple = simple && c >= '0' && c <= '9'
	}
	if simple && !bytes.Equal(tok, []byte("-0")) {
		return append(dst, tok...), nil
	}
	var f float64
	if err := json.Unmarshal(tok, &f); err != nil {
		// encoding/json's error repeats the whole number: say it once, clipped.
		if _, ok := err.(*json.UnmarshalTypeError); ok {
			return nil, fmt.Errorf("number %s does not fit a 64-bit float", clip(string(tok)))
		}
		return nil, fmt.Errorf("number %s: %w", clip(string(tok)), err)
	}
	return appendEncoded(dst, f)
}

func (p *canonParser) array(dst []byte) ([]byte, error) {
	p.i++ // [
	dst = append(dst, '[')
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return append(dst, ']'), nil
	}
	for {
		p.skipSpace()
		var err error
		if dst, err = p.value(dst); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, errSyntax
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			dst = append(dst, ',')
		case ']':
			p.i++
			return append(dst, ']'), nil
		default:
			return nil, errSyntax
		}
	}
}

type member struct {
	key   string
	raw   []byte // the key's token when Go writes it unchanged, else nil
	value []byte // canonical
}

func (p *canonParser) object(dst []byte) ([]byte, error) {
	p.i++ // {
	var members []member
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return append(dst, '{', '}'), nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, errSyntax
		}
		tok, err := p.str()
		if err != nil {
			return nil, err
		}
		var key string
		var rawKey []byte
		if plainString(tok) {
			key, rawKey = string(tok[1:len(tok)-1]), tok
		} else if err := json.Unmarshal(tok, &key); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, errSyntax
		}
		p.i++
		p.skipSpace()
		p.depth++
		v, err := p.value(nil)
		p.depth--
		if err != nil {
			return nil, err
		}
		members = append(members, member{key, rawKey, v})
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, errSyntax
		}
		if p.data[p.i] == ',' {
			p.i++
			continue
		}
		if p.data[p.i] != '}' {
			return nil, errSyntax
		}
		p.i++
		break
	}
	members = sortMembers(members)
	if p.depth == 0 {
		p.top = members
	}
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		if m.raw != nil {
			dst = append(dst, m.raw...)
		} else {
			var err error
			if dst, err = appendEncoded(dst, m.key); err != nil {
				return nil, err
			}
		}
		dst = append(dst, ':')
		dst = append(dst, m.value...)
	}
	return append(dst, '}'), nil
}

// sortMembers sorts an object's members by key and drops repeated keys,
// keeping the last value of each as Go's map does. A stable sort keeps
// the repeats in document order, so the last of each run is the one kept:
// O(n log n), where looking each key up in the members before it was
// quadratic (minutes to store one blob of 200,000 keys).
func sortMembers(members []member) []member {
	slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	out := members[:0]
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue // a later member has this key
		}
		out = append(out, m)
	}
	return out
}

// maxQuoted is how much of a user's input an error message repeats.
const maxQuoted = 64

// clip cuts s to maxQuoted bytes (at a rune boundary) and marks the cut
// with "…", so that an error about a megabyte of input stays one short
// line.
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
