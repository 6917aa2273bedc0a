package build_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"

	"github.com/opmkit/opm/internal/shareddata"
)

// corpusBundle returns the etcd bundle of the shared corpus, or skips
// (fails under CI=true).
func corpusBundle(t *testing.T) string {
	t.Helper()
	return filepath.Dir(shareddata.Require(t, "corpus", "real", "etcd", "0.9.4", "manifests"))
}

// tool runs a real command and returns its stdout.
func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	registrytest.RequireTool(t, name)
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s %s\n%s", name, strings.Join(args, " "), stderr.String())
	return string(out)
}

// The acceptance check of issue 3: build and push the real etcd bundle to
// a real registry, read it with skopeo, and validate every copy of it.
func TestBundleBuildPushValidateRealRegistry(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := corpusBundle(t)
	registrytest.RequireTool(t, "skopeo")
	reg := registrytest.Start(t)
	ref := reg.Ref("etcd-bundle:0.9.4")

	first := build(t, "-d", dir, "-t", ref, "--use-http")
	assert.Equal(t, ref, first.Ref)
	// Building (and pushing) again gives the same digest.
	assert.Equal(t, first.Digest, build(t, "-d", dir, "-t", ref, "--use-http").Digest)
	r := o.Run("bundle", "build", "-d", dir, "-t", ref, "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "pushed "+ref+"\ndigest: "+first.Digest)

	// skopeo, an independent reader, sees the digest and the labels.
	var inspect struct {
		Digest string
		Labels map[string]string
	}
	require.NoError(t, json.Unmarshal([]byte(tool(t, "skopeo", "inspect", "--tls-verify=false", "docker://"+ref)), &inspect))
	assert.Equal(t, first.Digest, inspect.Digest)
	b, err := bundle.LoadDir(dir)
	require.NoError(t, err)
	for k, v := range b.Annotations.Values {
		assert.Equal(t, v, inspect.Labels[k], k)
	}
	assert.Equal(t, "etcd", inspect.Labels[bundle.AnnotationPackage])

	// Without --use-http, plain HTTP is refused: nothing is pushed in clear.
	r = o.Run("bundle", "build", "-d", dir, "-t", reg.Ref("etcd-bundle:plain"))
	assert.Equal(t, exit.Failed, r.Code, "a registry failure is 1, as on index add")
	assert.Contains(t, r.ErrOut, "--use-http")

	// The image validates exactly as the directory, and so do skopeo's
	// copies of it in an OCI layout and a docker archive.
	want := validateFindings(t, dir)
	require.NotEmpty(t, want, "the etcd bundle has a warning to compare")
	assert.Equal(t, want, validateFindings(t, ref, "--use-http"), ref)
	tmp := t.TempDir()
	layout := "oci:" + filepath.Join(tmp, "layout") + ":0.9.4"
	archive := "docker-archive:" + filepath.Join(tmp, "etcd.tar")
	for _, dst := range []string{layout, archive + ":etcd-bundle:0.9.4"} {
		tool(t, "skopeo", "copy", "--quiet", "--src-tls-verify=false", "docker://"+ref, dst)
	}
	assert.Equal(t, want, validateFindings(t, layout), layout)
	assert.Equal(t, want, validateFindings(t, archive), archive)

	// Several images at once (a report per image, in order), with
	// progress on a terminal.
	r = o.RunTTY("bundle", "validate", "--use-http", "--select", "image-labels,bundle-load", ref, layout, archive)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "pulled 3/3")
	assert.Contains(t, r.ErrOut, "3 bundles, 0 errors")
}

// A bundle image built by podman or buildah from the bundle.Dockerfile
// opm writes validates the same as the directory (and as opm's own build).
func TestBundleBuildWithImageBuilder(t *testing.T) {
	t.Parallel()
	// One tool after the other: podman and buildah share containers/storage,
	// the two builds make the same layers, and one's cleanup (rmi) removed
	// them while the other was committing ("layer not known").
	for _, name := range []string{"podman", "buildah"} {
		t.Run(name, func(t *testing.T) {
			o := cmdtest.New(t)
			src := corpusBundle(t)
			registrytest.RequireTool(t, name)
			work := t.TempDir()
			require.NoError(t, os.CopyFS(filepath.Join(work, "etcd"), os.DirFS(src)))
			o.Dir = work
			tag := fmt.Sprintf("localhost/opm-test/etcd-bundle:%s-%d", name, os.Getpid())
			outside := tag + "-outside"
			t.Cleanup(func() { _ = exec.Command(name, "rmi", "--force", tag, outside).Run() })

			r := o.Run("bundle", "build", "-d", "etcd", "-t", tag, "-b", name)
			require.Equal(t, exit.OK, r.Code, r.ErrOut)
			assert.Contains(t, r.ErrOut, "built "+tag+" with "+name)
			df, err := os.ReadFile(filepath.Join(work, "bundle.Dockerfile"))
			require.NoError(t, err, "bundle.Dockerfile is written in the working directory, as upstream")
			assert.Contains(t, string(df), "COPY etcd/manifests /manifests/")
			assert.Contains(t, string(df), "LABEL operators.operatorframework.io.bundle.package.v1=etcd")

			// Out of the tool's storage, through an OCI layout.
			layout := "oci:" + filepath.Join(work, "layout") + ":0.9.4"
			tool(t, name, "push", "--quiet", tag, layout)
			etcd := filepath.Join(work, "etcd")
			want := validateFindings(t, etcd)
			assert.Equal(t, want, validateFindings(t, layout))
			ours := "oci:" + filepath.Join(work, "ours") + ":0.9.4"
			build(t, "-d", etcd, "-t", ours)
			assert.Equal(t, validateFindings(t, ours), validateFindings(t, layout))

			// A bundle outside the working directory: the Dockerfile is
			// temporary and nothing is written into the bundle.
			o.Dir = t.TempDir()
			r = o.Run("bundle", "build", "-d", filepath.Join(work, "etcd"), "-t", outside, "-b", name)
			require.Equal(t, exit.OK, r.Code, r.ErrOut)
			assert.Contains(t, r.ErrOut, "temporary bundle.Dockerfile")
			assert.NoFileExists(t, filepath.Join(work, "etcd", "bundle.Dockerfile"))
		})
	}
}

// On a terminal, a push shows the bytes sent; off one, or with -o json,
// nothing but the result.
func TestBundleBuildPushProgress(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	reg := registrytest.Start(t)
	ref := reg.Ref("progress-bundle:0.1.0")
	r := o.RunTTY("bundle", "build", "-d", validBundle, "-t", ref, "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "\r\x1b[Kpushing "+ref+": ")
	assert.Contains(t, r.ErrOut, " sent\r\x1b[Kpushed "+ref+"\n")

	r = o.Run("bundle", "build", "-d", validBundle, "-t", ref, "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "\r")
	r = o.RunTTY("bundle", "build", "-d", validBundle, "-t", ref, "--use-http", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut+r.Out, "\r")
}
