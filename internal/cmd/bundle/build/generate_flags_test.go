package build_test

// bundle generate's tests live with bundle build's: each test package
// that runs the command tree links all of opm (about 2 s of CPU), and the
// two commands write the same metadata.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/bundle/generate"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

func TestGenerateFlags(t *testing.T) {
	t.Parallel()
	got, err := cmdtest.Parse(t, generate.NewCmd, "-d", "m", "-p", "pkg", "-c", "a,b", "-e", "a", "-u", "out", "--overwrite", "-o", "json")
	require.NoError(t, err)
	assert.Equal(t, generate.Options{Directory: "m", Package: "pkg", Channels: []string{"a", "b"}, DefaultChannel: "a",
		OutputDir: "out", Overwrite: true, Output: "json"}, *got)

	got, err = cmdtest.Parse(t, generate.NewCmd, "--directory", "m", "--package", "p", "--channels", "x", "--default", "x", "--output-dir", "o")
	require.NoError(t, err)
	assert.Equal(t, generate.Options{Directory: "m", Package: "p", Channels: []string{"x"}, DefaultChannel: "x", OutputDir: "o", Output: "text"}, *got)

	_, err = cmdtest.Parse(t, generate.NewCmd, "-d", "m", "extra")
	assert.ErrorContains(t, err, "unknown command")
}
