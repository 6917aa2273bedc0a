package catalogdiff

import (
	"context"
	"database/sql"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	_ "github.com/mattn/go-sqlite3" // read the reference databases directly

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/shareddata"
)

// Pairs of reference databases of one package built in different modes:
// the same bundles, different graphs (etcd replaces/semver: none differ).
var referencePairs = [][2]string{
	{"etcd.replaces", "etcd.semver"},
	{"etcd.replaces", "etcd.semver-skippatch"},
	{"pelorus-operator.replaces", "pelorus-operator.semver"},
	{"skupper-operator.replaces", "skupper-operator.semver"},
	{"kubedb-installer.semver", "kubedb-installer.replaces"},
}

// TestReferencePairsAgainstSQL: the diff of two reference databases lists
// exactly the edges, bundles, heads and default channels that differ, each
// read here straight from the databases' tables.
func TestReferencePairsAgainstSQL(t *testing.T) {
	dir := shareddata.Require(t, "reference", "index")
	for _, pair := range referencePairs {
		for _, swap := range []bool{false, true} {
			oldName, newName := pair[0], pair[1]
			if swap {
				oldName, newName = newName, oldName
			}
			t.Run(oldName+"→"+newName, func(t *testing.T) {
				t.Parallel()
				oldDB, newDB := filepath.Join(dir, oldName+".db"), filepath.Join(dir, newName+".db")
				res := diffFiles(t, oldDB, newDB)
				o, n := readTables(t, oldDB), readTables(t, newDB)

				var gotAdded, gotRemoved []string
				heads := map[string]Change{}
				for _, p := range res.Packages {
					for _, c := range p.Channels {
						for _, e := range c.EdgesAdded {
							gotAdded = append(gotAdded, c.Name+"|"+e.From+"|"+e.To+"|"+e.Kind)
						}
						for _, e := range c.EdgesRemoved {
							gotRemoved = append(gotRemoved, c.Name+"|"+e.From+"|"+e.To+"|"+e.Kind)
						}
						if c.Head != nil {
							heads[c.Name] = *c.Head
						}
					}
				}
				assertSet(t, "edges added", gotAdded, minus(n.edges, o.edges))
				assertSet(t, "edges removed", gotRemoved, minus(o.edges, n.edges))

				var bAdded, bRemoved []string
				for _, p := range res.Packages {
					for _, b := range p.BundlesAdded {
						bAdded = append(bAdded, b.Name)
					}
					for _, b := range p.BundlesRemoved {
						bRemoved = append(bRemoved, b.Name)
					}
				}
				assertSet(t, "bundles added", bAdded, minus(n.bundles, o.bundles))
				assertSet(t, "bundles removed", bRemoved, minus(o.bundles, n.bundles))

				for ch, oh := range o.heads {
					nh, ok := n.heads[ch]
					if !ok {
						continue
					}
					if got, moved := heads[ch]; moved != (oh != nh) || (moved && (got.Old != oh || got.New != nh)) {
						t.Errorf("channel %s: head %s → %s in the tables, diff says %+v (moved %v)", ch, oh, nh, got, moved)
					}
				}
				var def *Change
				if len(res.Packages) == 1 {
					def = res.Packages[0].DefaultChannel
				}
				if (def != nil) != (o.def != n.def) || (def != nil && (def.Old != o.def || def.New != n.def)) {
					t.Errorf("default channel %s → %s in the tables, diff says %+v", o.def, n.def, def)
				}
				if res.Equal != (len(res.Packages) == 0) {
					t.Errorf("equal %v with %d packages", res.Equal, len(res.Packages))
				}
			})
		}
	}
}

