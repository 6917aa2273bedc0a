package registry

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"google.golang.org/protobuf/proto"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/registry/replay"
)

// A database grown one add at a time (index add rewrites a package's channel
// rows in place, between other packages' rows) answers every recorded query
// exactly as the database one call writes: the same messages in the same
// order, the same errors.
func TestGrownDatabaseAnswersAsOneCall(t *testing.T) {
	shared := sharedDir(t)
	for _, name := range []string{"etcd.replaces", "kubedb-installer.semver-skippatch", "marin3r.semver",
		"node-healthcheck-operator.semver", "skupper-operator.replaces"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pkg, mode, _ := strings.Cut(name, ".")
			rec := replay.Load(t, filepath.Join(shared, "reference", "grpc", name+".json"))
			bundles := versionOrder(t, filepath.Join(shared, "corpus", "real", pkg))
			ctx := context.Background()
			opts := index.AddOptions{Mode: index.Mode(mode)}

			grownPath, onePath := filepath.Join(t.TempDir(), "grown.db"), filepath.Join(t.TempDir(), "one.db")
			grown, err := index.Create(grownPath)
			if err != nil {
				t.Fatal(err)
			}
			var all []index.LoadedBundle
			for i, lb := range bundles {
				fill := filler(t, i)
				all = append(all, lb, fill)
				if _, err := grown.Add(ctx, []index.LoadedBundle{lb, fill}, opts); err != nil {
					t.Fatalf("add %s: %v", lb.BundlePath, err)
				}
			}
			one, err := index.Create(onePath)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := one.Add(ctx, all, opts); err != nil {
				t.Fatal(err)
			}
			for _, db := range []*index.DB{grown, one} {
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}

			g := startServer(t, Options{DB: grownPath})
			o := startServer(t, Options{DB: onePath})
			for _, q := range rec.Queries {
				got, gerr := replay.Call(t, g.conn, q.Method, q.Request)
				want, werr := replay.Call(t, o.conn, q.Method, q.Request)
				if fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Errorf("%s %s: grown: %v, one call: %v", q.Method, q.Request, gerr, werr)
					continue
				}
				if len(got) != len(want) {
					t.Errorf("%s %s: grown answers %d messages, one call %d", q.Method, q.Request, len(got), len(want))
					continue
				}
				for i := range got {
					if !proto.Equal(got[i], want[i]) {
						t.Errorf("%s %s: message %d differs:\ngrown:    %v\none call: %v", q.Method, q.Request, i, got[i], want[i])
						break
					}
				}
			}
		})
	}
}

// versionOrder loads the bundles of a corpus package, lowest version first,
// so that each add finds what it replaces.
func versionOrder(t *testing.T, dir string) []index.LoadedBundle {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type loaded struct {
		lb index.LoadedBundle
		v  index.Version
	}
	var out []loaded
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := bundle.LoadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lb := index.LoadedBundle{Bundle: b, BundlePath: "example.com/" + filepath.Base(dir) + "-bundle:" + e.Name()}
		c, err := index.ContentOf(lb)
		if err != nil {
			t.Fatal(err)
		}
		v, err := index.ParseVersion(c.Version, c.Release)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, loaded{lb, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].v.Compare(out[j].v) < 0 })
	lbs := make([]index.LoadedBundle, len(out))
	for i, l := range out {
		lbs[i] = l.lb
	}
	return lbs
}

// filler is the repository's example bundle renamed to package filler<i>.
func filler(t *testing.T, i int) index.LoadedBundle {
	t.Helper()
	src := os.DirFS("../../testdata/bundles/valid")
	fsys := fstest.MapFS{}
	name := fmt.Sprintf("filler%d", i)
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		fsys[strings.ReplaceAll(p, "example-operator", name)] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(string(data), "example-operator", name))}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return index.LoadedBundle{Bundle: b, BundlePath: "example.com/" + name + "-bundle:0.1.0"}
}
