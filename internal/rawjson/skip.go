// Package rawjson works on JSON as bytes, for the hot paths of reading and
// writing catalogs (mostly base64 inside strings): finding where a value
// ends, indenting and compacting, picking members out of an object, and
// bringing a value to canonical form. Each is a fast path held to
// encoding/json by a fuzz target: it gives encoding/json's result or says
// no, and the caller then uses encoding/json.
package rawjson

import (
	"bytes"
	"encoding/binary"
)

// This file holds a JSON syntax check that finds where a value ends, for
// the hot paths of reading a catalog (a 5,000-bundle catalog is ~300 MB of
// JSON, most of it base64 in strings). encoding/json's scanner costs a
// function call per byte; this runs a word at a time through strings. It
// is a fast path only: it accepts exactly what encoding/json accepts or
// says no, and then the caller lets encoding/json read the input and
// report the problem (FuzzValidValue holds it to json.Valid).

// MaxDepth bounds nesting; deeper values (encoding/json allows 10,000
// levels) go to encoding/json.
const MaxDepth = 1000

// ValidValue returns the end of the JSON value starting at data[i] (no
// white space before it); ok is false when data[i:] does not start with a
// valid value (or one nested deeper than MaxDepth).
func ValidValue(data []byte, i int) (end int, ok bool) {
	return ValidValueWithin(data, i, MaxDepth)
}

// ValidValueWithin is ValidValue with a bound on nesting of its own:
// ok is also false for a value with more than maxDepth containers one
// inside the other, the innermost counted even when empty ({} is 1 deep,
// [[]] is 2).
func ValidValueWithin(data []byte, i, maxDepth int) (end int, ok bool) {
	// stack holds, per open container, whether it is an object.
	var stackArr [64]bool
	stack := stackArr[:0]
	for {
		// A value at data[i].
		if i >= len(data) {
			return 0, false
		}
		switch c := data[i]; c {
		case '"':
			if i, ok = skipString(data, i); !ok {
				return 0, false
			}
		case '{', '[':
			obj := c == '{'
			if len(stack) >= maxDepth {
				return 0, false
			}
			i = SkipSpace(data, i+1)
			if i >= len(data) {
				return 0, false
			}
			if (obj && data[i] == '}') || (!obj && data[i] == ']') {
				i++
				break // an empty container is a whole value
			}
			stack = append(stack, obj)
			if obj {
				if i, ok = objectKey(data, i); !ok {
					return 0, false
				}
			}
			continue
		case 't':
			if i, ok = literal(data, i, "true"); !ok {
				return 0, false
			}
		case 'f':
			if i, ok = literal(data, i, "false"); !ok {
				return 0, false
			}
		case 'n':
			if i, ok = literal(data, i, "null"); !ok {
				return 0, false
			}
		default:
			if i, ok = skipNumber(data, i); !ok {
				return 0, false
			}
		}
		// After a value: close containers or go on to the next element.
		for {
			if len(stack) == 0 {
				return i, true
			}
			i = SkipSpace(data, i)
			if i >= len(data) {
				return 0, false
			}
			obj := stack[len(stack)-1]
			c := data[i]
			if c == ',' {
				i = SkipSpace(data, i+1)
				if obj {
					if i, ok = objectKey(data, i); !ok {
						return 0, false
					}
				}
				break
			}
			if (obj && c == '}') || (!obj && c == ']') {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return 0, false
		}
	}
}

// objectKey reads `"key" :` and the white space after it, at data[i].
func objectKey(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	i, ok := skipString(data, i)
	if !ok {
		return 0, false
	}
	i = SkipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return 0, false
	}
	return SkipSpace(data, i+1), true
}

func SkipSpace(data []byte, i int) int {
	for i < len(data) && IsSpace(data[i]) {
		i++
	}
	return i
}

func literal(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipNumber reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func skipNumber(data []byte, i int) (int, bool) {
	digits := func() bool {
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		return 0, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	return i, true
}

const (
	lo7 = 0x0101010101010101
	hi  = 0x8080808080808080
)

// special reports whether the 8 bytes of w hold a byte that ends a run of
// plain string content: a quote, a backslash or a control character (below
// 0x20). Bytes of 0x80 and above (UTF-8) are plain.
func special(w uint64) bool {
	quote := w ^ (lo7 * '"')
	back := w ^ (lo7 * '\\')
	// Whether any byte is zero, and whether any is below 0x20: exact as
	// a whole, though not per byte (a borrow can mark a higher byte).
	zero := func(x uint64) uint64 { return (x - lo7) &^ x & hi }
	ctl := (w - lo7*0x20) &^ w & hi
	return zero(quote)|zero(back)|ctl != 0
}

// skipString reads the string at data[i] (a quote) and returns the offset
// past its closing quote.
func skipString(data []byte, i int) (int, bool) {
	i++
	for {
		for i+8 <= len(data) && !special(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < len(data) {
			c := data[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		if i >= len(data) {
			return 0, false
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(data) {
				return 0, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return 0, false
				}
				for _, h := range data[i+2 : i+6] {
					if !isHex(h) {
						return 0, false
					}
				}
				i += 6
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// SkipValid returns the end of the JSON value at data[i] (no white space
// before it) in data that is valid JSON (checked already): it only looks
// for the end, finding each string's closing quote with IndexByte.
func SkipValid(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			i = skipValidString(data, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return i + 1
			}
		default:
			if depth == 0 { // a number or literal
				for i < len(data) && data[i] != ',' && data[i] != '}' && data[i] != ']' && !IsSpace(data[i]) {
					i++
				}
				return i
			}
		}
		i++
	}
	return len(data)
}

// skipValidString returns the offset past the closing quote of the valid
// JSON string at data[i].
func skipValidString(data []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data)
		}
		q := j + k
		// The quote is escaped when an odd number of backslashes
		// precede it.
		n := 0
		for p := q - 1; p > i && data[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// IsSpace says whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
