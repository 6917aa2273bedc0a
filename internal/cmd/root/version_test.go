package root_test

// The version command's tests live here, with the root's: each test
// package that runs the command tree links all of opm (about 2 s of CPU per
// package), and version is a top-level command without a noun.

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	cmdversion "github.com/opmkit/opm/internal/cmd/version"
	"github.com/opmkit/opm/internal/version"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	o.Configure = func(f *factory.Factory) {
		f.Version = func() version.Info {
			info := version.Get()
			info.Version, info.Commit, info.Date = "v1.2.3", "abc1234", "2026-01-02T03:04:05Z"
			return info
		}
	}

	r := o.Run("version")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	for _, want := range []string{"opm v1.2.3", "abc1234", "2026-01-02T03:04:05Z", "go1.", "/"} {
		assert.Contains(t, r.Out, want)
	}

	r = o.Run("version", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var got map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.Out), &got), r.Out)
	assert.Equal(t, "v1.2.3", got["version"])
	assert.Equal(t, "abc1234", got["commit"])
	assert.Equal(t, "2026-01-02T03:04:05Z", got["date"])
	assert.NotEmpty(t, got["goVersion"])
	assert.NotEmpty(t, got["platform"])

	r = o.Run("version", "-o", "yaml")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, `invalid --output "yaml"`)
}

func parseVersion(t *testing.T, args ...string) (*cmdversion.Options, error) {
	t.Helper()
	return cmdtest.Parse(t, cmdversion.NewCmd, args...)
}

func TestVersionFlags(t *testing.T) {
	t.Parallel()
	got, err := parseVersion(t)
	require.NoError(t, err)
	assert.Equal(t, "text", got.Output)

	got, err = parseVersion(t, "-o", "json")
	require.NoError(t, err)
	assert.Equal(t, "json", got.Output)

	// Checking the value is the run's job, not the parser's.
	got, err = parseVersion(t, "--output", "yaml")
	require.NoError(t, err)
	assert.Equal(t, "yaml", got.Output)

	_, err = parseVersion(t, "extra")
	assert.ErrorContains(t, err, "unknown command")
}
