package alpha_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
)

// monthlyBundle is a bundle of package p: its version, image and related
// images.
type monthlyBundle struct {
	version, image string
	related        []string
}

// pushMonthlyCatalog pushes to ref a file-based catalog of package p
// whose bundles replace one another in channel stable.
func pushMonthlyCatalog(t *testing.T, ref string, bundles []monthlyBundle) {
	t.Helper()
	var docs, entries []string
	docs = append(docs, `{"schema":"olm.package","name":"p","defaultChannel":"stable"}`)
	for i, b := range bundles {
		entry := fmt.Sprintf(`{"name":"p.v%s"`, b.version)
		if i > 0 {
			entry += fmt.Sprintf(`,"replaces":"p.v%s"`, bundles[i-1].version)
		}
		entries = append(entries, entry+"}")
		var rel []string
		for j, r := range b.related {
			rel = append(rel, fmt.Sprintf(`{"name":"r%d","image":%q}`, j, r))
		}
		docs = append(docs, fmt.Sprintf(`{"schema":"olm.bundle","package":"p","name":"p.v%s","image":%q,"properties":[{"type":"olm.package","value":{"packageName":"p","version":%q}}],"relatedImages":[%s]}`,
			b.version, b.image, b.version, strings.Join(rel, ",")))
	}
	docs = append(docs, fmt.Sprintf(`{"schema":"olm.channel","package":"p","name":"stable","entries":[%s]}`, strings.Join(entries, ",")))
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "catalog.json"), []byte(strings.Join(docs, "\n")+"\n"), 0o644))
	catalogtest.PushCatalog(t, dir, ref)
}

// mirrorReport is the part of opm alpha mirror's JSON report the tests
// read.
type mirrorReport struct {
	Complete bool
	Recorded string
	Images   []struct {
		Source, Target, Role string
		Copied               bool
	}
}

func (r mirrorReport) target(t *testing.T, source string) string {
	t.Helper()
	for _, im := range r.Images {
		if im.Source == source {
			return im.Target
		}
	}
	t.Fatalf("the report lists no %s", source)
	return ""
}

// pruneReport is opm alpha mirror prune's JSON report.
type pruneReport struct {
	Kept []struct {
		Keep, Kind string
		Images     int
	}
	Needed   int
	Unneeded []struct {
		Repository, Digest, Reason, Index string
		Tags                              []string
		Deleted                           bool
	}
	DryRun  bool
	Deleted int
}

// top are the unneeded manifests that are not platforms of an unneeded
// index, as repository@digest, sorted.
func (p pruneReport) top() []string {
	var out []string
	for _, u := range p.Unneeded {
		if u.Index == "" {
			out = append(out, u.Repository+"@"+u.Digest)
		}
	}
	sort.Strings(out)
	return out
}

func runJSON(t *testing.T, o *cmdtest.Runner, into any, args ...string) cmdtest.Result {
	t.Helper()
	r := o.Run(append(args, "-o", "json")...)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	require.NoError(t, json.Unmarshal([]byte(r.Out), into), r.Out)
	return r
}

// skopeoAt runs skopeo against the plain-HTTP registry and returns its
// output and error.
func skopeoAt(args ...string) (string, error) {
	out, err := exec.Command("skopeo", args...).CombinedOutput()
	return string(out), err
}

