package alpha_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
)

// inFlightProxy passes requests on and counts the most it had in flight
// at once.
type inFlightProxy struct {
	next http.Handler
	mu   sync.Mutex
	now  int
	most int
	all  int
	// deletes, mostDeletes: the same for DELETE requests; deleting
	// lists "start DIGEST" and "done DIGEST" as they happen.
	deletes, mostDeletes int
	deleting             []string
	// broken answers 500 to the requests whose path it matches.
	broken *regexp.Regexp
}

func (p *inFlightProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.now++
	p.all++
	p.most = max(p.most, p.now)
	del := r.Method == http.MethodDelete
	if del {
		p.deletes++
		p.mostDeletes = max(p.mostDeletes, p.deletes)
		p.deleting = append(p.deleting, "start "+path.Base(r.URL.Path))
	}
	broken := p.broken != nil && p.broken.MatchString(r.URL.Path)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.now--
		if del {
			p.deletes--
			p.deleting = append(p.deleting, "done "+path.Base(r.URL.Path))
		}
		p.mu.Unlock()
	}()
	if broken {
		writeRegistryError(w, http.StatusInternalServerError, "UNKNOWN", "broken on purpose")
		return
	}
	p.next.ServeHTTP(w, r)
}

// reset starts counting again and returns what was counted.
func (p *inFlightProxy) reset() (most, all int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	most, all = p.most, p.all
	p.most, p.all = 0, 0
	return most, all
}

