// Package printable shows text from catalogs and bundles (package, channel,
// bundle and file names, images, messages quoting them) safely on a
// terminal: control characters are written as visible escapes (\x1b,
// \u202e) instead of raw, so input cannot recolour, clear or move the
// cursor of the terminal it is reported on, nor reorder what is shown with
// bidirectional overrides. Human output applies it where it renders names;
// machine output (JSON, YAML, files written) stays exact.
package printable

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Name is s for one line of output (a name in a tree, a table cell, a
// summary): every control character is escaped, newlines and tabs too, so
// a name cannot start a line of its own or shift a column.
func Name(s string) string { return escape(s, false) }

// Text is s for output that may span lines (a message, a hint): newlines
// and tabs stay, every other control character is escaped.
func Text(s string) string { return escape(s, true) }

// Error is err's message as Text (nil stays "").
func Error(err error) string {
	if err == nil {
		return ""
	}
	return Text(err.Error())
}

func escape(s string, keepLines bool) string {
	i := firstUnsafe(s, keepLines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// Not UTF-8: the byte as is could start a C1 sequence on
			// terminals that read Latin-1.
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r, keepLines) && r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r, keepLines):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func firstUnsafe(s string, keepLines bool) int {
	for i, r := range s {
		if unsafe(r, keepLines) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) {
			return i
		}
	}
	return -1
}

// unsafe is a rune a terminal acts on rather than shows: C0 controls
// (but newline and tab where lines are kept), DEL, C1 controls, and the
// bidirectional embeddings, overrides and isolates ("Trojan Source").
func unsafe(r rune, keepLines bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !keepLines
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Count writes n with the noun in the number it takes: "1 bundle",
// "2 bundles", "0 bundles".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
