package index

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

var allModes = []Mode{ModeReplaces, ModeSemver, ModeSemverSkipPatch}

// randomPackage makes n bundles with distinct versions and random channels,
// replaces and skips (mostly downward; sometimes upward or dangling, which
// must then be refused).
func randomPackage(r *rand.Rand, n int) []*node {
	pool := map[string]bool{}
	var nodes []*node
	for len(nodes) < n {
		vs := fmt.Sprintf("%d.%d.%d", r.Intn(3), r.Intn(3), r.Intn(4))
		if r.Intn(5) == 0 {
			vs += []string{"-rc.1", "-alpha", "-1"}[r.Intn(3)]
		}
		rel := ""
		if r.Intn(4) == 0 {
			rel = []string{"1", "2", "10", "alpha", "alpha.1"}[r.Intn(5)]
		}
		if pool[vs+"/"+rel] {
			continue
		}
		pool[vs+"/"+rel] = true
		v, err := ParseVersion(vs, rel)
		if err != nil {
			panic(err)
		}
		name := "op.v" + vs
		if rel != "" {
			name = "op-v" + vs + "-" + rel
		}
		var chans []string
		for _, c := range []string{"alpha", "beta", "stable"} {
			if r.Intn(2) == 0 {
				chans = append(chans, c)
			}
		}
		if len(chans) == 0 {
			chans = []string{"stable"}
		}
		nodes = append(nodes, &node{Name: name, Version: v, Channels: chans, New: true})
	}
	SortBundles(nodes)
	for i, nd := range nodes {
		if i > 0 && r.Intn(4) != 0 {
			j := i - 1 - r.Intn(min(i, 3))
			nd.Replaces = nodes[j].Name
		}
		if r.Intn(20) == 0 && i+1 < len(nodes) {
			nd.Replaces = nodes[i+1+r.Intn(len(nodes)-i-1)].Name // upward: a cycle or two heads
		}
		if r.Intn(25) == 0 {
			nd.Replaces = "op.v9.9.9-missing"
		}
		for k := 0; k < r.Intn(3); k++ {
			if i > 0 {
				nd.Skips = append(nd.Skips, nodes[r.Intn(i)].Name)
			} else {
				nd.Skips = append(nd.Skips, "op.v0.0.0-gone")
			}
		}
	}
	return nodes
}

func cloneNodes(ns []*node) []*node {
	out := make([]*node, len(ns))
	for i, n := range ns {
		c := *n
		c.Skips = append([]string{}, n.Skips...)
		c.Channels = append([]string{}, n.Channels...)
		out[i] = &c
	}
	return out
}

// checkInvariants verifies a built graph: the head is the highest member,
// there is no cycle, every entry is reachable from the head, every member is
// in the channel, and in semver modes every edge goes down in version.
func checkInvariants(t *testing.T, nodes []*node, graph []chanGraph, mode Mode) {
	t.Helper()
	byName := map[string]*node{}
	members := map[string][]*node{}
	for _, n := range nodes {
		byName[n.Name] = n
		for _, c := range n.Channels {
			members[c] = append(members[c], n)
		}
	}
	if len(graph) != len(members) {
		t.Fatalf("%d channels, want %d", len(graph), len(members))
	}
	for _, g := range graph {
		ms := members[g.Name]
		top := ms[0]
		for _, m := range ms {
			if CompareBundles(m, top) > 0 {
				top = m
			}
		}
		if g.Head != top.Name {
			t.Errorf("channel %s: head %s, highest member %s", g.Name, g.Head, top.Name)
		}
		if g.Entries[0].Bundle != g.Head || g.Entries[0].Depth != 0 {
			t.Errorf("channel %s: first entry %+v", g.Name, g.Entries[0])
		}
		adj := map[string][]string{}
		for i, e := range g.Entries {
			if i > 0 && e.Depth <= 0 {
				t.Errorf("channel %s: entry %d depth %d", g.Name, i, e.Depth)
			}
			if e.Replaces >= len(g.Entries) {
				t.Fatalf("channel %s: bad replaces index", g.Name)
			}
		}
		for _, e := range g.Edges() {
			adj[e[0]] = append(adj[e[0]], e[1])
			from, to := byName[e[0]], byName[e[1]]
			if mode != ModeReplaces && from != nil && to != nil && CompareBundles(from, to) <= 0 {
				t.Errorf("channel %s: edge %s -> %s does not go down", g.Name, e[0], e[1])
			}
		}
		// Reachability from the head.
		seen := map[string]bool{g.Head: true}
		queue := []string{g.Head}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, y := range adj[x] {
				if !seen[y] {
					seen[y] = true
					queue = append(queue, y)
				}
			}
		}
		for _, e := range g.Entries {
			if !seen[e.Bundle] {
				t.Errorf("channel %s: entry %s not reachable from head %s", g.Name, e.Bundle, g.Head)
			}
		}
		for _, m := range ms {
			if !seen[m.Name] {
				t.Errorf("channel %s: member %s not in the graph", g.Name, m.Name)
			}
		}
		// No cycle among real bundles (Kahn's algorithm).
		indeg := map[string]int{}
		for x, ys := range adj {
			if byName[x] == nil {
				continue
			}
			indeg[x] += 0
			for _, y := range ys {
				if byName[y] != nil {
					indeg[y]++
				}
			}
		}
		var ready []string
		for x, d := range indeg {
			if d == 0 {
				ready = append(ready, x)
			}
		}
		done := 0
		for len(ready) > 0 {
			x := ready[0]
			ready = ready[1:]
			done++
			for _, y := range adj[x] {
				if byName[y] == nil {
					continue
				}
				if indeg[y]--; indeg[y] == 0 {
					ready = append(ready, y)
				}
			}
		}
		if done != len(indeg) {
			t.Errorf("channel %s: cycle among %d bundles", g.Name, len(indeg)-done)
		}
	}
}

