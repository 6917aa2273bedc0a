package root_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// TestOPMConfigIsNotACommandsConfig: OPM_CONFIG names opm's own config
// file; the local --config of alpha mirror (an ImageSetConfiguration),
// alpha filter and index filter (a filter configuration) is never taken
// from it, so opm's settings are not read as one.
func TestOPMConfigIsNotACommandsConfig(t *testing.T) {
	t.Parallel()
	settings := filepath.Join(t.TempDir(), "opm.yaml")
	if err := os.WriteFile(settings, []byte("# opm's settings\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := cmdtest.New(t)
	o.Env["OPM_CONFIG"] = settings
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"alpha", "mirror", "--to-dir", filepath.Join(t.TempDir(), "m")}, "give the catalog image to mirror (or --config ISC, or --from-dir DIR)"},
		{[]string{"alpha", "filter", t.TempDir()}, "give --config FILE or --keep-packages (one of them)"},
		{[]string{"index", "filter", "--from-index", "quay.io/x/index:1", "--tag", "quay.io/x/index:2"}, "--config is required"},
	} {
		r := o.Run(c.args...)
		assert.NotEqual(t, exit.OK, r.Code, "%v: %s", c.args, r.ErrOut)
		assert.Contains(t, r.ErrOut, c.want, "%v", c.args)
		assert.NotContains(t, r.ErrOut, "opm.yaml", "%v: opm's config file read as the command's", c.args)
	}
}
