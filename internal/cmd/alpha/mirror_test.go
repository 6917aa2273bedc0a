package alpha_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/internal/shareddata"
)

// imageField is a pull spec in a CSV: a container's image or a related
// image.
var imageField = regexp.MustCompile(`(?m)(image: *)"?([a-z0-9][a-z0-9.-]*(?::[0-9]+)?/[^\s"']+)"?`)

// corpusBundlesAt copies the corpus bundles pkg/versions, points every
// image their CSVs pull at a fresh image pushed to src under the same
// repository path (by digest; some multi-platform), builds the bundle
// images into src and returns their references.
func corpusBundlesAt(t *testing.T, o *cmdtest.Runner, src string, pkg string, versions ...string) []string {
	t.Helper()
	corpus := shareddata.Require(t, "corpus", "real")
	var refs []string
	pushed := map[string]string{}
	for _, v := range versions {
		dir := filepath.Join(t.TempDir(), pkg, v)
		cmdtest.CopyDir(t, filepath.Join(corpus, pkg, v), dir)
		csvs, err := filepath.Glob(filepath.Join(dir, "manifests", "*clusterserviceversion*"))
		require.NoError(t, err)
		require.Len(t, csvs, 1)
		data, err := os.ReadFile(csvs[0])
		require.NoError(t, err)
		data = imageField.ReplaceAllFunc(data, func(m []byte) []byte {
			sub := imageField.FindSubmatch(m)
			orig := string(sub[2])
			if pushed[orig] == "" {
				pushed[orig] = pushRandom(t, src, orig, len(pushed)%2 == 0)
			}
			return append(append([]byte{}, sub[1]...), pushed[orig]...)
		})
		require.NoError(t, os.WriteFile(csvs[0], data, 0o644))
		ref := fmt.Sprintf("%s/bundles/%s-bundle:%s", src, pkg, v)
		r := o.Run("bundle", "build", "--use-http", "-d", dir, "-t", ref)
		require.Equal(t, exit.OK, r.Code, r.ErrOut)
		refs = append(refs, ref)
	}
	require.NotEmpty(t, pushed, "the bundles pull images")
	return refs
}

// pushRandom pushes a random image (a three-platform list when multi) to
// src under orig's repository path and returns it by digest.
func pushRandom(t *testing.T, src, orig string, multi bool) string {
	t.Helper()
	path := orig
	if i := strings.IndexAny(path, "@"); i >= 0 {
		path = path[:i]
	}
	if i := strings.LastIndex(path, ":"); i > strings.LastIndex(path, "/") {
		path = path[:i]
	}
	path = path[strings.Index(path, "/")+1:]
	repo, err := name.NewRepository(src+"/"+path, name.Insecure)
	require.NoError(t, err)
	var d v1.Hash
	if multi {
		idx, err := random.Index(64<<10, 2, 3)
		require.NoError(t, err)
		d, err = idx.Digest()
		require.NoError(t, err)
		require.NoError(t, remote.WriteIndex(repo.Digest(d.String()), idx))
	} else {
		img, err := random.Image(128<<10, 3)
		require.NoError(t, err)
		d, err = img.Digest()
		require.NoError(t, err)
		require.NoError(t, remote.Write(repo.Digest(d.String()), img))
	}
	return repo.String() + "@" + d.String()
}

// corpusCatalog pushes to ref a file-based catalog image of six corpus
// bundles (etcd 0.9.0-0.9.4, pelorus-operator 0.0.1-0.0.3) whose images
// are all in src.
func corpusCatalog(t *testing.T, o *cmdtest.Runner, src *registrytest.Registry, ref string) {
	t.Helper()
	etcd := corpusBundlesAt(t, o, src.Addr, "etcd", "0.9.0", "0.9.2", "0.9.4")
	pelorus := corpusBundlesAt(t, o, src.Addr, "pelorus-operator", "0.0.1", "0.0.2", "0.0.3")
	base := pushRandom(t, src.Addr, "example.com/base/opm:1", false)
	r := o.Run("index", "add", "--use-http", "-b", strings.Join(append(etcd, pelorus...), ","), "-i", base,
		"-t", ref, "--catalog-format", "fbc")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
}

// stallingProxy passes requests to a registry until it has passed
// stallAfter manifest PUTs; later requests wait until release.
type stallingProxy struct {
	next       http.Handler
	stallAfter int64
	puts       atomic.Int64
	stalled    chan struct{}
	once       sync.Once
	release    chan struct{}
}

func (p *stallingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") && p.puts.Add(1) > p.stallAfter {
		p.once.Do(func() { close(p.stalled) })
		<-p.release
	}
	p.next.ServeHTTP(w, r)
}

