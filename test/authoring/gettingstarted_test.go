package authoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/registrytest"
)

// step is one ```sh block of a doc and the output block that follows it
// (empty when none does).
type step struct {
	script, output string
}

// steps returns the shell steps of docs/name in order.
func steps(t *testing.T, name string) []step {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", name))
	require.NoError(t, err)
	var out []step
	for _, m := range regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```").FindAllSubmatch(doc, -1) {
		switch lang := string(m[1]); {
		case lang == "sh":
			out = append(out, step{script: string(m[2])})
		case lang == "" && len(out) > 0 && out[len(out)-1].output == "":
			out[len(out)-1].output = string(m[2])
		}
	}
	return out
}

// notWalked are the getting-started steps the walk leaves out, by their
// first word or words, and why.
var notWalked = map[string]string{
	"tar -xzf":       "installing a release archive: the test builds opm",
	"make build":     "the test builds opm",
	"opm completion": "writes into the user's shell configuration",
	"opm csv lint":   "names operator-sdk's config/ tree, which a bundle repository does not have",
	"opm bundle build -d example-operator/0.1.0 -t registry.example.com/example-operator-bundle:v0.1.0 \\\n  --image-builder podman": "needs podman and its storage (test/serving and internal/cmd/bundle/build cover it)",
}

// expectLines checks that every line of the doc's output block shows in
// out: "..." stands for any text, a sha256 digest for any digest.
func expectLines(t *testing.T, script, want, out string, names *strings.Replacer) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		line = names.Replace(strings.TrimSpace(line))
		re := regexp.QuoteMeta(line)
		re = strings.ReplaceAll(re, `\.\.\.`, `.*`)
		re = strings.ReplaceAll(re, `…`, `.*`)
		re = regexp.MustCompile(`sha256:[0-9a-f]{64}`).ReplaceAllString(re, `sha256:[0-9a-f]{64}`)
		assert.Regexp(t, regexp.MustCompile(`(?m)^\s*`+re+`\s*$`), out, "%s\nprints what the doc shows: %q", script, line)
	}
}

// TestGettingStartedAsWritten walks docs/getting-started.md: the doc's
// commands, in order, against a registry of its own standing for
// registry.example.com, and each output block the doc shows.
func TestGettingStartedAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: -short (builds opm and walks the guide against a registry)")
	}
	reg := registrytest.Start(t)
	bin := buildOpm(t)
	work := t.TempDir()
	base := pushBase(t, reg.Addr+"/base:1")
	sh := shell{t: t, dir: work, env: []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"OPM_USE_HTTP=true",        // the test registry is plain HTTP
		"OPM_BINARY_IMAGE=" + base, // a development build has no serving image of its own release
		"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
		"NO_COLOR=1",
	}}
	names := strings.NewReplacer("registry.example.com", reg.Addr)

	// The layout of section 2: the operator's manifests, no metadata yet.
	copyManifests := func(version, replaces string) {
		dir := filepath.Join(work, "example-operator", version, "manifests")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		src := filepath.Join(repoRoot, "testdata", "bundles", "valid", "manifests")
		crd, err := os.ReadFile(filepath.Join(src, "widgets.example.com.crd.yaml"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "widgets.example.com.crd.yaml"), crd, 0o644))
		csv, err := os.ReadFile(filepath.Join(src, "example-operator.clusterserviceversion.yaml"))
		require.NoError(t, err)
		s := strings.ReplaceAll(string(csv), "0.1.0", version)
		if replaces != "" {
			s = strings.Replace(s, "  version: "+version+"\n", "  version: "+version+"\n  replaces: "+replaces+"\n", 1)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "example-operator.clusterserviceversion.yaml"), []byte(s), 0o644))
	}
	copyManifests("0.1.0", "")

	walked := 0
	for _, st := range steps(t, "getting-started.md") {
		skip := ""
		for prefix, why := range notWalked {
			if strings.HasPrefix(st.script, prefix) {
				skip = why
			}
		}
		if skip != "" {
			t.Logf("not walked (%s): %s", skip, strings.SplitN(st.script, "\n", 2)[0])
			continue
		}
		script := st.script
		if strings.Contains(script, "my-catalog:2") && !strings.Contains(script, "index rm") && !strings.Contains(script, "index export") {
			// "When the next version is ready ... validate and build its
			// bundle image as above": 0.2.0, replacing 0.1.0.
			if _, err := os.Stat(filepath.Join(work, "example-operator", "0.2.0")); os.IsNotExist(err) {
				copyManifests("0.2.0", "example-operator.v0.1.0")
				sh.run("cd example-operator/0.2.0 && opm bundle generate -d manifests -c stable")
				sh.run(names.Replace("opm bundle validate example-operator/0.2.0 && opm bundle build -d example-operator/0.2.0 -t registry.example.com/example-operator-bundle:v0.2.0"))
			}
		}
		// Building with podman is the reader's own tool; opm's part runs.
		var lines []string
		for _, l := range strings.Split(script, "\n") {
			if !strings.HasPrefix(l, "podman ") {
				lines = append(lines, l)
			}
		}
		script = names.Replace(strings.Join(lines, "\n"))
		out := sh.run(script)
		walked++
		if st.output != "" {
			expectLines(t, st.script, st.output, out, names)
		}
	}
	assert.GreaterOrEqual(t, walked, 10, "the guide's steps were found and walked")
}

// TestSupplyChainCIRecipeAsWritten runs supply-chain.md's three lines as
// written over a bundle whose pull specs are all pinned (every line
// passes: a missing --allowed-registries is no finding), and the CI line
// over one with a tag (it fails, which is what it is for).
func TestSupplyChainCIRecipeAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: -short (builds opm)")
	}
	var recipe string
	for _, st := range steps(t, "supply-chain.md") {
		if strings.Contains(st.script, "--fail-on warning") {
			recipe = st.script
		}
	}
	require.NotEmpty(t, recipe, "supply-chain.md's CI recipe")
	bin := buildOpm(t)
	work := t.TempDir()
	sh := shell{t: t, dir: work, env: []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "NO_COLOR=1"}}
	src := filepath.Join(repoRoot, "testdata", "bundles", "valid")
	for _, f := range []string{"metadata/annotations.yaml", "manifests/widgets.example.com.crd.yaml", "manifests/example-operator.clusterserviceversion.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		s := strings.ReplaceAll(string(data), "quay.io/example/example-operator:v0.1.0",
			"quay.io/myorg/example-operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(work, "bundle", f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(work, "bundle", f), []byte(s), 0o644))
	}
	for _, line := range strings.Split(strings.TrimSpace(recipe), "\n") {
		sh.run(line) // each line passes on a pinned bundle (bash -e)
	}

	// The CI line fails a bundle with a tag in it.
	csv := filepath.Join(work, "bundle", "manifests", "example-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(csv, []byte(strings.Replace(string(data), "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", ":v0.1.0", 1)), 0o644))
	var ci string
	for _, line := range strings.Split(recipe, "\n") {
		if strings.Contains(line, "--fail-on warning") {
			ci, _, _ = strings.Cut(line, "#")
		}
	}
	cmd := exec.Command("bash", "-c", ci)
	cmd.Dir, cmd.Env = work, append(os.Environ(), sh.env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 1, ee.ExitCode(), "%s", out)
	assert.Contains(t, string(out), "image-pinned")
}
