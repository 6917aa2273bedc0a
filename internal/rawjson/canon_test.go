package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"versionRange":"\u003e=1.0.0","packageName":"a"}`: `{"packageName":"a","versionRange":">=1.0.0"}`,
		`"\u00e4 \/ \u0026 \u003C"`:                         `"ä / & <"`,
		"\"a\u2028b\u2029\"":                                `"a\u2028b\u2029"`,
		`"\u001F\u000a\u0008\b"`:                            `"\u001f\n\b\b"`,
		"\"\xff\"":                                          "\"\ufffd\"",
		`"\ufffd"`:                                          "\"\ufffd\"",
		`{"a":1,"a":2}`:                                     `{"a":2}`,
		`{"b":[1.0, 1e3, -0],"a":{}}`:                       `{"a":{},"b":[1.0,1e3,-0]}`,
		`{"\u0062":1,"a":2}`:                                `{"a":2,"b":1}`,
		` [true,false,null] `:                               `[true,false,null]`,
	} {
		got, err := Canonical([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if string(got) != want {
			t.Errorf("Canonical(%s) = %s, want %s", in, got, want)
		}
		if !isCanonical([]byte(want)) {
			t.Errorf("%s is not seen as canonical", want)
		}
	}
	for _, bad := range []string{``, `{`, `"a" "b"`, `{"a":1}x`, `nul`} {
		if _, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%q): no error", bad)
		}
	}
}

// FuzzCanonical holds the fast check to encoding/json: what it takes
// as canonical is what decoding and re-encoding gives, and what that
// gives, it takes as canonical. Seeds live in
// testdata/fuzz/FuzzCanonical as well as below.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"a":"\u003c=1.0.0 \u0026\u0026 \u003e0"}`, `["\\u003c","\\\u003e"]`, `"\u00e9\u003C"`, `{"a":1}`, `"\\"`,
		`{"b":1,"a":[{"d":null,"c":true}]}`, "\"\u2028\"", `"\u001f\n"`, `{"":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			if isCanonical(data) {
				t.Fatalf("%q is not JSON but passes as canonical", data)
			}
			return
		}
		want, err := recodeJSON(data)
		if err != nil {
			return // deeper than encoding/json goes
		}
		if isCanonical(data) && string(want) != string(data) {
			t.Fatalf("%q passes as canonical, but encoding/json writes %q", data, want)
		}
		// A key with an escape always takes the slow path.
		if !isCanonical(want) && depthOf(want) < MaxDepth && !bytes.Contains(want, []byte(`\`)) {
			t.Fatalf("encoding/json's %q does not pass as canonical", want)
		}
		if again, err := recodeJSON(want); err != nil || string(again) != string(want) {
			t.Fatalf("%q re-encodes as %q, %v", want, again, err)
		}
		got, err := Canonical(data)
		if err != nil || string(got) != string(want) {
			t.Fatalf("Canonical(%q) = %q, %v; want %q", data, got, err, want)
		}
		// Strings alone: the same value, key order kept.
		strs, err := CanonicalStrings(data)
		if err != nil {
			t.Fatalf("CanonicalStrings(%q): %v", data, err)
		}
		if again, err := recodeJSON(strs); err != nil || string(again) != string(want) {
			t.Fatalf("CanonicalStrings(%q) = %q, which means %q, not %q", data, strs, again, want)
		}
	})
}

// depthOf is the deepest nesting of containers in valid JSON (brackets in
// strings count too: it only needs to be an upper bound).
func depthOf(v []byte) int {
	d, deepest := 0, 0
	for _, c := range v {
		switch c {
		case '{', '[':
			d++
			deepest = max(deepest, d)
		case '}', ']':
			d--
		}
	}
	return deepest
}

// BenchmarkCanonicalManifest checks an olm.bundle.object value (1 MB of
// base64), the bulk of what loading a catalog checks.
func BenchmarkCanonicalManifest(b *testing.B) {
	v := []byte(`{"data":"` + strings.Repeat("QUJDRGVm", 1<<17) + `"}`)
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if !isCanonical(v) {
			b.Fatal("not canonical")
		}
	}
}

func TestCanonicalStrings(t *testing.T) {
	for in, want := range map[string]string{
		`{"schema":"x","b":"\u003c\/\u00e4","a":[1.50,"\u0026"]}`: `{"schema":"x","b":"</ä","a":[1.50,"&"]}`,
		`{"z":1,"a":"plain"}`: `{"z":1,"a":"plain"}`,
		`{"\u0062":"\"q\""}`:  `{"b":"\"q\""}`,
	} {
		got, err := CanonicalStrings([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("CanonicalStrings(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}
