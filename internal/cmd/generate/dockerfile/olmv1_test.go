package dockerfile_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/registrytest"
)

// fakeOpmSource stands in for `opm serve DIR --cache-dir=D --cache-only`
// in the builder stage: it makes the cache directory the final stage
// copies. A static build of the real opm takes minutes (test/serving does
// that); what catalogd reads, the labels and /configs, does not depend on
// the cache's content.
const fakeOpmSource = `package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	for _, a := range os.Args[1:] {
		if d, ok := strings.CutPrefix(a, "--cache-dir="); ok {
			err := os.MkdirAll(d, 0o755)
			if err == nil {
				err = os.WriteFile(filepath.Join(d, "digest"), []byte("fake"), 0o644)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
}
`

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), stderr)
	return strings.TrimSpace(string(out))
}

// fakeBuilder commits an image holding a static fake /bin/opm into
// buildah's local storage and returns its name.
func fakeBuilder(t *testing.T, buildah string) string {
	t.Helper()
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte(fakeOpmSource), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module fakeopm\n\ngo 1.22\n"), 0o644))
	bin := filepath.Join(t.TempDir(), "opm")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the fake opm: %s", out)

	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := "localhost/opm-fake-builder:" + hex.EncodeToString(suffix)
	ctr := run(t, buildah, "from", "scratch")
	t.Cleanup(func() { _ = exec.Command(buildah, "rm", ctr).Run() })
	run(t, buildah, "copy", "--chmod", "0755", ctr, bin, "/bin/opm")
	run(t, buildah, "commit", "--quiet", ctr, name)
	t.Cleanup(func() { _ = exec.Command(buildah, "rmi", "-f", name).Run() })
	return name
}

// TestScratchCatalogImagePassesOLMv1: a catalog rendered from a bundle OLM
// v1 installs, built from `generate dockerfile -i scratch` with buildah and
// pushed, passes opm validate --select olmv1 as an image: catalogd's label
// is there and names the directory that holds the catalog. The same image
// without the label (as a hand-written Dockerfile might leave it) fails
// olmv1-catalog-image.
func TestScratchCatalogImagePassesOLMv1(t *testing.T) {
	t.Parallel()
	buildah := registrytest.RequireTool(t, "buildah")
	reg := registrytest.Start(t)
	o := runner(t, "v1.2.3")
	valid, err := filepath.Abs("../../../../testdata/bundles/valid")
	require.NoError(t, err)

	r := o.Run("render", valid)
	require.Equal(t, 0, r.Code, r.ErrOut)
	parent := t.TempDir()
	dir := filepath.Join(parent, "catalog")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "example-operator"), 0o755))
	// render gives the bundle; a package and channel make the catalog whole.
	catalog := `{"schema":"olm.package","name":"example-operator","defaultChannel":"stable"}
{"schema":"olm.channel","package":"example-operator","name":"stable","entries":[{"name":"example-operator.v0.1.0"}]}
` + r.Out
	require.NoError(t, os.WriteFile(filepath.Join(dir, "example-operator", "catalog.json"), []byte(catalog), 0o644))
	r = o.Run("validate", dir, "--select", "default,olmv1")
	require.Equal(t, 0, r.Code, "the catalog itself passes: %s", r.ErrOut)

	builder := fakeBuilder(t, buildah)
	r = o.Run("generate", "dockerfile", dir, "-i", "scratch", "-b", builder)
	require.Equal(t, 0, r.Code, r.ErrOut)
	dockerfile := filepath.Join(parent, "catalog.Dockerfile")

	build := func(tag, file string) string {
		t.Helper()
		ref := reg.Ref("catalog:" + tag)
		t.Cleanup(func() { _ = exec.Command(buildah, "rmi", "-f", ref).Run() })
		run(t, buildah, "bud", "--isolation", "chroot", "--pull-never", "--layers=false", "--quiet", "-f", file, "-t", ref, parent)
		run(t, buildah, "push", "--quiet", "--tls-verify=false", ref)
		return ref
	}
	ref := build("scratch", dockerfile)
	r = o.Run("validate", "--use-http", "--select", "olmv1", ref)
	assert.Equal(t, 0, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "olmv1-")
	r = o.Run("validate", "--use-http", "--select", "default,olmv1", "-o", "json", ref)
	assert.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `"passed": true`)

	// Without the label catalogd refuses the image, and so does the rule;
	// opm cannot read a catalog from it either (exit 2, saying why).
	data, err := os.ReadFile(dockerfile)
	require.NoError(t, err)
	var kept []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "LABEL operators.operatorframework.io.index.configs.v1=") {
			kept = append(kept, l)
		}
	}
	require.Less(t, len(kept), len(strings.Split(string(data), "\n")), "the Dockerfile sets the label")
	unlabelled := filepath.Join(t.TempDir(), "unlabelled.Dockerfile")
	require.NoError(t, os.WriteFile(unlabelled, []byte(strings.Join(kept, "\n")), 0o644))
	ref = build("unlabelled", unlabelled)
	r = o.Run("validate", "--use-http", "--select", "olmv1", ref)
	assert.Equal(t, 2, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "operators.operatorframework.io.index.configs.v1")
}
