// Package precommit tests the hooks of .pre-commit-hooks.yaml with the real
// pre-commit tool: a throwaway git repository uses them (through repo: local,
// the only kind that works offline) and commits good and bad bundles.
package precommit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// buildTags are the Makefile's TAGS: opm does not build without them once
// it links containers/image.
const buildTags = "containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub"

var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// hook is one entry of .pre-commit-hooks.yaml.
type hook struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Description   string `json:"description,omitempty"`
	Entry         string `json:"entry"`
	Language      string `json:"language"`
	Files         string `json:"files,omitempty"`
	PassFilenames *bool  `json:"pass_filenames,omitempty"`
	RequireSerial bool   `json:"require_serial,omitempty"`
}

func readHooks(t *testing.T) []hook {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, ".pre-commit-hooks.yaml"))
	require.NoError(t, err)
	var hooks []hook
	require.NoError(t, yaml.UnmarshalStrict(data, &hooks))
	return hooks
}

// TestHooksFile checks the shape of .pre-commit-hooks.yaml: both hooks, each
// in a golang and a system variant that run the same thing on the same files.
func TestHooksFile(t *testing.T) {
	byID := map[string]hook{}
	for _, h := range readHooks(t) {
		require.NotContains(t, byID, h.ID, "duplicate hook id")
		byID[h.ID] = h
	}
	for _, id := range []string{"opm-bundle-validate", "opm-csv-lint"} {
		g, ok := byID[id]
		require.True(t, ok, "hook %s", id)
		s, ok := byID[id+"-system"]
		require.True(t, ok, "hook %s-system", id)
		assert.Equal(t, "golang", g.Language, id)
		assert.Equal(t, "system", s.Language, id)
		assert.Equal(t, g.Entry, s.Entry, id)
		assert.Equal(t, g.Files, s.Files, id)
		assert.True(t, g.PassFilenames == nil || *g.PassFilenames, id)
		assert.True(t, strings.HasPrefix(g.Entry, "opm "), id)
	}
	assert.Equal(t, `\.clusterserviceversion\.ya?ml$`, byID["opm-csv-lint"].Files)
}

// needTools skips the test when a tool is missing, except in CI, where the
// test must run.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed, and CI=true requires this test to run (apt-get install -y pre-commit)", tool)
			}
			t.Skipf("%s is not installed (apt-get install -y pre-commit); skipping the pre-commit hook test", tool)
		}
	}
}

// buildOpm builds opm into dir and returns dir, for PATH.
func buildOpm(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-tags", buildTags, "-o", filepath.Join(dir, "opm"), "./cmd/opm")
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return dir
}

// gitRepo is a throwaway repository whose commands run with a clean,
// deterministic git and pre-commit environment.
type gitRepo struct {
	t   *testing.T
	dir string
	env []string
}

