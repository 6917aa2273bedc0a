package catalogfilter

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const wholeImageSet = `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  operators:
  - catalog: registry.example.com/redhat/index:v4.17
    packages:
    - name: p
      minVersion: 1.1.0
  - catalog: registry.example.com/certified/index:v4.17
    full: true
  additionalImages:
  - name: registry.example.com/ubi9/ubi:latest
  - name: registry.example.com/ubi9/minimal@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
  blockedImages:
  - name: registry.example.com/p/debug
  - name: ".*-debug$"
`

// TestParseImageSet (issue 39, item 3): every catalog with what to keep
// of it (as ParseConfig reads it), the additional and blocked images;
// mistakes name the entry at fault.
func TestParseImageSet(t *testing.T) {
	t.Parallel()
	set, err := ParseImageSet("isc.yaml", []byte(wholeImageSet))
	require.NoError(t, err)
	require.Len(t, set.Catalogs, 2)
	assert.Equal(t, "registry.example.com/redhat/index:v4.17", set.Catalogs[0].Ref)
	one, err := ParseConfig("isc.yaml", []byte(wholeImageSet), set.Catalogs[0].Ref)
	require.NoError(t, err)
	assert.Equal(t, one, set.Catalogs[0].Config, "the same as alpha filter reads it")
	assert.Equal(t, []Package{{Name: "p", Range: ">=1.1.0", HeadsOnly: true}}, set.Catalogs[0].Config.Packages)
	assert.False(t, set.Catalogs[1].Config.HeadsOnly, "full: true keeps every bundle")
	assert.Empty(t, set.Catalogs[1].Config.Packages)
	assert.Equal(t, []string{"registry.example.com/ubi9/ubi:latest", "registry.example.com/ubi9/minimal@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, set.Additional)
	assert.Equal(t, []string{"registry.example.com/p/debug", ".*-debug$"}, set.Blocked)
	assert.Empty(t, set.Catalogs[0].Ignored)

	renamed := strings.Replace(wholeImageSet, "    full: true\n", "    full: true\n    targetTag: v1\n    targetCatalog: me/index\n", 1)
	set, err = ParseImageSet("isc.yaml", []byte(renamed))
	require.NoError(t, err)
	assert.Equal(t, []string{"targetCatalog", "targetTag"}, set.Catalogs[1].Ignored)

	only := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  additionalImages:\n  - name: a.example/x:1\n"
	set, err = ParseImageSet("isc.yaml", []byte(only))
	require.NoError(t, err)
	assert.Empty(t, set.Catalogs)

	for bad, want := range map[string]string{
		"kind: FilterConfiguration\n":               `kind "FilterConfiguration": want oc-mirror's ImageSetConfiguration`,
		"kind: ImageSetConfiguration\nmirror: {}\n": "mirror.operators and mirror.additionalImages are empty",
		strings.Replace(wholeImageSet, "  - name: registry.example.com/ubi9/ubi:latest\n", "  - {}\n", 1):                  "mirror.additionalImages[0].name: missing",
		strings.Replace(wholeImageSet, `  - name: ".*-debug$"`, "  - name: ''", 1):                                         "mirror.blockedImages[1].name: missing",
		strings.Replace(wholeImageSet, "certified/index", "redhat/index", 1):                                               "mirror.operators[1].catalog: registry.example.com/redhat/index:v4.17 is listed twice",
		strings.Replace(wholeImageSet, "minVersion: 1.1.0", "minVersion: one", 1):                                          "mirror.operators[0] (registry.example.com/redhat/index:v4.17): packages[0] (p): minVersion",
		strings.Replace(wholeImageSet, "  - catalog: registry.example.com/certified/index:v4.17\n", "  - full: true\n", 1): "mirror.operators[1].catalog: missing",
	} {
		_, err := ParseImageSet("isc.yaml", []byte(bad))
		assert.ErrorContains(t, err, want, bad)
	}
}

// FuzzParseImageSet: any input is read or refused with an error, never a
// panic, and what is read has a catalog or an additional image, each
// catalog named and configured.
func FuzzParseImageSet(f *testing.F) {
	f.Add([]byte(wholeImageSet))
	f.Add([]byte("kind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: x\n    packages:\n    - name: p\n      channels:\n      - name: c\n        maxVersion: 2.0.0\n"))
	f.Add([]byte("kind: ImageSetConfiguration\nmirror:\n  blockedImages: [{name: a}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseImageSet("isc.yaml", data)
		if err != nil {
			return
		}
		if len(set.Catalogs) == 0 && len(set.Additional) == 0 {
			t.Fatal("read an ImageSetConfiguration with nothing to mirror")
		}
		for _, c := range set.Catalogs {
			if c.Ref == "" || c.Config == nil {
				t.Fatalf("catalog %+v", c)
			}
		}
	})
}
