package alpha_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// docPictures are the upgrade graphs docs/upgrade-graph.md shows, drawn by
// render-graph -o svg from reference catalogs (../shared/reference/index,
// trimmed to what the graph reads: testdata/docs).
var docPictures = []struct{ pkg, channel string }{
	{"skupper-operator", "stable-1.8"},
	{"community-windows-machine-config-operator", "preview"},
	{"cert-utils-operator", "alpha"},
}

// TestUpgradeGraphPicturesDocs fails when a picture under docs/images is
// not what render-graph draws today; `make docs` (UPDATE_DOCS=1) redraws
// them.
func TestUpgradeGraphPicturesDocs(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	for _, p := range docPictures {
		r := o.Run("alpha", "render-graph", filepath.Join("testdata", "docs", p.pkg), "--channel", p.channel, "-o", "svg")
		require.Equal(t, exit.OK, r.Code, r.ErrOut)
		path := filepath.Join("..", "..", "..", "docs", "images", p.pkg+"."+p.channel+".svg")
		have, err := os.ReadFile(path)
		if string(have) == r.Out {
			continue
		}
		if os.Getenv("UPDATE_DOCS") != "" {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(r.Out), 0o644))
			continue
		}
		if err != nil {
			t.Errorf("%v: run `make docs`", err)
			continue
		}
		t.Errorf("%s is stale: run `make docs`", path)
	}
}
