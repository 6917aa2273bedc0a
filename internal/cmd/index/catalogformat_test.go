package index_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/serve"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/registry/api"
	"github.com/opmkit/opm/internal/registrytest"
)

// flatFiles is the flattened filesystem of an image as crane exports it:
// regular files by path.
func flatFiles(t *testing.T, crane, ref string) map[string][]byte {
	t.Helper()
	out, err := exec.Command(crane, "export", "--insecure", ref, "-").Output()
	require.NoError(t, err, "crane export %s", ref)
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if hdr.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			require.NoError(t, err)
			files[strings.TrimPrefix(hdr.Name, "/")] = data
		}
	}
	return files
}

// skopeoConfig reads an image's config with skopeo.
func skopeoConfig(t *testing.T, ref string) v1.ConfigFile {
	t.Helper()
	out, err := exec.Command("skopeo", "inspect", "--config", "--tls-verify=false", "docker://"+ref).CombinedOutput()
	require.NoError(t, err, string(out))
	var cfg v1.ConfigFile
	require.NoError(t, json.Unmarshal(out, &cfg))
	return cfg
}

func packagesOf(t *testing.T, files map[string][]byte, dir string) []string {
	t.Helper()
	var pkgs []string
	for name, data := range files {
		if !strings.HasPrefix(name, dir+"/") {
			continue
		}
		c := &fbc.Catalog{}
		require.NoError(t, c.LoadFile(name, data))
		pkgs = append(pkgs, c.PackageNames()...)
	}
	return pkgs
}

// serveImageFiles lays out an image's flattened files in a directory and
// runs its command (opm serve DIR --cache-dir ...) there, with the catalog
// and the cache read-only: the cache must match the catalog (the command
// enforces it) and serve. It returns the packages served.
func serveImageFiles(t *testing.T, files map[string][]byte, cmd []string) []string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o444))
	}
	args := make([]string, len(cmd))
	for i, a := range cmd {
		switch {
		case strings.HasPrefix(a, "/"):
			args[i] = root + a
		case strings.HasPrefix(a, "--cache-dir="):
			args[i] = "--cache-dir=" + root + strings.TrimPrefix(a, "--cache-dir=")
		default:
			args[i] = a
		}
	}
	require.Equal(t, "serve", args[0], "command %v", cmd)
	opts, err := cmdtest.Parse(t, serve.NewCmd, args[1:]...)
	require.NoError(t, err, "command %v", cmd)
	require.NotEmpty(t, opts.CacheDir, "command %v names no cache", cmd)
	require.NoError(t, os.Chmod(opts.CacheDir, 0o555))
	t.Cleanup(func() { _ = os.Chmod(opts.CacheDir, 0o755) })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pkgs []string
	var callErr error
	opts.Listener, opts.TerminationLog = lis, ""
	opts.OnServing = func(a net.Addr) {
		defer cancel()
		conn, err := grpc.NewClient(a.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			callErr = err
			return
		}
		defer conn.Close()
		stream, err := api.NewRegistryClient(conn).ListPackages(ctx, &api.ListPackageRequest{})
		if err != nil {
			callErr = err
			return
		}
		for {
			p, err := stream.Recv()
			if err != nil {
				if err != io.EOF {
					callErr = err
				}
				return
			}
			pkgs = append(pkgs, p.GetName())
		}
	}
	s, _, _, errOut := iostreams.Test()
	err = serve.Run(ctx, factory.NewWithEnv(s, map[string]string{}), opts)
	require.NoError(t, err, errOut.String())
	require.NoError(t, callErr)
	require.Contains(t, errOut.String(), `how="cache used"`)
	sort.Strings(pkgs)
	return pkgs
}