// TestReferenceDatabaseEqualsItsRender: a database and upstream's render of
// it are the same catalog.
func TestReferenceDatabaseEqualsItsRender(t *testing.T) {
	dir := shareddata.Require(t, "reference", "index")
	for _, name := range []string{"etcd.replaces", "kubedb-installer.semver", "ibmcloud-operator.replaces"} {
		db, err := renderDB(filepath.Join(dir, name+".db"))
		if err != nil {
			t.Fatal(err)
		}
		c := loadJSON(t, filepath.Join(dir, name+".fbc.json"))
		res, err := Diff(db, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Equal {
			t.Errorf("%s: database and its render differ: %+v", name, res.Packages)
		}
	}
}

func renderDB(path string) (*fbc.Catalog, error) {
	c, _, err := fbc.RenderIndexFile(context.Background(), path, fbc.RenderOptions{})
	return c, err
}

func diffFiles(t *testing.T, oldDB, newDB string) *Result {
	t.Helper()
	o, err := renderDB(oldDB)
	if err != nil {
		t.Fatal(err)
	}
	n, err := renderDB(newDB)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Diff(o, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type tables struct {
	def     string
	edges   []string // channel|from|to|kind
	bundles []string
	heads   map[string]string
}

// readTables reads a database's graph from its tables: channel_entry rows
// pointing at a row of the same depth are skips; the one pointing further
// down from a bundle's row nearest the head is its replaces; a bundle's
// skipRange covers the other bundles of its channel whose version it
// matches.
func readTables(t *testing.T, path string) tables {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var out tables
	query := func(q string, f func(*sql.Rows) error) {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			if err := f(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.QueryRow(`SELECT default_channel FROM package`).Scan(&out.def); err != nil {
		t.Fatal(err)
	}
	str := func(dst *[]string) func(*sql.Rows) error {
		return func(r *sql.Rows) error {
			var s string
			if err := r.Scan(&s); err != nil {
				return err
			}
			*dst = append(*dst, s)
			return nil
		}
	}
	query(`SELECT name FROM operatorbundle`, str(&out.bundles))
	query(`SELECT DISTINCT e.channel_name || '|' || r.operatorbundle_name || '|' || e.operatorbundle_name || '|skips'
		FROM channel_entry e JOIN channel_entry r ON r.entry_id = e.replaces
		WHERE r.depth = e.depth AND e.operatorbundle_name IN (SELECT name FROM operatorbundle)`, str(&out.edges))
	query(`SELECT DISTINCT e.channel_name || '|' || r.operatorbundle_name || '|' || e.operatorbundle_name || '|replaces'
		FROM channel_entry e JOIN channel_entry r ON r.entry_id = e.replaces
		WHERE r.depth != e.depth AND e.operatorbundle_name IN (SELECT name FROM operatorbundle)
		AND e.entry_id = (SELECT e2.entry_id FROM channel_entry e2 JOIN channel_entry r2 ON r2.entry_id = e2.replaces
			WHERE e2.channel_name = e.channel_name AND e2.package_name = e.package_name
			AND e2.operatorbundle_name = e.operatorbundle_name AND r2.depth != e2.depth
			ORDER BY e2.depth, e2.entry_id LIMIT 1)`, str(&out.edges))

	type member struct{ ch, name, version, skipRange string }
	var members []member
	query(`SELECT DISTINCT e.channel_name, b.name, b.version, IFNULL(b.skiprange, '')
		FROM channel_entry e JOIN operatorbundle b ON b.name = e.operatorbundle_name`, func(r *sql.Rows) error {
		var m member
		if err := r.Scan(&m.ch, &m.name, &m.version, &m.skipRange); err != nil {
			return err
		}
		members = append(members, m)
		return nil
	})
	for _, to := range members {
		if to.skipRange == "" {
			continue
		}
		inRange, err := semver.ParseRange(to.skipRange)
		if err != nil {
			continue
		}
		for _, from := range members {
			v, err := semver.Parse(from.version)
			if from.ch == to.ch && from.name != to.name && err == nil && inRange(v) {
				out.edges = append(out.edges, to.ch+"|"+from.name+"|"+to.name+"|skipRange")
			}
		}
	}
	out.heads = map[string]string{}
	query(`SELECT name, IFNULL(head_operatorbundle_name, '') FROM channel`, func(r *sql.Rows) error {
		var ch, h string
		if err := r.Scan(&ch, &h); err != nil {
			return err
		}
		out.heads[ch] = h
		return nil
	})
	return out
}

func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func assertSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %d: %v\nwant %d: %v", what, len(got), got, len(want), want)
	}
}
