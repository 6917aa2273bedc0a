package httpcatalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// reference is catalogd's way: decode into Go values, encode again.
func reference(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

var canonicalSeeds = []string{
	`{"b":1,"a":[true,false,null,{"z":"<&>","y":""}]}`,
	`{"schema":"olm.bundle","properties":[{"type":"olm.bundle.object","value":{"data":"eyJhcGlWZXJzaW9uIjoidjEifQ=="}}]}`,
	`{"a":1,"a":2,"A":3}`,
	`{"big":1e400}`,
	`{"n":[0,-0,1.0,1e2,1E-7,-12345678901234567890,123456789012345,0.1,1e21,-1.5e-300]}`,
	`{"s":"\u00e9\n\t\"\\\/\u2028 \u2029 \ud83d\ude00 \ud800"}`,
	"{\"k\\u00e9y\":\"caf\xc3\xa9\",\"bad\":\"\xff\xfe\",\"line\":\"\xe2\x80\xa8\"}",
	" { \"a\" : [ 1 , 2 ] , \"b\" : { } , \"c\" : [ ] } ",
	`[1,"x"]`, `"str"`, `12`, `null`,
}

func TestCanonicalMatchesCatalogd(t *testing.T) {
	t.Parallel()
	for _, s := range canonicalSeeds {
		want, werr := reference([]byte(s))
		p := &canonParser{data: []byte(s)}
		got, err := p.blob(nil)
		if werr != nil {
			if err == nil {
				t.Errorf("%s: catalogd refuses it (%v), opm stores %s", s, werr, got)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s", s, got, err, want)
		}
	}
}

// FuzzCanonical: on every valid JSON value the byte-level encoder writes
// exactly what catalogd's decode and encode writes.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		want, werr := reference(raw)
		p := &canonParser{data: raw}
		got, err := p.blob(nil)
		if werr != nil { // e.g. a number beyond float64, which catalogd refuses
			if err == nil {
				t.Fatalf("%q: catalogd refuses it (%v), opm stores %s", raw, werr, got)
			}
			return
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s (%v)\nwant %s", raw, got, err, want)
		}
	})
}

// manyKeys is an object of n distinct keys k0..k(n-1) with value i, and
// the key "k<dup>" repeated with the value -1 at each of the positions at.
func manyKeys(n, dup int, at ...int) []byte {
	var pairs []string
	for i := range n + 1 {
		for _, a := range at {
			if a == i {
				pairs = append(pairs, fmt.Sprintf(`"k%d":-1`, dup))
			}
		}
		if i < n {
			pairs = append(pairs, fmt.Sprintf(`"k%d":%d`, i, i))
		}
	}
	return []byte("{" + strings.Join(pairs, ",") + "}")
}

// TestRepeatedKeysKeepLast: a repeated key, first, in the middle or last,
// keeps its last value as catalogd's decoding into a map does, and the
// others are kept once, sorted.
func TestRepeatedKeysKeepLast(t *testing.T) {
	t.Parallel()
	cases := map[string][]byte{
		"start":        manyKeys(1000, 0, 0),    // k0 twice, -1 first then 0
		"start-last":   manyKeys(1000, 0, 1000), // k0 first, then -1 at the end
		"middle":       manyKeys(1000, 500, 700),
		"end":          manyKeys(1000, 999, 1000),
		"thrice":       manyKeys(1000, 3, 1, 400, 1000),
		"plain-repeat": []byte(`{"b":1,"a":2,"b":3,"a":4,"c":5,"a":6}`),
		"escaped-key":  []byte(`{"\u0061":1,"a":2,"b":{"x":1,"x":[1],"y":2}}`),
	}
	for name, raw := range cases {
		want, err := reference(raw)
		if err != nil {
			t.Fatal(err)
		}
		p := &canonParser{data: raw}
		got, err := p.blob(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: got %.200s (%v)\nwant %.200s", name, got, err, want)
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		if len(p.top) != len(m) {
			t.Errorf("%s: %d top-level members, want %d", name, len(p.top), len(m))
		}
	}
}

// BenchmarkManyKeys stores one blob of 200,000 keys with repeats (the
// size that took over a minute when each key was looked up in the ones
// before it).
func BenchmarkManyKeys(b *testing.B) {
	raw := manyKeys(200_000, 7, 0, 100_000, 200_000)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		p := &canonParser{data: raw}
		if _, err := p.blob(nil); err != nil {
			b.Fatal(err)
		}
	}
}