// TestMirrorMonthlyUpdateAndPrune (issue 39, item 4): the monthly
// update against a destination behind a proxy that refuses a third
// path component (401) and answers every fifth request 429. Catalog v1
// is mirrored, then v2, which drops two bundles and adds one: the second
// run copies only the new images; each run's report is kept at the
// registry as an artifact skopeo and crane read. prune, kept v2 (by its
// report, by its catalog, by a stale report), lists exactly the dropped
// bundles' images nothing else uses (and the old catalog), never one an
// index kept elsewhere lists; a proxy that drops DELETE is explained and
// nothing is deleted; --confirm deletes them, v2 stays whole (skopeo
// copies every image, also after the registry's garbage collection) and
// the dropped ones are gone.
func TestMirrorMonthlyUpdateAndPrune(t *testing.T) {
	t.Parallel()
	registrytest.RequireTool(t, "skopeo")
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)

	shared := pushRandom(t, src.Addr, "example.com/p/shared", true) // every bundle's
	opA := pushRandom(t, src.Addr, "example.com/p/opa", true)       // 1.0.0 only, an index
	opCOld := pushRandom(t, src.Addr, "example.com/p/opc", false)   // 1.0.0 only, beside a kept one
	opB := src.Addr + "/p/opb:v1"                                   // 2.0.0 only, by tag
	pushTagged(t, opB)
	opC := pushRandom(t, src.Addr, "example.com/p/opc", false) // 2.0.0 and 3.0.0
	opD := pushRandom(t, src.Addr, "example.com/p/opd", false) // new in 5.0.0
	b := map[string]string{}
	for _, v := range []string{"1", "2", "3", "4", "5"} {
		b[v] = pushRandom(t, src.Addr, "example.com/p/bundle", false)
	}
	// Signatures of a bundle that goes and of one that stays.
	pushSig(t, b["1"])
	pushSig(t, b["3"])
	catalog := src.Ref("olm/cat:monthly")
	pushMonthlyCatalog(t, catalog, []monthlyBundle{
		{"1.0.0", b["1"], []string{shared, opA, opCOld}},
		{"2.0.0", b["2"], []string{shared, opB, opC}},
		{"3.0.0", b["3"], []string{shared, opC}},
		{"4.0.0", b["4"], []string{shared}},
	})

	target, err := url.Parse(dst.URL())
	require.NoError(t, err)
	limiter := &rateLimitingProxy{next: httputil.NewSingleHostReverseProxy(target)}
	depth := &depthProxy{next: limiter, max: 2}
	srv := httptest.NewServer(depth)
	t.Cleanup(srv.Close)
	front := strings.TrimPrefix(srv.URL, "http://")
	to := front + "/m"
	direct := func(ref string) string { return "docker://" + dst.Addr + strings.TrimPrefix(ref, front) }
	sigOf := func(ref string) string {
		return to + "/p-bundle:sha256-" + strings.TrimPrefix(catalogimages.Digest(ref), "sha256:") + ".sig"
	}
	mirrorArgs := []string{"alpha", "mirror", "--use-http", catalog, "--to", to, "--max-nested-paths", "2", "--manifests-dir", filepath.Join(t.TempDir(), "m")}

	// The rate limit is met by the second run and by the pruning that
	// deletes; the other runs go unlimited, each 429 costing a second.
	limiter.off.Store(true)
	var v1 mirrorReport
	r1 := runJSON(t, o, &v1, mirrorArgs...)
	require.True(t, v1.Complete)
	require.Len(t, v1.Images, 10)
	assert.Regexp(t, `^`+to+`/opm-mirror-reports:\d{8}T\d{6}Z-cat-monthly$`, v1.Recorded)

	// The report is an artifact of opm's own type, which skopeo and crane
	// read.
	out, err := skopeoAt("inspect", "--tls-verify=false", direct(v1.Recorded))
	require.NoError(t, err, out)
	assert.Contains(t, out, `"io.opmkit.mirror.catalog": "`+catalog+`"`)
	out, err = skopeoAt("inspect", "--raw", "--tls-verify=false", direct(v1.Recorded))
	require.NoError(t, err, out)
	assert.Contains(t, out, `"artifactType":"application/vnd.opmkit.mirror.report.v1+json"`)
	var kept struct {
		Layers []struct{ Digest string } `json:"layers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &kept))
	require.Len(t, kept.Layers, 1)
	resp, err := http.Get("http://" + dst.Addr + "/v2/m/opm-mirror-reports/blobs/" + kept.Layers[0].Digest)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, r1.Out, string(body), "the report kept at the registry holds the bytes -o json wrote")
	if crane, err := exec.LookPath("crane"); err == nil {
		raw, err := exec.Command(crane, "manifest", "--insecure", strings.TrimPrefix(direct(v1.Recorded), "docker://")).CombinedOutput()
		require.NoError(t, err, string(raw))
		assert.Contains(t, string(raw), "application/vnd.opmkit.mirror.report.v1+json")
	} else {
		t.Log("crane not in PATH (/root/go/bin): the report's manifest was read with skopeo only")
	}

	// v2 drops 1.0.0 and 2.0.0 and adds 5.0.0; the same tag, as a
	// monthly catalog is.
	pushMonthlyCatalog(t, catalog, []monthlyBundle{
		{"3.0.0", b["3"], []string{shared, opC}},
		{"4.0.0", b["4"], []string{shared}},
		{"5.0.0", b["5"], []string{shared, opD}},
	})
	var v2 mirrorReport
	limiter.off.Store(false)
	r := runJSON(t, o, &v2, mirrorArgs...)
	limiter.off.Store(true)
	require.True(t, v2.Complete)
	v2Out := r.Out
	var copied []string
	for _, im := range v2.Images {
		if im.Copied {
			copied = append(copied, im.Source)
		}
	}
	sort.Strings(copied)
	want := []string{catalog, b["5"], opD}
	sort.Strings(want)
	assert.Equal(t, want, copied, "the second run copies only the new images (the rebuilt catalog, 5.0.0's bundle and its new operand)")
	assert.Len(t, v2.Images, 7)
	assert.NotEqual(t, v1.Recorded, v2.Recorded)
	t.Logf("second run: %d of %d images copied; %d requests, %d answered 429, %d refused 401 so far\n%s", len(copied), len(v2.Images), limiter.all.Load(), limiter.limited.Load(), depth.refused.Load(), r.ErrOut)

	// What prune must list: the dropped bundles' images nothing else
	// uses, and the old catalog (its tag now names v2).
	var dropped []string
	for _, s := range []string{b["1"], b["2"], opA, opB, opCOld} {
		dropped = append(dropped, v1.target(t, s))
	}
	dropped = append(dropped, v1.target(t, catalog))
	sig1, err := skopeoAt("inspect", "--raw", "--tls-verify=false", direct(sigOf(b["1"])))
	require.NoError(t, err, "the signature was mirrored: %s", sig1)
	dropped = append(dropped, to+"/p-bundle@"+fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(sig1))))
	sort.Strings(dropped)

	// A manifest of the kept index p/shared, also tagged in the dropped
	// repository p/opa: an index kept elsewhere lists it, so it stays.
	sharedIdx := v2.target(t, shared)
	idxRaw, err := skopeoAt("inspect", "--raw", "--tls-verify=false", direct(sharedIdx))
	require.NoError(t, err, idxRaw)
	var idx struct{ Manifests []struct{ Digest string } }
	require.NoError(t, json.Unmarshal([]byte(idxRaw), &idx))
	child := idx.Manifests[0].Digest
	out, err = skopeoAt("copy", "--src-tls-verify=false", "--dest-tls-verify=false",
		direct(strings.Split(sharedIdx, "@")[0]+"@"+child), "docker://"+dst.Addr+"/m/p-opa:also-shared")
	require.NoError(t, err, out)

	pruneArgs := []string{"alpha", "mirror", "prune", "--use-http", "--to", to, "--max-nested-paths", "2"}
	var byReport pruneReport
	r = runJSON(t, o, &byReport, append(pruneArgs, "--keep", v2.Recorded)...)
	assert.Contains(t, r.ErrOut, "dry run: nothing is deleted without --confirm")
	assert.True(t, byReport.DryRun)
	assert.Equal(t, dropped, byReport.top(), "exactly the dropped bundles' images and the old catalog")
	platforms := 0
	for _, u := range byReport.Unneeded {
		assert.False(t, u.Deleted)
		assert.Contains(t, u.Reason, "needed by no kept report or catalog")
		if u.Index != "" {
			platforms++
			assert.Equal(t, v1.target(t, opA), u.Index)
			assert.NotEqual(t, child, u.Digest)
		}
		if u.Repository+"@"+u.Digest == v1.target(t, opB) {
			assert.Equal(t, []string{"v1"}, u.Tags)
		}
	}
	assert.Equal(t, 3, platforms, "the platforms of the dropped index p/opa go with it")
	require.Len(t, byReport.Kept, 1)
	assert.Equal(t, "report", byReport.Kept[0].Kind)

	// The same from the catalog alone (no report), and from a stale
	// report that lists the catalog only: the catalog is read again.
	var byCatalog pruneReport
	runJSON(t, o, &byCatalog, append(pruneArgs, "--keep", to+"/olm-cat:monthly")...)
	assert.Equal(t, dropped, byCatalog.top())
	// Without the runs' --max-nested-paths, the reports' one still maps
	// the catalog's images: a forgotten flag keeps more, never less.
	var forgot pruneReport
	runJSON(t, o, &forgot, "alpha", "mirror", "prune", "--use-http", "--to", to, "--keep", to+"/olm-cat:monthly")
	assert.Equal(t, dropped, forgot.top())
	stale := filepath.Join(t.TempDir(), "stale.json")
	var full map[string]any
	require.NoError(t, json.Unmarshal([]byte(v2Out), &full), "-o json prints the report")
	images := full["images"].([]any)
	full["images"] = images[:1] // the catalog only
	require.Equal(t, "catalog", images[0].(map[string]any)["role"])
	data, err := json.Marshal(full)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(stale, data, 0o644))
	var byStale pruneReport
	runJSON(t, o, &byStale, append(pruneArgs, "--keep", stale)...)
	assert.Equal(t, dropped, byStale.top(), "a stale report does not expose what its catalog needs")

	// The text says what goes and why.
	r = o.Run(append(pruneArgs, "--keep", v2.Recorded)...)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "unneeded: "+v1.target(t, opB)+" (tags v1)")
	assert.Contains(t, r.ErrOut, "mirrored as "+opB+" for "+catalog)
	assert.Contains(t, r.ErrOut, fmt.Sprintf("dry run: nothing was deleted; %d manifests at %s are needed by nothing kept", len(byReport.Unneeded), to))
	for _, ref := range dropped {
		_, err := skopeoAt("inspect", "--raw", "--tls-verify=false", direct(ref))
		assert.NoError(t, err, "the dry run deleted %s", ref)
	}

	// A proxy that drops DELETE: explained, nothing deleted.
	noDel := &rateLimitingProxy{next: httputil.NewSingleHostReverseProxy(target), dropDelete: true}
	noDelSrv := httptest.NewServer(noDel)
	t.Cleanup(noDelSrv.Close)
	noDelTo := strings.TrimPrefix(noDelSrv.URL, "http://") + "/m"
	r = o.Run("alpha", "mirror", "prune", "--use-http", "--to", noDelTo, "--max-nested-paths", "2", "--keep", noDelTo+"/olm-cat:monthly", "--confirm")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "does not allow deleting manifests")
	assert.Contains(t, r.ErrOut, "a proxy in front must pass DELETE requests on")
	assert.Contains(t, r.ErrOut, "nothing was deleted")
	assert.NotContains(t, r.ErrOut, "\ndeleted")
	assert.Equal(t, int64(1), noDel.deletes.Load(), "it stopped at the first refusal")
	for _, ref := range append(dropped, v2.target(t, catalog)) {
		_, err := skopeoAt("inspect", "--raw", "--tls-verify=false", direct(ref))
		assert.NoError(t, err, "%s is still there: the registry, under another name, was not pruned behind the proxy's back", ref)
	}

	// --confirm.
	var confirmed pruneReport
	limiter.off.Store(false)
	limitedBefore := limiter.limited.Load()
	r = runJSON(t, o, &confirmed, append(pruneArgs, "--keep", v2.Recorded, "--confirm")...)
	limiter.off.Store(true)
	assert.Greater(t, limiter.limited.Load(), limitedBefore, "the pruning met the rate limit")
	assert.False(t, confirmed.DryRun)
	assert.Equal(t, len(byReport.Unneeded), confirmed.Deleted)
	assert.Equal(t, dropped, confirmed.top())
	for _, ref := range dropped {
		out, err := skopeoAt("inspect", "--raw", "--tls-verify=false", direct(ref))
		assert.Error(t, err, "%s was not deleted", ref)
		assert.Contains(t, out, "manifest unknown", ref)
	}
	_, err = skopeoAt("inspect", "--raw", "--tls-verify=false", "docker://"+dst.Addr+"/m/p-opa:also-shared")
	assert.NoError(t, err, "the manifest a kept index lists stayed")
	_, err = skopeoAt("inspect", "--raw", "--tls-verify=false", direct(sigOf(b["3"])))
	assert.NoError(t, err, "the signature of a kept bundle stayed")

	// v2 stays whole, also once the registry has collected its garbage.
	copyAll := func(when string) {
		for _, im := range v2.Images {
			out, err := skopeoAt("copy", "--all", "--src-tls-verify=false", direct(im.Target), "oci:"+filepath.Join(t.TempDir(), "o")+":x")
			assert.NoError(t, err, "%s: %s %s", when, im.Target, out)
		}
	}
	copyAll("after prune")
	before := dirSize(t, filepath.Join(dst.Dir, "storage"))
	gc, err := exec.Command(registrytest.Binary, "garbage-collect", filepath.Join(dst.Dir, "config.yml")).CombinedOutput()
	require.NoError(t, err, string(gc))
	after := dirSize(t, filepath.Join(dst.Dir, "storage"))
	t.Logf("registry storage %d bytes before garbage-collect, %d after", before, after)
	assert.Less(t, after, before, "the dropped images' blobs were freed")
	copyAll("after garbage-collect")

	// A third run copies nothing, and prune finds nothing more.
	var v3 mirrorReport
	runJSON(t, o, &v3, mirrorArgs...)
	for _, im := range v3.Images {
		assert.False(t, im.Copied, im.Source)
	}
	var again pruneReport
	runJSON(t, o, &again, append(pruneArgs, "--keep", v3.Recorded)...)
	assert.Empty(t, again.top())
	t.Logf("%d requests in all, %d answered 429, %d refused 401", limiter.all.Load(), limiter.limited.Load(), depth.refused.Load())
	assert.Positive(t, limiter.limited.Load(), "the rate limit was met")
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return err
	}))
	return n
}

// TestMirrorPruneWithoutDeleteAPI (issue 39, item 4): a docker-registry
// without storage.delete.enabled answers 405 UNSUPPORTED; prune names
// what to enable and deletes nothing, and says it did not. prune without
// --keep is a usage error.
func TestMirrorPruneWithoutDeleteAPI(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t, registrytest.WithoutDelete())
	o := cmdtest.New(t)
	bundle := pushRandomTo(t, src, "p/bundle")
	old := pushRandomTo(t, src, "p/old")
	catalogTo(t, src, "olm/cat:1", bundle, old)
	m := filepath.Join(t.TempDir(), "m")
	r := o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to", dst.Addr+"/m", "--manifests-dir", m)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	catalogTo(t, src, "olm/cat:1", bundle)
	r = o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to", dst.Addr+"/m", "--manifests-dir", m)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)

	// Both runs' reports are kept, however close together they ran.
	out, err := skopeoAt("list-tags", "--tls-verify=false", "docker://"+dst.Addr+"/m/opm-mirror-reports")
	require.NoError(t, err, out)
	var listed struct{ Tags []string }
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	sort.Strings(listed.Tags)
	require.Len(t, listed.Tags, 3, "two runs and the catalog's latest")
	assert.Equal(t, "cat-1", listed.Tags[2])

	r = o.Run("alpha", "mirror", "prune", "--use-http", "--to", dst.Addr+"/m")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "give --keep REPORT or --keep CATALOG-IMAGE")

	r = o.Run("alpha", "mirror", "prune", "--use-http", "--to", dst.Addr+"/m", "--keep", dst.Addr+"/m/olm/cat:1", "--confirm")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "registry "+dst.Addr+" does not allow deleting manifests")
	assert.Contains(t, r.ErrOut, "storage.delete.enabled: true")
	assert.Contains(t, r.ErrOut, "REGISTRY_STORAGE_DELETE_ENABLED=true")
	assert.Contains(t, r.ErrOut, "nothing was deleted")
	assert.Contains(t, r.ErrOut, "unneeded: "+dst.Addr+"/m/p/old@"+catalogimages.Digest(old))
	assert.True(t, arrived(t, dst, "m", old), "still there")

	// A registry that does not list its repositories: the reports name
	// them.
	u, err := url.Parse(dst.URL())
	require.NoError(t, err)
	front := httptest.NewServer(&rateLimitingProxy{next: httputil.NewSingleHostReverseProxy(u), dropCatalog: true})
	t.Cleanup(front.Close)
	host := strings.TrimPrefix(front.URL, "http://")
	r = o.Run("alpha", "mirror", "prune", "--use-http", "--to", host+"/m", "--keep", host+"/m/olm/cat:1")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "the registry does not list its repositories (404): only the repositories the reports and kept catalogs name are looked at")
	assert.Contains(t, r.ErrOut, "unneeded: "+host+"/m/p/old@"+catalogimages.Digest(old))
}

// TestMirrorKeepsReportsBesideDirectory (issue 39, item 4): each run to
// a directory keeps its report beside opm-mirror.json, named by its time
// and catalog, and the directory still copies on; a report file is a
// --keep prune reads.
func TestMirrorKeepsReportsBesideDirectory(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := pushRandomTo(t, src, "p/bundle")
	catalogTo(t, src, "olm/cat:1", bundle)
	dir := filepath.Join(t.TempDir(), "d")
	var first mirrorReport
	r1 := runJSON(t, o, &first, "alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to-dir", dir)
	assert.Regexp(t, `^`+regexp.QuoteMeta(dir)+`/opm-mirror-\d{8}T\d{6}Z-cat-1\.json$`, first.Recorded)
	assert.Equal(t, r1.Out, readFile(t, first.Recorded), "the report kept beside the directory holds the bytes -o json wrote")
	var inDir map[string]any
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "opm-mirror.json"))), &inDir))
	assert.Len(t, inDir["images"], 2)
	r := o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to-dir", dir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Regexp(t, `report kept at `+regexp.QuoteMeta(dir)+`/opm-mirror-\d{8}T\d{6}Z-cat-1(-2)?\.json\n`, r.ErrOut)
	history, err := filepath.Glob(filepath.Join(dir, "opm-mirror-*.json"))
	require.NoError(t, err)
	assert.Len(t, history, 2, "the history keeps both runs")
	for _, f := range history {
		var kept mirrorReport
		require.NoError(t, json.Unmarshal([]byte(readFile(t, f)), &kept))
		assert.Len(t, kept.Images, 2, f)
	}

	m := filepath.Join(t.TempDir(), "m")
	var on mirrorReport
	r = runJSON(t, o, &on, "alpha", "mirror", "--use-http", "--from-dir", dir, "--to", dst.Addr+"/m", "--manifests-dir", m)
	assert.True(t, on.Complete)
	assert.Regexp(t, `^`+regexp.QuoteMeta(dst.Addr+"/m/opm-mirror-reports:")+`\d{8}T\d{6}Z-cat-1$`, on.Recorded)
	text := o.Run("alpha", "mirror", "--use-http", "--from-dir", dir, "--to", dst.Addr+"/m", "--manifests-dir", m)
	require.Equal(t, exit.OK, text.Code, text.ErrOut)
	assert.Contains(t, text.ErrOut, "(and as "+dst.Addr+"/m/opm-mirror-reports:cat-1, the catalog's latest)")

	// The report saved from -o json keeps what it lists.
	saved := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, os.WriteFile(saved, []byte(r.Out), 0o644))
	var pr pruneReport
	runJSON(t, o, &pr, "alpha", "mirror", "prune", "--use-http", "--to", dst.Addr+"/m", "--keep", saved)
	assert.Empty(t, pr.Unneeded)
	require.Len(t, pr.Kept, 1)
	assert.Equal(t, 2, pr.Kept[0].Images)
}
