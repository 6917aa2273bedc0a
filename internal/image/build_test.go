package image

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const labelPackage = "operators.operatorframework.io.bundle.package.v1"

func testBundle() fstest.MapFS {
	return fstest.MapFS{
		"manifests/etcd.clusterserviceversion.yaml": {Data: []byte("kind: ClusterServiceVersion\n"), Mode: 0o600, ModTime: time.Now()},
		"manifests/etcdclusters.crd.yaml":           {Data: []byte("kind: CustomResourceDefinition\n"), Mode: 0o755},
		"metadata/annotations.yaml":                 {Data: []byte("annotations:\n  " + labelPackage + ": etcd\n")},
		"bundle.Dockerfile":                         {Data: []byte("FROM scratch\n")},
		"tests/scorecard/config.yaml":               {Data: []byte("x\n")},
	}
}

func testLabels() map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		labelPackage: "etcd",
		"operators.operatorframework.io.bundle.channels.v1": "alpha",
	}
}

func TestBuildBundleImageDeterministic(t *testing.T) {
	a, err := BuildBundleImage(testBundle(), testLabels())
	if err != nil {
		t.Fatal(err)
	}
	// Different modes and times, same content: same digest.
	other := testBundle()
	for k, f := range other {
		f.ModTime = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		f.Mode = 0o640
		other[k] = f
	}
	b, err := BuildBundleImage(other, testLabels())
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Fatalf("same bundle, different digests: %s %s", da, db)
	}
	// Changing content or a label changes the digest.
	changed := testBundle()
	changed["metadata/annotations.yaml"] = &fstest.MapFile{Data: []byte("changed")}
	c, _ := BuildBundleImage(changed, testLabels())
	dc, _ := c.Digest()
	lbl := testLabels()
	lbl["x"] = "y"
	d, _ := BuildBundleImage(testBundle(), lbl)
	dd, _ := d.Digest()
	if dc == da || dd == da {
		t.Fatal("digest ignores content or labels")
	}

	layers, _ := a.Layers()
	if len(layers) != 1 {
		t.Fatalf("%d layers", len(layers))
	}
	rc, _ := layers[0].Uncompressed()
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir {
			wantMode = 0o755
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.Mode != wantMode || !h.ModTime.Equal(Epoch) {
			t.Errorf("%s: uid %d gid %d %q %q mode %o time %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.Mode, h.ModTime)
		}
	}
	want := "manifests/ manifests/etcd.clusterserviceversion.yaml manifests/etcdclusters.crd.yaml metadata/ metadata/annotations.yaml"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entries:\n got %s\nwant %s", got, want)
	}
	cf, _ := a.ConfigFile()
	if cf.Config.Labels[labelPackage] != "etcd" || cf.OS != "linux" || cf.Architecture != "amd64" || !cf.Created.Equal(Epoch) {
		t.Errorf("config: %+v", cf)
	}
}

func TestBuildBundleImageMissingDir(t *testing.T) {
	_, err := BuildBundleImage(fstest.MapFS{"manifests/a.yaml": {Data: []byte("a")}}, nil)
	if err == nil || !strings.Contains(err.Error(), "metadata") {
		t.Fatalf("err = %v", err)
	}
}

func TestLayerBuilderRejects(t *testing.T) {
	b := NewLayerBuilder()
	if err := b.AddFile("../x", nil); err == nil {
		t.Error("../x accepted")
	}
	if err := b.AddFile("a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddFile("a/b", []byte("1")); err == nil {
		t.Error("file under a file accepted")
	}
}

// localRegistry is go-containerregistry's in-process registry, for fast unit tests.
func localRegistry(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(registry.New(registry.Logger(discardLogger())))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

func mustClient(t testing.TB, o Options) *Client {
	t.Helper()
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustRef(t testing.TB, s string) Ref {
	t.Helper()
	r, err := ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWriteOpenRoundTrip writes a bundle image to every writable transport
// and opens it again: labels, digest and files survive.
func TestWriteOpenRoundTrip(t *testing.T) {
	ctx := context.Background()
	img, err := BuildBundleImage(testBundle(), testLabels())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	dir := t.TempDir()
	reg := localRegistry(t)
	c := mustClient(t, Options{UseHTTP: true, TempDir: t.TempDir()})
	for _, dst := range []string{
		reg + "/etcd-bundle:0.9.4",
		"oci:" + filepath.Join(dir, "layout") + ":0.9.4",
		"oci-archive:" + filepath.Join(dir, "bundle-oci.tar") + ":0.9.4",
		"docker-archive:" + filepath.Join(dir, "bundle-docker.tar"),
		"docker-archive:" + filepath.Join(dir, "bundle-docker-tagged.tar") + ":example.com/etcd:1",
	} {
		t.Run(dst, func(t *testing.T) {
			ref := mustRef(t, dst)
			got, err := c.Write(ctx, img, ref)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("write returned %s, want %s", got, want)
			}
			im, err := c.Open(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			defer im.Close()
			if ref.Transport != TransportDockerArchive && im.Digest != want {
				t.Errorf("opened digest %s, want %s", im.Digest, want)
			}
			if im.Labels()[labelPackage] != "etcd" {
				t.Errorf("labels: %v", im.Labels())
			}
			f, err := im.FS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := fstest.TestFS(f, "manifests/etcd.clusterserviceversion.yaml", "metadata/annotations.yaml"); err != nil {
				t.Fatal(err)
			}
			if _, err := fs.Stat(f, "bundle.Dockerfile"); err == nil {
				t.Error("bundle.Dockerfile copied into the image")
			}
		})
	}
	// Nothing but the written files is left in the directory.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestWriteLayoutKeepsOtherTags(t *testing.T) {
	ctx := context.Background()
	c := mustClient(t, Options{})
	dir := filepath.Join(t.TempDir(), "layout")
	a, _ := BuildBundleImage(testBundle(), testLabels())
	lbl := testLabels()
	lbl[labelPackage] = "other"
	b, _ := BuildBundleImage(testBundle(), lbl)
	for _, w := range []struct {
		img v1.Image
		tag string
	}{{a, "a"}, {b, "b"}, {b, "a"}} {
		if _, err := c.Write(ctx, w.img, mustRef(t, "oci:"+dir+":"+w.tag)); err != nil {
			t.Fatal(err)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	if n := bytes.Count(raw, []byte(refNameAnnotation)); n != 2 {
		t.Errorf("index.json has %d tagged entries: %s", n, raw)
	}
	im, err := c.Open(ctx, mustRef(t, "oci:"+dir+":a"))
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if im.Labels()[labelPackage] != "other" {
		t.Errorf("tag a not replaced: %v", im.Labels())
	}
}
