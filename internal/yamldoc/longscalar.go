package yamldoc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// yaml.v3 scans a plain scalar at about 10 MB/s, one character at a time:
// a CSV's 300 KB base64 icon costs 30 ms, more than the rest of a typical
// bundle. Runs of base64 characters long enough to matter are cut out of
// the text before parsing, each replaced by a short token of the same kind
// (a string of letters and digits), and put back into the values after:
// the parser sees the same structure on the same lines.

// minCut is the shortest run cut out.
const minCut = 1024

// cuts maps the tokens in a file's text back to what they replaced.
type cuts struct {
	prefix string
	runs   []string
}

// cutLongScalars returns data with every long run of base64 characters
// replaced by a token, and what to put back (nil when nothing was cut). A
// run is cut only where no YAML syntax can give it a meaning other than
// characters of a string: it starts with a letter after a blank, reaches
// the end of its line, and nothing before it on the line is a tag, anchor,
// alias, quote, comment, flow collection or explicit key.
func cutLongScalars(data []byte) ([]byte, *cuts) {
	if len(data) < minCut {
		return data, nil
	}
	var (
		out []byte
		c   *cuts
	)
	last := 0 // data[last:] is not yet copied to out
	for start := 0; start < len(data); {
		ls := start
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start
		}
		line := data[start:end]
		start = end + 1
		if len(line) < minCut {
			continue
		}
		body := bytes.TrimRight(line, " \t\r")
		i := len(body)
		for i > 0 && isBase64Byte(body[i-1]) {
			i--
		}
		if len(body)-i < minCut || !isLetter(body[i]) || (i > 0 && body[i-1] != ' ' && body[i-1] != '\t') {
			continue
		}
		if bytes.ContainsAny(body[:i], "!&*'\"#[]{}?|>%@`") {
			continue
		}
		if c == nil {
			c = &cuts{prefix: newTokenPrefix(data)}
			if c.prefix == "" {
				return data, nil
			}
			out = make([]byte, 0, len(data)/2)
		}
		runStart := ls + i
		out = append(out, data[last:runStart]...)
		out = append(out, c.prefix...)
		out = strconv.AppendInt(out, int64(len(c.runs)), 10)
		out = append(out, 'z')
		c.runs = append(c.runs, string(body[i:]))
		last = ls + len(body)
	}
	if c == nil {
		return data, nil
	}
	return append(out, data[last:]...), c
}

// newTokenPrefix is a token prefix that data does not contain ("" in the
// unlikely case every try does).
func newTokenPrefix(data []byte) string {
	for range 4 {
		var b [6]byte
		_, _ = rand.Read(b[:])
		p := "opmcut" + hex.EncodeToString(b[:]) + "n"
		if !bytes.Contains(data, []byte(p)) {
			return p
		}
	}
	return ""
}

// restore puts the cut runs back into a scalar's value.
func (c *cuts) restore(v string) string {
	if c == nil || !strings.Contains(v, c.prefix) {
		return v
	}
	var b strings.Builder
	for {
		i := strings.Index(v, c.prefix)
		if i < 0 {
			b.WriteString(v)
			return b.String()
		}
		b.WriteString(v[:i])
		rest := v[i+len(c.prefix):]
		j := strings.IndexByte(rest, 'z')
		n, err := strconv.Atoi(rest[:max(j, 0)])
		if j < 0 || err != nil || n < 0 || n >= len(c.runs) {
			b.WriteString(c.prefix)
			v = rest
			continue
		}
		b.WriteString(c.runs[n])
		v = rest[j+1:]
	}
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// base64Bytes marks the bytes of standard base64, padding included.
var base64Bytes = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=" {
		t[c] = true
	}
	return t
}()

func isBase64Byte(b byte) bool { return base64Bytes[b] }
