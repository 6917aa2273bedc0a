package httpcatalog_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/httpcatalog"
)

// FuzzBuild: whatever a catalog file holds, Build either refuses it or
// stores one JSON object per line, and every query answers whole lines of
// the stored file whose keys match.
func FuzzBuild(f *testing.F) {
	for _, s := range []string{
		files["a/catalog.json"],
		`{"schema":"x","package":"p","name":"n"}{"schema":"x"}`,
		`{"Schema":"x","NAME":"n","value":[1,2.5,"<&>"]}`,
		`null`,
		`{"schema":1,"package":{"a":1}}`,
		"{\"schema\":\"x\",\"name\":\"\\u00e9\\n\"}\n",
	} {
		f.Add(s, "x", "p", "n")
	}
	f.Fuzz(func(t *testing.T, data, schema, pkg, name string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := httpcatalog.Build(os.DirFS(dir), t.TempDir())
		if err != nil {
			return
		}
		defer s.Close()
		all, err := io.ReadAll(s.All())
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(all, []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		if len(lines) != s.Blobs() {
			t.Fatalf("%d lines for %d blobs", len(lines), s.Blobs())
		}
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal(l, &m); err != nil || m == nil || l[len(l)-1] != '\n' || bytes.Count(l, []byte("\n")) != 1 {
				t.Fatalf("line %q is not one JSON object", l)
			}
		}
		got, err := io.ReadAll(s.Query(schema, pkg, name))
		if err != nil {
			t.Fatal(err)
		}
		rest := got
		for len(rest) > 0 {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 || !bytes.Contains(all, rest[:i+1]) {
				t.Fatalf("query answer %q holds a partial line", got)
			}
			rest = rest[i+1:]
		}
	})
}