func TestGraphProperties(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	ok, refused := 0, 0
	for i := 0; i < 3000; i++ {
		mode := allModes[r.Intn(len(allModes))]
		nodes := randomPackage(r, 1+r.Intn(14))
		graph, errs := buildGraph("op", cloneNodes(nodes), mode)
		if len(errs) > 0 {
			refused++
			if mode != ModeReplaces {
				t.Fatalf("semver mode refused: %v", errs[0])
			}
			for _, e := range errs {
				if len(e.Blame) == 0 {
					t.Errorf("error blames no bundle: %v", e)
				}
			}
			continue
		}
		ok++
		checkInvariants(t, nodes, graph, mode)
		// The same bundles in another order give the same graph.
		shuffled := cloneNodes(nodes)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again, errs := buildGraph("op", shuffled, mode)
		if len(errs) > 0 || !reflect.DeepEqual(graph, again) {
			t.Fatalf("order changed the graph (%v)", errs)
		}
		if t.Failed() {
			t.Fatalf("case %d (%s): %+v", i, mode, nodes)
		}
	}
	t.Logf("%d graphs checked, %d refused", ok, refused)
	if ok < 1000 || refused < 100 {
		t.Errorf("generator is off: %d ok, %d refused", ok, refused)
	}
}

// Random packages through the database, read back with Package.
func TestGraphPropertiesThroughDatabase(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for i := 0; i < 40; i++ {
		mode := allModes[i%len(allModes)]
		nodes := randomPackage(r, 2+r.Intn(8))
		var specs []spec
		for _, n := range nodes {
			s := spec{name: n.Name, version: n.Version.Semver.String(), release: n.Version.Release.String(), replaces: n.Replaces, skips: n.Skips}
			s.channels = strings.Join(n.Channels, ",")
			specs = append(specs, s)
		}
		db, _ := newDB(t)
		_, err := db.Add(context.Background(), loadAll(t, specs...), AddOptions{Mode: mode})
		graph, errs := buildGraph("op", cloneNodes(nodes), mode)
		if (err != nil) != (len(errs) > 0) {
			t.Fatalf("database and builder disagree: %v / %v", err, errs)
		}
		if err != nil {
			continue
		}
		p, err := db.Package(context.Background(), "op")
		if err != nil {
			t.Fatal(err)
		}
		for k, g := range graph {
			c := p.Channels[k]
			if c.Name != g.Name || c.Head != g.Head {
				t.Fatalf("channel %s head %s, builder %s %s", c.Name, c.Head, g.Name, g.Head)
			}
			var want []Edge
			for _, e := range g.Edges() {
				want = append(want, Edge{e[0], e[1]})
			}
			sort.Slice(want, func(i, j int) bool {
				if want[i].From != want[j].From {
					return want[i].From < want[j].From
				}
				return want[i].To < want[j].To
			})
			if !reflect.DeepEqual(want, c.Edges) && (len(want) != 0 || len(c.Edges) != 0) {
				t.Fatalf("channel %s edges %v, builder %v", c.Name, c.Edges, want)
			}
		}
	}
}

// FuzzGraph builds graphs from fuzzed package shapes.
func FuzzGraph(f *testing.F) {
	f.Add(int64(1), uint8(5), uint8(0))
	f.Add(int64(2), uint8(12), uint8(1))
	f.Add(int64(3), uint8(9), uint8(2))
	f.Fuzz(func(t *testing.T, seed int64, n, m uint8) {
		r := rand.New(rand.NewSource(seed))
		mode := allModes[int(m)%len(allModes)]
		nodes := randomPackage(r, 1+int(n)%20)
		graph, errs := buildGraph("op", cloneNodes(nodes), mode)
		if len(errs) == 0 {
			checkInvariants(t, nodes, graph, mode)
		} else if mode != ModeReplaces {
			t.Fatalf("semver mode refused: %v", errs[0])
		}
	})
}
