package indeximage

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/image"
)

// Unit tests against go-containerregistry's in-process registry; the
// integration tests against a real registry are in cmd/opm.

type hookedRegistry struct {
	next http.Handler
	hook func(w http.ResponseWriter, r *http.Request) bool
}

func (h *hookedRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.hook != nil && h.hook(w, r) {
		return
	}
	h.next.ServeHTTP(w, r)
}

func startRegistry(t *testing.T) (string, *hookedRegistry) {
	t.Helper()
	h := &hookedRegistry{next: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), h
}

func client(t *testing.T) *image.Client {
	t.Helper()
	c, err := image.NewClient(image.Options{UseHTTP: true, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func layer(t *testing.T, files map[string]string) v1.Layer {
	t.Helper()
	lb := image.NewLayerBuilder()
	for p, data := range files {
		if err := lb.AddFile(p, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := lb.Layer()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func push(t *testing.T, c *image.Client, img v1.Image, ref string) {
	t.Helper()
	r, err := image.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(context.Background(), img, r); err != nil {
		t.Fatal(err)
	}
}

func indexLabels() map[string]string { return map[string]string{DatabaseLabel: DefaultDatabasePath} }

func digests(t *testing.T, img v1.Image) []string {
	t.Helper()
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		d, _ := l.Digest()
		out = append(out, d.String())
	}
	return out
}

func openRemote(t *testing.T, ref string) v1.Image {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// update runs FromIndex, replaces the database with data, and writes dst.
func update(t *testing.T, c *image.Client, from, dst, data string) (*Result, string) {
	t.Helper()
	b, err := New(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if err := b.FromIndex(context.Background(), from); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(b.DatabasePath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.DatabasePath(), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := b.Write(context.Background(), dst)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(old)
}

func TestReplaceOnlyDatabaseOnlyLayers(t *testing.T) {
	addr, _ := startRegistry(t)
	c := client(t)
	base := layer(t, map[string]string{"bin/opm": "binary"})

	// The database alone in the top layer (as upstream's ADD and opm write it): replaced.
	img, _ := image.NewImage(image.ImageConfig{Labels: indexLabels()}, base, layer(t, map[string]string{"database/index.db": "v1"}))
	push(t, c, img, addr+"/a:1")
	res, old := update(t, c, addr+"/a:1", addr+"/a:2", "v2")
	if old != "v1" || res.ReplacedLayers != 1 {
		t.Fatalf("read %q, replaced %d", old, res.ReplacedLayers)
	}
	got := digests(t, openRemote(t, addr+"/a:2"))
	if len(got) != 2 || got[0] != digests(t, img)[0] || got[1] != res.DatabaseLayer {
		t.Fatalf("layers %v", got)
	}
	// And again: still one database layer; the history marks it.
	res, old = update(t, c, addr+"/a:2", addr+"/a:3", "v3")
	if old != "v2" || res.ReplacedLayers != 1 || len(digests(t, openRemote(t, addr+"/a:3"))) != 2 {
		t.Fatalf("second update: read %q, %+v", old, res)
	}
	cf, _ := openRemote(t, addr+"/a:3").ConfigFile()
	if h := cf.History[len(cf.History)-1]; h.Comment != LayerComment || len(cf.History) != 2 {
		t.Errorf("history %+v", cf.History)
	}

	// A top layer holding something else too: stacked, never dropped.
	img, _ = image.NewImage(image.ImageConfig{Labels: indexLabels()}, base, layer(t, map[string]string{"database/index.db": "v1", "etc/motd": "hi"}))
	push(t, c, img, addr+"/b:1")
	res, old = update(t, c, addr+"/b:1", addr+"/b:2", "v2")
	if old != "v1" || res.ReplacedLayers != 0 || len(digests(t, openRemote(t, addr+"/b:2"))) != 3 {
		t.Fatalf("mixed top layer: read %q, %+v", old, res)
	}

	// The database below an unrelated top layer: found by walking down, stacked.
	img, _ = image.NewImage(image.ImageConfig{Labels: indexLabels()}, base, layer(t, map[string]string{"database/index.db": "v1"}), layer(t, map[string]string{"etc/motd": "hi"}))
	push(t, c, img, addr+"/c:1")
	res, old = update(t, c, addr+"/c:1", addr+"/c:2", "v2")
	if old != "v1" || res.ReplacedLayers != 0 || len(digests(t, openRemote(t, addr+"/c:2"))) != 4 {
		t.Fatalf("database below the top: read %q, %+v", old, res)
	}

	// A label naming another path is followed.
	img, _ = image.NewImage(image.ImageConfig{Labels: map[string]string{DatabaseLabel: "/var/lib/db/cat.db"}}, base, layer(t, map[string]string{"var/lib/db/cat.db": "v1"}))
	push(t, c, img, addr+"/d:1")
	res, old = update(t, c, addr+"/d:1", addr+"/d:2", "v2")
	if old != "v1" || res.DatabasePath != "/var/lib/db/cat.db" || res.ReplacedLayers != 1 {
		t.Fatalf("custom path: read %q, %+v", old, res)
	}
}

func TestNotAnIndex(t *testing.T) {
	addr, _ := startRegistry(t)
	c := client(t)
	img, _ := image.NewImage(image.ImageConfig{}, layer(t, map[string]string{"bin/opm": "x"}))
	push(t, c, img, addr+"/plain:1")
	img, _ = image.NewImage(image.ImageConfig{Labels: indexLabels()}, layer(t, map[string]string{"bin/opm": "x"}))
	push(t, c, img, addr+"/nodb:1")
	for ref, want := range map[string]string{"plain:1": "is not an index image", "nodb:1": "no database at /database/index.db"} {
		b, err := New(c, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		err = b.FromIndex(context.Background(), addr+"/"+ref)
		_ = b.Close()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", ref, err, want)
		}
	}
}

func TestDockerMediaTypes(t *testing.T) {
	addr, _ := startRegistry(t)
	c := client(t)
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	_ = tw.WriteHeader(&tar.Header{Name: "database/index.db", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("v1"))
	_ = tw.Close()
	raw := tb.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }, tarball.WithMediaType(types.DockerLayer))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.DockerConfigJSON), types.DockerManifestSchema2), l)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Labels: indexLabels()})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := name.ParseReference(addr+"/docker:1", name.Insecure)
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	res, old := update(t, c, addr+"/docker:1", addr+"/docker:2", "v2")
	if old != "v1" || res.MediaType != types.DockerManifestSchema2 {
		t.Fatalf("read %q, %+v", old, res)
	}
	m, err := openRemote(t, addr+"/docker:2").Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Layers[len(m.Layers)-1].MediaType != types.DockerLayer {
		t.Errorf("database layer media type %s in a docker manifest", m.Layers[len(m.Layers)-1].MediaType)
	}
}

func TestPlatformsWithDifferentDatabases(t *testing.T) {
	addr, _ := startRegistry(t)
	c := client(t)
	var adds []mutate.IndexAddendum
	for i, arch := range []string{"amd64", "arm64"} {
		img, _ := image.NewImage(image.ImageConfig{Labels: indexLabels(), Platform: image.Platform{OS: "linux", Architecture: arch}},
			layer(t, map[string]string{"bin/opm": arch}), layer(t, map[string]string{"database/index.db": strings.Repeat("x", i+1)}))
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	r, _ := name.ParseReference(addr+"/multi:1", name.Insecure)
	if err := remote.WriteIndex(r, mutate.AppendManifests(empty.Index, adds...)); err != nil {
		t.Fatal(err)
	}
	b, err := New(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	err = b.FromIndex(context.Background(), addr+"/multi:1")
	if err == nil || !strings.Contains(err.Error(), "holds a different database") {
		t.Fatalf("got %v", err)
	}
}

func TestCancelMidPullLeavesNothing(t *testing.T) {
	addr, h := startRegistry(t)
	c := client(t)
	big := strings.Repeat("database bytes ", 1<<16)
	img, _ := image.NewImage(image.ImageConfig{Labels: indexLabels()}, layer(t, map[string]string{"bin/opm": "x"}), layer(t, map[string]string{"database/index.db": big}))
	push(t, c, img, addr+"/idx:1")
	dbLayer := digests(t, img)[1]

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.hook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, dbLayer) {
			return false
		}
		// Send part of the layer, then "Ctrl-C".
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(make([]byte, 100))
		w.(http.Flusher).Flush()
		cancel()
		<-r.Context().Done()
		return true
	}
	tmp := t.TempDir()
	b, err := New(c, tmp)
	if err != nil {
		t.Fatal(err)
	}
	err = b.FromIndex(ctx, addr+"/idx:1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Errorf("left behind: %v", es)
	}
}

func TestLayerDeterministic(t *testing.T) {
	for _, comp := range []Compression{Gzip, Zstd} {
		t.Run(string(comp), func(t *testing.T) { testLayerDeterministic(t, comp) })
	}
}

func testLayerDeterministic(t *testing.T, comp Compression) {
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	if err := os.WriteFile(db, []byte("sqlite bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := buildLayer(layerSpec{db: db, dbPath: "database/index.db"}, filepath.Join(dir, "a"), comp, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := buildLayer(layerSpec{db: db, dbPath: "database/index.db"}, filepath.Join(dir, "b"), comp, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.digest != b.digest || a.diffID != b.diffID {
		t.Fatalf("two builds differ: %v %v", a.digest, b.digest)
	}
	rc, err := a.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Uid != 0 || hdr.Gid != 0 || !hdr.ModTime.Equal(image.Epoch) {
			t.Errorf("%s: uid %d gid %d mtime %s", hdr.Name, hdr.Uid, hdr.Gid, hdr.ModTime)
		}
		names = append(names, hdr.Name)
	}
	if strings.Join(names, " ") != "database/ database/index.db" {
		t.Errorf("entries %v", names)
	}
}

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(t.TempDir(), "index.db")
	if err := os.WriteFile(db, []byte("db"), 0o600); err != nil {
		t.Fatal(err)
	}
	dbOut, df, err := Generate(dir, db, "", "example.com/opm:1")
	if err != nil {
		t.Fatal(err)
	}
	if dbOut != filepath.Join(dir, "database/index.db") || df != filepath.Join(dir, "index.Dockerfile") {
		t.Errorf("wrote %s, %s", dbOut, df)
	}
	data, _ := os.ReadFile(df)
	if !strings.HasPrefix(string(data), "FROM example.com/opm:1\n") || !strings.Contains(string(data), `CMD ["registry", "serve", "--database", "/database/index.db"]`) {
		t.Errorf("Dockerfile:\n%s", data)
	}
}

func TestLayerSameOnAnyNumberOfCores(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	var data bytes.Buffer
	for i := 0; data.Len() < 5<<20; i++ {
		fmt.Fprintf(&data, "row %d of a database that spans several compression blocks\n", i*i%7919)
	}
	if err := os.WriteFile(db, data.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, comp := range []Compression{Gzip, Zstd} {
		var got []v1.Hash
		for _, procs := range []int{1, 4} {
			old := runtime.GOMAXPROCS(procs)
			l, err := buildLayer(layerSpec{db: db, dbPath: "database/index.db"}, filepath.Join(dir, fmt.Sprintf("%s-%d", comp, procs)), comp, nil, nil, nil)
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, l.digest)
		}
		if got[0] != got[1] {
			t.Errorf("%s: digest with 1 core %s, with 4 %s", comp, got[0], got[1])
		}
	}
}
