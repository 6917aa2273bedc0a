package image

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/registrytest"
)

func TestBuildBundleImageFromBase(t *testing.T) {
	base, err := NewImage(ImageConfig{Labels: map[string]string{"vendor": "example", labelPackage: "base-says"}},
		mustLayer(t, map[string]string{"etc/os-release": "ID=base\n"}))
	if err != nil {
		t.Fatal(err)
	}
	img, err := BuildBundleImageFrom(base, testBundle(), testLabels())
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := BuildBundleImage(testBundle(), testLabels())
	if err != nil {
		t.Fatal(err)
	}
	baseLayers, _ := base.Layers()
	layers, _ := img.Layers()
	scratchLayers, _ := scratch.Layers()
	if len(layers) != 2 {
		t.Fatalf("%d layers, want the base's and the bundle's", len(layers))
	}
	for i, want := range []v1.Layer{baseLayers[0], scratchLayers[0]} {
		got, _ := layers[i].Digest()
		w, _ := want.Digest()
		if got != w {
			t.Errorf("layer %d is %s, want %s", i, got, w)
		}
	}
	cf, _ := img.ConfigFile()
	if cf.Config.Labels["vendor"] != "example" || cf.Config.Labels[labelPackage] != "etcd" {
		t.Errorf("labels %v: want the base's kept and the bundle's over them", cf.Config.Labels)
	}
	// No base is FROM scratch, the same image as BuildBundleImage.
	same, err := BuildBundleImageFrom(nil, testBundle(), testLabels())
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := same.Digest()
	d2, _ := scratch.Digest()
	if d1 != d2 {
		t.Errorf("nil base gave %s, scratch %s", d1, d2)
	}
}

func mustLayer(t *testing.T, files map[string]string) v1.Layer {
	t.Helper()
	b := NewLayerBuilder()
	for p, data := range files {
		if err := b.AddFile(p, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := b.Layer()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// umociImage writes an OCI layout with umoci, whose manifests carry no
// mediaType field (OCI allows that), holding file at dst and the labels.
func umociImage(t *testing.T, dir, tag string, files map[string]string, labels map[string]string) {
	t.Helper()
	registrytest.UmociLayout(t, dir, tag, files, labels)
	// The premise: umoci left mediaType out.
	raw := layoutManifest(t, dir, tag)
	var probe map[string]any
	if err := json.Unmarshal(raw, &probe); err != nil {
		t.Fatal(err)
	}
	if _, ok := probe["mediaType"]; ok {
		t.Skipf("this umoci writes a mediaType field; the case under test does not arise: %s", raw)
	}
}

// layoutManifest reads the manifest tagged tag from an OCI layout directly.
func layoutManifest(t *testing.T, dir, tag string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Manifests []struct {
			Digest      string
			Annotations map[string]string
		}
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	for _, m := range idx.Manifests {
		if m.Annotations["org.opencontainers.image.ref.name"] == tag {
			data, err := os.ReadFile(filepath.Join(dir, "blobs", strings.Replace(m.Digest, ":", "/", 1)))
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatalf("%s has no tag %s", dir, tag)
	return nil
}

func manifestMediaType(t *testing.T, raw []byte) string {
	t.Helper()
	var m struct{ MediaType string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.MediaType
}

// TestManifestWithoutMediaType: an image whose manifest omits mediaType is
// read, built on, and written with the right media type, to a layout and to
// a real registry (which types the stored manifest by what the client says).
func TestManifestWithoutMediaType(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "umoci")
	umociImage(t, src, "base", map[string]string{"/etc/motd": "hello\n"}, map[string]string{"vendor": "umoci"})

	reg := registrytest.Start(t)
	c := mustClient(t, Options{UseHTTP: true, TempDir: t.TempDir()})
	im, err := c.Open(ctx, mustRef(t, "oci:"+src+":base"))
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if im.MediaType != types.OCIManifestSchema1 || im.Labels()["vendor"] != "umoci" {
		t.Fatalf("opened as %q with labels %v", im.MediaType, im.Labels())
	}

	// Unchanged: the same manifest bytes, now with a content type.
	plain := im.V1Image(ctx)
	if mt, _ := plain.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("V1Image media type %q", mt)
	}
	if _, err := c.Write(ctx, plain, mustRef(t, reg.Ref("umoci/base:1"))); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, reg.URL()+"/v2/umoci/base/manifests/1", nil)
	req.Header.Set("Accept", string(types.OCIManifestSchema1))
	resp, err := reg.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != string(types.OCIManifestSchema1) {
		t.Errorf("registry stored the manifest as %q", ct)
	}

	// Built on: the new manifest states its type, in a layout and a registry.
	bundle, err := BuildBundleImageFrom(plain, testBundle(), testLabels())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := bundle.RawManifest()
	if got := manifestMediaType(t, raw); got != string(types.OCIManifestSchema1) {
		t.Errorf("new manifest mediaType %q", got)
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, dst := range []string{"oci:" + out + ":b", reg.Ref("umoci/bundle:1")} {
		ref := mustRef(t, dst)
		if _, err := c.Write(ctx, bundle, ref); err != nil {
			t.Fatalf("write %s: %v", dst, err)
		}
		back, err := c.Open(ctx, ref)
		if err != nil {
			t.Fatalf("open %s: %v", dst, err)
		}
		if got := manifestMediaType(t, back.RawManifest); got != string(types.OCIManifestSchema1) {
			t.Errorf("%s: manifest mediaType %q", dst, got)
		}
		if back.Labels()["vendor"] != "umoci" || back.Labels()[labelPackage] != "etcd" {
			t.Errorf("%s: labels %v", dst, back.Labels())
		}
		back.Close()
	}
	if got := manifestMediaType(t, layoutManifest(t, out, "b")); got != string(types.OCIManifestSchema1) {
		t.Errorf("layout manifest mediaType %q", got)
	}
}
