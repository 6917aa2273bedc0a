package root_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// evil recolours the terminal when printed raw; shown is how human output
// prints it.
const (
	evil  = "\x1b[31m"
	shown = `\x1b[31m`
	// placeholder stands for evil where a name must pass validation first.
	placeholder = "zzq"
)

// writeEvilCatalog writes a file-based catalog of one package with two
// bundles in one channel, each name holding s.
func writeEvilCatalog(t *testing.T, dir, s string) {
	t.Helper()
	pkg, ch := "p"+s, "c"+s
	blobs := []any{
		map[string]any{"schema": "olm.package", "name": pkg, "defaultChannel": ch},
		map[string]any{"schema": "olm.channel", "package": pkg, "name": ch, "entries": []any{
			map[string]any{"name": "b" + s + ".v1.0.0"},
			map[string]any{"name": "b" + s + ".v1.1.0", "replaces": "b" + s + ".v1.0.0"},
		}},
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		blobs = append(blobs, map[string]any{"schema": "olm.bundle", "package": pkg, "name": "b" + s + ".v" + v,
			"image": "quay.io/x/b:" + v, "properties": []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": pkg, "version": v}}}})
	}
	var b strings.Builder
	for _, blob := range blobs {
		raw, err := json.Marshal(blob)
		require.NoError(t, err)
		b.Write(raw)
		b.WriteString("\n")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.json"), []byte(b.String()), 0o644))
}

// evilDatabase is a sqlite index whose package, channel and bundle names
// hold evil: a valid catalog migrated with opm, then renamed in sqlite
// (opm refuses such names on the way in).
func evilDatabase(t *testing.T, o *cmdtest.Runner) string {
	t.Helper()
	dir := t.TempDir()
	writeEvilCatalog(t, filepath.Join(dir, "cat"), placeholder)
	path := filepath.Join(dir, "index.db")
	r := o.Run("migrate", filepath.Join(dir, "cat"), path, "--to", "sqlite")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND p.type LIKE '%TEXT%'`)
	require.NoError(t, err)
	var cols [][2]string
	for rows.Next() {
		var c [2]string
		require.NoError(t, rows.Scan(&c[0], &c[1]))
		cols = append(cols, c)
	}
	require.NoError(t, rows.Close())
	for _, c := range cols {
		// JSON columns (CSV, bundle objects, property values) get the
		// escape JSON spells; the others the raw character.
		_, err := db.Exec(fmt.Sprintf(`UPDATE %q SET %q = CASE WHEN substr(%[2]q, 1, 1) IN ('{', '[') THEN replace(%[2]q, ?, '\u001b[31m') ELSE replace(%[2]q, ?, ?) END WHERE %[2]q LIKE ?`, c[0], c[1]),
			placeholder, placeholder, evil, "%"+placeholder+"%")
		require.NoError(t, err, "%s.%s", c[0], c[1])
	}
	var n int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM package WHERE name = ?`, "p"+evil).Scan(&n))
	require.Equal(t, 1, n, "the package was not renamed")
	return path
}

// noRawEscape fails when human output holds a raw ESC, and checks that
// the name is shown escaped.
func noRawEscape(t *testing.T, what, out string) {
	t.Helper()
	assert.NotContains(t, out, "\x1b", "%s: raw escape in the output:\n%q", what, out)
	assert.Contains(t, out, shown, "%s: the name is not shown escaped:\n%s", what, out)
}

// TestNamesWithControlCharactersAreShownEscaped: names holding an ANSI
// escape sequence reached the terminal raw (recolouring or clearing it)
// from every human output but validate's report. Each command's text
// output now shows them as \x1b; -o json stays exact.
func TestNamesWithControlCharactersAreShownEscaped(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	cat := filepath.Join(dir, "evil")
	writeEvilCatalog(t, cat, evil)
	clean := filepath.Join(dir, "clean")
	writeEvilCatalog(t, clean, placeholder)
	db := evilDatabase(t, o)

	r := o.Run("index", "inspect", db)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	noRawEscape(t, "index inspect", r.Out+r.ErrOut)
	assert.Contains(t, r.Out, "p"+shown+" (default channel c"+shown+")")

	r = o.Run("index", "inspect", db, "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var idx struct {
		Packages []struct{ Name string } `json:"packages"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &idx))
	require.Len(t, idx.Packages, 1)
	assert.Equal(t, "p"+evil, idx.Packages[0].Name, "JSON output must keep the name exact")

	for _, src := range []string{db, cat} {
		for _, what := range []string{"packages", "channels", "bundles"} {
			r = o.Run("alpha", "list", what, src)
			require.Equal(t, exit.OK, r.Code, r.ErrOut)
			noRawEscape(t, "alpha list "+what+" "+src, r.Out+r.ErrOut)
		}
	}
	r = o.Run("alpha", "list", "channels", cat)
	assert.Contains(t, r.Out, "p"+shown+"  c"+shown+"  b"+shown+".v1.1.0\n", "columns line up on the escaped names")

	for _, format := range []string{"text", "markdown"} {
		r = o.Run("diff", clean, cat, "-o", format)
		require.Contains(t, []int{exit.OK, 1}, r.Code, r.ErrOut)
		noRawEscape(t, "diff -o "+format, r.Out+r.ErrOut)
	}

	r = o.Run("validate", cat)
	noRawEscape(t, "validate", r.Out+r.ErrOut)

	bundleDir := filepath.Join(dir, "bundle")
	cmdtest.CopyDir(t, validBundle, bundleDir)
	csv := filepath.Join(bundleDir, "manifests", "example-operator.clusterserviceversion.yaml")
	raw, err := os.ReadFile(csv)
	require.NoError(t, err)
	require.Contains(t, string(raw), "\n  name: example-operator.v0.1.0\n")
	raw = []byte(strings.Replace(string(raw), "\n  name: example-operator.v0.1.0\n", "\n  name: \"example-operator\\e[31m.v0.1.0\"\n", 1))
	require.NoError(t, os.WriteFile(csv, raw, 0o644))
	r = o.Run("bundle", "validate", bundleDir)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	noRawEscape(t, "bundle validate", r.Out+r.ErrOut)

	// index add: the refusal (an error quoting the name), and with
	// --permissive the summary's skipped line.
	added := filepath.Join(dir, "added.db")
	r = o.Run("index", "add", "--bundles", bundleDir, "--database", added)
	assert.NotEqual(t, exit.OK, r.Code, r.ErrOut)
	noRawEscape(t, "index add (refused)", r.Out+r.ErrOut)
	r = o.Run("index", "add", "--bundles", bundleDir, "--database", added, "--permissive")
	noRawEscape(t, "index add --permissive", r.Out+r.ErrOut)
	assert.Contains(t, r.ErrOut, "skipped example-operator"+shown+".v0.1.0")

	// An error message quoting a name given on the command line.
	r = o.Run("alpha", "list", "bundles", cat, "nope"+evil)
	assert.Equal(t, exit.Failed, r.Code)
	noRawEscape(t, "alpha list bundles (not found)", r.Out+r.ErrOut)

	r = o.Run("index", "prune", "--database", db, "--packages", "p"+evil)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	noRawEscape(t, "index prune", r.Out+r.ErrOut)
	assert.Contains(t, r.ErrOut, "kept p"+shown+" in ")

	r = o.Run("index", "rm", "--database", db, "--operators", "p"+evil)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	noRawEscape(t, "index rm", r.Out+r.ErrOut)
	assert.Contains(t, r.ErrOut, "removed p"+shown+" (2 bundles)")
}
