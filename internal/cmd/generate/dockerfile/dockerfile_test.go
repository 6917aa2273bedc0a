package dockerfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/generate/dockerfile"
	"github.com/opmkit/opm/internal/version"
)

// released is a runner whose opm is release v1.2.3, so that its default
// images exist; dev is a development build.
func runner(t *testing.T, v string) *cmdtest.Runner {
	t.Helper()
	o := cmdtest.New(t)
	o.Configure = func(f *factory.Factory) {
		f.Version = func() version.Info { return version.Info{Version: v} }
	}
	return o
}

func catalogDir(t *testing.T) (parent, dir string) {
	t.Helper()
	parent = t.TempDir()
	dir = filepath.Join(parent, "catalog")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "op"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "op", "catalog.json"), []byte(`{"schema":"olm.package","name":"op","defaultChannel":"stable"}`), 0o644))
	return parent, dir
}

// wantDefault is upstream's Dockerfile on opm's own serving image.
const wantDefault = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM ghcr.io/opmkit/opm:v1.2.3 as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM ghcr.io/opmkit/opm:v1.2.3
# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs
`

const wantScratch = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM ghcr.io/opmkit/opm:v1.2.3 as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM scratch
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs

# Set other custom labels
LABEL "a.b"="x=y"
LABEL "org.opencontainers.image.source"="https://example.com/\"op\""
`

// TestGenerateDockerfile writes DIR.Dockerfile beside DIR, as upstream
// writes it, and never replaces one.
func TestGenerateDockerfile(t *testing.T) {
	t.Parallel()
	parent, dir := catalogDir(t)
	o := runner(t, "v1.2.3")
	r := o.Run("generate", "dockerfile", dir)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Empty(t, r.Out)
	out := filepath.Join(parent, "catalog.Dockerfile")
	assert.Contains(t, r.ErrOut, "wrote "+out)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, wantDefault, string(got))

	// Never replaced.
	r = o.Run("generate", "dockerfile", dir, "-i", "scratch")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, out+" exists; remove it to generate it again")
	got, err = os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, wantDefault, string(got), "left as it was")

	// scratch, with labels (the last of a key wins; quotes escaped).
	require.NoError(t, os.Remove(out))
	r = o.Run("generate", "dockerfile", dir+"/", "-i", "scratch", "-l", "a.b=x=y,org.opencontainers.image.source=old", "--extra-labels", `"org.opencontainers.image.source=https://example.com/""op"""`)
	require.Equal(t, 0, r.Code, r.ErrOut)
	got, err = os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, wantScratch, string(got))
}

// TestGenerateDockerfileImages: -i and -b choose the stages' images;
// upstream's deprecated --binary-image sets both.
func TestGenerateDockerfileImages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version       string
		args          []string
		base, builder string
	}{
		{"v1.2.3", []string{"-i", "quay.io/me/base:1"}, "quay.io/me/base:1", "ghcr.io/opmkit/opm:v1.2.3"},
		{"v1.2.3", []string{"-b", "quay.io/me/opm:1"}, "ghcr.io/opmkit/opm:v1.2.3", "quay.io/me/opm:1"},
		{"v1.2.3", []string{"--binary-image", "quay.io/me/opm:2"}, "quay.io/me/opm:2", "quay.io/me/opm:2"},
		{"v1.2.3", []string{"--binary-image", "quay.io/me/opm:2", "-b", "quay.io/me/b:3"}, "quay.io/me/opm:2", "quay.io/me/b:3"},
		// A development build has no published image: -i's opm builds the cache.
		{"v1.2.3-4-gabcdef0", []string{"-i", "quay.io/me/base:1"}, "quay.io/me/base:1", "quay.io/me/base:1"},
		{"dev", []string{"-i", "scratch", "-b", "quay.io/me/opm:1"}, "scratch", "quay.io/me/opm:1"},
	} {
		parent, dir := catalogDir(t)
		r := runner(t, c.version).Run(append([]string{"generate", "dockerfile", dir}, c.args...)...)
		require.Equal(t, 0, r.Code, "%v: %s", c.args, r.ErrOut)
		got, err := os.ReadFile(filepath.Join(parent, "catalog.Dockerfile"))
		require.NoError(t, err)
		assert.Contains(t, string(got), "\nFROM "+c.base+"\n", "%v", c.args)
		assert.Contains(t, string(got), "FROM "+c.builder+" as builder\n", "%v", c.args)
		if c.args[0] == "--binary-image" {
			assert.Contains(t, r.ErrOut, "--binary-image is deprecated")
		}
	}
}