// TestMirrorKilledMidwayResumes (issue 29): a filtered catalog built from
// corpus bundles, mirrored by a process killed midway, then mirrored
// again: every image is at the target by digest (skopeo and crane agree),
// the mirror sets and catalog objects are written, a third run copies
// nothing, and the same images go through a directory and on.
func TestMirrorKilledMidwayResumes(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	corpusCatalog(t, o, src, src.Ref("olm/index:1"))
	cfg := filepath.Join(t.TempDir(), "filter.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`apiVersion: olm.operatorframework.io/v1alpha1
kind: FilterConfiguration
packages:
- name: etcd
  channels:
  - name: singlenamespace-alpha
    versionRange: ">=0.9.2"
- name: pelorus-operator
`), 0o644))
	r := o.Run("index", "filter", "--use-http", "--config", cfg, "-f", src.Ref("olm/index:1"), "-t", src.Ref("olm/index:small"), "--catalog-format", "fbc")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("alpha", "list", "images", "--use-http", "-o", "json", src.Ref("olm/index:small"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var listed []struct{ Image string }
	require.NoError(t, json.Unmarshal([]byte(r.Out), &listed))
	require.NotContains(t, r.Out, "etcd-bundle:0.9.0", "the filter left 0.9.0 out")

	target, err := url.Parse(dst.URL())
	require.NoError(t, err)
	proxy := &stallingProxy{next: httputil.NewSingleHostReverseProxy(target), stallAfter: 4,
		stalled: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	to := strings.TrimPrefix(srv.URL, "http://") + "/mirror"
	manifests := filepath.Join(t.TempDir(), "manifests")
	args := []string{"alpha", "mirror", "--use-http", src.Ref("olm/index:small"), "--to", to, "--manifests-dir", manifests, "--concurrency", "1"}

	// The first run is killed once a few images have arrived.
	o.Dir = t.TempDir()
	cmd := o.Command(args...)
	var out strings.Builder
	cmd.Stderr = &out
	require.NoError(t, cmd.Start())
	select {
	case <-proxy.stalled:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the mirror never got far enough:\n%s", out.String())
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	close(proxy.release)
	_, err = os.Stat(filepath.Join(manifests, "mapping.txt"))
	require.Error(t, err, "the killed run wrote no manifests")

	o.Dir = ""
	r = o.Run(append(args, "-o", "json")...)
	require.Equal(t, exit.OK, r.Code, r.ErrOut+r.Out)
	var rep struct {
		Images []struct {
			Source, Target, Digest string
			Copied                 bool
			BlobsPresent           int
		}
		Failed int
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep))
	assert.Zero(t, rep.Failed, r.Out)
	assert.Len(t, rep.Images, len(listed)+1, "the catalog and every image it lists")
	resumed := 0
	for _, im := range rep.Images {
		if !im.Copied {
			resumed++
		}
	}
	// The killed run finished the catalog and one bundle (4 manifest PUTs:
	// each by digest and by tag); the fifth may land after the kill.
	assert.GreaterOrEqual(t, resumed, 2, "what the killed run copied is not copied again")

	// Every image is at the target by digest, as skopeo and crane see it.
	mapping, err := os.ReadFile(filepath.Join(manifests, "mapping.txt"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(mapping)), "\n")
	assert.Len(t, lines, len(listed)+1)
	crane := registrytest.RequireTool(t, "crane")
	for _, line := range lines {
		source, mirrored, ok := strings.Cut(line, "=")
		require.True(t, ok, line)
		want := catalogimages.Digest(mirrored)
		direct := dst.Addr + strings.TrimPrefix(mirrored, strings.Split(to, "/")[0])
		got, err := exec.Command(crane, "digest", "--insecure", direct).CombinedOutput()
		require.NoError(t, err, "%s: %s", direct, got)
		assert.Equal(t, want, strings.TrimSpace(string(got)), source)
		raw, err := exec.Command("skopeo", "inspect", "--raw", "--tls-verify=false", "docker://"+direct).CombinedOutput()
		require.NoError(t, err, "%s: %s", direct, raw)
		if d := catalogimages.Digest(source); d != "" {
			assert.Equal(t, d, want, "pinned images keep their digest")
		}
	}

	files := readDir(t, manifests)
	assert.Equal(t, []string{"catalogsource-index-small.yaml", "clustercatalog-index-small.yaml", "imagedigestmirrorset.yaml", "imagetagmirrorset.yaml", "mapping.txt"}, files)
	idms := readFile(t, filepath.Join(manifests, "imagedigestmirrorset.yaml"))
	assert.Contains(t, idms, "source: "+src.Addr+"/coreos/etcd-operator")
	assert.Contains(t, idms, "- "+to+"/coreos/etcd-operator")
	itms := readFile(t, filepath.Join(manifests, "imagetagmirrorset.yaml"))
	assert.Contains(t, itms, "source: "+src.Addr+"/bundles/etcd-bundle")
	cs := readFile(t, filepath.Join(manifests, "catalogsource-index-small.yaml"))
	assert.Regexp(t, `image: `+regexp.QuoteMeta(to)+`/olm/index@sha256:[0-9a-f]{64}`, cs)

	// A third run copies nothing.
	r = o.Run(args...)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, fmt.Sprintf("0 copied, %d already there", len(lines)))

	// Through a directory and on: the same digests.
	dir := filepath.Join(t.TempDir(), "carry")
	r = o.Run("alpha", "mirror", "--use-http", src.Ref("olm/index:small"), "--to-dir", dir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	manifests2 := filepath.Join(t.TempDir(), "manifests")
	r = o.Run("alpha", "mirror", "--use-http", "--from-dir", dir, "--to", dst.Addr+"/far", "--manifests-dir", manifests2)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	far := readFile(t, filepath.Join(manifests2, "mapping.txt"))
	assert.Equal(t, digestsOf(string(mapping)), digestsOf(far))
}

// digestsOf is the sorted source=digest pairs of a mapping.txt.
func digestsOf(mapping string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(mapping), "\n") {
		source, target, _ := strings.Cut(line, "=")
		out = append(out, source+"="+catalogimages.Digest(target))
	}
	sort.Strings(out)
	return out
}

func readDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// smallCatalogWith writes a one-bundle file-based catalog whose bundle is
// bundleImage and whose related images are related, pushes it to ref and
// returns its directory.
func smallCatalogWith(t *testing.T, ref, bundleImage string, related ...string) string {
	t.Helper()
	dir := t.TempDir()
	var rel []string
	for i, r := range related {
		rel = append(rel, fmt.Sprintf(`{"name":"r%d","image":%q}`, i, r))
	}
	doc := fmt.Sprintf(`{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","package":"p","name":"p.v1.0.0","image":%q,"properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}],"relatedImages":[%s]}
