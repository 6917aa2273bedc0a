package build_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

const (
	validBundle  = "../../../../testdata/bundles/valid"
	syntaxBundle = "../../../../testdata/bundles/syntax-error"
	csvDir       = "../../../../testdata/csv"
)

type buildOutput struct {
	Ref      string
	Digest   string
	Builder  string
	Labels   map[string]string
	Findings []map[string]any
}

// build runs `opm bundle build -o json` and decodes what it prints.
func build(t *testing.T, args ...string) buildOutput {
	t.Helper()
	r := cmdtest.Run(t, append([]string{"bundle", "build", "-o", "json"}, args...)...)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var out buildOutput
	require.NoError(t, json.Unmarshal([]byte(r.Out), &out), r.Out)
	require.NotNil(t, out.Findings, "findings is an array, never null")
	return out
}

// validateFindings validates args (one bundle) and returns its findings.
func validateFindings(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	r := cmdtest.Run(t, append([]string{"bundle", "validate", "-o", "json"}, args...)...)
	require.Contains(t, []int{exit.OK, exit.Failed}, r.Code, r.ErrOut)
	doc := cmdtest.DecodeReport(t, r.Out)
	require.Len(t, doc["bundles"], 1)
	return cmdtest.Findings(doc, 0)
}

func TestBundleBuildLayoutsDeterministic(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	layout := "oci:" + filepath.Join(dir, "layout") + ":1.2.0"
	first := build(t, "-d", validBundle, "-t", layout)
	assert.Equal(t, "opm", first.Builder)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, first.Digest)
	assert.Equal(t, "example-operator", first.Labels[bundle.AnnotationPackage])
	assert.Empty(t, first.Findings)

	// The same bundle gives the same digest, whatever the destination.
	again := build(t, "-d", validBundle, "-t", "oci:"+filepath.Join(dir, "other")+":x")
	assert.Equal(t, first.Digest, again.Digest)
	archive := "docker-archive:" + filepath.Join(dir, "bundle.tar")
	assert.Equal(t, first.Digest, build(t, "-d", validBundle, "-t", archive).Digest)
	ociArchive := "oci-archive:" + filepath.Join(dir, "bundle-oci.tar") + ":1.2.0"
	assert.Equal(t, first.Digest, build(t, "-d", validBundle, "-t", ociArchive).Digest)

	// The text output names the destination and the digest.
	r := o.Run("bundle", "build", "-d", validBundle, "-t", layout)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "wrote "+layout)
	assert.Contains(t, r.ErrOut, "digest: "+first.Digest)
	assert.Empty(t, r.Out)

	// Each copy validates exactly as the directory does.
	want := validateFindings(t, validBundle)
	for _, ref := range []string{layout, archive, ociArchive} {
		assert.Equal(t, want, validateFindings(t, ref), ref)
	}
}

func TestBundleBuildStopsOnFailingFindings(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	layout := filepath.Join(dir, "layout")
	r := o.Run("bundle", "build", "-d", syntaxBundle, "-t", "oci:"+layout+":1")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "yaml-syntax")
	assert.Contains(t, r.ErrOut, "not building oci:"+layout+":1")
	assert.Contains(t, r.ErrOut, "--permissive")
	assert.NoDirExists(t, layout, "nothing is written when validation fails")

	// -o json prints the validation report, as bundle validate would.
	r = o.Run("bundle", "build", "-o", "json", "-d", syntaxBundle, "-t", "oci:"+layout+":1")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, cmdtest.RulesOf(cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0)), "yaml-syntax")

	// --permissive builds anyway and still shows the findings.
	r = o.Run("bundle", "build", "--permissive", "-d", syntaxBundle, "-t", "oci:"+layout+":1")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "yaml-syntax")
	assert.Contains(t, r.ErrOut, "digest: sha256:")
	assert.DirExists(t, layout)

	// --skip and --select choose the rules, as for bundle validate.
	ok := build(t, "-d", syntaxBundle, "-t", "oci:"+layout+":2", "--skip", "yaml-syntax,csv-owned-crd-present")
	assert.NotEmpty(t, ok.Digest)
}

