package root_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/validate"
)

type errorObject struct {
	Error struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
		Hint    string `json:"hint"`
	} `json:"error"`
}

func decodeError(t *testing.T, out string) errorObject {
	t.Helper()
	var e errorObject
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), "stdout: %q", out)
	return e
}

// A command run with -o json that fails writes a JSON error object to
// stdout, as well as the text on stderr; with text output stdout stays
// empty.
func TestJSONErrorObject(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	missing := filepath.Join(t.TempDir(), "missing.db")

	r := o.Run("index", "inspect", missing, "-o", "json")
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	e := decodeError(t, r.Out)
	assert.Equal(t, exit.Failed, e.Error.Code)
	assert.Contains(t, e.Error.Message, missing)
	assert.Contains(t, r.ErrOut, "error: ")

	// A usage error, -o json set through the environment; the hint is what
	// follows the first line.
	o.Env["OPM_OUTPUT"] = "json"
	r = o.Run("bundle", "validate")
	require.Equal(t, exit.Usage, r.Code, r.ErrOut)
	e = decodeError(t, r.Out)
	assert.Equal(t, exit.Usage, e.Error.Code)
	assert.Equal(t, "no bundle given: opm bundle validate PATH...", e.Error.Message)
	assert.Equal(t, "Usage: opm bundle validate PATH|IMAGE... [flags]\nRun 'opm bundle validate --help' for more.", e.Error.Hint)
	o.Env["OPM_OUTPUT"] = ""

	// Failing findings are the report itself, not an error object.
	r = o.Run("bundle", "validate", syntaxBundle, "-o", "json")
	require.Equal(t, exit.Failed, r.Code)
	cmdtest.DecodeReport(t, r.Out)

	// Text output: nothing on stdout.
	r = o.Run("index", "inspect", missing)
	require.Equal(t, exit.Failed, r.Code)
	assert.Empty(t, r.Out)
}

// A --ca-file that does not exist is one usage error before any image is
// opened, not one failure per image.
func TestCAFileCheckedFirst(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "ca.pem")
	imgs := []string{"oci:" + dir + "/a:1", "oci:" + dir + "/b:1", "oci:" + dir + "/c:1"}
	r := o.Run(append([]string{"bundle", "validate", "--ca-file", missing}, imgs...)...)
	require.Equal(t, exit.Usage, r.Code, r.ErrOut)
	assert.Equal(t, 1, strings.Count(r.ErrOut, "--ca-file"), r.ErrOut)
	assert.Contains(t, r.ErrOut, missing)
	assert.NotContains(t, r.ErrOut, "could not be opened")

	// From the environment, it says so; a file without certificates is
	// refused too.
	o.Env["OPM_CA_FILE"] = validBundle + "/metadata/annotations.yaml"
	r = o.Run("bundle", "validate", "oci:"+dir+"/index:1")
	require.Equal(t, exit.Usage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "annotations.yaml (from OPM_CA_FILE): no PEM certificate in it")
}

// complete runs cobra's completion request and returns the offered values
// (without descriptions) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	r := cmdtest.Run(t, append([]string{"__complete"}, args...)...)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	var vals []string
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		vals = append(vals, v)
	}
	return vals, lines[len(lines)-1]
}

func TestFlagValueCompletion(t *testing.T) {
	t.Parallel()
	noFiles := ":4" // ShellCompDirectiveNoFileComp
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"index", "add", "--mode", ""}, []string{"replaces", "semver", "semver-skippatch"}},
		{[]string{"bundle", "validate", "--fail-on", ""}, []string{"error", "warning", "info"}},
		{[]string{"bundle", "validate", "-o", ""}, []string{"text", "json", "sarif"}},
		{[]string{"csv", "lint", "--output", ""}, []string{"text", "json", "sarif"}},
		{[]string{"index", "inspect", "-o", ""}, []string{"text", "json"}},
		{[]string{"bundle", "build", "-o", ""}, []string{"text", "json"}},
		{[]string{"bundle", "build", "--image-builder", ""}, []string{"docker", "podman", "buildah"}},
		{[]string{"index", "add", "--platform", ""}, []string{"linux/amd64", "linux/arm64", "linux/ppc64le", "linux/s390x", "linux/arm/v7"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			got, directive := complete(t, tc.args...)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, noFiles, directive)
		})
	}

	// Rule sets and ids, for --select and --skip, after those already given.
	ids := append([]string(nil), validate.Sets...)
	for _, r := range validate.Rules() {
		ids = append(ids, r.ID)
	}
	got, directive := complete(t, "bundle", "validate", "--select", "")
	assert.Equal(t, ids, got)
	assert.Equal(t, ":6", directive, "no file names, no space after an id (another may follow a comma)")
	got, _ = complete(t, "csv", "lint", "--skip", ids[0]+",")
	assert.Len(t, got, len(ids)-1)
	assert.NotContains(t, got, ids[0]+","+ids[0])
	assert.Contains(t, got, ids[0]+","+ids[1])
}

// An interrupted -o json run also leaves an error object on stdout.
func TestJSONErrorObjectInterrupted(t *testing.T) {
	t.Parallel()
	s, _, out, errOut := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code := root.Run(ctx, f, []string{"bundle", "validate", "-o", "json", validBundle})
	require.Equal(t, exit.Interrupted, code, errOut.String())
	e := decodeError(t, out.String())
	assert.Equal(t, exit.Interrupted, e.Error.Code)
	assert.Equal(t, "interrupted; nothing was written", e.Error.Message)
}