`, bundleImage, strings.Join(rel, ","))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "catalog.json"), []byte(doc), 0o644))
	catalogtest.PushCatalog(t, dir, ref)
	return dir
}

// TestMirrorReportsWhatFails (issue 29): an image that cannot be pulled is
// reported with the bundle that needs it and the others still arrive
// (exit 1); --fail-fast stops early; the signature policy holds for every
// image, not only the catalog.
func TestMirrorReportsWhatFails(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := pushRandom(t, src.Addr, "example.com/p/bundle", false)
	good := pushRandom(t, src.Addr, "example.com/p/operator", true)
	missing := src.Addr + "/p/gone@sha256:" + strings.Repeat("ab", 32)
	smallCatalogWith(t, src.Ref("olm/cat:1"), bundle, good, missing)

	r := o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to", dst.Addr+"/m", "--manifests-dir", filepath.Join(t.TempDir(), "m"))
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, missing)
	assert.Contains(t, r.ErrOut, "needed by p/p.v1.0.0 (related r1)")
	assert.Contains(t, r.ErrOut, "mirrored 3 of 4 images")
	_, err := remoteDigestOf(dst.Addr + "/m/p/operator@" + catalogimages.Digest(good))
	assert.NoError(t, err, "the other images arrived")

	r = o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to-dir", filepath.Join(t.TempDir(), "d"), "--fail-fast", "--concurrency", "1", "-o", "json")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	var rep struct{ Failed int }
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep))
	assert.GreaterOrEqual(t, rep.Failed, 1)

	// A policy that trusts the catalog's repository alone.
	policy := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"default":[{"type":"reject"}],"transports":{"docker":{"`+src.Addr+`/olm":[{"type":"insecureAcceptAnything"}]}}}`), 0o644))
	r = o.Run("alpha", "mirror", "--use-http", "--signature-policy", policy, src.Ref("olm/cat:1"), "--to", dst.Addr+"/p", "--manifests-dir", filepath.Join(t.TempDir(), "m"))
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "mirrored 1 of 4 images", "only the catalog is trusted")
	assert.Contains(t, r.ErrOut, "refused by the signature policy")
}

