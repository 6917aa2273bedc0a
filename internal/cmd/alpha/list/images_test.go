package list_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// TestListImages (issue 29, item 3): bundle images and related images,
// one row per image, an image pinned by digest once however many names
// list it, every use kept.
func TestListImages(t *testing.T) {
	t.Parallel()
	d := "sha256:" + strings.Repeat("ab", 32)
	cat := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"},{"name":"p.v2","replaces":"p.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"example.com/p-bundle:v1","relatedImages":[{"name":"operator","image":"example.com/p-op@` + d + `"},{"image":"example.com/p-bundle:v1"}],"properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"p.v2","package":"p","image":"example.com/p-bundle:v2","relatedImages":[{"name":"operator","image":"mirror.example.com/p-op:v2@` + d + `"},{"name":"proxy","image":"example.com/proxy:1"}],"properties":[{"type":"olm.package","value":{"packageName":"p","version":"2.0.0"}}]}
{"schema":"olm.package","name":"q","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"q","entries":[{"name":"q.v1"}]}
{"schema":"olm.bundle","name":"q.v1","package":"q","image":"example.com/q-bundle:v1","relatedImages":[{"name":"proxy","image":"example.com/proxy:1"}],"properties":[{"type":"olm.package","value":{"packageName":"q","version":"1.0.0"}}]}
`
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(cat), 0o644))
	o := cmdtest.New(t)
	r := o.Run("alpha", "list", "images", dir, "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var images []catalogimages.Image
	require.NoError(t, json.Unmarshal([]byte(r.Out), &images))
	by := map[string]catalogimages.Image{}
	for _, im := range images {
		by[im.Image] = im
	}
	require.Len(t, images, 5, r.Out)
	op := by["example.com/p-op@"+d]
	assert.Equal(t, d, op.Digest)
	assert.Equal(t, []string{"mirror.example.com/p-op:v2@" + d}, op.Also, "one digest, one image")
	assert.Len(t, op.Uses, 2)
	assert.Equal(t, catalogimages.Use{Package: "p", Bundle: "p.v1", As: "related", Name: "operator"}, op.Uses[0])
	assert.Len(t, by["example.com/proxy:1"].Uses, 2, "p.v2 and q.v1 share it")
	assert.Equal(t, []catalogimages.Use{{Package: "p", Bundle: "p.v1", As: "bundle"}}, by["example.com/p-bundle:v1"].Uses, "a bundle listing itself is one use")

	r = o.Run("alpha", "list", "images", dir, "q")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	require.Len(t, lines, 3, r.Out)
	assert.Regexp(t, `^IMAGE +USED BY +AS$`, lines[0])
	assert.Regexp(t, `^example.com/proxy:1 +q/q.v1 +related proxy$`, lines[1])

	r = o.Run("alpha", "list", "images", dir, "nope")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, `package "nope" not found`)
}
