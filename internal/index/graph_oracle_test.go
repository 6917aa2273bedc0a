package index_test

// The commands list and draw catalogs from the catalog model
// (internal/fbc/graph); this holds them to what the tables of the same
// database say (the oracles in list_oracle_test.go and
// rendergraph_oracle_test.go).

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/graph/mermaidform"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/shareddata"
)

func loadFile(t *testing.T, path string) *fbc.Catalog {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &fbc.Catalog{}
	if err := c.LoadFile(filepath.Base(path), data); err != nil {
		t.Fatal(err)
	}
	return c
}

// Upstream's render of each reference database, read through
// internal/fbc/graph, lists and draws exactly what the sqlite reader does from the database.
func TestReferenceRendersMatchDatabases(t *testing.T) {
	dir := shareddata.Require(t, "reference", "index")
	dbs, _ := filepath.Glob(filepath.Join(dir, "*.db"))
	if len(dbs) == 0 {
		t.Fatalf("no databases in %s", dir)
	}
	ctx := context.Background()
	for _, dbPath := range dbs {
		name := strings.TrimSuffix(filepath.Base(dbPath), ".db")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := loadFile(t, strings.TrimSuffix(dbPath, ".db")+".fbc.json")
			db, err := index.OpenReadOnly(dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = db.Close() }()

			var want, got bytes.Buffer
			wantRows, err := db.ListBundles(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			gotRows, err := graph.ListBundles(c, "")
			if err != nil {
				t.Fatal(err)
			}
			_ = index.WriteBundles(&want, wantRows)
			_ = index.WriteBundles(&got, gotRows)
			if got.String() != want.String() {
				t.Errorf("bundles\n%s\nfrom the database\n%s", got.String(), want.String())
			}

			want.Reset()
			got.Reset()
			wantChans, _ := db.ListChannels(ctx, "")
			gotChans, _ := graph.ListChannels(c, "")
			_ = index.WriteChannels(&want, wantChans)
			_ = index.WriteChannels(&got, gotChans)
			if got.String() != want.String() {
				t.Errorf("channels\n%s\nfrom the database\n%s", got.String(), want.String())
			}

			want.Reset()
			got.Reset()
			wantPkgs, _ := db.ListPackages(ctx)
			_ = index.WritePackages(&want, wantPkgs)
			_ = index.WritePackages(&got, graph.ListPackages(c))
			if got.String() != want.String() {
				t.Errorf("packages\n%s\nfrom the database\n%s", got.String(), want.String())
			}

			want.Reset()
			got.Reset()
			if _, err := db.RenderGraph(ctx, &want, index.GraphOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := graph.WriteMermaid(&got, c, graph.MermaidOptions{V0Semantics: true}); err != nil {
				t.Fatal(err)
			}
			// opm generates ids and draws a skipRange as one node:
			// compare what is drawn.
			gf, err := mermaidform.Form(got.String())
			if err != nil {
				t.Fatal(err)
			}
			wf, err := mermaidform.Form(want.String())
			if err != nil {
				t.Fatal(err)
			}
			if gf != wf {
				t.Errorf("graph\n%s\nfrom the database\n%s", gf, wf)
			}
		})
	}
}
