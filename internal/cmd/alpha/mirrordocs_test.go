package alpha_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
)

// TestMirroringDocWalk walks docs/mirroring.md as written: its files
// (```yaml blocks starting "# file: NAME") are written, and every line of
// its ```sh blocks runs in order (opm lines as opm, ls and oc apply as
// checks that what they read exists), with $CATALOG, $SMALL, $EXTRA and
// $MIRROR two local registries (in the files too).
func TestMirroringDocWalk(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	catalog := src.Ref("olm/operators:v1")
	corpusCatalog(t, o, src, catalog)
	extra := src.Ref("tools/must-gather:v1")
	pushTagged(t, extra)
	vars := strings.NewReplacer("$CATALOG", catalog, "$SMALL", src.Ref("olm/operators:v1-small"), "$MIRROR", dst.Addr, "$EXTRA", extra)

	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "mirroring.md"))
	require.NoError(t, err)
	work := t.TempDir()
	o.Dir = work
	o.Env["OPM_USE_HTTP"] = "true"
	ran := 0
	// results holds the last run of each opm line.
	results := map[string]cmdtest.Result{}
	for _, block := range fencedBlocks(string(raw)) {
		switch block.lang {
		case "yaml":
			first, rest, _ := strings.Cut(block.text, "\n")
			if file, ok := strings.CutPrefix(first, "# file: "); ok {
				require.NoError(t, os.WriteFile(filepath.Join(work, file), []byte(vars.Replace(rest)), 0o644))
			}
		case "sh":
			for _, line := range strings.Split(block.text, "\n") {
				line, _, _ = strings.Cut(line, "#")
				fields := strings.Fields(vars.Replace(line))
				switch {
				case len(fields) == 0:
				case fields[0] == "opm":
					r := o.Run(fields[1:]...)
					require.Equal(t, exit.OK, r.Code, "docs/mirroring.md: %s\n%s", line, r.ErrOut)
					results[strings.TrimSpace(line)] = r
					ran++
				case len(fields) == 3 && fields[0] == "registry" && fields[1] == "garbage-collect":
					// The mirror registry's own garbage collection, on its
					// configuration.
					out, err := exec.Command(registrytest.Binary, "garbage-collect", filepath.Join(dst.Dir, "config.yml")).CombinedOutput()
					require.NoError(t, err, "docs/mirroring.md: %s\n%s", line, out)
				case fields[0] == "ls", fields[0] == "oc" && len(fields) == 4 && fields[1] == "apply" && fields[2] == "-f":
					_, err := os.Stat(filepath.Join(work, fields[len(fields)-1]))
					require.NoError(t, err, "docs/mirroring.md: %s", line)
				default:
					t.Fatalf("docs/mirroring.md: a line this walk cannot run: %q (run it here or change the doc)", line)
				}
			}
		}
	}
	assert.GreaterOrEqual(t, ran, 8, "the opm lines of the page")
	// The one-step run: the filtered catalog (etcd only) and the
	// additional image.
	isc := readFile(t, filepath.Join(work, "manifests-isc", "mapping.txt"))
	assert.Contains(t, isc, extra+"="+dst.Addr+"/olm/tools/must-gather@sha256:")
	assert.Contains(t, isc, catalog+"="+dst.Addr+"/olm/olm/operators@sha256:")
	assert.Contains(t, isc, "etcd-bundle:0.9.2=")
	assert.NotContains(t, isc, "pelorus")
	assert.NotContains(t, isc, "etcd-bundle:0.9.0=")
	assert.Contains(t, results["opm alpha mirror --from-dir mirror/ --to $MIRROR/olm --manifests-dir manifests/"].ErrOut, "0 copied", "the rerun finds the mirror complete")
	// The monthly update: the kept reports keep both catalogs' images,
	// the additional image included; everything they need is still there.
	prune := results["opm alpha mirror prune --to $MIRROR/olm --keep $MIRROR/olm/opm-mirror-reports:operators-v1-small --keep $MIRROR/olm/opm-mirror-reports:operators-v1"]
	assert.Contains(t, prune.ErrOut, "dry run: nothing is deleted without --confirm")
	assert.NotContains(t, prune.ErrOut, "must-gather")
	for _, line := range strings.Split(strings.TrimSpace(isc), "\n") {
		_, mirrored, _ := strings.Cut(line, "=")
		out, err := skopeoAt("copy", "--all", "--src-tls-verify=false", "docker://"+mirrored, "oci:"+filepath.Join(t.TempDir(), "o")+":x")
		assert.NoError(t, err, "after prune --confirm and garbage-collect: %s: %s", mirrored, out)
	}
	for _, f := range []string{"imagedigestmirrorset.yaml", "imagetagmirrorset.yaml", "catalogsource-operators-v1-small.yaml", "clustercatalog-operators-v1-small.yaml", "mapping.txt"} {
		_, err := os.Stat(filepath.Join(work, "manifests", f))
		assert.NoError(t, err, "docs/mirroring.md promises %s", f)
	}
}

type fenced struct{ lang, text string }

// fencedBlocks returns the ``` blocks of a Markdown text.
func fencedBlocks(md string) []fenced {
	var out []fenced
	var cur *fenced
	var lines []string
	for _, line := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &fenced{lang: strings.TrimPrefix(line, "```")}
			lines = nil
		case cur != nil && strings.HasPrefix(line, "```"):
			cur.text = strings.Join(lines, "\n")
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			lines = append(lines, line)
		}
	}
	return out
}