func (r *gitRepo) run(name string, args ...string) (string, error) {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (r *gitRepo) must(name string, args ...string) string {
	r.t.Helper()
	out, err := r.run(name, args...)
	require.NoError(r.t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return out
}

func (r *gitRepo) copyDir(src, dst string) {
	r.t.Helper()
	dst = filepath.Join(r.dir, dst)
	require.NoError(r.t, os.RemoveAll(dst))
	require.NoError(r.t, os.CopyFS(dst, os.DirFS(filepath.Join(repoRoot, src))))
}

func (r *gitRepo) writeFile(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
}

// newRepo makes a git repository whose .pre-commit-config.yaml holds the
// given hooks under repo: local, with pre-commit installed as its git hook
// and opmBin first on PATH.
func newRepo(t *testing.T, opmBin string, hooks []hook) *gitRepo {
	t.Helper()
	home := t.TempDir()
	r := &gitRepo{t: t, dir: t.TempDir()}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "OPM_") || strings.HasPrefix(k, "PRE_COMMIT") ||
			k == "PATH" || k == "HOME" || k == "XDG_CONFIG_HOME" || k == "XDG_CACHE_HOME" {
			continue
		}
		r.env = append(r.env, kv)
	}
	r.env = append(r.env,
		"PATH="+opmBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"PRE_COMMIT_HOME="+filepath.Join(home, "pre-commit"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=opm test", "GIT_AUTHOR_EMAIL=opm@example.com",
		"GIT_COMMITTER_NAME=opm test", "GIT_COMMITTER_EMAIL=opm@example.com",
		"NO_COLOR=1", "TERM=dumb",
	)
	r.must("git", "init", "-q", "-b", "main")

	cfg := map[string]any{"repos": []any{map[string]any{"repo": "local", "hooks": hooks}}}
	data, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	r.writeFile(".pre-commit-config.yaml", string(data))
	r.writeFile("README.md", "operators\n")
	r.must("pre-commit", "install")
	r.must("git", "add", ".")
	r.must("git", "commit", "-q", "-m", "start")
	return r
}

func systemHooks(t *testing.T) []hook {
	var hooks []hook
	for _, h := range readHooks(t) {
		if h.Language == "system" {
			hooks = append(hooks, h)
		}
	}
	require.Len(t, hooks, 2)
	return hooks
}

// TestPreCommitHooks commits bad bundles and CSVs, sees pre-commit refuse
// them with opm's findings, then commits good ones.
func TestPreCommitHooks(t *testing.T) {
	needTools(t, "git", "pre-commit", "go")
	r := newRepo(t, buildOpm(t), systemHooks(t))

	// A bundle whose CSV breaks four rules, and a lone CSV that does not
	// parse, outside any bundle (operator-sdk's config/manifests/bases).
	r.copyDir("testdata/bundles/lint-four", "operators/example/0.1.0")
	r.copyDir("testdata/csv", "config/manifests/bases")
	require.NoError(t, os.Remove(filepath.Join(r.dir, "config/manifests/bases/not-a-csv.yaml")))
	r.must("git", "add", ".")
	out, err := r.run("git", "commit", "-m", "bad bundle")
	require.Error(t, err, "the commit must be refused:\n%s", out)
	t.Logf("refused commit:\n%s", out)
	assert.Regexp(t, `opm bundle validate\.+Failed`, out)
	assert.Regexp(t, `opm csv lint\.+Failed`, out)
	for _, rule := range []string{"csv-release-format", "csv-min-kube-version-format", "csv-install-modes", "csv-owned-crd-present"} {
		assert.Contains(t, out, rule)
	}
	assert.Contains(t, out, "operators/example/0.1.0")
	assert.Contains(t, out, "yaml-syntax")
	assert.Contains(t, out, "config/manifests/bases/syntax-error.clusterserviceversion.yaml:7")
	head := r.must("git", "rev-list", "--count", "HEAD")
	assert.Equal(t, "1", strings.TrimSpace(head), "nothing was committed")

	// Fix both: the bundle becomes valid, the broken CSV goes.
	r.copyDir("testdata/bundles/valid", "operators/example/0.1.0")
	r.must("git", "rm", "-q", "--cached", "config/manifests/bases/syntax-error.clusterserviceversion.yaml")
	require.NoError(t, os.Remove(filepath.Join(r.dir, "config/manifests/bases/syntax-error.clusterserviceversion.yaml")))
	r.must("git", "add", "-A")
	out, err = r.run("git", "commit", "-m", "good bundle")
	require.NoError(t, err, "the commit must pass:\n%s", out)
	assert.Regexp(t, `opm bundle validate\.+Passed`, out)
	assert.Regexp(t, `opm csv lint\.+Passed`, out)
	head = r.must("git", "rev-list", "--count", "HEAD")
	assert.Equal(t, "2", strings.TrimSpace(head))

	// A commit that touches no bundle and no CSV runs neither hook.
	r.writeFile("README.md", "operators, documented\n")
	r.must("git", "add", "README.md")
	out = r.must("git", "commit", "-m", "docs")
	assert.Regexp(t, `opm bundle validate\.+\(no files to check\)Skipped`, out)

	// Touching only the bundle's metadata still validates the whole bundle:
	// an annotations.yaml without a package name is refused.
	ann := filepath.Join(r.dir, "operators/example/0.1.0/metadata/annotations.yaml")
	data, err := os.ReadFile(ann)
	require.NoError(t, err)
	require.Contains(t, string(data), "operators.operatorframework.io.bundle.package.v1:")
	var broken []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, "bundle.package.v1:") {
			broken = append(broken, l)
		}
	}
	require.NoError(t, os.WriteFile(ann, []byte(strings.Join(broken, "\n")), 0o644))
	r.must("git", "add", "-A")
	out, err = r.run("git", "commit", "-m", "drop the package annotation")
	require.Error(t, err, "the commit must be refused:\n%s", out)
	assert.Regexp(t, `opm bundle validate\.+Failed`, out)
	assert.Contains(t, out, "operators/example/0.1.0")
}
