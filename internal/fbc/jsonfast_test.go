package fbc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/opmkit/opm/internal/bundle"
)

// checkFastDecoders holds decodeBundleFast and decodeManifestHeadFast to
// encoding/json: whatever they decode, json.Unmarshal decodes the same
// way, into equal values.
func checkFastDecoders(t *testing.T, raw []byte) (isBundle, isHead, isIcons bool) {
	t.Helper()
	var fb, sb Bundle
	if isBundle = decodeBundleFast(raw, &fb); isBundle {
		if err := json.Unmarshal(raw, &sb); err != nil {
			t.Fatalf("decodeBundleFast decodes %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(fb, sb) {
			t.Fatalf("decodeBundleFast(%q) = %#v, encoding/json %#v", raw, fb, sb)
		}
	}
	var fh, sh manifestHead
	if isHead = decodeManifestHeadFast(raw, &fh); isHead {
		if err := json.Unmarshal(raw, &sh); err != nil {
			t.Fatalf("decodeManifestHeadFast decodes %q, encoding/json: %v", raw, err)
		}
		// Of the annotations, the fast path keeps the one ToIndex reads.
		if sh.Metadata.Annotations != nil {
			sr, ok := sh.Metadata.Annotations[bundle.AnnotationSkipRange]
			sh.Metadata.Annotations = map[string]string{}
			if ok {
				sh.Metadata.Annotations[bundle.AnnotationSkipRange] = sr
			}
		}
		if !reflect.DeepEqual(fh, sh) {
			t.Fatalf("decodeManifestHeadFast(%q) = %#v, encoding/json %#v", raw, fh, sh)
		}
	}
	var fi, si csvIcons
	if isIcons = decodeCSVIconsFast(raw, &fi); isIcons {
		if err := json.Unmarshal(raw, &si); err != nil {
			t.Fatalf("decodeCSVIconsFast decodes %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(fi, si) {
			t.Fatalf("decodeCSVIconsFast(%q) = %#v, encoding/json %#v", raw, fi, si)
		}
	}
	if ri, ok := csvRelatedImagesFast(raw); ok {
		var csv struct {
			Spec struct {
				RelatedImages []RelatedImage `json:"relatedImages"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(raw, &csv); err != nil {
			t.Fatalf("csvRelatedImagesFast decodes %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(ri, csv.Spec.RelatedImages) {
			t.Fatalf("csvRelatedImagesFast(%q) = %#v, encoding/json %#v", raw, ri, csv.Spec.RelatedImages)
		}
	}
	return isBundle, isHead, isIcons
}

var fastDecoderSeeds = []string{
	`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}},{"type":"olm.bundle.object","value":{"data":"e30="}}],"relatedImages":[{"name":"","image":"r/a:1"}]}`,
	`{"schema":"olm.bundle","properties":[],"relatedImages":[]}`,
	`{"schema":"olm.bundle","properties":null}`,
	`{"schema":"olm.bundle","properties":[{"type":"x","value":null}]}`,
	`{"schema":"olm.bundle","properties":[{"type":"x"}],"extra":{"a":[1,2]}}`,
	`{"schema":"olm.bundle","Name":"a"}`,
	`{"schema":"olm.bundle","name":"a","name":"b"}`,
	`{"schema":"olm.bundle","n\u0061me":"a"}`,
	`{"schema":"olm.bundle","name":"\u00e9\n"}`,
	"{\"schema\":\"olm.bundle\",\"name\":\"\xff\"}",
	`{"schema":"olm.bundle","name":5}`,
	`{"schema":"olm.bundle","name":null}`,
	`{"schema":"olm.bundle","properties":[{"type":"a","value":1,"TYPE":"b"}]}`,
	`{"schema":"olm.bundle","properties":{"type":"a"}}`,
	`{"schema":"olm.bundle","relatedImages":[{"name":"a","image":"b","image":"c"}]}`,
	`{"schema":"olm.bundle","ſchema":"x"}`,
	`{"kind":"ClusterServiceVersion","metadata":{"name":"a","annotations":{"olm.skipRange":"<1.0.0"}},"spec":{"replaces":"a.v0","skips":["x",""],"relatedImages":[{"name":"n","image":"i"}],"customresourcedefinitions":{"owned":[{"name":"as.example.com","kind":"A","version":"v1"}]},"apiservicedefinitions":{"required":[{"group":"g","version":"v","kind":"K","name":"ks"}]},"install":{"spec":{"deployments":[]}}}}`,
	`{"kind":"CustomResourceDefinition","spec":{"group":"example.com","names":{"kind":"A","plural":"as"},"versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object"}}},{"served":true,"name":"v2"}],"version":"v1"}}`,
	`{"kind":"CustomResourceDefinition","spec":{"versions":[]}}`,
	`{"kind":"CustomResourceDefinition","spec":{"versions":null}}`,
	`{"kind":"CustomResourceDefinition","spec":{"versions":[null]}}`,
	`{"kind":"CustomResourceDefinition","spec":{"versions":[{"Name":"v1"}]}}`,
	`{"kind":"ClusterServiceVersion","metadata":null}`,
	`{"kind":"ClusterServiceVersion","metadata":{"annotations":{"a":"b","a":"c"}}}`,
	`{"kind":"ClusterServiceVersion","metadata":{"annotations":{"a":1}}}`,
	`{"kind":"ClusterServiceVersion","metadata":{"annotations":{"olm.skipRange":"<1","olm.skipRange":"<2","x":"\"y\""}}}`,
	`{"kind":"ClusterServiceVersion","metadata":{"annotations":{"olm.skipRang\u0065":"<1"}}}`,
	`{"kind":"ClusterServiceVersion","metadata":{"annotations":null}}`,
	`{"kind":"ClusterServiceVersion","spec":{"customresourcedefinitions":{"owned":[{"name":"a.b","kind":"A","version":"v1","specDescriptors":[{"path":"x"}]}],"required":null}}}`,
	`{"kind":"ClusterServiceVersion","spec":{"customresourcedefinitions":{"owned":[null]}}}`,
	`{"kind":"ClusterServiceVersion","spec":{"customresourcedefinitions":{"Owned":[]}}}`,
	`{"kind":"ClusterServiceVersion","spec":{"apiservicedefinitions":{"owned":[{"group":"g","version":"v","kind":"K","name":"n","displayName":"d"}]}}}`,
	`{"kind":"CustomResourceDefinition","spec":{"names":{"kind":"A","plural":"as","listKind":"AList"}}}`,
	`{"kind":"CustomResourceDefinition","spec":{"names":null}}`,
	`{"spec":{"icon":[{"base64data":"QUJD","mediatype":"image/png"},{"base64data":"","mediatype":"x"}]}}`,
	`{"spec":{"icon":[]}}`, `{"spec":{"icon":null}}`, `{"spec":{"icon":[null]}}`, `{"spec":{"icon":[{"base64data":1}]}}`,
	`{"spec":{"icon":[{"Base64data":"x"}]}}`, `{"spec":{"icon":[{"base64data":"a\u0042"}],"icon":[]}}`,
	`{"kind":"ClusterServiceVersion","spec":{"skips":"x"}}`,
	`{"kind":"ClusterServiceVersion","Spec":{}}`,
	` {"kind":"ClusterServiceVersion"} `,
	`{"kind":"ClusterServiceVersion"} {}`,
	`[]`, `"x"`, `{`, `{"kind":1}`, `null`,
	`{"kind":"ClusterServiceVersion","spec":{"relatedImages":[{"name":"op","image":"r/op:1"},{"image":"r/x"}],"icon":[{"base64data":"e30=","mediatype":"image/png"}]}}`,
	` {"spec":{"relatedImages":null}} `, `{"spec":null}`, `{"spec":{}}`, `{"spec":"x"}`, `{"Spec":{"relatedImages":[]}}`,
	`{"spec":{"relatedimages":[{"name":"a","image":"b"}]}}`, `{"spec":{"relatedImages":[]},"spec":{}}`,
	`{"spec":{"relatedImages":[{"name":1,"image":"b"}]}}`, `{"spec":{"relatedImages":"x"}}`, `{"spec":{"relatedImages":[{"Name":"a","IMAGE":"b","x":1}]}}`,
	`{"sp\u0065c":{"relatedImages":[]}}`, `[]`, `null`,
}

func TestFastDecodersMatchEncodingJSON(t *testing.T) {
	for _, s := range fastDecoderSeeds {
		checkFastDecoders(t, []byte(s))
	}
	// The fast paths must take the common case, or they save nothing.
	if b, _, _ := checkFastDecoders(t, []byte(fastDecoderSeeds[0])); !b {
		t.Error("decodeBundleFast refuses a plain bundle blob")
	}
	for _, i := range []int{16, 17} {
		if _, h, _ := checkFastDecoders(t, []byte(fastDecoderSeeds[i])); !h {
			t.Errorf("decodeManifestHeadFast refuses a plain manifest: %s", fastDecoderSeeds[i])
		}
	}
	// Every bundle blob and manifest of the reference renders.
	renders, err := filepath.Glob(filepath.Join(sharedDir(t), "reference", "index", "*.fbc.json"))
	if err != nil || len(renders) == 0 {
		t.Fatalf("no reference renders: %v", err)
	}
	bundles, heads, icons := 0, 0, 0
	for _, r := range renders {
		data, err := os.ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		c := &Catalog{}
		if err := c.LoadFile(filepath.Base(r), data); err != nil {
			t.Fatal(err)
		}
		err = splitJSON(r, data, Limits{}, nil, func(_ int, _ int64, raw []byte) {
			if b, _, _ := checkFastDecoders(t, raw); b {
				bundles++
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range c.Bundles {
			for _, p := range b.Properties {
				if p.Type != PropertyBundleObject {
					continue
				}
				o, err := decodeBundleObject(p.Value)
				if err != nil {
					t.Fatal(err)
				}
				_, h, i := checkFastDecoders(t, o.Data)
				if _, ok := csvRelatedImagesFast(o.Data); !ok && bytes.Contains(o.Data, []byte(`"kind":"ClusterServiceVersion"`)) {
					t.Errorf("%s: csvRelatedImagesFast refuses the CSV of %s", r, b.Name)
				}
				if h {
					heads++
				}
				if i && bytes.Contains(o.Data, []byte(`"icon"`)) {
					icons++
				}
			}
		}
	}
	if bundles == 0 || heads == 0 || icons == 0 {
		t.Errorf("the fast paths took %d bundle blobs, %d manifests and %d CSV icons of the reference renders", bundles, heads, icons)
	}
}

func FuzzFastDecoders(f *testing.F) {
	for _, s := range fastDecoderSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFastDecoders(t, data) })
}
