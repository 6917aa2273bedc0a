package fbc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// checkDecodeBundleObject: decodeBundleObject gives what json.Unmarshal
// gives, value and failure alike.
func checkDecodeBundleObject(t *testing.T, raw []byte) {
	t.Helper()
	got, gotErr := decodeBundleObject(raw)
	var want BundleObjectValue
	wantErr := json.Unmarshal(raw, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", raw, gotErr, wantErr)
	}
	if gotErr == nil && (!bytes.Equal(got.Data, want.Data) || got.Ref != want.Ref) {
		t.Fatalf("%q: %q/%q, json.Unmarshal's %q/%q", raw, got.Data, got.Ref, want.Data, want.Ref)
	}
}

func TestDecodeBundleObjectAsUnmarshal(t *testing.T) {
	for _, raw := range []string{
		string(bundleObjectValue([]byte(`{"kind":"ClusterServiceVersion"}`))),
		string(bundleObjectValue(nil)),
		`{"data":"eyJraW5kIjoiQ1JEIn0="}`,
		`{"data":"eyJraW5kIjoiQ1JEIn0"}`,        // unpadded: an error both ways
		`{"data":"eyJr\naW5kIjoiQ1JEIn0="}`,     // an escaped line break
		"{\"data\":\"eyJr\naW5kIjoiQ1JEIn0=\"}", // a raw one: invalid JSON
		`{"data":"eyJr\u0061W5kIjoiQ1JEIn0="}`,
		`{"data":"e30=","ref":"x.yaml"}`,
		`{"ref":"x.yaml"}`,
		`{"data":"!!!!"}`,
		`{"data":"e30="} `,
		`{"data": "e30="}`,
		`{"data":""}`,
		`{"data":"\"}`,
	} {
		checkDecodeBundleObject(t, []byte(raw))
	}
}

func FuzzDecodeBundleObject(f *testing.F) {
	f.Add([]byte(`{"data":"eyJraW5kIjoiQ1JEIn0="}`))
	f.Add([]byte(`{"data":"e30=","ref":"x"}`))
	f.Add([]byte("{\"data\":\"e3\r\n0=\"}"))
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecodeBundleObject(t, raw) })
}

// checkCompactDataObject: compactDataObject, when it applies, gives what
// json.Compact gives.
func checkCompactDataObject(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return // values reach it decoded, so valid
	}
	got, ok := compactDataObject(raw)
	if !ok {
		return
	}
	var want bytes.Buffer
	if err := json.Compact(&want, raw); err != nil {
		t.Fatalf("%q: json.Compact: %v", raw, err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%q: compacted to %q, json.Compact's %q", raw, got, want.Bytes())
	}
}

func TestCompactDataObjectAsCompact(t *testing.T) {
	applies := map[string]bool{
		`{"data": "e30="}`:                 true,
		"{\n  \"data\" :\t\"e30=\"\n}\n":   true,
		` {"data":"a b"} `:                 true,
		`{"data": "e30=", "ref": "x"}`:     false,
		`{"data": "e\"30="}`:               false,
		`{"data": "e\\u0030="}`:            false,
		`{"ref": "x"}`:                     false,
		`{"data": 1}`:                      false,
		`["data"]`:                         false,
		`{"data": "x"} {"data": "y"}`[:14]: true,
	}
	for raw, want := range applies {
		if _, ok := compactDataObject([]byte(raw)); ok != want {
			t.Errorf("%q: applies %v, want %v", raw, ok, want)
		}
		checkCompactDataObject(t, []byte(raw))
	}
}

func FuzzCompactDataObject(f *testing.F) {
	f.Add([]byte(`{"data": "e30="}`))
	f.Add([]byte(`{ "data" : "a\"b" }`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkCompactDataObject(t, raw) })
}
