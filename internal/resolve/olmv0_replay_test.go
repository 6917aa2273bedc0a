package resolve

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// TestOLMv0Answers replays the questions OLM v0's own resolver answered
// (testdata/olmv0: questions.json, and answers.json recorded by the
// harness under testdata/olmv0/harness) and fails on any answer that
// differs. An answer equal to one OLM gave on another run of the same
// question (OLM's solver reads its input in map order) counts as equal.
// Questions over ../shared's reference catalogs need ../shared: without
// it the test skips saying so, and fails under CI=true.
func TestOLMv0Answers(t *testing.T) {
	dir := filepath.Join("testdata", "olmv0")
	c := replay(t, dir, nil)
	t.Logf("olmv0 answers: %d questions, %d equal, %d differ, 0 skipped (%d of the equal match another answer OLM gave on another run)", c.n, c.equal, c.differ, c.alt)
	if c.n == 0 {
		t.Fatal("no questions")
	}
}

// Questions over one catalog may be asked at once: they share the
// catalog's index (run with -race).
func TestResolveConcurrently(t *testing.T) {
	var qs []replayQuestion
	readJSON(t, "testdata/rules/questions.json", &qs)
	l := &catalogLoader{base: "testdata/rules", cache: map[string]*fbc.Catalog{}}
	var questions []Question
	for _, rq := range qs {
		questions = append(questions, l.question(t, rq))
	}
	want := make([]string, len(questions))
	for i, q := range questions {
		a, err := Resolve(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = fmt.Sprint(comparable(a, "olm"))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(questions))
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, q := range questions {
				a, err := Resolve(context.Background(), q)
				if got := fmt.Sprint(comparable(a, "olm")); err != nil || got != want[i] {
					errs <- fmt.Sprintf("%s: %v %s, want %s", qs[i].Name, err, got, want[i])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
