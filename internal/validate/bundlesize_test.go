package validate

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
)

// The bundle-size rule estimates with gzip's fastest level first and
// measures at the default level only near the limit: a large bundle that
// compresses well has no finding, one just under the limit a warning.
func TestBundleSizeNearAndFarFromTheLimit(t *testing.T) {
	t.Parallel()
	sizeFindings := func(blob string) []Finding {
		m := validFS(t)
		m["manifests/big.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: " + blob + "\n")}
		var out []Finding
		for _, f := range check(t, m, Options{}).Findings {
			if f.Rule == "bundle-size" {
				out = append(out, f)
			}
		}
		return out
	}
	assert.Empty(t, sizeFindings(strings.Repeat("compressible text ", 200_000)), "3.6 MB that gzip makes tiny")
	got := sizeFindings(randomBase64(1200 * 1024))
	if assert.Len(t, got, 1, "1.2 MB of random base64 (about 0.9 MiB compressed)") {
		assert.Equal(t, Warning, got[0].Severity)
		assert.Contains(t, got[0].Message, "of OLM's 1 MiB limit")
	}
}
