package list_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/shareddata"
)

// TestListDirInPackages (issue 40, item 6): a catalog directory is listed
// a package at a time; packages, channels and bundles, of every package
// or one, print what the catalog read whole lists, byte for byte, with
// the packages spread over files (every reference render, shuffled over
// five files, with a channel of no package among them).
func TestListDirInPackages(t *testing.T) {
	t.Parallel()
	shareddata.Require(t, "reference", "index")
	names, err := filepath.Glob(filepath.Join(shareddata.Root(), "reference", "index", "*.fbc.json"))
	require.NoError(t, err)
	require.NotEmpty(t, names)
	var blobs [][]byte
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			blobs = append(blobs, raw)
		}
	}
	blobs = append(blobs, []byte(`{"schema":"olm.channel","name":"orphan","package":"","entries":[{"name":"x"}]}`))
	dir := t.TempDir()
	files := []string{"a.json", "b/c.json", "b/d/e.json", "f/g.json", "z.json"}
	out := make([]bytes.Buffer, len(files))
	r := rand.New(rand.NewPCG(7, 7))
	for _, i := range r.Perm(len(blobs)) {
		f := r.IntN(len(files))
		out[f].Write(blobs[i])
		out[f].WriteByte('\n')
	}
	for i, name := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, out[i].Bytes(), 0o644))
	}
	whole, err := fbc.LoadDir(dir)
	require.NoError(t, err)

	o := cmdtest.New(t)
	for _, pkg := range []string{"", "etcd", "kubedb-installer"} {
		var want bytes.Buffer
		if pkg == "" {
			require.NoError(t, index.WritePackages(&want, graph.ListPackages(whole)))
			res := o.Run("alpha", "list", "packages", dir)
			require.Equal(t, exit.OK, res.Code, res.ErrOut)
			assert.Equal(t, want.String(), res.Out, "packages")
			want.Reset()
		}
		chans, err := graph.ListChannels(whole, pkg)
		require.NoError(t, err)
		require.NoError(t, index.WriteChannels(&want, chans))
		args := []string{"alpha", "list", "channels", dir}
		if pkg != "" {
			args = append(args, pkg)
		}
		res := o.Run(args...)
		require.Equal(t, exit.OK, res.Code, res.ErrOut)
		assert.Equal(t, want.String(), res.Out, "channels %q", pkg)

		want.Reset()
		rows, err := graph.ListBundles(whole, pkg)
		require.NoError(t, err)
		wantJSON, err := json.MarshalIndent(rows, "", "  ")
		require.NoError(t, err)
		args[2] = "bundles"
		res = o.Run(append(args, "-o", "json")...)
		require.Equal(t, exit.OK, res.Code, res.ErrOut)
		assert.JSONEq(t, string(wantJSON), res.Out, "bundles %q", pkg)
		require.NoError(t, index.WriteBundles(&want, rows))
		res = o.Run(args...)
		require.Equal(t, exit.OK, res.Code, res.ErrOut)
		assert.Equal(t, want.String(), res.Out, "bundles %q", pkg)
	}
	res := o.Run("alpha", "list", "bundles", dir, "no-such-package")
	assert.Equal(t, exit.Failed, res.Code)
	assert.Contains(t, res.ErrOut, `package "no-such-package" not found`)
}
