package fbc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// encoderJSON is how Writer printed a blob before appendBlobJSON, and
// still prints what appendBlobJSON leaves.
func encoderJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	je := json.NewEncoder(&buf)
	je.SetIndent("", "    ")
	je.SetEscapeHTML(false)
	err := je.Encode(v)
	return buf.Bytes(), err
}

// checkBlobJSON: appendBlobJSON prints what the encoder prints, or leaves
// the blob to it; it never accepts what the encoder refuses.
func checkBlobJSON(t *testing.T, v any, mustTake bool) {
	t.Helper()
	want, werr := encoderJSON(v)
	var w blobWriter
	w.b = append(w.b, "junk"...)[:0]
	ok := w.appendBlobJSON(v)
	switch {
	case werr != nil && ok:
		t.Fatalf("appendBlobJSON takes %#v, which the encoder refuses: %v", v, werr)
	case ok && !bytes.Equal(w.b, want):
		t.Fatalf("appendBlobJSON(%#v):\n got %q\nwant %q", v, w.b, want)
	case !ok && mustTake && werr == nil:
		t.Fatalf("appendBlobJSON leaves %#v to the encoder", v)
	}
}

// blobsOf are blobs of every kind and shape holding s and data.
func blobsOf(s string, data []byte) []any {
	props := []Property{{Type: s, Value: data}, {Type: PropertyPackage, Value: json.RawMessage(`{"packageName":"p","version":"1.0.0"}`)}, {Type: "x", Value: nil}}
	return []any{
		&Bundle{Schema: SchemaBundle, Name: s, Package: "p", Image: s, Properties: props, RelatedImages: []RelatedImage{{Name: "", Image: s}, {Name: s, Image: "i"}}},
		&Bundle{Schema: s},
		&Bundle{Schema: SchemaBundle, Properties: []Property{}, RelatedImages: []RelatedImage{}},
		&Channel{Schema: SchemaChannel, Name: s, Package: "p", Entries: []ChannelEntry{{Name: s, Replaces: s, Skips: []string{s, "a"}, SkipRange: s}, {Name: "b"}, {Skips: []string{}}}, Properties: props},
		&Channel{Schema: SchemaChannel, Entries: []ChannelEntry{}},
		&Channel{Schema: SchemaChannel},
		&Package{Schema: SchemaPackage, Name: s, DefaultChannel: s, Icon: &Icon{Data: data, MediaType: s}, Description: s, Properties: props},
		&Package{Schema: SchemaPackage, Icon: &Icon{}},
		&Package{Schema: SchemaPackage, Icon: &Icon{Data: []byte{}}},
		&Package{},
		Meta{Schema: s, Blob: data},
		Meta{},
	}
}

// indentSeeds are JSON texts, valid and not, for blobs of other schemas
// and property values (rawjson's indent tests use the same kinds).
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

var blobStrings = []string{"", "a", "<=1.0 & >0.5", "é", "a\u2028b\u2029", "q\"b\\s", "\x00\x1f\t\n", "\xff", "😀", "\x7f"}

func TestBlobJSONMatchesEncoder(t *testing.T) {
	for _, s := range blobStrings {
		for _, d := range indentSeeds {
			for _, v := range blobsOf(s, []byte(d)) {
				checkBlobJSON(t, v, false)
			}
		}
	}
	// The blobs of a rendered catalog all take the fast path.
	for _, v := range blobsOf("name.v1.0.0", []byte(` {"data": "e30=", "<": [ ] }`))[:10] {
		checkBlobJSON(t, v, true)
	}
}

func FuzzBlobJSON(f *testing.F) {
	for i, d := range indentSeeds {
		f.Add(blobStrings[i%len(blobStrings)], []byte(d))
	}
	f.Fuzz(func(t *testing.T, s string, data []byte) {
		for _, v := range blobsOf(s, data) {
			checkBlobJSON(t, v, false)
		}
	})
}