// TestGenerateDockerfileErrors: nothing is written on any error.
func TestGenerateDockerfileErrors(t *testing.T) {
	t.Parallel()
	parent, dir := catalogDir(t)
	file := filepath.Join(parent, "file.json")
	require.NoError(t, os.WriteFile(file, []byte("{}"), 0o644))
	for _, c := range []struct {
		version string
		args    []string
		code    int
		want    string
	}{
		{"v1.2.3", []string{dir, "-b", "scratch"}, exit.Usage, "--builder-image scratch: the build stage runs /bin/opm"},
		{"v1.2.3", []string{dir, "-l", "novalue"}, exit.Usage, `--extra-labels "novalue": give key=value`},
		{"v1.2.3", []string{dir, "-l", "=v"}, exit.Usage, `--extra-labels "=v": give key=value`},
		{"v1.2.3", []string{dir, "-i", "Not A Ref"}, exit.Usage, "--base-image"},
		{"v1.2.3", []string{dir, "--binary-image", "a/b:1", "--base-image", "c/d:1"}, exit.Usage, "--binary-image is the old name of --base-image"},
		{"dev", []string{dir}, exit.Usage, "no -b/--builder-image given, and this opm (version \"dev\") is a development build with no published serving image: give -i/--base-image and -b/--builder-image"},
		{"dev", []string{dir, "-b", "quay.io/me/opm:1"}, exit.Usage, "no -i/--base-image given"},
		{"v1.2.3", []string{filepath.Join(parent, "none")}, exit.Failed, "no such file or directory"},
		{"v1.2.3", []string{file}, exit.Failed, "is not a directory"},
		{"v1.2.3", nil, exit.Usage, "accepts 1 arg(s)"},
	} {
		r := runner(t, c.version).Run(append([]string{"generate", "dockerfile"}, c.args...)...)
		assert.Equal(t, c.code, r.Code, "%v: %s", c.args, r.ErrOut)
		assert.Contains(t, r.ErrOut, c.want, "%v", c.args)
		assert.NoFileExists(t, filepath.Join(parent, "catalog.Dockerfile"), "%v", c.args)
		assert.NoFileExists(t, filepath.Join(parent, "file.json.Dockerfile"), "%v", c.args)
	}
}

// TestGenerateDockerfileDot: "." names the working directory's own name.
func TestGenerateDockerfileDot(t *testing.T) {
	t.Parallel()
	parent, dir := catalogDir(t)
	o := runner(t, "v1.2.3")
	o.Dir = dir
	r := o.Run("generate", "dockerfile", ".", "-i", "quay.io/me/opm:1", "-b", "quay.io/me/opm:1")
	require.Equal(t, 0, r.Code, r.ErrOut)
	got, err := os.ReadFile(filepath.Join(parent, "catalog.Dockerfile"))
	require.NoError(t, err)
	assert.Contains(t, string(got), "ADD catalog /configs\n")
}

// TestGenerateDockerfileFlags: upstream HEAD's flags.
func TestGenerateDockerfileFlags(t *testing.T) {
	t.Parallel()
	o, err := cmdtest.Parse(t, dockerfile.NewCmd, "dir", "-i", "a/b:1", "-b", "c/d:1", "-l", "k=v", "-l", "x=y")
	require.NoError(t, err)
	assert.Equal(t, "a/b:1", o.BaseImage)
	assert.Equal(t, "c/d:1", o.BuilderImage)
	assert.Equal(t, []string{"k=v", "x=y"}, o.ExtraLabels)
	o, err = cmdtest.Parse(t, dockerfile.NewCmd, "dir", "--base-image", "a/b:1", "--builder-image", "c/d:1", "--extra-labels", "k=v,x=y")
	require.NoError(t, err)
	assert.Equal(t, []string{"k=v", "x=y"}, o.ExtraLabels)
}

// TestGenerateDockerfileHostileNames: the catalog directory's name is
// written into the ADD line. A line break would start a Dockerfile line of
// its own (a RUN, say), so control characters are refused; a space would
// split the ADD's arguments, so such names are written in the JSON-array
// form; what the build would expand ($, globs) is refused.
func TestGenerateDockerfileHostileNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, add, refused string
	}{
		{name: "cat\nRUN touch pwned", refused: "control character"},
		{name: "cat\tx", refused: "control character"},
		{name: "cat\x7f", refused: "control character"},
		{name: "cat$HOME", refused: "would expand"},
		{name: "cat*", refused: "would expand"},
		{name: "my catalog", add: `ADD ["my catalog", "/configs"]` + "\n"},
		{name: `a\b`, refused: "would expand"},
		{name: `a "b" 'c'`, add: `ADD ["a \"b\" 'c'", "/configs"]` + "\n"},
		{name: "é-catalog", add: "ADD é-catalog /configs\n"},
	} {
		parent := t.TempDir()
		dir := filepath.Join(parent, c.name)
		require.NoError(t, os.Mkdir(dir, 0o755))
		r := runner(t, "v1.2.3").Run("generate", "dockerfile", dir)
		out := filepath.Join(parent, c.name+".Dockerfile")
		if c.refused != "" {
			assert.NotEqual(t, 0, r.Code, "%q", c.name)
			assert.Contains(t, r.ErrOut, c.refused, "%q", c.name)
			assert.NoFileExists(t, out, "%q", c.name)
			continue
		}
		require.Equal(t, 0, r.Code, "%q: %s", c.name, r.ErrOut)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(got), "\n"+c.add, "%q", c.name)
		assert.Equal(t, 1, strings.Count(string(got), "\nADD "), "%q", c.name)
	}
}

// TestGenerateDockerfileRefusesLinks (issue 40, item 4): a symbolic link
// where the Dockerfile goes, to a file or to nothing yet, is refused as an
// existing file: nothing is written where it leads.
func TestGenerateDockerfileRefusesLinks(t *testing.T) {
	t.Parallel()
	for _, dangling := range []bool{false, true} {
		_, dir := catalogDir(t)
		target := filepath.Join(t.TempDir(), "elsewhere.Dockerfile")
		if !dangling {
			require.NoError(t, os.WriteFile(target, []byte("mine"), 0o644))
		}
		require.NoError(t, os.Symlink(target, dir+".Dockerfile"))
		r := runner(t, "v1.2.3").Run("generate", "dockerfile", dir)
		assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
		assert.Contains(t, r.ErrOut, dir+".Dockerfile exists")
		got, err := os.ReadFile(target)
		if dangling {
			assert.ErrorIs(t, err, os.ErrNotExist, "written through a dangling link")
		} else {
			assert.Equal(t, "mine", string(got))
		}
	}
}
