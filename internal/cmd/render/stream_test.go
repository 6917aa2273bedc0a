package render_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/fbc"
)

// scatter writes blobs into dir over files at the root and at several
// depths, in a shuffled order (seeded), so that most packages are spread
// over several files and directories.
func scatter(t *testing.T, dir string, blobs []json.RawMessage, seed uint64) {
	t.Helper()
	files := []string{"root.json", "a/one.json", "a/two.json", "b/c/deep.json", "z.json", "m/only.json"}
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]bytes.Buffer, len(files))
	for _, i := range r.Perm(len(blobs)) {
		f := r.IntN(len(files))
		out[f].Write(blobs[i])
		out[f].WriteByte('\n')
	}
	for i, name := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, out[i].Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// splitBlobs splits a stream of JSON objects.
func splitBlobs(t *testing.T, data []byte) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, raw)
	}
}

// TestRenderDirStreamsAsWhole: opm render DIR reads a directory a package
// at a time; what it prints is what the catalog loaded whole prints, byte
// for byte, in JSON and YAML, however the packages are spread over files
// and directories (every reference render, shuffled over six files, with
// blobs of no package and a YAML file among them).
func TestRenderDirStreamsAsWhole(t *testing.T) {
	ref := filepath.Join(sharedDir(t), "reference", "index")
	names, err := filepath.Glob(filepath.Join(ref, "*.fbc.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no reference renders in %s: %v", ref, err)
	}
	var blobs []json.RawMessage
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, splitBlobs(t, data)...)
	}
	blobs = append(blobs,
		json.RawMessage(`{"schema":"example.com/note","value":1}`),
		json.RawMessage(`{"schema":"example.com/note","value":2}`),
		json.RawMessage(`{"schema":"olm.package","name":"yaml-and-json","defaultChannel":"stable"}`))
	for _, seed := range []uint64{1, 2} {
		dir := t.TempDir()
		scatter(t, dir, blobs, seed)
		yamlPart := "---\nschema: olm.channel\nname: stable\npackage: yaml-and-json\nentries:\n- name: yaml-and-json.v1\n" +
			"---\nschema: olm.bundle\nname: yaml-and-json.v1\npackage: yaml-and-json\nimage: example.com/y:1\nproperties: []\n"
		if err := os.WriteFile(filepath.Join(dir, "a", "y.yaml"), []byte(yamlPart), 0o644); err != nil {
			t.Fatal(err)
		}
		whole, err := fbc.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		o := cmdtest.New(t)
		for _, format := range []fbc.Format{fbc.FormatJSON, fbc.FormatYAML} {
			var want bytes.Buffer
			if err := fbc.Write(&want, whole, format); err != nil {
				t.Fatal(err)
			}
			r := o.Run("render", dir, "-o", string(format))
			if r.Code != 0 {
				t.Fatalf("render -o %s: exit %d: %s", format, r.Code, r.ErrOut)
			}
			if r.Out != want.String() {
				t.Fatalf("seed %d, -o %s: render of the directory differs from the catalog loaded whole at byte %d of %d",
					seed, format, firstDiff(r.Out, want.String()), want.Len())
			}
		}
	}
}

// TestRenderDirProblemsAsWhole: a directory whose packages fail to load
// prints nothing on stdout, and reports every problem, as the catalog
// loaded whole reports them, though the packages before them were read.
func TestRenderDirProblemsAsWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"a/catalog.json": `{"schema":"olm.package","name":"a","defaultChannel":"s"}` + "\n" +
			`{"schema":"olm.channel","name":"s","package":"a","entries":[{"name":"a.v1"}]}` + "\n" +
			`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"example.com/a:1","properties":[]}` + "\n",
		"m/catalog.json": `{"schema":"olm.package","name":"m","defaultChannel":"s"}` + "\n" +
			`{"schema":"olm.bundle","name":"m.v1","package":"m","image":"example.com/m:1","properties":{"not":"a list"}}` + "\n",
		"z/catalog.json": `{"schema":"olm.package","name":"z","defaultChannel":"s"}` + "\n" +
			`{"schema":"olm.channel","name":"s","package":"z","entries":"none"}` + "\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, loadErr := fbc.LoadDir(dir)
	if loadErr == nil {
		t.Fatal("the fixture loads without a problem")
	}
	r := cmdtest.New(t).Run("render", dir)
	if r.Code == 0 || r.Out != "" {
		t.Fatalf("render: exit %d, stdout %.200q", r.Code, r.Out)
	}
	if !strings.Contains(r.ErrOut, loadErr.Error()) {
		t.Errorf("render's problems are not the whole load's:\nrender: %s\nload: %s", r.ErrOut, loadErr)
	}
}
