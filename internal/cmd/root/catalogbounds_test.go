package root_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/iostreams"
)

// TestEveryCatalogReaderTakesTheBounds: a command that bounds the blobs
// and files it reads of a catalog (--max-blob-size) also bounds the blobs
// of the whole catalog and their nesting, and every command that reads a
// catalog directory refuses one past either, naming file, line and flag
// (issue 27 items 5 and 6: 5 million tiny blobs were read at 2-2.5 GB, a
// blob 9,990 deep rendered to 399 MB).
func TestEveryCatalogReaderTakesTheBounds(t *testing.T) {
	t.Parallel()
	s, _, _, _ := iostreams.Test()
	top := root.NewCmd(factory.NewWithEnv(s, map[string]string{}))
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("max-blob-size") != nil {
			for _, name := range []string{"max-blobs", "max-depth"} {
				if fl := c.Flags().Lookup(name); fl == nil || fl.Value.Type() != "count" {
					t.Errorf("%s has --max-blob-size but no count flag --%s", c.CommandPath(), name)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(top)

	many := t.TempDir() // 4 blobs, over --max-blobs 3 at line 4
	blobs := `{"schema":"olm.package","name":"p","defaultChannel":"s"}
{"schema":"olm.channel","name":"s","package":"p","entries":[]}
{"schema":"x","package":"p"}
{"schema":"x","package":"p"}
`
	if err := os.WriteFile(filepath.Join(many, "catalog.json"), []byte(blobs), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := t.TempDir() // a blob nested 9,990 deep on line 2, under the defaults
	blob := `{"schema":"olm.package","name":"p"}` + "\n" + `{"schema":"x","package":"p","v":` + strings.Repeat("[", 9989) + strings.Repeat("]", 9989) + "}\n"
	if err := os.WriteFile(filepath.Join(deep, "catalog.json"), []byte(blob), 0o644); err != nil {
		t.Fatal(err)
	}
	o := cmdtest.New(t)
	for _, c := range []struct {
		dir, flag, at, want string
	}{
		{many, "--max-blobs=3", "catalog.json:4", "the blob starting here is one more than the 3 blobs a catalog may hold"},
		{deep, "--max-depth=100", "catalog.json:2", "a value here is nested more than 100 deep (--max-depth)"},
	} {
		for name, args := range map[string][]string{
			"render":             {"render", c.dir},
			"migrate":            {"migrate", c.dir, filepath.Join(t.TempDir(), "out")},
			"validate":           {"validate", c.dir},
			"diff":               {"diff", c.dir, c.dir},
			"alpha list":         {"alpha", "list", "packages", c.dir},
			"alpha render-graph": {"alpha", "render-graph", c.dir},
			"serve --cache-only": {"serve", c.dir, "--cache-dir", t.TempDir(), "--cache-only", "-t", ""},
		} {
			r := o.Run(append(args, c.flag)...)
			// validate lists it as a finding: the place, then the message.
			if r.Code == 0 || !strings.Contains(r.ErrOut, c.at) || !strings.Contains(r.ErrOut, c.want) {
				t.Errorf("%s %s: exit %d, want %s and %q in: %.600s", name, c.flag, r.Code, c.at, c.want, r.ErrOut)
			}
			if name != "validate" && !strings.Contains(r.ErrOut, c.at+": "+c.want) {
				t.Errorf("%s %s: want %s: %s in: %.600s", name, c.flag, c.at, c.want, r.ErrOut)
			}
		}
	}
	// The template commands: convert-template reads a catalog file or
	// directory, render-template a template of catalog blobs.
	tmpl := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(tmpl, []byte(`{"schema":"olm.template.basic","entries":[`+"\n"+`{"schema":"olm.package","name":"p","properties":[{"type":"x","value":`+strings.Repeat("[", 9989)+strings.Repeat("]", 9989)+"}]}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"convert-template file": {[]string{"alpha", "convert-template", "basic", filepath.Join(deep, "catalog.json")}, "catalog.json:2: a value here is nested more than 100 deep"},
		"convert-template dir":  {[]string{"alpha", "convert-template", "basic", deep}, "catalog.json:2: a value here is nested more than 100 deep"},
		"render-template":       {[]string{"alpha", "render-template", "basic", tmpl}, "t.json:2: entries[0].properties[0].value"},
	} {
		if r := o.Run(c.args...); r.Code == 0 || !strings.Contains(r.ErrOut, c.want) || !strings.Contains(r.ErrOut, "nested more than 100 deep") {
			t.Errorf("%s: exit %d, want %q in: %.600s", name, r.Code, c.want, r.ErrOut)
		}
	}
	// 0 turns the count off.
	if r := o.Run("render", many, "--max-blobs", "0"); r.Code != 0 {
		t.Errorf("--max-blobs 0: exit %d: %s", r.Code, r.ErrOut)
	}
}
