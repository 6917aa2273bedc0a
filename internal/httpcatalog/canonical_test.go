package httpcatalog

import (
	"bytes"
	"encoding/json"
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