// TestMirrorLocalCatalog: a catalog image in an OCI layout goes under
// --catalog-name, and the objects written name it by digest.
func TestMirrorLocalCatalog(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := pushRandom(t, src.Addr, "example.com/p/bundle", false)
	layout := filepath.Join(t.TempDir(), "layout")
	smallCatalogWith(t, "oci:"+layout+":filtered", bundle)
	manifests := filepath.Join(t.TempDir(), "m")
	r := o.Run("alpha", "mirror", "--use-http", "oci:"+layout+":filtered", "--to", dst.Addr+"/olm", "--catalog-name", "my/catalog:v1",
		"--manifests-dir", manifests, "--name", "mine", "--icsp")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "catalog: "+dst.Addr+"/olm/my/catalog@sha256:")
	_, err := remoteDigestOf(dst.Addr + "/olm/my/catalog:v1")
	assert.NoError(t, err, "the catalog is tagged as --catalog-name says")
	assert.Equal(t, []string{"catalogsource-mine.yaml", "clustercatalog-mine.yaml", "imagecontentsourcepolicy.yaml", "imagedigestmirrorset.yaml", "mapping.txt"}, readDir(t, manifests))
	cc := readFile(t, filepath.Join(manifests, "clustercatalog-mine.yaml"))
	assert.Contains(t, cc, "kind: ClusterCatalog")
	assert.Contains(t, cc, "ref: "+dst.Addr+"/olm/my/catalog@sha256:")
}

func TestMirrorUsage(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--to", "r.example"}, "give the catalog image"},
		{[]string{"x.example/c:1"}, "give --to REGISTRY[/PREFIX] or --to-dir DIR"},
		{[]string{"x.example/c:1", "--to", "r.example", "--to-dir", "d"}, "not both"},
		{[]string{"--from-dir", "d"}, "--from-dir needs --to"},
		{[]string{"x.example/c:1", "--from-dir", "d", "--to", "r.example"}, "not both"},
		{[]string{"x.example/c:1", "--to", "https://r.example"}, "without a scheme"},
		{[]string{"x.example/c:1", "--to", "r.example", "--concurrency", "0"}, "at least 1"},
		{[]string{"x.example/c:1", "--to-dir", "d", "--max-nested-paths", "2"}, "--max-nested-paths applies to --to"},
		{[]string{"x.example/c:1", "--to", "r.example/a/b", "--max-nested-paths", "2"}, "leaves none for the images below it"},
		{[]string{"x.example/c:1", "--to", "r.example", "--max-nested-paths", "-1"}, "give 0 (no limit) or more"},
		{[]string{"--config", "isc.yaml", "--from-dir", "d", "--to", "r.example"}, "without --config"},
		{[]string{"--config", "isc.yaml", "x.example/c:1", "--to", "r.example"}, "give a catalog image or --config"},
	} {
		r := o.Run(append([]string{"alpha", "mirror"}, c.args...)...)
		assert.Equal(t, exit.UpstreamUsage, r.Code, "%v: %s", c.args, r.ErrOut)
		assert.Contains(t, r.ErrOut, c.want, "%v", c.args)
	}
	r := o.Run("alpha", "mirror", "--from-dir", "/nonexistent/dir", "--to", "r.example")
	assert.NotEqual(t, exit.OK, r.Code)
	assert.Contains(t, r.ErrOut, "was it written by opm alpha mirror --to-dir?")

	// An ImageSetConfiguration at fault is named before anything is read
	// (status 1, as alpha filter gives a filter configuration at fault).
	isc := filepath.Join(t.TempDir(), "isc.yaml")
	for content, want := range map[string]string{
		"kind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: oci:/tmp/x\n":                                          `mirror.operators catalog "oci:/tmp/x": give a catalog image in a registry`,
		"kind: ImageSetConfiguration\nmirror:\n  additionalImages:\n  - name: x.example/a:1\n  blockedImages:\n  - name: '(x'\n": `mirror.blockedImages "(x" is neither an image reference`,
		"kind: ImageSetConfiguration\nmirror:\n  additionalImages:\n  - name: 'Not/A Ref'\n":                                     `mirror.additionalImages "Not/A Ref": give an image in a registry`,
	} {
		require.NoError(t, os.WriteFile(isc, []byte(content), 0o644))
		r := o.Run("alpha", "mirror", "--config", isc, "--to", "r.example")
		assert.Equal(t, exit.Failed, r.Code, "%s: %s", content, r.ErrOut)
		assert.Contains(t, r.ErrOut, want, content)
	}
}

func remoteDigestOf(ref string) (v1.Hash, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return v1.Hash{}, err
	}
	d, err := remote.Head(r)
	if err != nil {
		return v1.Hash{}, err
	}
	return d.Digest, nil
}
