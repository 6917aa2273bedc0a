package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkValidValue holds ValidValue to encoding/json: whatever it accepts,
// json.Valid accepts, ending where a json.Decoder ends the first value.
func checkValidValue(t *testing.T, data []byte) {
	t.Helper()
	end, ok := ValidValue(data, 0)
	if !ok {
		return // encoding/json then reads it: any answer is safe
	}
	if !json.Valid(data[:end]) {
		t.Fatalf("ValidValue accepts %q, encoding/json does not", data[:end])
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("ValidValue accepts %q (ends at %d), json.Decoder: %v", data, end, err)
	}
	if got := int(dec.InputOffset()); got != end {
		t.Fatalf("ValidValue ends %q at %d, json.Decoder at %d", data, end, got)
	}
}

var validValueSeeds = []string{
	`{}`, `[]`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":true,"d":false}`, `"x"`, `0`, `-0.5e+10`, `1E5`,
	`{"s":"\u00e9\"\\\/\b\f\n\r\t"}`, `{"s":"é€😀"}`, "{\"s\":\"\xff\xfe\"}", ` {}`, `{} `, `{}{}`,
	`{"a" : [ 1 , 2 ] }`, `[[[[[]]]]]`, `{"data":"` + strings.Repeat("QUJD", 100) + `"}`,
	// Invalid ones: ValidValue must say no (or encoding/json agree).
	`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `"\x"`, `"\u12"`,
	"\"a\x01\"", "\"a\nb\"", `{"a":1 "b":2}`, `{1:2}`, `[1 2]`, `}`, `]`, `"`, `{"a":"b}`, `NaN`, `[-]`, `{"a":--1}`,
}

func TestValidValue(t *testing.T) {
	for _, s := range validValueSeeds {
		checkValidValue(t, []byte(s))
	}
	// Every prefix of a valid value with strings of every length (the
	// word-at-a-time loop's edges).
	for n := 0; n < 20; n++ {
		v := []byte(`{"k":"` + strings.Repeat("a\u00e9", n) + `\"` + strings.Repeat("b", n) + `","n":[1,-2.5e3]}`)
		if end, ok := ValidValue(v, 0); !ok || end != len(v) {
			t.Errorf("ValidValue(%s) = %d, %v; want %d, true", v, end, ok, len(v))
		}
		for i := range v {
			checkValidValue(t, v[:i])
		}
	}
	for _, s := range []string{`{"a":1,}`, `[1,]`, "\"a\x1f\"", `{"a":01}`, `"\a"`, strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)} {
		if _, ok := ValidValue([]byte(s), 0); ok {
			t.Errorf("ValidValue accepts %q", s)
		}
	}
}

func FuzzValidValue(f *testing.F) {
	for _, s := range validValueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkValidValue(t, data)
		// And the other way round: what encoding/json accepts as one
		// object, ValidValue accepts (else the fast path does nothing).
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' && json.Valid(t) && bytes.Count(t, []byte("[")) < MaxDepth {
			if end, ok := ValidValue(t, 0); !ok || end != len(t) {
				panic("ValidValue refuses valid JSON " + string(t))
			}
		}
	})
}

// TestValidValueWithinCountsEveryContainer: the depth bound counts each
// container the value opens, the innermost even when empty, in objects
// and lists alike.
func TestValidValueWithinCountsEveryContainer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		depth int // deepest bound that refuses it
	}{
		{`1`, -1}, {`{}`, 0}, {`[]`, 0}, {`[[]]`, 1}, {`{"a":[{"b":{}}]}`, 3},
		{`[1,[2,[3]],{"x":[ ]}]`, 2}, {`{"a":"[[[[{{{{"}`, 0},
	} {
		for max := 0; max <= c.depth+2; max++ {
			end, ok := ValidValueWithin([]byte(c.in), 0, max)
			if want := max > c.depth; ok != want || (ok && end != len(c.in)) {
				t.Errorf("%s within %d: ok %v (end %d), want %v", c.in, max, ok, end, want)
			}
		}
	}
}
