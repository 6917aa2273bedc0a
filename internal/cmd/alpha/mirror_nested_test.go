package alpha_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
)

// depthProxy passes requests to a registry but answers 401 for a
// repository of more than max path components, as Quay (organisation/repo)
// and GitLab groups do.
type depthProxy struct {
	next    http.Handler
	max     int
	refused atomic.Int64
}

var repoInPath = regexp.MustCompile(`^/v2/(.+?)/(?:manifests|blobs|tags|referrers)/`)

func (p *depthProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m := repoInPath.FindStringSubmatch(r.URL.Path); m != nil && strings.Count(m[1], "/")+1 > p.max {
		p.refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		writeRegistryError(w, http.StatusUnauthorized, "UNAUTHORIZED", "access to the requested resource is not authorized")
		return
	}
	p.next.ServeHTTP(w, r)
}

// writeRegistryError answers with status and a registry's error body of
// one error, as a distribution registry writes it.
func writeRegistryError(w http.ResponseWriter, status int, code, message string) {
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"errors":[{"code":%q,"message":%q}]}`, code, message)
}

// TestMirrorMaxNestedPaths (issue 39, item 1): a destination registry
// behind a proxy that refuses a third path component with 401. Without
// --max-nested-paths the mirror fails and says so, writing no catalog
// objects; with it every image arrives under flattened repositories, and
// the mirror sets, CatalogSource, ClusterCatalog and mapping.txt name
// them. A prefix that leaves no room is refused before anything is read.
func TestMirrorMaxNestedPaths(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := pushRandom(t, src.Addr, "example.com/p/bundle", false)
	operand := pushRandom(t, src.Addr, "example.com/team/sub/operand", true)
	smallCatalogWith(t, src.Ref("olm/cat:1"), bundle, operand, src.Addr+"/tagged/op:v1")
	pushTagged(t, src.Addr+"/tagged/op:v1")

	target, err := url.Parse(dst.URL())
	require.NoError(t, err)
	proxy := &depthProxy{next: httputil.NewSingleHostReverseProxy(target), max: 2}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	to := host + "/mirror"

	manifests := filepath.Join(t.TempDir(), "m")
	r := o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to", to, "--manifests-dir", manifests)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "mirrored 0 of 4 images")
	assert.Contains(t, r.ErrOut, "/mirror/team/sub/operand@")
	assert.Contains(t, r.ErrOut, "the repository mirror/team/sub/operand has 4 path components: a registry that limits depth")
	assert.Contains(t, r.ErrOut, "--max-nested-paths 2 flattens them")
	assert.Contains(t, r.ErrOut, "no CatalogSource or ClusterCatalog written")
	assert.NotZero(t, proxy.refused.Load())

	// A prefix as deep as the limit leaves no room: refused at once.
	refusedBefore := proxy.refused.Load()
	r = o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to", host+"/a/b", "--max-nested-paths", "2", "--manifests-dir", manifests)
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "its prefix a/b has 2 path components, and --max-nested-paths 2 leaves none")
	assert.Equal(t, refusedBefore, proxy.refused.Load(), "nothing was sent")

	manifests = filepath.Join(t.TempDir(), "m")
	r = o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to", to, "--max-nested-paths", "2", "--manifests-dir", manifests, "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, refusedBefore, proxy.refused.Load(), "no repository was too deep")
	var rep struct {
		Images []struct{ Source, Target string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep))
	want := map[string]string{
		src.Ref("olm/cat:1"):       to + "/olm-cat@",
		bundle:                     to + "/p-bundle@",
		operand:                    to + "/team-sub-operand@",
		src.Addr + "/tagged/op:v1": to + "/tagged-op@",
	}
	require.Len(t, rep.Images, len(want))
	for _, im := range rep.Images {
		assert.True(t, strings.HasPrefix(im.Target, want[im.Source]), "%s went to %s", im.Source, im.Target)
	}

	// Every image is there, by digest, in its flattened repository.
	mapping := readFile(t, filepath.Join(manifests, "mapping.txt"))
	lines := strings.Split(strings.TrimSpace(mapping), "\n")
	require.Len(t, lines, len(want))
	for _, line := range lines {
		source, mirrored, ok := strings.Cut(line, "=")
		require.True(t, ok, line)
		assert.True(t, strings.HasPrefix(mirrored, want[source]), line)
		direct := dst.Addr + strings.TrimPrefix(mirrored, host)
		raw, err := exec.Command("skopeo", "inspect", "--raw", "--tls-verify=false", "docker://"+direct).CombinedOutput()
		require.NoError(t, err, "%s: %s", direct, raw)
		if d := catalogimages.Digest(source); d != "" {
			assert.Equal(t, d, catalogimages.Digest(mirrored))
		}
	}
	idms := readFile(t, filepath.Join(manifests, "imagedigestmirrorset.yaml"))
	assert.Contains(t, idms, "source: "+src.Addr+"/team/sub/operand")
	assert.Contains(t, idms, "- "+to+"/team-sub-operand\n")
	assert.Contains(t, idms, "- "+to+"/p-bundle\n")
	itms := readFile(t, filepath.Join(manifests, "imagetagmirrorset.yaml"))
	assert.Contains(t, itms, "source: "+src.Addr+"/tagged/op")
	assert.Contains(t, itms, "- "+to+"/tagged-op\n")
	cs := readFile(t, filepath.Join(manifests, "catalogsource-cat-1.yaml"))
	assert.Regexp(t, `image: `+regexp.QuoteMeta(to)+`/olm-cat@sha256:[0-9a-f]{64}`, cs)
	cc := readFile(t, filepath.Join(manifests, "clustercatalog-cat-1.yaml"))
	assert.Regexp(t, `ref: `+regexp.QuoteMeta(to)+`/olm-cat@sha256:[0-9a-f]{64}`, cc)

	// Through a directory and on, flattened the same way.
	dir := filepath.Join(t.TempDir(), "carry")
	r = o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to-dir", dir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	manifests2 := filepath.Join(t.TempDir(), "m")
	r = o.Run("alpha", "mirror", "--use-http", "--from-dir", dir, "--to", host+"/far", "--max-nested-paths", "2", "--manifests-dir", manifests2)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, strings.ReplaceAll(mapping, to+"/", host+"/far/"), readFile(t, filepath.Join(manifests2, "mapping.txt")))
}

// pushTagged pushes a random image to ref (REGISTRY/REPO:TAG) and returns
// its digest.
func pushTagged(t *testing.T, ref string) string {
	t.Helper()
	tag, err := name.NewTag(ref, name.Insecure)
	require.NoError(t, err)
	img, err := random.Image(64<<10, 2)
	require.NoError(t, err)
	require.NoError(t, remote.Write(tag, img))
	d, err := img.Digest()
	require.NoError(t, err)
	return d.String()
}
