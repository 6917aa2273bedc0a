package index_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
)

// TestPullsFromHostileRegistry (issue 35): opm render, which opens an
// image and reads its layers, and opm index export, which reads an index
// image's database layer, end against a registry that redirects in
// loops, declares a 1 TiB layer, sends a 99 MB manifest, crawls or
// stalls: with an error saying what the registry did, in little memory.
func TestPullsFromHostileRegistry(t *testing.T) {
	t.Parallel()
	// Labelled as bundles for render and as index images for export, so
	// that both go on to read the layers.
	bundles := registrytest.StartHostile(t, registrytest.HostileOptions{SlowEvery: 20 * time.Millisecond,
		Labels: map[string]string{"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1"}})
	indexes := registrytest.StartHostile(t, registrytest.HostileOptions{SlowEvery: 20 * time.Millisecond,
		Labels: map[string]string{"operators.operatorframework.io.index.database.v1": "/data"}})
	o := cmdtest.New(t)
	cases := map[string]string{
		registrytest.HostileManifestLoop:        "more than 10 times (a redirect loop)",
		registrytest.HostileBlobLoop:            "more than 10 times (a redirect loop)",
		registrytest.HostileHugeLayer:           "compressed size 1.0 TiB is over the 1.0 MiB limit",
		registrytest.HostileHugeManifest:        "announced a manifest of 99000000 bytes, over the 4MiB opm reads",
		registrytest.HostileHugeManifestChunked: "sent a manifest larger than the 4MiB opm reads",
		registrytest.HostileSlowLayer:           "slower than the 1KiB/s of --min-transfer-rate",
		registrytest.HostileStallLayer:          "sent nothing for 2s",
	}
	flags := []string{"--use-http", "--registry-timeout", "2s", "--retries", "1", "--max-layer-size", "1MiB", "--max-database-size", "1MiB"}
	for repo, want := range cases {
		for _, args := range [][]string{
			{"render", bundles.Ref(repo)},
			{"index", "export", "--index", indexes.Ref(repo), "--download-folder", t.TempDir()},
		} {
			// A child process, so that its memory is its own; no time
			// limit is asserted, the test's deadline catches a hang.
			r, peak := o.RunPeak(append(args, flags...)...)
			assert.NotEqual(t, exit.OK, r.Code, "%v", args)
			assert.Contains(t, r.ErrOut, want, "%v", args)
			assert.Less(t, peak, int64(200<<20), "%v: peak RSS", args)
			t.Logf("%v: exit %d, peak RSS %d MB: %s", args[:2], r.Code, peak>>20, r.ErrOut)
		}
	}
}
