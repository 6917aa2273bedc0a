package openshift

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/shareddata"
)

func TestKube(t *testing.T) {
	for ocp, kube := range map[string]string{"4.1": "1.13", "4.2": "1.14", "4.3": "1.16", "4.8": "1.21", "4.9": "1.22", "4.12": "1.25", "4.16": "1.29", "4.20": "1.33", "4.22": "1.35"} {
		r, err := ParseRelease(ocp)
		require.NoError(t, err)
		k, ok := Kube(r)
		require.True(t, ok, ocp)
		assert.Equal(t, kube, k.String(), ocp)
	}
	_, ok := Kube(Release{3, 11})
	assert.False(t, ok)
	// Rows are in order, one minor apart, each a Kubernetes release on
	// from 4.3: a row typed wrong breaks the pattern.
	for i := 1; i < len(kubeOf); i++ {
		prev, cur := kubeOf[i-1], kubeOf[i]
		assert.Equal(t, prev.ocp.Minor+1, cur.ocp.Minor, "row %d", i)
		if cur.ocp.Minor >= 3 {
			assert.Equal(t, cur.ocp.Minor+13, cur.kube.Minor, "row %d", i)
		}
	}
}

func TestParseVersions(t *testing.T) {
	for in, want := range map[string]string{
		"v4.12":       "4.12 and later",
		"=v4.14":      "only 4.14",
		"v4.12-v4.16": "4.12 to 4.16",
		"v4.5,v4.6":   "4.5 and later",
		"v4.6,v4.5":   "4.5 and later",
		"v4.8-v4.8":   "only 4.8",
	} {
		r, err := ParseVersions(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, r.String(), in)
	}
	for in, msg := range map[string]string{
		"":              "empty",
		"4.12":          "lacks the leading v",
		"v4.12 - v4.16": "space",
		"v4.6,v4.7":     "only the legacy lists",
		"v4.16-v4.12":   "ends before it starts",
		"v4.12.1":       "patch release",
		"=4.14":         "lacks the leading v",
		"v4":            "not an OpenShift release",
		"v4.x":          "not an OpenShift release",
		"v4.12-":        "lacks the leading v",
	} {
		_, err := ParseVersions(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
	r, _ := ParseVersions("v4.12")
	assert.Equal(t, Latest(), r.Newest())
	assert.True(t, r.Contains(Release{4, 30}))
	assert.False(t, r.Contains(Release{4, 11}))
	r, _ = ParseVersions("v4.12-v4.14")
	assert.Equal(t, Release{4, 14}, r.Newest())
	assert.False(t, r.Contains(Release{4, 15}))
}

var (
	versionsRe = regexp.MustCompile(`com\.redhat\.openshift\.versions["']?\s*[:=]\s*["']?([^"'\s]+)`)
	maxRe      = regexp.MustCompile(`olm\.maxOpenShiftVersion\\*"[^}]*?"value\\*"\s*:\s*\\*"?([0-9]+\.[0-9]+)`)
	releaseRe  = regexp.MustCompile(`v?([0-9]+\.[0-9]+)`)
)

// TestTableKnowsEveryReleaseInTheCorpus fails when a bundle or catalog of
// ../shared names an OpenShift release newer than the table's last: the
// openshift rules would judge it against the wrong Kubernetes release.
// Add the release to kubeOf.
func TestTableKnowsEveryReleaseInTheCorpus(t *testing.T) {
	root := shareddata.Require(t)
	seen := map[Release]bool{}
	for _, dir := range []string{"corpus", "reference"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			switch filepath.Ext(p) {
			case ".yaml", ".yml", ".json", ".jsonl", ".tsv":
			default:
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			text := string(data)
			if !strings.Contains(text, "openshift") && !strings.Contains(text, "OpenShift") {
				return nil
			}
			var values []string
			for _, m := range versionsRe.FindAllStringSubmatch(text, -1) {
				values = append(values, m[1])
			}
			for _, m := range maxRe.FindAllStringSubmatch(text, -1) {
				values = append(values, m[1])
			}
			for _, v := range values {
				for _, m := range releaseRe.FindAllStringSubmatch(v, -1) {
					r, err := ParseRelease(m[1])
					if err != nil {
						continue
					}
					seen[r] = true
					if r.Major == Latest().Major && Latest().Less(r) {
						t.Errorf("%s names OpenShift %s (in %q), newer than the last release of internal/openshift's table (%s): add its Kubernetes release to kubeOf",
							p, r, v, Latest())
					}
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.NotEmpty(t, seen, "no com.redhat.openshift.versions or olm.maxOpenShiftVersion found in ../shared: the scan is broken")
	newest := Release{}
	for r := range seen {
		if newest.Less(r) {
			newest = r
		}
	}
	t.Logf("%d OpenShift releases named in ../shared, the newest %s; the table ends at %s", len(seen), newest, Latest())
}
