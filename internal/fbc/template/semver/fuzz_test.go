package semver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// fuzzRender resolves any image "x/<version>" to bundle op.v<version> of
// package op (other images fail), so that fuzzed templates reach channel
// generation.
func fuzzRender(_ context.Context, image string) (*fbc.Bundle, error) {
	v := image[strings.LastIndex(image, "/")+1:]
	if !strings.HasPrefix(image, "x/") {
		return nil, errors.New("not found")
	}
	pv, _ := json.Marshal(fbc.PackageValue{PackageName: "op", Version: v})
	return &fbc.Bundle{Schema: fbc.SchemaBundle, Name: "op.v" + v, Package: "op", Image: image,
		Properties: []fbc.Property{{Type: fbc.PropertyPackage, Value: pv}}}, nil
}

// FuzzRender feeds arbitrary templates to Render: it must not panic, every
// failure must come as *Error (alone or joined), and a rendered catalog must
// be consistent: one package whose default channel exists, every bundle in
// a channel, every edge naming a rendered bundle, and a mermaid drawing.
// Seeds live in testdata/fuzz/FuzzRender as well as below.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"schema: olm.semver\nstable:\n  bundles:\n  - image: x/1.0.0\n  - image: x/1.0.1\n  - image: x/1.1.0\n",
		"schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\ncandidate:\n  bundles:\n  - image: x/0.1.0-rc.1\n  - image: x/0.1.0\nfast:\n  bundles:\n  - image: x/0.1.0\nstable:\n  bundles:\n  - image: x/2.0.0\n",
		`{"schema":"olm.semver","generateMajorChannels":true,"defaultChannelTypePreference":"major","stable":{"bundles":[{"image":"x/1.0.0+a"},{"image":"x/1.0.0+b"}]}}`,
		"schema: olm.semver\nstable: {bundles: [{image: y/1}]}\n",
		"schema: olm.semver\nstable: &a {bundles: [{image: x/3.0.0}]}\nfast: *a\n",
		"schema: olm.semver\ncandidate:\n  bundles:\n  - image: x/0.0.0-alpha\n",
		"schema: olm.semver\nbogus: 1\n", "schema: [\n", "", "null", "- 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Render(context.Background(), data, Options{RenderBundle: fuzzRender, Source: "f.yaml"})
		if err != nil {
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("error of type %T, want *Error: %v", err, err)
			}
			return
		}
		if len(c.Packages) != 1 {
			t.Fatalf("%d packages", len(c.Packages))
		}
		names := map[string]bool{}
		for _, b := range c.Bundles {
			names[b.Name] = true
		}
		inChannel := map[string]bool{}
		channels := map[string]bool{}
		for _, ch := range c.Channels {
			channels[ch.Name] = true
			if len(ch.Entries) == 0 {
				t.Fatalf("channel %s is empty", ch.Name)
			}
			for _, e := range ch.Entries {
				inChannel[e.Name] = true
				for _, to := range append([]string{e.Replaces}, e.Skips...) {
					if to != "" && !names[to] {
						t.Fatalf("channel %s: %s has an edge to %s, which was not rendered", ch.Name, e.Name, to)
					}
				}
			}
		}
		for n := range names {
			if !inChannel[n] {
				t.Fatalf("bundle %s is in no channel", n)
			}
		}
		if d := c.Packages[0].DefaultChannel; d != "" && !channels[d] {
			t.Fatalf("default channel %q is not a channel", d)
		}
		if err := Mermaid(io.Discard, c, nil); err != nil {
			t.Fatalf("mermaid: %v", err)
		}
	})
}
