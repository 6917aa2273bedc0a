package catalogui

import (
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestFirstSentence(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"## About\n\nThe **etcd** Operator creates [clusters](https://x). It is open.": "The etcd Operator creates clusters.",
		"![logo](x.png)\n\nKeeps things safe! More.":                                   "Keeps things safe!",
		"- Installs\n- things":       "Installs things",
		"# Only a heading":           "",
		"No full stop at the end":    "No full stop at the end",
		"Version 1.2 is here. Yes.":  "Version 1.2 is here.",
		"<p>raw html</p>\n\nText.":   "Text.",
		strings.Repeat("long ", 100): strings.Repeat("long ", 47) + "long…",
	} {
		assert.Equal(t, want, firstSentence(in), in)
	}
}

func TestNaturalLess(t *testing.T) {
	t.Parallel()
	names := []string{"stable-3.17", "stable-3.10", "alpha", "stable-3.6", "stable", "stable-3.9", "stable-10.0", "stable-3.10-rc"}
	sort.SliceStable(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	assert.Equal(t, []string{"alpha", "stable", "stable-3.6", "stable-3.9", "stable-3.10", "stable-3.10-rc", "stable-3.17", "stable-10.0"}, names)
}

func TestDNSLabel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"etcd": "etcd", "My_Operator.io": "my-operator-io", "--": "operator", strings.Repeat("a", 70): strings.Repeat("a", 63)} {
		assert.Equal(t, want, dnsLabel(in), in)
	}
}

// FuzzCardText: whatever a catalog's description holds, a card's text is
// valid UTF-8 of at most 240 characters, on one line.
func FuzzCardText(f *testing.F) {
	for _, s := range []string{"", "# T\n\nA [b](c). D", "\xff\xfe text.", "```\ncode\n```\n\nx", strings.Repeat("é", 300), "a\r\n\r\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{firstSentence(s), summary(s), clip(oneLine(s), 240)} {
			if utf8.ValidString(s) && !utf8.ValidString(out) {
				t.Fatalf("%q: invalid UTF-8 %q", s, out)
			}
			if n := utf8.RuneCountInString(out); n > 240 {
				t.Fatalf("%q: %d characters", s, n)
			}
			if strings.ContainsAny(out, "\n\r") {
				t.Fatalf("%q: more than one line: %q", s, out)
			}
		}
	})
}

// FuzzNaturalLess: the channel order is a strict order (never both a < b
// and b < a, never a < a).
func FuzzNaturalLess(f *testing.F) {
	f.Add("stable-3.6", "stable-3.10")
	f.Add("a01", "a1")
	f.Add("", "0")
	f.Fuzz(func(t *testing.T, a, b string) {
		if naturalLess(a, a) {
			t.Fatalf("%q < itself", a)
		}
		if naturalLess(a, b) && naturalLess(b, a) {
			t.Fatalf("%q and %q each before the other", a, b)
		}
	})
}
