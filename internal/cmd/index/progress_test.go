package index_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/image"
)

// On a terminal, index add shows the bundles loaded (n/N) with the bytes
// pulled, then the push of the index image; off a terminal the same as
// plain lines, at most one per interval; nothing of it with -o json.
func TestIndexAddProgress(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	reg := startRegistry(t)
	c := testClient(t)
	pushImage(t, c, fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"}), reg.ref("opm:fake"))
	b, err := bundle.LoadDir(validBundle)
	require.NoError(t, err)
	img, err := image.BuildBundleImage(os.DirFS(validBundle), b.Annotations.Values)
	require.NoError(t, err)
	bundleRef := reg.ref("example-bundle:0.1.0")
	pushImage(t, c, img, bundleRef)
	local, err := filepath.Abs(validBundle)
	require.NoError(t, err)
	v1, v2 := twoVersions(t)

	tag := reg.ref("index:1")
	r := o.RunTTY("index", "add", "--use-http", "-b", bundleRef, "-i", reg.ref("opm:fake"), "-t", tag)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "\r\x1b[Kbundles 1/1, ")
	assert.Contains(t, r.ErrOut, "iB pulled")
	assert.Contains(t, r.ErrOut, "\r\x1b[Kwriting "+tag+": ")
	assert.Contains(t, r.ErrOut, "iB pushed\r\x1b[K", "the push line shows the final figure, then is erased")
	assert.Contains(t, r.ErrOut, "wrote "+tag+"@sha256:")

	// Directories only: the count, no bytes.
	r = o.RunTTY("index", "add", "--database", filepath.Join(t.TempDir(), "index.db"), "-b", v1+","+v2)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "bundles 2/2\r\x1b[K")
	assert.NotContains(t, r.ErrOut, "pulled")

	// Not a terminal (a CI log): plain lines at most every interval (here
	// every time), no control sequences.
	o.ProgressEvery = time.Nanosecond
	r = o.Run("index", "add", "--use-http", "-b", bundleRef, "--from-index", tag, "-t", reg.ref("index:2"), "--overwrite-latest")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "\r")
	assert.NotContains(t, r.ErrOut, "\x1b")
	assert.Regexp(t, `(?m)^bundles 1/1, [0-9.]+ [KM]iB pulled$`, r.ErrOut)
	assert.Regexp(t, `(?m)^writing `+regexp.QuoteMeta(reg.ref("index:2"))+`: [0-9.]+ [KM]?i?B pushed$`, r.ErrOut)
	// With the usual interval, a run this short prints none.
	o.ProgressEvery = 0
	r = o.Run("index", "add", "--use-http", "-b", bundleRef, "--from-index", tag, "-t", reg.ref("index:2"), "--overwrite-latest")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "bundles 1/1")
	// -o json: no progress at all.
	r = o.RunTTY("index", "add", "--use-http", "-b", local, "--from-index", tag, "-t", reg.ref("index:3"), "--overwrite-latest", "-o", "json")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "\r")
	assert.NotContains(t, r.Out, "\r")
}
