package mirror

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestReportTagsAndRepository(t *testing.T) {
	at := time.Date(2026, 12, 7, 21, 30, 5, 0, time.FixedZone("x", 3600))
	assert.Equal(t, "20261207T203005Z-operators-v4-17", ReportTag(at, "quay.io/org/operators:v4.17"))
	assert.Equal(t, "20261207T203005Z-images", ReportTag(at, ""))
	assert.Equal(t, "operators-v4-17", LatestReportTag("quay.io/org/operators:v4.17@sha256:"+sha))
	assert.Equal(t, "m.example/olm/opm-mirror-reports", ReportsRepository("m.example/olm", 0))
	assert.Equal(t, "m.example/opm-mirror-reports", ReportsRepository("m.example/", 0))
	assert.Equal(t, "m.example/olm/opm-mirror-reports", ReportsRepository("m.example/olm", 2), "within --max-nested-paths, as the images are")
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestSplitRefAndChildren(t *testing.T) {
	repo, tag, d := splitRef("127.0.0.1:5000/m/p:v1@sha256:" + sha)
	assert.Equal(t, []string{"127.0.0.1:5000/m/p", "v1", "sha256:" + sha}, []string{repo, tag, d})
	repo, tag, d = splitRef("127.0.0.1:5000/m/p")
	assert.Equal(t, []string{"127.0.0.1:5000/m/p", "", ""}, []string{repo, tag, d})

	index := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"digest":"sha256:` + sha + `"}]}`
	assert.Equal(t, []string{"sha256:" + sha}, childrenOf([]byte(index), ""))
	assert.Equal(t, []string{"sha256:" + sha}, childrenOf([]byte(index), "application/vnd.docker.distribution.manifest.list.v2+json"))
	assert.Empty(t, childrenOf([]byte(`{"schemaVersion":2,"layers":[]}`), "application/vnd.oci.image.manifest.v1+json"))
	assert.Empty(t, childrenOf([]byte(`not json`), ""))
}

// FuzzParseReport: a report read from a directory or a registry is
// untrusted; parsing never panics, and what parses lists images.
func FuzzParseReport(f *testing.F) {
	f.Add([]byte(`{"to":"m/x","images":[{"source":"a/b@sha256:` + sha + `","role":"catalog","target":"m/x/b@sha256:` + sha + `","copied":true}]}`))
	f.Add([]byte(`{"images":[]}`))
	f.Add([]byte(`{"images":null}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"images":[{"attached":{"sha256-x.sig":"sha256:` + sha + `"},"referrers":["sha256-x.sig"]}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		rep, err := parseReport("fuzz", raw)
		if err == nil && rep.Images == nil {
			t.Fatal("a report without images parsed")
		}
		childrenOf(raw, "")
	})
}

func TestKeepReportSkipsDirectoryTargets(t *testing.T) {
	var warned []string
	st := &pruneState{host: "m.example", need: map[string]map[string]string{}, needTags: map[string]map[string]bool{},
		listed: map[string]string{}, seen: map[string]map[string]known{}, repos: map[string]bool{},
		o: PruneOptions{Warn: func(w string) { warned = append(warned, w) }}}
	kept := st.keepReport("dir.json", &Report{Images: []Result{
		{Item: Item{Source: "q.io/p/b@sha256:" + sha}, Target: "oci:/tmp/d:q.io/p/b@sha256:" + sha, Digest: "sha256:" + sha},
	}})
	assert.Zero(t, kept.Images)
	assert.Empty(t, st.repos)
	assert.Len(t, warned, 1)

	kept = st.keepReport("reg.json", &Report{To: "other:5000/m", Images: []Result{
		{Item: Item{Source: "q.io/p/b:v1", Role: RoleImage}, Target: "other:5000/m/p/b@sha256:" + sha, Tag: "v1"},
	}})
	assert.Equal(t, 1, kept.Images)
	assert.Contains(t, st.need["m.example/m/p/b"], "sha256:"+sha, "taken at --to's registry, whatever name the report gave it")
	assert.True(t, st.needTags["m.example/m/p/b"]["v1"])
}
