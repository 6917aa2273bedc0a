package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"
)

// These tests need no registry or container tool: they write OCI layouts
// and archives. build_integration_test.go uses the real ones.

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
	r := opm(t, append([]string{"bundle", "build", "-o", "json"}, args...)...)
	require.Equal(t, exitOK, r.code, r.errOut)
	var out buildOutput
	require.NoError(t, json.Unmarshal([]byte(r.out), &out), r.out)
	require.NotNil(t, out.Findings, "findings is an array, never null")
	return out
}

// validateFindings validates args (one bundle) and returns its findings.
func validateFindings(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	r := opm(t, append([]string{"bundle", "validate", "-o", "json"}, args...)...)
	require.Contains(t, []int{exitOK, exitFailed}, r.code, r.errOut)
	doc := decodeReport(t, r.out)
	require.Len(t, doc["bundles"], 1)
	return findings(doc, 0)
}

func TestBundleBuildLayoutsDeterministic(t *testing.T) {
	isolate(t)
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
	r := opm(t, "bundle", "build", "-d", validBundle, "-t", layout)
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.Contains(t, r.errOut, "wrote "+layout)
	assert.Contains(t, r.errOut, "digest: "+first.Digest)
	assert.Empty(t, r.out)

	// Each copy validates exactly as the directory does.
	want := validateFindings(t, validBundle)
	for _, ref := range []string{layout, archive, ociArchive} {
		assert.Equal(t, want, validateFindings(t, ref), ref)
	}
}

func TestBundleBuildStopsOnFailingFindings(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	layout := filepath.Join(dir, "layout")
	r := opm(t, "bundle", "build", "-d", syntaxBundle, "-t", "oci:"+layout+":1")
	assert.Equal(t, exitFailed, r.code)
	assert.Contains(t, r.errOut, "yaml-syntax")
	assert.Contains(t, r.errOut, "not building oci:"+layout+":1")
	assert.Contains(t, r.errOut, "--permissive")
	assert.NoDirExists(t, layout, "nothing is written when validation fails")

	// -o json prints the validation report, as bundle validate would.
	r = opm(t, "bundle", "build", "-o", "json", "-d", syntaxBundle, "-t", "oci:"+layout+":1")
	assert.Equal(t, exitFailed, r.code)
	assert.Contains(t, rulesOf(findings(decodeReport(t, r.out), 0)), "yaml-syntax")

	// --permissive builds anyway and still shows the findings.
	r = opm(t, "bundle", "build", "--permissive", "-d", syntaxBundle, "-t", "oci:"+layout+":1")
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.Contains(t, r.errOut, "yaml-syntax")
	assert.Contains(t, r.errOut, "digest: sha256:")
	assert.DirExists(t, layout)

	// --skip and --select choose the rules, as for bundle validate.
	ok := build(t, "-d", syntaxBundle, "-t", "oci:"+layout+":2", "--skip", "yaml-syntax,csv-owned-crd-present")
	assert.NotEmpty(t, ok.Digest)
}

func TestBundleBuildGeneratesMetadata(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	b := filepath.Join(dir, "b")
	require.NoError(t, os.CopyFS(b, os.DirFS(validBundle)))
	require.NoError(t, os.RemoveAll(filepath.Join(b, "metadata")))
	t.Chdir(dir)

	// Upstream's -d: the manifests directory. Without channels there is
	// nothing to generate the annotations from.
	r := opm(t, "bundle", "build", "-d", "b/manifests", "-t", "oci:layout:1")
	assert.Equal(t, exitFailed, r.code)
	assert.Contains(t, r.errOut, "no channels")

	out := build(t, "-d", "b/manifests", "-p", "example-operator", "-c", "stable,fast", "-e", "stable", "-t", "oci:layout:1")
	assert.Equal(t, "stable,fast", out.Labels[bundle.AnnotationChannels])
	assert.FileExists(t, "b/metadata/annotations.yaml")
	assert.NoFileExists(t, "bundle.Dockerfile", "an in-process build writes no Dockerfile")

	// The bundle directory works as well; the existing annotations are used.
	again := build(t, "-d", "b", "-t", "oci:layout:2")
	assert.Equal(t, out.Digest, again.Digest)

	// New flags regenerate them (--overwrite for a changed channel list).
	r = opm(t, "bundle", "build", "-d", "b", "-c", "alpha", "-t", "oci:layout:3")
	assert.Equal(t, exitFailed, r.code)
	assert.Contains(t, r.errOut, "--overwrite")
	changed := build(t, "-d", "b", "-c", "alpha", "--overwrite", "-t", "oci:layout:3")
	assert.Equal(t, "alpha", changed.Labels[bundle.AnnotationDefaultChannel])
	assert.NotEqual(t, out.Digest, changed.Digest)
}

