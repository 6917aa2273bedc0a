package yamldoc

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	yaml "go.yaml.in/yaml/v3"
)

// decodeUncut is Decode without cutLongScalars.
func decodeUncut(t *testing.T, data []byte) []any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []any
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			break
		}
		if len(n.Content) == 0 {
			continue
		}
		c := converter{file: "x.yaml"}
		v, err := c.value(n.Content[0], 0)
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

func TestCutLongScalarsKeepsValues(t *testing.T) {
	t.Parallel()
	run := func(n int) string {
		raw := bytes.Repeat([]byte{0xfa, 0x17, 0x9c}, n)
		return "iV" + base64.StdEncoding.EncodeToString(raw)
	}
	long, other := run(1200), run(900)
	cases := map[string]string{
		"plain":             "spec:\n  icon:\n  - base64data: " + long + "\n    mediatype: image/png\n",
		"trailing blanks":   "a: " + long + "  \r\nb: 1\n",
		"sequence item":     "- " + long + "\n- " + other + "\n",
		"folded plain":      "a: first\n  " + long + "\n  last\nb: x\n",
		"literal block":     "a: |\n  " + long + "\n  " + other + "\nb: y\n",
		"double-quoted":     "a: \"start\n  " + long + "\n  end\"\n",
		"binary tag":        "a: !!binary " + long + "\n",
		"comment":           "a: 1 # " + long + "\nb: 2\n",
		"anchor and alias":  "a: &x " + long + "\nb: *x\n",
		"digit first":       "a: 9" + long + "\n",
		"two in one file":   "a: " + long + "\n---\nb: " + long + "x\n",
		"no final newline":  "a: " + long,
		"not at line end":   "a: [" + long + "]\n",
		"looks like token":  "a: opmcut" + long + "\n",
		"question mark key": "? " + long + "\n: v\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := decodeUncut(t, []byte(doc))
			docs, err := Decode("x.yaml", []byte(doc))
			require.NoError(t, err)
			var got []any
			for _, d := range docs {
				got = append(got, d.Value)
			}
			require.Equal(t, want, got)
		})
	}
	text, c := cutLongScalars([]byte(cases["plain"]))
	require.NotNil(t, c, "a long icon is not cut")
	require.Less(t, len(text), 200)
	require.Equal(t, strings.Count(cases["plain"], "\n"), bytes.Count(text, []byte("\n")), "cutting changed the lines")
}

func TestCutLongScalarsKeepsSyntaxErrorLines(t *testing.T) {
	t.Parallel()
	long := "Q" + strings.Repeat("UFBB", 400)
	doc := "a: " + long + "\nb: [1\nc: 2\n"
	_, err := Decode("x.yaml", []byte(doc))
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	_, short := Decode("x.yaml", []byte("a: x\nb: [1\nc: 2\n"))
	var want *SyntaxError
	require.ErrorAs(t, short, &want)
	require.Equal(t, want.Line, se.Line, "cutting moved the error's line: %v", err)
}

// BenchmarkDecodeLargeIcon decodes a CSV-like document whose icon is 400 KB
// of base64, as CSVs of public catalogs often carry.
func BenchmarkDecodeLargeIcon(b *testing.B) {
	raw := bytes.Repeat([]byte{0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x13}, 300_000/9)
	doc := []byte("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: x.v1.0.0\nspec:\n  icon:\n  - base64data: iV" +
		base64.StdEncoding.EncodeToString(raw) + "\n    mediatype: image/png\n  version: 1.0.0\n")
	b.SetBytes(int64(len(doc)))
	for range b.N {
		if _, err := Decode("csv.yaml", doc); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzCutLongScalars checks that cutting long runs out of a YAML text and
// putting them back gives the values the parser gives the text as it is.
func FuzzCutLongScalars(f *testing.F) {
	long := "iV" + strings.Repeat("Qk9S", 300)
	for _, s := range []string{
		"a: " + long + "\n",
		"- " + long + "\n- b\n",
		"a: |\n  " + long + "\n",
		"a: \"x\n  " + long + "\n  y\"\n",
		"a: b\n  " + long + "\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		dec := yaml.NewDecoder(strings.NewReader(doc))
		var want []any
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				if err.Error() != "EOF" {
					return // invalid YAML: errors are compared elsewhere
				}
				break
			}
			if len(n.Content) == 0 {
				continue
			}
			c := converter{file: "x.yaml"}
			v, err := c.value(n.Content[0], 0)
			if err != nil {
				return
			}
			if v != nil {
				want = append(want, v)
			}
		}
		docs, err := Decode("x.yaml", []byte(doc))
		if err != nil {
			t.Fatalf("the text decodes whole but not cut: %v", err)
		}
		var got []any
		for _, d := range docs {
			got = append(got, d.Value)
		}
		require.Equal(t, want, got)
	})
}
