package catalogql

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bigSource is a catalog of n bundles of props properties each (about
// 100 bytes a property), counting the pages read.
func bigSource(n, props int) *countingSource {
	var blobs []string
	for i := range n {
		var p []string
		for j := range props {
			p = append(p, fmt.Sprintf(`{"type":"olm.gvk","value":{"group":"g%d.example.com","kind":"Kind%d","version":"v1alpha%d"}}`, j, j, i))
		}
		blobs = append(blobs, fmt.Sprintf(`{"schema":"olm.bundle","name":"b%d","package":"p","properties":[%s]}`, i, strings.Join(p, ",")))
	}
	return &countingSource{memSource: source(blobs...)}
}

type countingSource struct {
	*memSource
	pages   atomic.Int64
	entered chan struct{} // when set, told of each page read
	release chan struct{} // when set, each page waits for it
}

func (c *countingSource) SchemaBlobs(schema string, offset, limit int, admit func(int64) error) ([][]byte, error) {
	c.pages.Add(1)
	if c.entered != nil {
		c.entered <- struct{}{}
	}
	if c.release != nil {
		<-c.release
	}
	return c.memSource.SchemaBlobs(schema, offset, limit, admit)
}

// heavyQuery reads 50 pages of 100 bundles with every property.
func heavyQuery() string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := range 50 {
		fmt.Fprintf(&b, "a%d: olmbundles(limit: 100) { name properties { type value } } ", i)
	}
	b.WriteString("}")
	return b.String()
}

// waitGoroutines polls until at most want goroutines run, for up to
// 30 s; it returns how many ran last.
func waitGoroutines(want int) int {
	// A guard against a hang, not a speed bound: a stopped query's
	// goroutines end as soon as the loaded machine runs them; the pages
	// read after the answer are what tell a stopped query from one that
	// ran on.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A query whose context is cancelled, or whose time runs out, stops its
// work: graphql-go gives up waiting at once but runs its executor on, so
// the resolvers end it. Counted by the pages read after the answer (an
// executor left running reads all 50) and the goroutines left once they
// settle (polled). Not parallel: it
// counts the process's goroutines.
func TestCancelledQueryStopsItsWork(t *testing.T) {
	src := bigSource(100, 200)
	s, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	s.SetLimits(Limits{Memory: 1 << 40, Timeout: time.Hour})
	// Unstopped, this query's executor runs for seconds after the answer
	// (graphql-go v0.8.1 goes on resolving the 50 pages).
	base := runtime.NumGoroutine()
	for _, how := range []string{"cancel", "deadline"} {
		func() { // not a subtest: its goroutine would count
			src.entered = make(chan struct{}, 100)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if how == "deadline" {
				s.SetLimits(Limits{Memory: 1 << 40, Timeout: time.Nanosecond})
				defer s.SetLimits(Limits{Memory: 1 << 40, Timeout: time.Hour})
			}
			done := make(chan []byte)
			go func() {
				b, _ := json.Marshal(s.Do(ctx, heavyQuery()))
				done <- b
			}()
			if how == "cancel" {
				<-src.entered // the work has begun
				cancel()
			}
			res := <-done
			pagesAtAnswer := src.pages.Load()
			want := map[string]string{"cancel": "context canceled", "deadline": "context deadline exceeded"}[how]
			if !strings.Contains(string(res), want) || strings.Contains(string(res), `"a0"`) {
				t.Errorf("answer %.300s, want only the error %q", res, want)
			}
			if n := waitGoroutines(base); n > base {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines 30 s after the %s, %d before the query:\n%s", n, how, base, buf[:runtime.Stack(buf, true)])
			}
			if p := src.pages.Load(); p > pagesAtAnswer+1 || p >= 50 {
				t.Errorf("%d pages read after the %s (%d when answered), of 50", p, how, pagesAtAnswer)
			}
			src.pages.Store(0)
		}()
	}
}

// A query past its memory budget is refused with an error and no data,
// having read and decoded only about its budget; one within it answers.
func TestMemoryBudget(t *testing.T) {
	t.Parallel()
	src := bigSource(100, 200) // 20 KB a bundle
	s, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	s.SetLimits(Limits{Memory: 4 << 20})
	res := s.Do(context.Background(), heavyQuery())
	if res.Data != nil || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "memory budget of 4 MiB") {
		t.Errorf("over budget: data %v, errors %+v", res.Data != nil, res.Errors)
	}
	if p := src.pages.Load(); p > 2 {
		t.Errorf("%d pages read past a budget the first page exhausts", p)
	}
	res = s.Do(context.Background(), `{ olmbundles(limit: 5) { name properties { type } } }`)
	if len(res.Errors) != 0 || res.Data == nil {
		t.Errorf("within budget: %+v", res.Errors)
	}
	// The default budget bounds what the heavy query allocates in all
	// (generously: unbounded, it allocates gigabytes).
	s.SetLimits(Limits{Timeout: time.Hour})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() { // samples the heap while the query runs
		var m runtime.MemStats
		var top uint64
		for {
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapAlloc)
			select {
			case <-stop:
				peak <- top
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	res = s.Do(context.Background(), heavyQuery())
	close(stop)
	heapPeak := <-peak - before.HeapAlloc
	runtime.ReadMemStats(&after)
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "memory budget of 64 MiB") {
		t.Errorf("default budget: %+v", res.Errors)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > 1<<30 {
		t.Errorf("the refused query allocated %d MiB", alloc>>20)
	}
	t.Logf("50 pages of 100 bundles of 20 KB, refused past the 64 MiB budget: %d MiB allocated, heap peak %d MiB above the start (sampled), %d pages read", alloc>>20, heapPeak>>20, src.pages.Load())
}

// At most Concurrency queries run at once; the next waits QueueWait for a
// turn, then is answered 429 with Retry-After, and gets its turn once one
// ends. Refused queries take no turn.
func TestHandlerConcurrency(t *testing.T) {
	t.Parallel()
	src := bigSource(3, 1)
	s, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	src.entered, src.release = make(chan struct{}, 10), make(chan struct{}, 10)
	srv := httptest.NewServer(Handler(s, HandlerOptions{Concurrency: 1, QueueWait: 20 * time.Millisecond}))
	defer srv.Close()
	post := func(q string) (*http.Response, string) {
		body, _ := json.Marshal(map[string]string{"query": q})
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Error(err)
			return nil, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	first := make(chan string)
	go func() {
		_, b := post(`{ olmbundles { name } }`)
		first <- b
	}()
	<-src.entered // the first holds the only turn
	resp, body := post(`{ olmbundles { name } }`)
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "--http-graphql-concurrency") {
		t.Errorf("second query: %v %q", resp, body)
	}
	if resp, body := post(`fragment A on Query { ...A } { ...A }`); resp == nil || resp.StatusCode != http.StatusOK || !strings.Contains(body, "within itself") {
		t.Errorf("a refused query beside it: %v %q", resp, body)
	}
	src.release <- struct{}{}
	if b := <-first; !strings.Contains(b, `"b2"`) {
		t.Errorf("first query: %s", b)
	}
	src.release <- struct{}{}
	if resp, body := post(`{ olmbundles { name } }`); resp == nil || resp.StatusCode != http.StatusOK || !strings.Contains(body, `"b2"`) {
		t.Errorf("after the first: %v %q", resp, body)
	}
}