func TestBundleBuildUsageErrors(t *testing.T) {
	isolate(t)
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
		{"arguments", []string{"-d", validBundle, "-t", tag, "extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := opm(t, append([]string{"bundle", "build"}, tc.args...)...)
			assert.Equal(t, exitUsage, r.code, r.errOut)
			assert.Contains(t, r.errOut, tc.want)
			assert.Empty(t, r.out)
		})
	}
	assert.NoDirExists(t, filepath.Join(dir, "layout"))
}

func TestBundleBuildMissingTool(t *testing.T) {
	isolate(t)
	t.Setenv("PATH", t.TempDir())
	r := opm(t, "bundle", "build", "-d", validBundle, "-t", "example.com/b:1", "-b", "buildah")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, "buildah not found in PATH: install it or drop --image-builder")
}

// writeImage writes the valid bundle as an image with these labels.
func writeImage(t *testing.T, ref string, labels map[string]string) {
	t.Helper()
	img, err := image.BuildBundleImage(os.DirFS(validBundle), labels)
	require.NoError(t, err)
	c, err := image.NewClient(image.Options{})
	require.NoError(t, err)
	r, err := image.ParseReference(ref)
	require.NoError(t, err)
	_, err = c.Write(context.Background(), img, r)
	require.NoError(t, err)
}

func validAnnotations(t *testing.T) map[string]string {
	t.Helper()
	b, err := bundle.LoadDir(validBundle)
	require.NoError(t, err)
	return b.Annotations.Values
}

func TestBundleValidateImageLabelMismatch(t *testing.T) {
	isolate(t)
	labels := validAnnotations(t)
	labels[bundle.AnnotationPackage] = "other-operator"
	ref := "oci:" + filepath.Join(t.TempDir(), "layout") + ":1"
	writeImage(t, ref, labels)

	r := opm(t, "bundle", "validate", "-o", "json", ref)
	assert.Equal(t, exitFailed, r.code, r.errOut)
	fs := findings(decodeReport(t, r.out), 0)
	require.Equal(t, []string{"image-labels"}, rulesOf(fs))
	assert.Equal(t, "metadata/annotations.yaml", fs[0]["file"])
	assert.Contains(t, fs[0]["message"], `"other-operator"`)
	assert.Contains(t, fs[0]["message"], `"example-operator"`)

	// The directory has no labels to compare.
	assert.Empty(t, validateFindings(t, validBundle))
}

func TestBundleValidateArguments(t *testing.T) {
	isolate(t)
	dir := t.TempDir()

	// A mistyped path is not sent to a registry.
	r := opm(t, "bundle", "validate", "bundles/etcd")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, "bundles/etcd: no such directory, and not an image reference")

	// An image that cannot be opened is reported, and is an I/O error.
	missing := "oci:" + filepath.Join(dir, "nope") + ":1"
	r = opm(t, "bundle", "validate", "-o", "json", missing, validBundle)
	assert.Equal(t, exitUsage, r.code)
	doc := decodeReport(t, r.out)
	assert.Equal(t, []string{"bundle-load"}, rulesOf(findings(doc, 0)))
	assert.Empty(t, findings(doc, 1))
	assert.Contains(t, r.errOut, "1 image(s) could not be opened")
}

func TestBundleValidateImageProgress(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	var refs []string
	for _, tag := range []string{"a", "b", "c"} {
		ref := "oci:" + filepath.Join(dir, "layout") + ":" + tag
		writeImage(t, ref, validAnnotations(t))
		refs = append(refs, ref)
	}
	// On a terminal: a count on one line, erased before the report. The
	// three are one CSV thrice, so the package rules complain.
	r := opmTTY(t, append([]string{"bundle", "validate"}, refs...)...)
	assert.Contains(t, r.errOut, "pulled 3/3")
	assert.Contains(t, r.errOut, "\r\033[K")
	assert.Contains(t, r.errOut, "3 bundles")

	// Not on a terminal: nothing but the report.
	r = opm(t, append([]string{"bundle", "validate"}, refs...)...)
	assert.NotContains(t, r.errOut, "pulled")
	assert.False(t, strings.Contains(r.errOut, "\r"))

	// A directory alone shows no progress either.
	r = opmTTY(t, "bundle", "validate", validBundle)
	assert.NotContains(t, r.errOut, "pulled")
}
