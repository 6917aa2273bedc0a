package validate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/shareddata"
)

// rulesIn counts the findings of each rule over every bundle of a JSON
// report.
func rulesIn(t *testing.T, out string) (map[string]int, int) {
	t.Helper()
	doc := cmdtest.DecodeReport(t, out)
	bundles, _ := doc["bundles"].([]any)
	got := map[string]int{}
	for i := range bundles {
		for _, f := range cmdtest.Findings(doc, i) {
			got[f["rule"].(string)]++
		}
	}
	return got, len(bundles)
}

// TestCommunityReadsCIYAML (issue 36, item 3): cert-utils-operator's
// ci.yaml says updateGraph: semver-mode, so the pipelines link each bundle
// to the next version and find nothing dangling: neither does opm, reading
// the ci.yaml beside the bundles (a glob over the operator's directory, its
// ci.yaml skipped with a note). The same bundles under a replaces-mode
// ci.yaml (--ci-yaml) have dangling bundles; an updateGraph the pipelines
// do not build is an error naming the file.
func TestCommunityReadsCIYAML(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "corpus", "real", "cert-utils-operator")
	args, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	o := cmdtest.New(t)
	r := o.Run(append([]string{"bundle", "validate", "--select", "community", "-o", "json"}, args...)...)
	require.NotEqual(t, exit.Usage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "note: skipped 1 file that is not a bundle ("+filepath.Join(dir, "ci.yaml")+")")
	semverMode, n := rulesIn(t, r.Out)
	assert.Equal(t, len(args)-1, n, "every version directory validated")
	assert.Zero(t, semverMode["community-dangling-bundles"], "semver-mode: %v", semverMode)
	assert.Zero(t, semverMode["community-graph-loop"])

	tmp := t.TempDir()
	replaces := filepath.Join(tmp, "ci.yaml")
	require.NoError(t, os.WriteFile(replaces, []byte("updateGraph: replaces-mode\nreviewers: [someone]\n"), 0o644))
	r = o.Run(append([]string{"bundle", "validate", "--select", "community", "-o", "json", "--ci-yaml", replaces}, args...)...)
	replacesMode, _ := rulesIn(t, r.Out)
	assert.Greater(t, replacesMode["community-dangling-bundles"], 10, "replaces-mode: %v", replacesMode)
	assert.Equal(t, exit.Failed, r.Code)

	bad := filepath.Join(tmp, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("updateGraph: semver-skippatch\n"), 0o644))
	r = o.Run("bundle", "validate", "--select", "community-dangling-bundles", "--ci-yaml", bad, filepath.Join(dir, "1.3.0"), filepath.Join(dir, "1.3.1"))
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, `updateGraph "semver-skippatch": the community pipelines build replaces-mode and semver-mode graphs only`)
	assert.Equal(t, 1, strings.Count(r.ErrOut, "semver-skippatch"), "said once for the package:\n%s", r.ErrOut)

	r = o.Run("bundle", "validate", "--ci-yaml", filepath.Join(tmp, "missing.yaml"), filepath.Join(dir, "1.3.0"))
	assert.Equal(t, exit.Usage, r.Code, r.ErrOut)
}

// TestValidateGlobOverRepository (issue 36, item 5): a shell glob over the
// corpus's repository layout (operators/*/*) also matches each operator's
// ci.yaml: those are skipped with one note and every bundle is validated.
func TestValidateGlobOverRepository(t *testing.T) {
	t.Parallel()
	root := shareddata.Require(t, "corpus", "real")
	args, err := filepath.Glob(filepath.Join(root, "*", "*"))
	require.NoError(t, err)
	var files []string
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && !st.IsDir() {
			files = append(files, a)
		}
	}
	require.Greater(t, len(files), 1)
	o := cmdtest.New(t)
	r := o.Run(append([]string{"bundle", "validate", "-o", "json"}, args...)...)
	require.NotEqual(t, exit.Usage, r.Code, r.ErrOut)
	assert.Equal(t, 1, strings.Count(r.ErrOut, "note: skipped"), r.ErrOut)
	assert.Contains(t, r.ErrOut, fmt.Sprintf("note: skipped %d files that are not bundles (", len(files)))
	_, n := rulesIn(t, r.Out)
	assert.Equal(t, len(args)-len(files), n)

	// Files alone are still an error: there is nothing to validate.
	r = o.Run("bundle", "validate", files[0])
	assert.Equal(t, exit.Usage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "not a directory")
}