func TestBundleBuildGeneratesMetadata(t *testing.T) {
	o := cmdtest.New(t)
	dir := t.TempDir()
	b := filepath.Join(dir, "b")
	require.NoError(t, os.CopyFS(b, os.DirFS(validBundle)))
	require.NoError(t, os.RemoveAll(filepath.Join(b, "metadata")))
	t.Chdir(dir)

	// Upstream's -d: the manifests directory. Without channels there is
	// nothing to generate the annotations from.
	r := o.Run("bundle", "build", "-d", "b/manifests", "-t", "oci:layout:1")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "no channels")

	out := build(t, "-d", "b/manifests", "-p", "example-operator", "-c", "stable,fast", "-e", "stable", "-t", "oci:layout:1")
	assert.Equal(t, "stable,fast", out.Labels[bundle.AnnotationChannels])
	assert.FileExists(t, "b/metadata/annotations.yaml")
	assert.NoFileExists(t, "bundle.Dockerfile", "an in-process build writes no Dockerfile")

	// The bundle directory works as well; the existing annotations are used.
	again := build(t, "-d", "b", "-t", "oci:layout:2")
	assert.Equal(t, out.Digest, again.Digest)

	// New flags regenerate them (--overwrite for a changed channel list).
	r = o.Run("bundle", "build", "-d", "b", "-c", "alpha", "-t", "oci:layout:3")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "--overwrite")
	changed := build(t, "-d", "b", "-c", "alpha", "--overwrite", "-t", "oci:layout:3")
	assert.Equal(t, "alpha", changed.Labels[bundle.AnnotationDefaultChannel])
	assert.NotEqual(t, out.Digest, changed.Digest)
}

func TestBundleBuildUsageErrors(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	tag := "oci:" + filepath.Join(dir, "layout") + ":1"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no directory", []string{"-t", tag}, "--directory is required"},
		{"no tag", []string{"-d", validBundle}, "--tag is required"},
		{"missing directory", []string{"-d", filepath.Join(dir, "nope"), "-t", tag}, "no such directory"},
		{"bad tag", []string{"-d", validBundle, "-t", "Not A Ref"}, "--tag Not A Ref"},
		{"unknown builder", []string{"-d", validBundle, "-t", "example.com/b:1", "-b", "kaniko"}, `unknown image builder "kaniko"`},
		{"builder with a layout", []string{"-d", validBundle, "-t", tag, "-b", "podman"}, "drop --image-builder"},
		{"conflicting TLS flags", []string{"-d", validBundle, "-t", tag, "--use-http", "--skip-tls-verify"}, "mutually exclusive"},
		{"bad fail-on", []string{"-d", validBundle, "-t", tag, "--fail-on", "fatal"}, `invalid --fail-on "fatal"`},
		{"arguments", []string{"-d", validBundle, "-t", tag, "extra"}, "opm bundle build takes no arguments, got \"extra\"\nUsage: opm bundle build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := o.Run(append([]string{"bundle", "build"}, tc.args...)...)
			assert.Equal(t, exit.Usage, r.Code, r.ErrOut)
			assert.Contains(t, r.ErrOut, tc.want)
			assert.Empty(t, r.Out)
		})
	}
	assert.NoDirExists(t, filepath.Join(dir, "layout"))
}

func TestBundleBuildMissingTool(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	// A child process, whose PATH holds no container tool.
	o.Dir = t.TempDir()
	o.ProcEnv["PATH"] = t.TempDir()
	valid, err := filepath.Abs(validBundle)
	require.NoError(t, err)
	r := o.Run("bundle", "build", "-d", valid, "-t", "example.com/b:1", "-b", "buildah")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "buildah not found in PATH: install it or drop --image-builder")
}
