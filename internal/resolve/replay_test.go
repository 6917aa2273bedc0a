package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/shareddata"
)

// The replay files: questions (a Question whose catalogs name their FBC
// sources) and the answers OLM v0 gave. testdata/olmv0 holds the answers
// recorded from OLM's own resolver; testdata/rules the rule cases.

type replayCatalog struct {
	Name      string   `json:"name"`
	Namespace string   `json:"namespace"`
	Priority  int      `json:"priority"`
	Sources   []string `json:"sources"`
}

type replayQuestion struct {
	Name            string          `json:"name"`
	Namespace       string          `json:"namespace"`
	GlobalNamespace string          `json:"globalNamespace"`
	Catalogs        []replayCatalog `json:"catalogs"`
	Subscriptions   []Subscription  `json:"subscriptions"`
	Installed       []Installed     `json:"installed"`
}

type replayAnswer struct {
	Name     string `json:"name"`
	Answer   Answer `json:"answer"`
	OLMError string `json:"olmError"`
	// Alternatives are other answers OLM gave to the same question on
	// other runs (its solver takes its input in Go map order).
	Alternatives []Answer `json:"alternatives"`
	// ReasonsContain (rule cases only): per package, texts its reasons
	// must contain.
	ReasonsContain map[string][]string `json:"reasonsContain"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// catalogLoader loads catalog sources once per test.
type catalogLoader struct {
	base  string
	cache map[string]*fbc.Catalog
}

// source loads one FBC file or directory: relative to base, or under
// ../shared for "shared:PATH" (the test skips, saying why, without it).
func (l *catalogLoader) source(t *testing.T, src string) *fbc.Catalog {
	t.Helper()
	if c, ok := l.cache[src]; ok {
		return c
	}
	path := filepath.Join(l.base, src)
	if rest, ok := strings.CutPrefix(src, "shared:"); ok {
		path = shareddata.Require(t, filepath.FromSlash(rest))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("catalog source %s: %v", src, err)
	}
	var c *fbc.Catalog
	if st.IsDir() {
		c, err = fbc.LoadDir(path)
	} else {
		var data []byte
		if data, err = os.ReadFile(path); err == nil {
			c, err = fbc.Load(fstest.MapFS{filepath.Base(path): {Data: data}})
		}
	}
	if err != nil {
		t.Fatalf("load catalog source %s: %v", src, err)
	}
	l.cache[src] = c
	return c
}

// question builds the Question: each catalog the union of its sources.
func (l *catalogLoader) question(t *testing.T, rq replayQuestion) Question {
	t.Helper()
	q := Question{Namespace: rq.Namespace, GlobalNamespace: rq.GlobalNamespace, Subscriptions: rq.Subscriptions, Installed: rq.Installed}
	for _, rc := range rq.Catalogs {
		union := &fbc.Catalog{}
		for _, src := range rc.Sources {
			c := l.source(t, src)
			union.Packages = append(union.Packages, c.Packages...)
			union.Channels = append(union.Channels, c.Channels...)
			union.Bundles = append(union.Bundles, c.Bundles...)
			union.Others = append(union.Others, c.Others...)
		}
		q.Catalogs = append(q.Catalogs, Catalog{Name: rc.Name, Namespace: rc.Namespace, Priority: rc.Priority, Catalog: union})
	}
	return q
}

// compared is the part of an operator the replay compares.
type compared struct {
	Package, Bundle, Channel, Catalog, CatalogNamespace string
	Dependency                                          bool
}

func comparable(a Answer, globalNS string) []compared {
	out := make([]compared, 0, len(a.Operators))
	for _, o := range a.Operators {
		c := compared{Package: o.Package, Channel: o.Channel, Catalog: o.Catalog, CatalogNamespace: o.CatalogNamespace, Dependency: o.Dependency}
		if c.CatalogNamespace == "" {
			c.CatalogNamespace = globalNS
		}
		if o.Bundle != nil {
			c.Bundle = *o.Bundle
		} else {
			c.Bundle = "(none)"
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Package < out[j].Package })
	return out
}

// difference describes how got differs from want, "" when equal.
func difference(got, want Answer, globalNS string) string {
	var d []string
	if got.Unsatisfiable != want.Unsatisfiable {
		d = append(d, fmt.Sprintf("unsatisfiable: got %v, OLM %v", got.Unsatisfiable, want.Unsatisfiable))
	}
	g, w := comparable(got, globalNS), comparable(want, globalNS)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		d = append(d, fmt.Sprintf("operators:\n  got %+v\n  OLM %+v", g, w))
	}
	return strings.Join(d, "; ")
}

// replayCounts are a replay's figures: questions, answers equal to OLM's
// (alt of them equal to an alternative answer OLM gave on another run),
// answers that differ.
type replayCounts struct{ n, equal, alt, differ int }

// replay runs every question of dir and compares with its answers.
func replay(t *testing.T, dir string, check func(t *testing.T, name string, got Answer, want replayAnswer)) (c replayCounts) {
	t.Helper()
	var qs []replayQuestion
	var as []replayAnswer
	readJSON(t, filepath.Join(dir, "questions.json"), &qs)
	readJSON(t, filepath.Join(dir, "answers.json"), &as)
	answers := map[string]replayAnswer{}
	for _, a := range as {
		answers[a.Name] = a
	}
	l := &catalogLoader{base: dir, cache: map[string]*fbc.Catalog{}}
	for _, rq := range qs {
		want, ok := answers[rq.Name]
		if !ok {
			t.Errorf("question %s has no recorded answer", rq.Name)
			continue
		}
		c.n++
		got, err := Resolve(context.Background(), l.question(t, rq))
		if err != nil {
			t.Errorf("%s: %v", rq.Name, err)
			c.differ++
			continue
		}
		global := rq.GlobalNamespace
		if global == "" {
			global = GlobalNamespace
		}
		d := difference(got, want.Answer, global)
		if d != "" {
			for _, alt := range want.Alternatives {
				if difference(got, alt, global) == "" {
					d = ""
					c.alt++
					break
				}
			}
		}
		if d != "" {
			c.differ++
			msg := ""
			if want.OLMError != "" {
				msg = "\nOLM's error: " + want.OLMError
			}
			t.Errorf("%s differs from OLM: %s%s\nreasons: %s", rq.Name, d, msg, reasonsText(got))
			continue
		}
		c.equal++
		if check != nil {
			check(t, rq.Name, got, want)
		}
	}
	return c
}

func reasonsText(a Answer) string {
	var s []string
	for _, o := range a.Operators {
		s = append(s, o.Package+": "+strings.Join(o.Reasons, " | "))
	}
	return strings.Join(s, "\n  ")
}

// TestRules checks one case per OLM v0 rule (testdata/rules: the answers
// worked out from OLM's resolver), and the reasons given.
func TestRules(t *testing.T) {
	c := replay(t, "testdata/rules", func(t *testing.T, name string, got Answer, want replayAnswer) {
		for pkg, texts := range want.ReasonsContain {
			var reasons []string
			for _, o := range got.Operators {
				if o.Package == pkg {
					reasons = o.Reasons
				}
			}
			all := strings.Join(reasons, "\n")
			for _, text := range texts {
				if !strings.Contains(all, text) {
					t.Errorf("%s: reasons for %s lack %q:\n%s", name, pkg, text, all)
				}
			}
		}
		for _, o := range got.Operators {
			if len(o.Reasons) == 0 {
				t.Errorf("%s: no reason for %s", name, o.Package)
			}
		}
	})
	t.Logf("rule cases: %d questions, %d equal, %d differ", c.n, c.equal, c.differ)
	if c.n == 0 {
		t.Fatal("no rule cases")
	}
}
