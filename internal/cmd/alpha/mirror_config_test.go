package alpha_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/registrytest"
)

// pushServingCatalog writes the file-based catalog doc (one file) as
// /configs of an image on opm's serving image (its source label), so that
// an image rebuilt from it carries the serve cache.
func pushServingCatalog(t *testing.T, doc, ref string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(doc), 0o644))
	lb := image.NewLayerBuilder()
	require.NoError(t, lb.AddFS("configs", os.DirFS(dir), "."))
	l, err := lb.Layer()
	require.NoError(t, err)
	img, err := image.NewImage(image.ImageConfig{Labels: map[string]string{
		indeximage.ConfigsLabel:           "/configs",
		"org.opencontainers.image.source": indeximage.ServingImageSource,
	}}, l)
	require.NoError(t, err)
	c, err := image.NewClient(image.Options{UseHTTP: true})
	require.NoError(t, err)
	r, err := image.ParseReference(ref)
	require.NoError(t, err)
	_, err = c.Write(context.Background(), img, r)
	require.NoError(t, err)
}

// filesIn lists the paths of an image's flattened filesystem.
func filesIn(t *testing.T, ref string) []string {
	t.Helper()
	img, err := crane.Pull(ref, crane.Insecure)
	require.NoError(t, err)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(crane.Export(img, pw)) }()
	var names []string
	tr := tar.NewReader(pr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
	}
	return names
}

