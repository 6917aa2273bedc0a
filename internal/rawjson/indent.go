package rawjson

import (
	"bytes"
	"encoding/json"
)

// Fast equivalents of json.Indent and json.Compact for the writers of a
// catalog (render, migrate): their input is mostly base64 inside strings
// (olm.bundle.object values), which encoding/json walks through a state
// machine a byte at a time. These check the syntax as they go, with the
// scanner of skip.go (a word at a time through strings), and copy
// strings, numbers and literals whole. They produce exactly what
// encoding/json produces for valid JSON and say no (ok false) to anything
// else, and the caller then uses encoding/json, so errors read the same
// (FuzzIndentCompact holds them to json.Indent and json.Compact).

// reformatter appends JSON values to dst, either indented as json.Indent
// does (pretty) or compacted as json.Compact does.
type reformatter struct {
	dst            []byte
	prefix, indent string
	pretty         bool
}

func (r *reformatter) newline(depth int) {
	r.dst = append(r.dst, '\n')
	r.dst = append(r.dst, r.prefix...)
	for k := 0; k < depth; k++ {
		r.dst = append(r.dst, r.indent...)
	}
}

// value appends the value at src[i] (no white space before it), whose
// container is nested depth deep, and returns the offset past it.
func (r *reformatter) value(src []byte, i, depth int) (int, bool) {
	if i >= len(src) {
		return 0, false
	}
	var end int
	var ok bool
	switch c := src[i]; c {
	case '"':
		end, ok = skipString(src, i)
	case '{', '[':
		return r.container(src, i, depth)
	case 't':
		end, ok = literal(src, i, "true")
	case 'f':
		end, ok = literal(src, i, "false")
	case 'n':
		end, ok = literal(src, i, "null")
	default:
		end, ok = skipNumber(src, i)
	}
	if !ok {
		return 0, false
	}
	r.dst = append(r.dst, src[i:end]...)
	return end, true
}

// container appends the object or array at src[i]. As json.Indent does,
// an empty one stays on one line ({} or []) whatever space it held.
func (r *reformatter) container(src []byte, i, depth int) (int, bool) {
	open := src[i]
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	r.dst = append(r.dst, open)
	j := SkipSpace(src, i+1)
	if j < len(src) && src[j] == closer {
		r.dst = append(r.dst, closer)
		return j + 1, true
	}
	if depth >= MaxDepth {
		return 0, false
	}
	for {
		if r.pretty {
			r.newline(depth + 1)
		}
		if open == '{' {
			if j >= len(src) || src[j] != '"' {
				return 0, false
			}
			end, ok := skipString(src, j)
			if !ok {
				return 0, false
			}
			r.dst = append(r.dst, src[j:end]...)
			j = SkipSpace(src, end)
			if j >= len(src) || src[j] != ':' {
				return 0, false
			}
			r.dst = append(r.dst, ':')
			if r.pretty {
				r.dst = append(r.dst, ' ')
			}
			j = SkipSpace(src, j+1)
		}
		end, ok := r.value(src, j, depth+1)
		if !ok {
			return 0, false
		}
		j = SkipSpace(src, end)
		if j >= len(src) {
			return 0, false
		}
		switch src[j] {
		case ',':
			r.dst = append(r.dst, ',')
			j = SkipSpace(src, j+1)
			continue
		case closer:
			if r.pretty {
				r.newline(depth)
			}
			r.dst = append(r.dst, closer)
			return j + 1, true
		}
		return 0, false
	}
}

// AppendIndent is json.Indent(dst, src, prefix, indent) for src holding
// one valid JSON value: leading white space dropped, trailing white space
// copied as it is, no prefix before the first line. ok is false, and dst
// to be ignored, for anything else.
func AppendIndent(dst, src []byte, prefix, indent string) ([]byte, bool) {
	r := reformatter{dst: dst, prefix: prefix, indent: indent, pretty: true}
	end, ok := r.value(src, SkipSpace(src, 0), 0)
	if !ok || SkipSpace(src, end) != len(src) {
		return dst, false
	}
	return append(r.dst, src[end:]...), true
}

// AppendIndentAt appends the valid JSON value src (white space around it
// allowed) indented as it would be nested depth deep in a value that
// json.Indent formats. This is how json.Marshal followed by json.Indent
// prints a json.RawMessage: Marshal compacts it, and Indent drops every
// space outside strings anyway.
func AppendIndentAt(dst, src []byte, prefix, indent string, depth int) ([]byte, bool) {
	r := reformatter{dst: dst, prefix: prefix, indent: indent, pretty: true}
	end, ok := r.value(src, SkipSpace(src, 0), depth)
	if !ok || SkipSpace(src, end) != len(src) {
		return dst, false
	}
	return r.dst, true
}

// AppendCompact is json.Compact(dst, src) for src holding one valid JSON
// value: every space outside strings dropped. ok is false, and dst to be
// ignored, for anything else.
func AppendCompact(dst, src []byte) ([]byte, bool) {
	r := reformatter{dst: dst}
	end, ok := r.value(src, SkipSpace(src, 0), 0)
	if !ok || SkipSpace(src, end) != len(src) {
		return dst, false
	}
	return r.dst, true
}

// Compact is what json.Compact writes for src, by AppendCompact where
// it can.
func Compact(src []byte) ([]byte, error) {
	if out, ok := AppendCompact(make([]byte, 0, len(src)), src); ok {
		return out, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, src); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
