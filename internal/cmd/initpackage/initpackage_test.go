package initpackage_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/initpackage"
)

// A 1x1 PNG.
var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func write(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// TestInit prints upstream's olm.package blob: JSON indented by four
// spaces without HTML escaping, the description verbatim, the icon as
// base64 with the media type its content shows.
func TestInit(t *testing.T) {
	t.Parallel()
	readme := write(t, "README.md", []byte("# Op\n\nManages <widgets> & gadgets.\n"))
	icon := write(t, "logo.bin", png)
	r := cmdtest.Run(t, "init", "my-op", "--default-channel", "stable", "--description", readme, "--icon", icon)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, `{
    "schema": "olm.package",
    "name": "my-op",
    "defaultChannel": "stable",
    "icon": {
        "base64data": "`+base64.StdEncoding.EncodeToString(png)+`",
        "mediatype": "image/png"
    },
    "description": "# Op\n\nManages <widgets> & gadgets.\n"
}
`, r.Out)
	assert.Empty(t, r.ErrOut)

	r = cmdtest.Run(t, "init", "my-op", "-c", "stable", "-d", readme, "-o", "yaml")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, "---\ndefaultChannel: stable\ndescription: |\n  # Op\n\n  Manages <widgets> & gadgets.\nname: my-op\nschema: olm.package\n", r.Out)

	// Without flags: the name, an empty default channel (upstream keeps
	// the key).
	r = cmdtest.Run(t, "init", "bare")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, "{\n    \"schema\": \"olm.package\",\n    \"name\": \"bare\",\n    \"defaultChannel\": \"\"\n}\n", r.Out)
}

// TestInitIconTypes: each recognised format gets its media type; SVG too.
func TestInitIconTypes(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]string{
		"\xff\xd8\xff\xe0\x00\x10JFIF":                     "image/jpeg",
		"GIF89a\x01\x00\x01\x00":                           "image/gif",
		"RIFF\x24\x00\x00\x00WEBPVP8 ":                     "image/webp",
		"BM\x3a\x00\x00\x00":                               "image/bmp",
		"\x00\x00\x01\x00\x01\x00":                         "image/vnd.microsoft.icon",
		"II*\x00\x08\x00\x00\x00\x00\x00\x00":              "image/tiff",
		"\x00\x00\x00\x18ftypavif\x00\x00\x00\x00mif1avif": "image/avif",
		"<?xml version=\"1.0\"?>\n<!-- logo -->\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>": "image/svg+xml",
	} {
		r := cmdtest.Run(t, "init", "p", "-i", write(t, "icon", []byte(data)), "-o", "yaml")
		require.Equal(t, 0, r.Code, "%q: %s", data, r.ErrOut)
		assert.Contains(t, r.Out, "mediatype: "+want, "%q", data)
	}
}

// TestInitErrors: unreadable files and non-images fail, naming the flag
// and file; nothing is printed.
func TestInitErrors(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "none")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"init", "p", "-i", write(t, "README.md", []byte("# not an image"))}, exit.Failed, "--icon " + "%s: not an image opm recognises"},
		{[]string{"init", "p", "-i", write(t, "empty.png", nil)}, exit.Failed, "the icon file is empty"},
		{[]string{"init", "p", "-i", missing}, exit.Failed, "--icon: open " + missing + ": no such file or directory"},
		{[]string{"init", "p", "-d", missing}, exit.Failed, "--description: open " + missing},
		{[]string{"init", "p", "-o", "xml"}, exit.Usage, `invalid --output "xml"`},
		{[]string{"init"}, exit.Usage, "accepts 1 arg(s)"},
		{[]string{"init", "a", "b"}, exit.Usage, "accepts 1 arg(s)"},
		{[]string{"init", ""}, exit.Usage, "the package name is empty"},
	} {
		r := cmdtest.Run(t, c.args...)
		assert.Equal(t, c.code, r.Code, "%v: %s", c.args, r.ErrOut)
		assert.Empty(t, r.Out, "%v", c.args)
		want := c.want
		if len(c.args) > 3 {
			want = strings.Replace(want, "%s", c.args[3], 1)
		}
		assert.Contains(t, r.ErrOut, want, "%v", c.args)
	}
}

// TestInitFlags: upstream HEAD's flags, long and short.
func TestInitFlags(t *testing.T) {
	t.Parallel()
	o, err := cmdtest.Parse(t, initpackage.NewCmd, "p", "-c", "ch", "-d", "README.md", "-i", "icon.png", "-o", "yaml")
	require.NoError(t, err)
	assert.Equal(t, initpackage.Options{Package: "p", DefaultChannel: "ch", DescriptionFile: "README.md", IconFile: "icon.png", Output: "yaml"}, *o)
	o, err = cmdtest.Parse(t, initpackage.NewCmd, "p", "--default-channel", "ch", "--description", "d", "--icon", "i", "--output", "json")
	require.NoError(t, err)
	assert.Equal(t, initpackage.Options{Package: "p", DefaultChannel: "ch", DescriptionFile: "d", IconFile: "i", Output: "json"}, *o)
}

// TestInitRefusesHostileInputs: -i /dev/zero and -d of a huge file grew
// without bound, and -d on a named pipe blocked for ever. Only regular
// files are read, up to initpackage.MaxFileSize, and a pipe is refused
// without waiting for a writer.
func TestInitRefusesHostileInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "README.md")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	big := filepath.Join(dir, "big.md")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(initpackage.MaxFileSize+1)) // sparse
	require.NoError(t, f.Close())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-i", "/dev/zero"}, "--icon: /dev/zero is a device, not a regular file"},
		{[]string{"-d", "/dev/zero"}, "--description: /dev/zero is a device, not a regular file"},
		{[]string{"-d", fifo}, "is a named pipe (FIFO), not a regular file"},
		{[]string{"-d", big}, "larger than the limit"},
		{[]string{"-i", big}, "larger than the limit"},
	} {
		done := make(chan cmdtest.Result, 1)
		go func() { done <- cmdtest.New(t).Run(append([]string{"init", "op"}, c.args...)...) }()
		select {
		case r := <-done:
			assert.Equal(t, exit.Failed, r.Code, "%v: %s", c.args, r.ErrOut)
			assert.Contains(t, r.ErrOut, c.want, "%v", c.args)
			assert.Empty(t, r.Out, "%v", c.args)
		case <-time.After(2 * time.Minute): // only a hang
			t.Fatalf("%v: still running after 2 minutes", c.args)
		}
	}
}