// TestIndexImageCatalogFormats: --catalog-format both writes the database
// and /configs (rendered from it) in one layer with both labels; fbc drops
// the database; an FBC-only index (opm's or upstream's layout) is a
// --from-index like any other and keeps its format; skopeo and crane read
// every result.
func TestIndexImageCatalogFormats(t *testing.T) {
	t.Parallel()
	needCorpus(t)
	registrytest.RequireTool(t, "skopeo")
	crane := "/root/go/bin/crane"
	if p, err := exec.LookPath("crane"); err == nil {
		crane = p
	} else if _, err := os.Stat(crane); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("crane is required under CI")
		}
		t.Skip("skipping: crane is not installed (go install github.com/google/go-containerregistry/cmd/crane@v0.22.1)")
	}
	o := cmdtest.New(t)
	o.Dir = t.TempDir()
	reg := startRegistry(t)
	c := testClient(t)
	base := fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"})
	pushImage(t, c, base, reg.ref("opm:fake"))
	nBase := len(imageDigests(t, base))
	etcd := pushBundles(t, c, reg.Addr, "etcd", "0.6.1", "0.9.0", "0.9.2", "0.9.4")
	pelorus := pushBundles(t, c, reg.Addr, "pelorus-operator", "0.0.1")

	// A new dual-format index.
	both := reg.ref("idx:both")
	r := o.Run("index", "add", "--use-http", "-o", "json", "-b", strings.Join(etcd[:2], ","), "-i", reg.ref("opm:fake"), "-t", both, "--catalog-format", "both")
	require.Equal(t, 0, r.Code, r.ErrOut)
	res := decodeImageOut(t, r.Out)
	assert.Equal(t, indeximage.FormatBoth, res.CatalogFormat)
	assert.Equal(t, "/database/index.db", res.DatabasePath)
	assert.Equal(t, "/configs", res.ConfigsPath)
	require.Len(t, layerDigests(t, c, both), nBase+1, "database and catalog in one layer")
	cfg := skopeoConfig(t, both)
	assert.Equal(t, "/database/index.db", cfg.Config.Labels[indeximage.DatabaseLabel])
	assert.Equal(t, "/configs", cfg.Config.Labels[indeximage.ConfigsLabel])
	assert.Equal(t, []string{"registry", "serve", "--database", "/database/index.db"}, cfg.Config.Cmd)
	files := flatFiles(t, crane, both)
	require.Contains(t, files, "database/index.db")
	require.Contains(t, files, "configs/etcd/catalog.json")
	// /configs is the render of the database beside it.
	db := filepath.Join(t.TempDir(), "index.db")
	require.NoError(t, os.WriteFile(db, files["database/index.db"], 0o644))
	rr := o.Run("render", db)
	require.Equal(t, 0, rr.Code, rr.ErrOut)
	assert.Equal(t, rr.Out, string(files["configs/etcd/catalog.json"]))
	// render reads the sqlite index image (its database) and a bundle image.
	rr = o.Run("render", "--use-http", both)
	require.Equal(t, 0, rr.Code, rr.ErrOut)
	assert.Equal(t, string(files["configs/etcd/catalog.json"]), rr.Out)
	rr = o.Run("render", "--use-http", etcd[0])
	require.Equal(t, 0, rr.Code, rr.ErrOut)
	one := &fbc.Catalog{}
	require.NoError(t, one.LoadFile("b.json", []byte(rr.Out)))
	require.Len(t, one.Bundles, 1)
	assert.Equal(t, etcd[0], one.Bundles[0].Image)
	assert.Contains(t, rr.Out, `"image": "`+etcd[0]+`"`, "the bundle image is among its related images")

	// Adding to it keeps the format and replaces the one catalog layer.
	both2 := reg.ref("idx:both2")
	r = o.Run("index", "add", "--use-http", "-o", "json", "-b", etcd[2], "-f", both, "-t", both2)
	require.Equal(t, 0, r.Code, r.ErrOut)
	res = decodeImageOut(t, r.Out)
	assert.Equal(t, indeximage.FormatBoth, res.CatalogFormat)
	assert.Equal(t, 1, res.ReplacedLayers)
	require.Len(t, layerDigests(t, c, both2), nBase+1)
	assert.Contains(t, string(flatFiles(t, crane, both2)["configs/etcd/catalog.json"]), "etcdoperator.v0.9.2")

	// To an FBC-only index: no database, no database label, served by opm serve.
	fbcRef := reg.ref("idx:fbc")
	r = o.Run("index", "add", "--use-http", "-o", "json", "-b", etcd[3], "-f", both2, "-t", fbcRef, "--catalog-format", "fbc")
	require.Equal(t, 0, r.Code, r.ErrOut)
	res = decodeImageOut(t, r.Out)
	assert.Equal(t, indeximage.FormatFBC, res.CatalogFormat)
	require.Len(t, layerDigests(t, c, fbcRef), nBase+1)
	cfg = skopeoConfig(t, fbcRef)
	assert.NotContains(t, cfg.Config.Labels, indeximage.DatabaseLabel)
	assert.Equal(t, "/configs", cfg.Config.Labels[indeximage.ConfigsLabel])
	assert.Equal(t, []string{"/bin/opm"}, cfg.Config.Entrypoint)
	assert.Equal(t, indeximage.ServeCmd("/configs", indeximage.CachePath), cfg.Config.Cmd)
	assert.Equal(t, indeximage.CachePath, res.CachePath)
	files = flatFiles(t, crane, fbcRef)
	assert.NotContains(t, files, "database/index.db")
	assert.Contains(t, string(files["configs/etcd/catalog.json"]), "etcdoperator.v0.9.4")
	assert.Equal(t, []string{"etcd"}, serveImageFiles(t, files, cfg.Config.Cmd), "the image's command serves its cache")

	// An FBC-only --from-index: converted, added to, written back as FBC.
	fbc2 := reg.ref("idx:fbc2")
	r = o.Run("index", "add", "--use-http", "-o", "json", "-b", pelorus[0], "-f", fbcRef, "-t", fbc2)
	require.Equal(t, 0, r.Code, r.ErrOut)
	res = decodeImageOut(t, r.Out)
	assert.Equal(t, indeximage.FormatFBC, res.CatalogFormat)
	assert.Equal(t, 1, res.ReplacedLayers, "opm's FBC layer is replaced")
	files = flatFiles(t, crane, fbc2)
	assert.ElementsMatch(t, []string{"etcd", "pelorus-operator"}, packagesOf(t, files, "configs"))
	assert.Equal(t, []string{"etcd", "pelorus-operator"}, serveImageFiles(t, files, skopeoConfig(t, fbc2).Config.Cmd), "the cache is rebuilt with the catalog")
	// inspect and render read FBC-only images too.
	r = o.Run("index", "inspect", "--use-http", fbc2)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "pelorus-operator")
	r = o.Run("render", "--use-http", fbc2)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `"name": "pelorus-operator.v0.0.1"`)

	// migrate reads FBC images back to sqlite, and sqlite images to FBC.
	back := filepath.Join(t.TempDir(), "back.db")
	r = o.Run("migrate", "--to", "sqlite", "--use-http", fbc2, back)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, inspectJSON(t, back), `"pelorus-operator"`)
	r = o.Run("migrate", "--use-http", both2, filepath.Join(t.TempDir(), "cat"))
	require.Equal(t, 0, r.Code, r.ErrOut)

	// rm on an FBC-only image, summary as text.
	r = o.Run("index", "rm", "--use-http", "-o", "pelorus-operator", "-f", fbc2, "-t", reg.ref("idx:fbc3"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "catalog layer (fbc: /configs, serve cache /var/cache/opm)")
	assert.Contains(t, r.ErrOut, "replaced the previous catalog layer")
	assert.ElementsMatch(t, []string{"etcd"}, packagesOf(t, flatFiles(t, crane, reg.ref("idx:fbc3")), "configs"))

	// An FBC index laid out as upstream builds it: the catalog in one file
	// of its own layer, a cache layer above, a command naming the cache.
	r = o.Run("render", "--use-http", fbcRef)
	require.Equal(t, 0, r.Code, r.ErrOut)
	lb := image.NewLayerBuilder()
	require.NoError(t, lb.AddFile("configs/index.json", []byte(r.Out)))
	catLayer, err := lb.Layer()
	require.NoError(t, err)
	lb = image.NewLayerBuilder()
	require.NoError(t, lb.AddFile("tmp/cache/digest", []byte("upstream cache")))
	cacheLayer, err := lb.Layer()
	require.NoError(t, err)
	baseLayers, err := base.Layers()
	require.NoError(t, err)
	up, err := image.NewImage(image.ImageConfig{
		Labels:     map[string]string{indeximage.ConfigsLabel: "/configs"},
		Entrypoint: []string{"/bin/opm"}, Cmd: []string{"serve", "/configs", "--cache-dir=/tmp/cache"},
	}, append(baseLayers, catLayer, cacheLayer)...)
	require.NoError(t, err)
	pushImage(t, c, up, reg.ref("upstream:fbc"))
	up2 := reg.ref("upstream:fbc2")
	r = o.Run("index", "add", "--use-http", "-o", "json", "-b", pelorus[0], "-f", reg.ref("upstream:fbc"), "-t", up2)
	require.Equal(t, 0, r.Code, r.ErrOut)
	res = decodeImageOut(t, r.Out)
	assert.Equal(t, 0, res.ReplacedLayers, "upstream's layers are kept")
	require.Len(t, layerDigests(t, c, up2), nBase+3)
	cfg = skopeoConfig(t, up2)
	// Its opm is not opm's (no serving image source label): no cache that
	// opm would be the only one to read, and a warning saying so.
	assert.Equal(t, []string{"serve", "/configs"}, cfg.Config.Cmd, "the stale cache is no longer named")
	assert.Empty(t, res.CachePath)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "carries no serve cache")
	files = flatFiles(t, crane, up2)
	assert.NotContains(t, files, "configs/index.json", "the new catalog layer hides the old catalog")
	assert.NotContains(t, files, "var/cache/opm/index.db")
	assert.ElementsMatch(t, []string{"etcd", "pelorus-operator"}, packagesOf(t, files, "configs"))

	// Back to both: the database serves; the fbc layer (and its cache) is replaced.
	both3 := reg.ref("idx:both3")
	r = o.Run("index", "add", "--use-http", "-o", "json", "-b", pelorus[0], "-f", fbcRef, "-t", both3, "--catalog-format", "both")
	require.Equal(t, 0, r.Code, r.ErrOut)
	res = decodeImageOut(t, r.Out)
	assert.Equal(t, 1, res.ReplacedLayers)
	assert.Empty(t, res.CachePath)
	for name := range flatFiles(t, crane, both3) {
		assert.False(t, strings.HasPrefix(name, strings.TrimPrefix(indeximage.CachePath, "/")+"/"), "a both image carries no serve cache: %s", name)
	}

	// Usage errors: exit 64 (upstream's usage status on the index paths).
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--catalog-format", "xml", "-f", both, "-t", reg.ref("idx:x")}, "use sqlite, fbc or both"},
		{[]string{"--catalog-format", "fbc", "-f", both, "--generate", "-i", reg.ref("opm:fake")}, "drop --generate and --build-tool"},
		{[]string{"--catalog-format", "fbc", "--database", db}, "--catalog-format"},
	} {
		r = o.Run(append([]string{"index", "add", "--use-http", "-b", etcd[3]}, tc.args...)...)
		assert.Equal(t, 64, r.Code, "%v: %s", tc.args, r.ErrOut)
		assert.Contains(t, r.ErrOut, tc.want, tc.args)
	}
	r = o.Run("index", "add", "--use-http", "-b", etcd[0], "-f", fbcRef, "--generate", "-i", reg.ref("opm:fake"))
	assert.Equal(t, 64, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "--catalog-format sqlite")
}