// TestMirrorConfig (issue 39, item 3): one step from an
// ImageSetConfiguration naming one catalog with a package filter, two
// additional images (by tag, by digest) and a blocked related image: the
// catalog arrives filtered and rebuilt (its serve cache too) and lists only
// the kept package, the additional images arrive and are reported, the
// blocked one never arrives and is reported, and the catalog objects name
// the filtered catalog. The same through a directory and on.
func TestMirrorConfig(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)

	pBundle := pushRandom(t, src.Addr, "example.com/p/bundle", false)
	pOperator := pushRandom(t, src.Addr, "example.com/p/operator", true)
	pDebug := pushRandom(t, src.Addr, "example.com/p/debug-tools", false)
	qBundle := pushRandom(t, src.Addr, "example.com/q/bundle", false)
	qOperator := pushRandom(t, src.Addr, "example.com/q/operator", false)
	byTag := src.Addr + "/extra/tools:v2"
	pushTagged(t, byTag)
	byDigest := pushRandom(t, src.Addr, "example.com/extra/base", true)

	bundle := func(pkg, ver, img string, related ...string) string {
		var rel []string
		for i, r := range related {
			rel = append(rel, fmt.Sprintf(`{"name":"r%d","image":%q}`, i, r))
		}
		return fmt.Sprintf(`{"schema":"olm.bundle","package":%q,"name":"%s.v%s","image":%q,"properties":[{"type":"olm.package","value":{"packageName":%q,"version":%q}}],"relatedImages":[%s]}`,
			pkg, pkg, ver, img, pkg, ver, strings.Join(rel, ","))
	}
	doc := strings.Join([]string{
		`{"schema":"olm.package","name":"p","defaultChannel":"stable"}`,
		`{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}`,
		bundle("p", "1.0.0", pBundle, pOperator, pDebug),
		`{"schema":"olm.package","name":"q","defaultChannel":"stable"}`,
		`{"schema":"olm.channel","package":"q","name":"stable","entries":[{"name":"q.v1.0.0"}]}`,
		bundle("q", "1.0.0", qBundle, qOperator),
	}, "\n") + "\n"
	catalog := src.Ref("olm/cat:1")
	pushServingCatalog(t, doc, catalog)
	// A second catalog, kept whole (full: true).
	rBundle := pushRandom(t, src.Addr, "example.com/r/bundle", false)
	other := src.Ref("olm/other:2")
	pushServingCatalog(t, strings.Join([]string{
		`{"schema":"olm.package","name":"r","defaultChannel":"stable"}`,
		`{"schema":"olm.channel","package":"r","name":"stable","entries":[{"name":"r.v1.0.0"}]}`,
		bundle("r", "1.0.0", rBundle, pOperator),
	}, "\n")+"\n", other)
	sourceDigest, err := crane.Digest(catalog, crane.Insecure)
	require.NoError(t, err)

	isc := filepath.Join(t.TempDir(), "isc.yaml")
	require.NoError(t, os.WriteFile(isc, []byte(fmt.Sprintf(`apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  operators:
  - catalog: %s
    packages:
    - name: p
  - catalog: %s
    full: true
    targetTag: mine
  additionalImages:
  - name: %s
  - name: %s
  blockedImages:
  - name: %s
`, catalog, other, byTag, byDigest, strings.SplitN(pDebug, "@", 2)[0])), 0o644))

	to := dst.Addr + "/mirror"
	manifests := filepath.Join(t.TempDir(), "m")
	r := o.Run("alpha", "mirror", "--use-http", "--config", isc, "--to", to, "--manifests-dir", manifests, "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "filtered "+catalog+": removed 1 bundles")
	assert.Contains(t, r.ErrOut, "mirror.operators[1] ("+other+"): targetTag not applied")
	var rep struct {
		Catalog string
		Images  []struct{ Source, Target, Role, Digest string }
		Blocked []struct{ Source, Entry string }
		Failed  int
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep))
	assert.Zero(t, rep.Failed)
	assert.Regexp(t, `^`+regexp.QuoteMeta(to)+`/olm/cat@sha256:[0-9a-f]{64}$`, rep.Catalog)
	assert.NotEqual(t, sourceDigest, catalogimages.Digest(rep.Catalog), "the catalog was rebuilt")

	roles := map[string]string{}
	for _, im := range rep.Images {
		roles[im.Source] = im.Role
	}
	assert.Equal(t, map[string]string{catalog: "catalog", other: "catalog", pBundle: "image", pOperator: "image", rBundle: "image", byTag: "additional", byDigest: "additional"}, roles,
		"the kept package's images (p's operator once, though both catalogs name it) and the additional ones; not q's, not the blocked one")
	require.Len(t, rep.Blocked, 1)
	assert.Equal(t, pDebug, rep.Blocked[0].Source)

	// At the destination: the filtered catalog, with its serve cache,
	// listing only p; every image copied; the blocked one absent.
	r = o.Run("render", "--use-http", rep.Catalog, "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `"p.v1.0.0"`)
	assert.NotContains(t, r.Out, `"q.v1.0.0"`, "the filter removed q")
	assert.NotContains(t, r.Out, `"q"`)
	files := strings.Join(filesIn(t, rep.Catalog), "\n")
	assert.Contains(t, files, "var/cache/opm/", "the rebuilt catalog carries its serve cache")
	assert.Contains(t, files, "configs/")
	for _, im := range rep.Images {
		raw, err := exec.Command("skopeo", "inspect", "--raw", "--tls-verify=false", "docker://"+im.Target).CombinedOutput()
		require.NoError(t, err, "%s: %s", im.Target, raw)
	}
	blockedAt := to + "/p/debug-tools@" + catalogimages.Digest(pDebug)
	out, err := exec.Command("skopeo", "inspect", "--raw", "--tls-verify=false", "docker://"+blockedAt).CombinedOutput()
	assert.Error(t, err, "the blocked image is not at the destination: %s", out)

	mapping := readFile(t, filepath.Join(manifests, "mapping.txt"))
	assert.Contains(t, mapping, byTag+"="+to+"/extra/tools@sha256:")
	assert.Contains(t, mapping, byDigest+"="+to+"/extra/base@"+catalogimages.Digest(byDigest))
	assert.Contains(t, mapping, catalog+"="+rep.Catalog)
	assert.NotContains(t, mapping, "debug-tools")
	assert.NotContains(t, mapping, "/q/")
	cs := readFile(t, filepath.Join(manifests, "catalogsource-cat-1.yaml"))
	assert.Contains(t, cs, "image: "+rep.Catalog+"\n")
	cc := readFile(t, filepath.Join(manifests, "clustercatalog-cat-1.yaml"))
	assert.Contains(t, cc, "ref: "+rep.Catalog+"\n")
	assert.Contains(t, readFile(t, filepath.Join(manifests, "imagetagmirrorset.yaml")), "source: "+src.Addr+"/extra/tools")

	// The text report says what was blocked, and lists the additional images.
	r = o.Run("alpha", "mirror", "--use-http", "--config", isc, "--to", to, "--manifests-dir", manifests)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "blocked, not copied: "+pDebug)
	assert.Contains(t, r.ErrOut, "needed by p/p.v1.0.0")
	assert.Contains(t, r.ErrOut, "additional image: "+byTag+" -> "+to+"/extra/tools@")
	assert.Contains(t, r.ErrOut, "0 copied, 7 already there", "the rebuilt catalogs are the same images")
	assert.Contains(t, r.ErrOut, "catalog: "+to+"/olm/other@sha256:")
	assert.Contains(t, readFile(t, filepath.Join(manifests, "catalogsource-other-2.yaml")), "image: "+to+"/olm/other@sha256:")

	// Through a directory and on: the same images, the same catalog.
	dir := filepath.Join(t.TempDir(), "carry")
	r = o.Run("alpha", "mirror", "--use-http", "--config", isc, "--to-dir", dir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	manifests2 := filepath.Join(t.TempDir(), "m")
	r = o.Run("alpha", "mirror", "--use-http", "--from-dir", dir, "--to", to, "--manifests-dir", manifests2)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "blocked, not copied: "+pDebug)
	assert.Equal(t, mapping, readFile(t, filepath.Join(manifests2, "mapping.txt")))

	r = o.Run("alpha", "mirror", "--use-http", "--config", isc, catalog, "--to", to)
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "give a catalog image or --config")
}
