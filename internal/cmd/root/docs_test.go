package root_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const referenceDir = "../../../docs/reference"

// TestCommandReferenceDocs checks that docs/reference/ is the reference the
// command tree generates, and with UPDATE_DOCS=1 (make docs) rewrites it.
// A new command or flag shows up here without any change to this test.
func TestCommandReferenceDocs(t *testing.T) {
	t.Parallel()
	want := markdownReference(docRoot())
	require.Contains(t, want, "opm.md")
	require.Contains(t, want, "opm_completion_bash.md")

	existing := map[string]bool{}
	entries, err := os.ReadDir(referenceDir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			existing[e.Name()] = true
		}
	}

	if os.Getenv("UPDATE_DOCS") != "" {
		require.NoError(t, os.MkdirAll(referenceDir, 0o755))
		for name, content := range want {
			require.NoError(t, os.WriteFile(filepath.Join(referenceDir, name), []byte(content), 0o644))
		}
		for name := range existing {
			if _, ok := want[name]; !ok {
				require.NoError(t, os.Remove(filepath.Join(referenceDir, name)))
			}
		}
		return
	}

	var stale []string
	for name, content := range want {
		got, err := os.ReadFile(filepath.Join(referenceDir, name))
		if err != nil || string(got) != content {
			stale = append(stale, name)
		}
	}
	for name := range existing {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" (no such command any more)")
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Fatalf("docs/reference is out of date with the command tree; run `make docs` and commit the result.\nstale: %s",
			strings.Join(stale, ", "))
	}
}

func TestMarkdownReferenceContent(t *testing.T) {
	t.Parallel()
	files := markdownReference(docRoot())
	page := files["opm_bundle_validate.md"]
	require.NotEmpty(t, page)
	assert.Contains(t, page, "# opm bundle validate\n")
	assert.Contains(t, page, "| `--fail-on string` | `OPM_FAIL_ON` | `error` |")
	// --list-rules is an action: no environment variable sets it.
	assert.Contains(t, page, "| `--list-rules` |  |  |")
	assert.Contains(t, page, "## Global flags")
	assert.Contains(t, page, "`OPM_CONFIG`")
	// A command's own --config is not opm's config file: no variable.
	for _, name := range []string{"opm_alpha_mirror.md", "opm_alpha_filter.md", "opm_index_filter.md"} {
		assert.Contains(t, files[name], "| `--config string` |  |", name)
		assert.NotContains(t, files[name], "`OPM_CONFIG`", name)
	}
	assert.Contains(t, files["opm.md"], "| `--config string` | `OPM_CONFIG` |")
	assert.Contains(t, page, "[opm bundle](opm_bundle.md)")
	assert.Contains(t, page, "## Examples\n\n```sh\nopm bundle validate ./bundle\n")

	root := files["opm.md"]
	for _, sub := range docCommands(docRoot())[1:] {
		assert.Contains(t, root, "]("+docFileName(sub)+")", "root page lists %s", sub.CommandPath())
	}
	assert.NotContains(t, root, "opm_help.md")
}

func TestMdText(t *testing.T) {
	got := mdText("One <plural>.<group> and operators/*/*/.\n\n  opm x\n  opm y\nafter")
	assert.Equal(t, "One &lt;plural&gt;.&lt;group&gt; and operators/\\*/\\*/.\n\n```\nopm x\nopm y\n```\n\nafter\n", got)
}

// TestManPages renders a man page per command. With MAN_DIR set (make man,
// used by the release) it writes them there; otherwise it checks that groff,
// when installed, renders every page without a warning.
func TestManPages(t *testing.T) {
	t.Parallel()
	pages := manPages(docRoot())
	require.Contains(t, pages, "opm.1")
	require.Contains(t, pages, "opm-bundle-validate.1")
	assert.Contains(t, pages["opm-bundle-validate.1"], `\fB\-\-fail\-on string\fR`)

	if dir := os.Getenv("MAN_DIR"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for name, content := range pages {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
		}
		t.Logf("wrote %d man pages to %s", len(pages), dir)
	}

	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Log("groff not installed: man pages not rendered")
		return
	}
	for name, content := range pages {
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-P-c", "-P-b", "-P-u")
		cmd.Stdin = strings.NewReader(content)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Run(), "%s: %s", name, errOut.String())
		assert.Empty(t, errOut.String(), "groff warnings for %s", name)
		assert.Contains(t, out.String(), "NAME", name)
	}
}

// TestCompletion checks the completion command users install scripts from,
// and that completion requests reach the real command tree.
func TestCompletion(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	markers := map[string]string{
		"bash":       "# bash completion V2 for opm",
		"zsh":        "#compdef opm",
		"fish":       "complete -c opm",
		"powershell": "Register-ArgumentCompleter",
	}
	for shell, marker := range markers {
		r := o.Run("completion", shell)
		require.Equal(t, exit.OK, r.Code, "%s: %s", shell, r.ErrOut)
		assert.Contains(t, r.Out, marker, shell)
		assert.Empty(t, r.ErrOut, shell)
	}

	if bash, err := exec.LookPath("bash"); err == nil {
		r := o.Run("completion", "bash")
		cmd := exec.Command(bash, "-n")
		cmd.Stdin = strings.NewReader(r.Out)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "bash -n: %s", out)
	}

	r := o.Run("__complete", "bundle", "val")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "validate\t")

	r = o.Run("__complete", "bundle", "validate", "--fail")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "--fail-on")
}
