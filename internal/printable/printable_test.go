package printable

import (
	"errors"
	"testing"
	"unicode/utf8"
)

func TestName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"etcd":                     "etcd",
		"etcdoperator.v0.9.4":      "etcdoperator.v0.9.4",
		"p\x1b[31mred":             `p\x1b[31mred`,
		"a\nb\tc\rd":               `a\x0ab\x09c\x0dd`,
		"del\x7f":                  `del\x7f`,
		"c1\u009b2J":               `c1\x9b2J`,
		"abc\u202edcba":            `abc\u202edcba`,
		"iso\u2066x\u2069":         `iso\u2066x\u2069`,
		"bad\xff\x9butf8":          `bad\xff\x9butf8`,
		"ünïcode ✓ \uFFFD literal": "ünïcode ✓ \uFFFD literal",
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextKeepsLines(t *testing.T) {
	t.Parallel()
	in := "line one\n\tp\x1b[2J\r"
	if got, want := Text(in), "line one\n\t"+`p\x1b[2J\x0d`; got != want {
		t.Errorf("Text(%q) = %q, want %q", in, got, want)
	}
	if got := Error(errors.New("package \x1b[31m not found")); got != `package \x1b[31m not found` {
		t.Errorf("Error = %q", got)
	}
	if Error(nil) != "" {
		t.Error("Error(nil) is not empty")
	}
}

func FuzzName(f *testing.F) {
	for _, s := range []string{"etcd", "p\x1b[31m", "\u202e", "\xff", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Name(s), Text(s)} {
			for _, r := range out {
				if r != '\n' && r != '\t' && unsafe(r, true) {
					t.Fatalf("%q escaped to %q still holds %U", s, out, r)
				}
			}
			if !utf8.ValidString(out) {
				t.Fatalf("%q escaped to invalid UTF-8 %q", s, out)
			}
		}
		for _, r := range Name(s) {
			if r == '\n' || r == '\t' {
				t.Fatalf("Name(%q) holds a newline or tab", s)
			}
		}
	})
}

func TestStrings(t *testing.T) {
	t.Parallel()
	type inner struct {
		Name string
		Tags []string
	}
	type outer struct {
		Title  string
		In     *inner
		Many   []inner
		ByName map[string]string
		Any    any
		hidden string
	}
	evil := "x\x1b[31m"
	v := &outer{Title: evil, In: &inner{Name: evil, Tags: []string{evil}}, Many: []inner{{Name: evil}},
		ByName: map[string]string{"k": evil}, Any: &inner{Name: evil}, hidden: evil}
	Strings(v, Name)
	want := `x\x1b[31m`
	for _, got := range []string{v.Title, v.In.Name, v.In.Tags[0], v.Many[0].Name, v.ByName["k"], v.Any.(*inner).Name} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if v.hidden != evil {
		t.Errorf("unexported field changed: %q", v.hidden)
	}
}
