package alpha_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
)

// hostileTimeout is --registry-timeout against the hostile registry: it
// applies to the destination registry too, which a loaded machine can
// keep from answering a push within a fraction of a second; the slow
// layer (a byte every 20 ms, under --min-transfer-rate) and the stalled
// one still fail, within 3 and 1 timeouts an attempt.
const hostileTimeout = "3s"

// maxHostileRSS is the most memory a run against a hostile registry may
// take, whatever the registry sends (generous).
const maxHostileRSS = 200 << 20

// TestMirrorHostileRegistry (issue 35): a catalog whose images are at a
// registry that redirects in loops, declares a 1 TiB layer, serves four
// 99 MB manifests at once, sends a byte every 20 ms, stalls, pages its
// tag list forever or sends it endlessly: alpha mirror ends, to a
// directory and to a registry, with every image failed and named with
// what the registry did, the good image copied, little memory used and
// nothing over --max-layer-size written.
func TestMirrorHostileRegistry(t *testing.T) {
	t.Parallel()
	h := registrytest.StartHostile(t, registrytest.HostileOptions{SlowEvery: 20 * time.Millisecond})
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	layout := filepath.Join(t.TempDir(), "layout")
	bad := map[string]string{
		h.Ref(registrytest.HostileManifestLoop):                       "more than 10 times (a redirect loop)",
		h.Ref(registrytest.HostileBlobLoop):                           "more than 10 times (a redirect loop)",
		h.Ref(registrytest.HostileHugeLayer):                          "its manifest declares 1.0 TiB, over the 1.0 MiB limit (--max-layer-size)",
		h.Ref(registrytest.HostileHugeManifest):                       "announced a manifest of 99000000 bytes, over the 4MiB opm reads",
		h.Addr + "/" + registrytest.HostileHugeManifest + ":2":        "announced a manifest of 99000000 bytes",
		h.Ref(registrytest.HostileHugeManifestChunked):                "sent a manifest larger than the 4MiB opm reads",
		h.Addr + "/" + registrytest.HostileHugeManifestChunked + ":2": "sent a manifest larger than the 4MiB opm reads",
		h.Ref(registrytest.HostileSlowLayer):                          "slower than the 1KiB/s of --min-transfer-rate",
		h.Ref(registrytest.HostileStallLayer):                         "sent nothing for " + hostileTimeout,
		h.Ref(registrytest.HostileTagLoop):                            "in more than 10000 pages",
		h.Ref(registrytest.HostileTagBody):                            "sent a tag list page larger than the 16MiB opm reads",
	}
	var related []string
	for ref := range bad {
		related = append(related, ref)
	}
	smallCatalogWith(t, "oci:"+layout+":cat", h.Ref(registrytest.HostileGood), related...)
	flags := []string{"--use-http", "--registry-timeout", hostileTimeout, "--retries", "1", "--max-layer-size", "1MiB", "--concurrency", "4"}

	dir := filepath.Join(t.TempDir(), "mirror")
	for _, to := range [][]string{{"--to-dir", dir}, {"--to", dst.Addr + "/m", "--manifests-dir", filepath.Join(t.TempDir(), "m")}} {
		// The run is a child process: its memory is its own. No time
		// limit is asserted; the test's own deadline catches a hang.
		r, peak := o.RunPeak(append(append([]string{"alpha", "mirror", "oci:" + layout + ":cat"}, to...), flags...)...)
		t.Logf("%s: exit %d, peak RSS %d MB\n%s", to[0], r.Code, peak>>20, r.ErrOut)
		assert.Equal(t, exit.Failed, r.Code)
		for ref, want := range bad {
			line := lineWith(r.ErrOut, ref+":")
			assert.Contains(t, line, want, "%s: %s", to[0], ref)
		}
		assert.Contains(t, r.ErrOut, "mirrored 2 of 13 images", "the catalog and the good bundle image arrive")
		assert.Less(t, peak, int64(maxHostileRSS), "%s: peak RSS", to[0])
	}
	largest := int64(0)
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				largest = max(largest, info.Size())
			}
		}
		return err
	}))
	assert.LessOrEqual(t, largest, int64(1<<20), "nothing over --max-layer-size is written to --to-dir")
}

// lineWith is the first line of s that contains sub, and the line after
// it (where a long error may continue).
func lineWith(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, sub) {
			if i+1 < len(lines) {
				return l + "\n" + lines[i+1]
			}
			return l
		}
	}
	return ""
}
