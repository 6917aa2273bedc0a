package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkIndentCompact holds AppendIndent and AppendCompact to json.Indent
// and json.Compact: the same bytes for valid JSON (nested less deep than
// MaxDepth), no for anything else.
func checkIndentCompact(t *testing.T, data []byte) {
	t.Helper()
	deepOK := bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) < MaxDepth
	for _, pi := range [][2]string{{"", "    "}, {"", "\t"}, {">", "  "}, {"", ""}} {
		dst := []byte("before")
		var want bytes.Buffer
		want.WriteString("before")
		werr := json.Indent(&want, data, pi[0], pi[1])
		got, ok := AppendIndent(dst, data, pi[0], pi[1])
		switch {
		case werr != nil && ok:
			t.Fatalf("AppendIndent(%q, %q, %q) accepts what json.Indent refuses (%v): %q", data, pi[0], pi[1], werr, got)
		case werr == nil && !ok && deepOK:
			t.Fatalf("AppendIndent(%q, %q, %q) refuses valid JSON", data, pi[0], pi[1])
		case ok && !bytes.Equal(got, want.Bytes()):
			t.Fatalf("AppendIndent(%q, %q, %q)\n got %q\nwant %q", data, pi[0], pi[1], got, want.Bytes())
		}
		// At depth 0 the value alone is what Indent prints, less the
		// trailing space Indent copies.
		if ok {
			at, ok := AppendIndentAt([]byte("before"), data, pi[0], pi[1], 0)
			trimmed := bytes.TrimRight(want.Bytes(), " \t\r\n")
			if !ok || !bytes.Equal(at, trimmed) {
				t.Fatalf("AppendIndentAt(%q, %q, %q, 0) = %q, %v; want %q", data, pi[0], pi[1], at, ok, trimmed)
			}
		}
	}
	var want bytes.Buffer
	want.WriteString("x")
	werr := json.Compact(&want, data)
	got, ok := AppendCompact([]byte("x"), data)
	switch {
	case werr != nil && ok:
		t.Fatalf("AppendCompact(%q) accepts what json.Compact refuses (%v): %q", data, werr, got)
	case werr == nil && !ok && deepOK:
		t.Fatalf("AppendCompact(%q) refuses valid JSON", data)
	case ok && !bytes.Equal(got, want.Bytes()):
		t.Fatalf("AppendCompact(%q)\n got %q\nwant %q", data, got, want.Bytes())
	}
	c, cerr := Compact(data)
	if (cerr == nil) != (werr == nil) || (cerr != nil && cerr.Error() != werr.Error()) || (cerr == nil && !bytes.Equal(c, want.Bytes()[1:])) {
		t.Fatalf("Compact(%q) = %q, %v; json.Compact: %q, %v", data, c, cerr, want.Bytes()[1:], werr)
	}
}

var indentSeeds = []string{
	`{}`, `[]`, `{ }`, "[\n\t]", `{"a":{}}`, `{"a":[]}`, `[{},[],{"b":[{}]}]`, `[[[[[]]]]]`, `{"a":{"b":{"c":{}}}}`,
	`{"a":1}`, `{"a":[1,2,{"b":null}],"c":true,"d":false}`, `"x"`, `0`, `-0.5e+10`, `1E5`, `1e-7`, `123456789012345678901234567890`,
	`true`, `false`, `null`, `[true,false,null]`,
	`{"s":"\u00e9\"\\\/\b\f\n\r\t"}`, `{"s":"é€😀"}`, "{\"s\":\"\xff\xfe\"}", `{"a\"b":"c\\"}`, `"\\\\\""`,
	`{"v":"<=1.0 & >0.5"}`, `{"<":">","&":"&amp;"}`, "{\"u\":\"a\u2028b\u2029c\"}", `"\u2028"`,
	" \t\r\n{ \"a\" : [ 1 , 2 ] ,\n\t\"b\"\r: { } } \n\t", ` {}`, `{} `, "1 ", " \"x\"\n", "[ 1 ,\n 2 ]\n",
	`{"data":"` + strings.Repeat("QUJD", 100) + `"}`, `{"data":"` + strings.Repeat("a\\\"", 9) + `"}`,
	// Invalid: both must refuse.
	``, ` `, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `"\x"`, `"\u12"`,
	"\"a\x01\"", "\"a\nb\"", `{"a":1 "b":2}`, `{1:2}`, `[1 2]`, `}`, `]`, `"`, `{"a":"b}`, `NaN`, `[-]`, `{}{}`, `{} x`, `1 2`,
	`{"a":1}}`, `[1]]`, "{}\x00",
}

func TestIndentCompact(t *testing.T) {
	for _, s := range indentSeeds {
		checkIndentCompact(t, []byte(s))
	}
	// Every prefix of a valid value with strings of every length (the
	// word-at-a-time loop's edges).
	for n := 0; n < 20; n++ {
		v := []byte(`{"k" : "` + strings.Repeat("a\u00e9<", n) + `\"` + strings.Repeat("b", n) + `", "n":[ 1,-2.5e3, {}, [ ] ]}`)
		checkIndentCompact(t, v)
		for i := range v {
			checkIndentCompact(t, v[:i])
		}
	}
	deep := strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)
	if _, ok := AppendIndent(nil, []byte(deep), "", " "); ok {
		t.Errorf("AppendIndent takes a value nested deeper than %d", MaxDepth)
	}
}

func TestIndentCases(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, `{}`},
		{`{ "a" : { } , "b":[ ] }`, "{\n    \"a\": {},\n    \"b\": []\n}"},
		{`[1,"<&>"]` + "\n", "[\n    1,\n    \"<&>\"\n]\n"},
		{` {"a":[{"b":1}]}`, "{\n    \"a\": [\n        {\n            \"b\": 1\n        }\n    ]\n}"},
	} {
		got, ok := AppendIndent(nil, []byte(c.in), "", "    ")
		if !ok || string(got) != c.want {
			t.Errorf("AppendIndent(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	got, ok := AppendIndentAt([]byte("x"), []byte(` {"a": [1] } `), "", "  ", 2)
	if want := "x{\n      \"a\": [\n        1\n      ]\n    }"; !ok || string(got) != want {
		t.Errorf("AppendIndentAt depth 2 = %q, %v; want %q", got, ok, want)
	}
	got, ok = AppendCompact(nil, []byte(" { \"a b\" : [ 1 , \"x y\" ] }\n"))
	if want := `{"a b":[1,"x y"]}`; !ok || string(got) != want {
		t.Errorf("AppendCompact = %q, %v; want %q", got, ok, want)
	}
}

func FuzzIndentCompact(f *testing.F) {
	for _, s := range indentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkIndentCompact(t, data)
	})
}
