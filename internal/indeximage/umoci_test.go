package indeximage

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

func registryManifestType(t *testing.T, reg *registrytest.Registry, repo, tag string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, reg.URL()+"/v2/"+repo+"/manifests/"+tag, nil)
	req.Header.Set("Accept", string(types.OCIManifestSchema1)+", "+string(types.DockerManifestSchema2))
	resp, err := reg.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct{ MediaType string }
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return resp.Header.Get("Content-Type"), m.MediaType
}

// TestUmociIndexAndBinaryImages: umoci-written images (manifests without
// mediaType) work as --from-index and as --binary-image, into a real
// registry and into an OCI layout, and what opm writes states its type.
func TestUmociIndexAndBinaryImages(t *testing.T) {
	ctx := context.Background()
	layout := filepath.Join(t.TempDir(), "umoci")
	registrytest.UmociLayout(t, layout, "index", map[string]string{"/" + DefaultDatabasePath: "old db"}, map[string]string{DatabaseLabel: "/" + DefaultDatabasePath})
	registrytest.UmociLayout(t, layout, "binary", map[string]string{"/bin/opm": "#!/bin/sh\n"}, nil)
	reg := registrytest.Start(t)
	c, err := image.NewClient(image.Options{UseHTTP: true, Retries: -1, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")

	for _, dst := range []string{reg.Ref("idx/from-index:1"), "oci:" + out + ":from-index"} {
		res, old := update(t, c, "oci:"+layout+":index", dst, "new db")
		if old != "old db" {
			t.Errorf("database read from the umoci index: %q", old)
		}
		if res.MediaType != types.OCIManifestSchema1 {
			t.Errorf("%s: result media type %q", dst, res.MediaType)
		}
	}
	ct, mt := registryManifestType(t, reg, "idx/from-index", "1")
	if ct != string(types.OCIManifestSchema1) || mt != string(types.OCIManifestSchema1) {
		t.Errorf("registry: content type %q, manifest mediaType %q", ct, mt)
	}

	// --binary-image: a fresh index on a umoci base, and the base pushed
	// first to the registry and used from there.
	b, err := New(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Base(ctx, "oci:"+layout+":binary"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.BaseDatabase(); ok {
		t.Error("a plain binary image reported as an index image")
	}
	if err := os.MkdirAll(filepath.Dir(b.DatabasePath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.DatabasePath(), []byte("fresh db"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{reg.Ref("idx/binary:1"), "oci:" + out + ":binary"} {
		if _, err := b.Write(ctx, dst); err != nil {
			t.Fatalf("write %s: %v", dst, err)
		}
		im, err := c.Open(ctx, mustParse(t, dst))
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ MediaType string }
		_ = json.Unmarshal(im.RawManifest, &m)
		if m.MediaType != string(types.OCIManifestSchema1) || im.Labels()[DatabaseLabel] == "" || len(im.Config.Config.Cmd) == 0 {
			t.Errorf("%s: mediaType %q, labels %v, cmd %v", dst, m.MediaType, im.Labels(), im.Config.Config.Cmd)
		}
		im.Close()
	}

	// The umoci index image given as -i is noticed.
	b2, err := New(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if err := b2.Base(ctx, "oci:"+layout+":index"); err != nil {
		t.Fatal(err)
	}
	p, ok := b2.BaseDatabase()
	if !ok || p != "/"+DefaultDatabasePath {
		t.Errorf("index image as -i: %q, %v", p, ok)
	}
	if w := BinaryImageWarning("oci:x:index", p); !strings.Contains(w, "-f/--from-index") {
		t.Errorf("warning %q", w)
	}
}

func mustParse(t *testing.T, s string) image.Ref {
	t.Helper()
	r, err := image.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