// TestMirrorPruneConcurrency (issue 39, item 4): prune reads the
// registry --concurrency requests at a time, and what it finds does not
// depend on it. 60 images in 30 repositories (indexes, tags, signatures)
// are mirrored, then a catalog that keeps half of them: prune with
// --concurrency 1 and 8 writes byte for byte the same JSON and text;
// through a proxy that counts the requests in flight, 1 has one at a
// time and 8 more than one. Where several repositories fail, the error
// is the first's at both. --confirm with 8 deletes exactly what was
// listed, several at once, and the kept catalog's images stay.
func TestMirrorPruneConcurrency(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)

	// Image k of 60 is in repository k%30; every third an index, every
	// fifth also tagged, every seventh signed.
	var images []string
	for k := range 60 {
		repo := fmt.Sprintf("example.com/p/r%02d", k%30)
		ref := pushRandom(t, src.Addr, repo, k%3 == 0)
		if k%5 == 0 {
			tagged := fmt.Sprintf("%s/p/r%02d:t%d", src.Addr, k%30, k)
			pushTagged(t, tagged)
			ref = tagged
		}
		if k%7 == 0 && !strings.Contains(ref, ":t") {
			pushSig(t, ref)
		}
		images = append(images, ref)
	}
	var bundles []monthlyBundle
	for b := range 6 {
		bundles = append(bundles, monthlyBundle{fmt.Sprintf("%d.0.0", b+1), pushRandom(t, src.Addr, "example.com/p/bundle", false), images[b*10 : b*10+10]})
	}
	catalog := src.Ref("olm/cat:c")
	pushMonthlyCatalog(t, catalog, bundles)

	target, err := url.Parse(dst.URL())
	require.NoError(t, err)
	proxy := &inFlightProxy{next: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	to := strings.TrimPrefix(srv.URL, "http://") + "/m"
	mirrorArgs := []string{"alpha", "mirror", "--use-http", catalog, "--to", to, "--manifests-dir", filepath.Join(t.TempDir(), "m")}
	var v1 mirrorReport
	runJSON(t, o, &v1, mirrorArgs...)
	require.True(t, v1.Complete)
	// The catalog keeps the last three bundles: the first three's images
	// go (those nothing else names).
	pushMonthlyCatalog(t, catalog, bundles[3:])
	var v2 mirrorReport
	runJSON(t, o, &v2, mirrorArgs...)
	require.True(t, v2.Complete)

	pruneArgs := []string{"alpha", "mirror", "prune", "--use-http", "--to", to, "--keep", to + "/olm/cat:c"}
	prune := func(concurrency int, args ...string) (json, text string, most, requests int) {
		proxy.reset()
		c := fmt.Sprint(concurrency)
		r := o.Run(append(append(pruneArgs, "--concurrency", c, "-o", "json"), args...)...)
		require.Equal(t, exit.OK, r.Code, r.ErrOut)
		most, requests = proxy.reset()
		tr := o.Run(append(append(pruneArgs, "--concurrency", c), args...)...)
		require.Equal(t, exit.OK, tr.Code, tr.ErrOut)
		return r.Out, tr.ErrOut, most, requests
	}
	r := o.Run(append(pruneArgs, "--concurrency", "0")...)
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "--concurrency must be at least 1")

	json1, text1, most1, requests1 := prune(1)
	json8, text8, most8, requests8 := prune(8)
	t.Logf("--concurrency 1: %d requests, at most %d at once; --concurrency 8: %d requests, at most %d at once; %d bytes of JSON", requests1, most1, requests8, most8, len(json1))
	assert.Equal(t, json1, json8, "the JSON does not depend on --concurrency")
	assert.Equal(t, text1, text8, "nor does the text")
	assert.Equal(t, requests1, requests8, "the same requests")
	assert.Equal(t, 1, most1, "--concurrency 1 reads one request at a time")
	assert.Greater(t, most8, 1, "--concurrency 8 reads several at once")
	assert.LessOrEqual(t, most8, 8)

	// Several repositories fail, as their manifests are read (the kept
	// indexes expanded) or their tags listed (what may go): the error
	// is the first's in their order, whatever answers first.
	for _, broken := range []string{"manifests", "tags"} {
		proxy.mu.Lock()
		proxy.broken = regexp.MustCompile(`^/v2/m/p/r(07|19|23)/` + broken + `/`)
		proxy.mu.Unlock()
		var failed string
		for _, c := range []string{"1", "8"} {
			r := o.Run(append(pruneArgs, "--concurrency", c)...)
			assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
			assert.Contains(t, r.ErrOut, "/m/p/r07", "%s, --concurrency %s", broken, c)
			assert.NotContains(t, r.ErrOut, "/m/p/r19", "%s, --concurrency %s", broken, c)
			assert.Contains(t, r.ErrOut, "nothing was deleted")
			if c == "1" {
				failed = r.ErrOut
				t.Logf("%s broken:\n%s", broken, failed)
			} else {
				assert.Equal(t, failed, r.ErrOut, broken)
			}
		}
	}
	proxy.mu.Lock()
	proxy.broken = nil
	proxy.mu.Unlock()

	var listed pruneReport
	runJSON(t, o, &listed, append(pruneArgs, "--concurrency", "8")...)
	var dropped []string
	for _, b := range bundles[:3] {
		dropped = append(dropped, v1.target(t, b.image))
		for _, ref := range b.related {
			dropped = append(dropped, v1.target(t, ref))
		}
	}
	var tops []string
	for _, u := range listed.Unneeded {
		ref := u.Repository + "@" + u.Digest
		switch {
		case u.Index != "":
			assert.Contains(t, dropped, u.Index, "a platform goes with its index only")
		case u.Repository == to+"/olm/cat":
			assert.Empty(t, u.Tags, "the old catalog, its tag moved on")
			assert.Equal(t, v1.target(t, catalog), ref)
		case len(u.Tags) == 1 && strings.HasSuffix(u.Tags[0], ".sig"):
			assert.Contains(t, dropped, u.Repository+"@sha256:"+strings.TrimSuffix(strings.TrimPrefix(u.Tags[0], "sha256-"), ".sig"), "a signature goes with its image")
		default:
			tops = append(tops, ref)
		}
	}
	sort.Strings(tops)
	sort.Strings(dropped)
	assert.Equal(t, dropped, tops, "exactly the dropped bundles' images go")

	var confirmed pruneReport
	proxy.reset()
	runJSON(t, o, &confirmed, append(pruneArgs, "--concurrency", "8", "--confirm")...)
	proxy.mu.Lock()
	mostDeletes := proxy.mostDeletes
	proxy.mu.Unlock()
	t.Logf("%d manifests deleted, at most %d DELETEs at once", confirmed.Deleted, mostDeletes)
	assert.Greater(t, mostDeletes, 1, "the deletions overlap")
	assert.LessOrEqual(t, mostDeletes, 8)
	assert.Equal(t, len(listed.Unneeded), confirmed.Deleted)
	// Every index is deleted before the platforms it lists.
	at := map[string]int{}
	proxy.mu.Lock()
	for i, e := range proxy.deleting {
		at[e] = i
	}
	proxy.mu.Unlock()
	platforms := 0
	for _, u := range confirmed.Unneeded {
		if u.Index != "" {
			platforms++
			index := u.Index[strings.LastIndex(u.Index, "@")+1:]
			require.Contains(t, at, "done "+index)
			require.Contains(t, at, "start "+u.Digest)
			assert.Less(t, at["done "+index], at["start "+u.Digest], "%s deleted before its platform %s", u.Index, u.Digest)
		}
	}
	assert.Positive(t, platforms)
	assert.Equal(t, listed.top(), confirmed.top())
	for _, im := range v2.Images {
		_, err := skopeoAt("inspect", "--raw", "--tls-verify=false", "docker://"+dst.Addr+strings.TrimPrefix(im.Target, strings.TrimSuffix(to, "/m")))
		assert.NoError(t, err, "%s of the kept catalog stays", im.Target)
	}
	var again pruneReport
	runJSON(t, o, &again, append(pruneArgs, "--concurrency", "8")...)
	assert.Empty(t, again.Unneeded)
}
