package mirror

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

// plainReport is a Report without its WriteJSON method: what
// output.WriteJSON writes for a value marshalled whole.
type plainReport Report

// wholeJSON is rep marshalled whole, as every other -o json report is.
func wholeJSON(t testing.TB, rep *Report) string {
	var buf bytes.Buffer
	require.NoError(t, output.WriteJSON(&buf, (*plainReport)(rep)))
	return buf.String()
}

func streamedJSON(t testing.TB, rep *Report) string {
	var buf bytes.Buffer
	require.NoError(t, rep.WriteJSON(&buf))
	return buf.String()
}

// randomResult is a result with every field set or not, with strings
// that JSON escapes (and HTML escaping would).
func randomResult(r *rand.Rand, i int) Result {
	str := func(s string) string {
		if r.IntN(3) == 0 {
			return ""
		}
		return s + []string{"", "<&>", "é\u2028", `"quoted"\`, "\t"}[r.IntN(5)]
	}
	res := Result{Item: Item{Source: fmt.Sprintf("q.io/p/img-%d@sha256:%s", i, sha), Role: []string{RoleImage, RoleCatalog, RoleAdditional}[r.IntN(3)],
		Rebuilt: r.IntN(4) == 0},
		Target: str("m.example/p/img"), Tag: str("v1"), Digest: str("sha256:" + sha), Copied: r.IntN(2) == 0,
		Blobs: r.IntN(5), Present: r.IntN(5), Bytes: r.Int64N(1 << 40), Error: str("boom: 401 <unauthorized>")}
	for range r.IntN(3) {
		res.Uses = append(res.Uses, catalogimages.Use{Package: str("p"), Bundle: "p.v1", As: "related", Name: str("operand")})
	}
	if r.IntN(3) == 0 {
		res.Referrers = []string{"sha256-" + sha + ".sig"}
		res.Attached = map[string]string{"sha256-" + sha + ".sig": "sha256:" + sha, "b<": "a"}
	}
	return res
}

// TestReportWriteJSONMatchesWhole: a report written an image at a time
// is byte for byte the report marshalled whole, whatever fields are set.
func TestReportWriteJSONMatchesWhole(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	reports := []*Report{
		{},
		{To: "m.example/olm", Images: []Result{}},
		{To: "/tmp/dir", Images: []Result{randomResult(r, 0)}, Earlier: []Result{randomResult(r, 1)}},
		{To: "m.example", Images: []Result{randomResult(r, 0)}, Earlier: []Result{}, Blocked: []Blocked{{Source: "q.io/x<y>", Entry: "q.io/x", Role: RoleImage}}},
	}
	for range 40 {
		rep := &Report{To: "m.example/olm", Catalog: "m.example/olm/cat@sha256:" + sha, Failed: r.IntN(3), Complete: r.IntN(2) == 0,
			Bytes: r.Int64N(1 << 50), Blobs: r.IntN(100), Seconds: r.Float64() * 1000, RateLimitWaits: r.IntN(3), MaxNestedPaths: r.IntN(3),
			Started: "2026-12-08T00:00:00Z", Recorded: "m.example/olm/opm-mirror-reports:20261208T000000Z-cat"}
		for i := range r.IntN(30) {
			rep.Images = append(rep.Images, randomResult(r, i))
		}
		for i := range r.IntN(4) {
			rep.Earlier = append(rep.Earlier, randomResult(r, 100+i))
		}
		if r.IntN(2) == 0 {
			rep.Catalogs = []string{"a", "b<c>"}
			rep.Missing = []string{"q.io/p/img-1"}
			rep.Stopped = "interrupted & stopped"
			rep.CatalogObjects = "incomplete"
			rep.Files = []string{"mapping.txt"}
			rep.Blocked = []Blocked{{Source: "q.io/b", Entry: "q.io/.*", Role: RoleAdditional}}
		}
		reports = append(reports, rep)
	}
	for i, rep := range reports {
		assert.Equal(t, wholeJSON(t, rep), streamedJSON(t, rep), "report %d", i)
	}
	assert.Contains(t, streamedJSON(t, reports[2]), `"error": "boom: 401 <unauthorized>`, "written without HTML escaping, as -o json is")
}

// TestReportWriteJSONHoldsOneImageAtATime: writing the report of a release
// catalog (20,000 images, 14 MB of JSON) keeps no more than a buffer and
// one record in memory at any time; marshalled whole it held the JSON two
// or three times over.
func TestReportWriteJSONHoldsOneImageAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rep := &Report{To: "m.example/olm", Images: make([]Result, 20000)}
	for i := range rep.Images {
		rep.Images[i] = randomResult(r, i)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	w := &heapWatcher{every: 10}
	require.NoError(t, rep.WriteJSON(w))
	grew := int64(w.peak) - int64(before)
	t.Logf("report of %d images: %d KB of JSON, live heap while writing it at most %d KB above before", len(rep.Images), w.n>>10, grew>>10)
	require.Greater(t, w.n, int64(8<<20))
	assert.Less(t, grew, int64(1<<20), "the heap held while the report is written")
}

// heapWatcher discards what is written, noting the live heap at the first
// write and every few after it.
type heapWatcher struct {
	every, calls int
	n            int64
	peak         uint64
}

func (h *heapWatcher) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if h.calls++; h.calls%h.every == 1 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return len(p), nil
}

// TestRecordStreamsLargeReport: a report of thousands of images pushed
// to a registry behind TLS and basic auth (its digest from one pass, its
// bytes streamed into the upload by another) reads back as the same
// bytes, and its descriptor's digest and size are theirs.
func TestRecordStreamsLargeReport(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t, registrytest.WithTLS(), registrytest.WithAuth("opm", "s3cret"))
	cl, err := image.NewClient(image.Options{CAFile: reg.CAFile, Retries: -1,
		AuthFile: reg.WriteAuthFile(t, filepath.Join(t.TempDir(), "auth.json"), reg.Addr, "opm", "s3cret")})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(5, 6))
	rep := &Report{To: reg.Addr + "/olm", Images: make([]Result, 3000)}
	for i := range rep.Images {
		rep.Images[i] = randomResult(r, i)
	}
	rep.Images[0] = Result{Item: Item{Source: "q.io/olm/cat:v1", Role: RoleCatalog}, Target: reg.Addr + "/olm/olm/cat@sha256:" + sha, Copied: true}
	ctx := context.Background()
	ref, err := Record(ctx, cl, rep, time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, reg.Addr+"/olm/opm-mirror-reports:20261208T010000Z-cat-v1", ref)

	want := streamedJSON(t, rep)
	require.Greater(t, len(want), 1<<20, "larger than any one buffer on the way")
	raw, _, _, err := cl.Manifest(ctx, ref)
	require.NoError(t, err)
	var m struct {
		Layers []struct {
			Digest string `json:"digest"`
			Size   int    `json:"size"`
		} `json:"layers"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Len(t, m.Layers, 1)
	assert.Equal(t, fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(want))), m.Layers[0].Digest)
	assert.Equal(t, len(want), m.Layers[0].Size)
	body, err := cl.Blob(ctx, reg.Addr+"/olm/opm-mirror-reports@"+m.Layers[0].Digest, maxReportSize)
	require.NoError(t, err)
	assert.Equal(t, want, string(body))
	back, err := ReadReport(ctx, cl, ref)
	require.NoError(t, err)
	assert.Len(t, back.Images, 3000)
}
