package indeximage

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/image/blockgzip"
	"github.com/opmkit/opm/internal/registrytest"
)

// writeThrough pushes a base image to addr, builds an index image of db
// on it with the builder and writes it to addr; it returns the builder
// (closed) and the result.
func writeThrough(t *testing.T, c *image.Client, addr string, db []byte) (*Builder, *Result) {
	t.Helper()
	base, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"bin/opm": "binary"}))
	if err != nil {
		t.Fatal(err)
	}
	push(t, c, base, addr+"/opm:base")
	b, err := New(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if err := b.Base(context.Background(), addr+"/opm:base"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.DatabasePath(), db, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := b.Write(context.Background(), addr+"/index:1")
	if err != nil {
		t.Fatal(err)
	}
	return b, res
}

// checkDatabaseLayer reads the written image back from the registry and
// checks that its top layer's blob has the digest the manifest names and
// holds db at the database path, with the diff_id the config names.
func checkDatabaseLayer(t *testing.T, c *image.Client, ref string, db []byte) {
	t.Helper()
	r, err := image.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	im, err := c.Open(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = im.Close() }()
	img := im.V1Image(context.Background())
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	top := ls[len(ls)-1]
	want, _ := top.Digest()
	if got := digestOf(t, top.Compressed); got != want.String() {
		t.Fatalf("the registry's blob has digest %s, the manifest names %s", got, want)
	}
	data, _, err := im.FindDatabase(context.Background(), strings.TrimPrefix(DefaultDatabasePath, "/"))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(data) != sha256.Sum256(db) {
		t.Fatalf("the image's database (%d bytes) is not the one written (%d bytes)", len(data), len(db))
	}
	diffID, _ := top.DiffID()
	if got := digestOf(t, top.Uncompressed); got != diffID.String() {
		t.Fatalf("the layer's uncompressed digest is %s, the config names %s", got, diffID)
	}
}

// digestOf is the sha256 digest of what open reads.
func digestOf(t *testing.T, open func() (io.ReadCloser, error)) string {
	t.Helper()
	rc, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// The database layer is uploaded while it is built, to Debian's
// docker-registry, plain and with TLS and basic auth: the upload succeeds
// and the image holds the database, with the digests its manifest and
// config name.
func TestLayerUploadedWhileBuilt(t *testing.T) {
	db := fakeDatabase(3*blockgzip.BlockSize+12345, "u")
	for _, tc := range []struct {
		name string
		opts []registrytest.Option
	}{
		{"plain", nil},
		{"tls+auth", []registrytest.Option{registrytest.WithTLS(), registrytest.WithAuth("opm", "s3cret")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registrytest.Start(t, tc.opts...)
			opts := image.Options{UseHTTP: reg.CAFile == "", Retries: -1}
			if reg.CAFile != "" {
				opts.CAFile = reg.CAFile
				opts.AuthFile = reg.WriteAuthFile(t, filepath.Join(t.TempDir(), "auth.json"), reg.Addr, "opm", "s3cret")
			}
			c, err := image.NewClient(opts)
			if err != nil {
				t.Fatal(err)
			}
			b, res := writeThrough(t, c, reg.Addr, db)
			if !b.streamed {
				t.Fatalf("the layer was not uploaded while built (%v)", b.uploadErr)
			}
			checkDatabaseLayer(t, c, reg.Addr+"/index:1", db)
			if res.BytesPushed < res.DatabaseLayerSize {
				t.Fatalf("%d bytes pushed, fewer than the %d of the layer", res.BytesPushed, res.DatabaseLayerSize)
			}
		})
	}
}

// A registry that refuses uploads of unknown length (as some do) makes the
// early upload fail; the push then sends the finished layer from its file,
// once, and the image is whole.
func TestLayerUploadFallsBack(t *testing.T) {
	reg := registrytest.Start(t)
	target, err := url.Parse(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	var refused, sized atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && r.ContentLength < 0 {
			refused.Add(1)
			_, _ = io.Copy(io.Discard, r.Body)
			http.Error(w, `{"errors":[{"code":"SIZE_INVALID","message":"Content-Length required"}]}`, http.StatusLengthRequired)
			return
		}
		if r.Method == http.MethodPatch || (r.Method == http.MethodPut && r.ContentLength > 0 && strings.Contains(r.URL.Path, "/blobs/uploads/")) {
			sized.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := client(t)
	db := fakeDatabase(2*blockgzip.BlockSize+999, "f")
	b, _ := writeThrough(t, c, addr, db)
	if b.streamed || b.uploadErr == nil || refused.Load() != 1 {
		t.Fatalf("the early upload was not refused (error %v, %d refused)", b.uploadErr, refused.Load())
	}
	if sized.Load() == 0 {
		t.Fatal("the layer was not pushed again with its size")
	}
	checkDatabaseLayer(t, c, addr+"/index:1", db)
}

// A layer that cannot be built ends its early upload without committing a
// blob, and Write fails with the build's error.
func TestLayerUploadEndsWhenBuildFails(t *testing.T) {
	reg := registrytest.Start(t)
	c, err := image.NewClient(image.Options{UseHTTP: true, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	base, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"bin/opm": "binary"}))
	if err != nil {
		t.Fatal(err)
	}
	push(t, c, base, reg.Addr+"/opm:base")
	b, err := New(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if err := b.Base(context.Background(), reg.Addr+"/opm:base"); err != nil {
		t.Fatal(err)
	}
	// A catalog directory holding a symbolic link cannot go into a layer.
	cfg := t.TempDir()
	if err := os.Symlink("/etc/passwd", filepath.Join(cfg, "link")); err != nil {
		t.Fatal(err)
	}
	b.outFormat, b.outConfigs = FormatFBC, cfg
	_, err = b.Write(context.Background(), reg.Addr+"/index:1")
	if err == nil || !strings.Contains(err.Error(), "neither a file nor a directory") {
		t.Fatalf("Write = %v, want the build's error", err)
	}
	if b.uploadErr == nil {
		t.Fatal("the early upload succeeded with a layer that was never built")
	}
	r, err := image.ParseReference(reg.Addr + "/index:1")
	if err != nil {
		t.Fatal(err)
	}
	if im, err := c.Open(context.Background(), r); err == nil {
		_ = im.Close()
		t.Fatal("a failed Write left an image at the destination")
	}
}

var _ v1.Layer = &growingLayer{}
