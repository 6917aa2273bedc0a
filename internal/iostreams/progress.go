package iostreams

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress shows "pulled 12/181" on one terminal line while work runs,
// or, on a stream that is not a terminal (a CI log), as plain lines at
// most every few seconds. A nil *Progress does nothing, so callers need
// not check for a terminal.
type Progress struct {
	w     io.Writer
	verb  string
	total int

	// plain writes whole lines, at most one per every, by the clock now.
	plain bool
	every time.Duration
	now   func() time.Time
	last  time.Time
	// pending is the latest plain line not yet written.
	pending string

	mu      sync.Mutex
	n       int
	detail  func() string
	printed bool
}

// NewProgress counts total items, each done one being verb ("pulled"), on
// a terminal line. A total of 0 means unknown: the line shows the count
// alone.
func NewProgress(w io.Writer, verb string, total int) *Progress {
	return &Progress{w: w, verb: verb, total: total}
}

// DefaultPlainEvery is how often a plain progress line is written at most.
const DefaultPlainEvery = 5 * time.Second

// NewPlainProgress is NewProgress for a stream that is not a terminal:
// no control sequences, and a line of its own at most every every (by the
// clock now, time.Now when nil), the first one every after the start, so
// that a short run prints none. Finish writes the last state if a line was
// written and the state changed since: the log ends with the final figure.
func NewPlainProgress(w io.Writer, verb string, total int, every time.Duration, now func() time.Time) *Progress {
	if now == nil {
		now = time.Now
	}
	return &Progress{w: w, verb: verb, total: total, plain: true, every: every, now: now, last: now()}
}

// SetDetail adds detail() after the count on each redraw ("pulled 3/10,
// 12.5 MiB"); an empty detail adds nothing.
func (p *Progress) SetDetail(detail func() string) *Progress {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.detail = detail
	return p
}

// Step counts one item done and redraws the line.
func (p *Progress) Step() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	line := fmt.Sprintf("%s %d", p.verb, p.n)
	if p.total > 0 {
		line += fmt.Sprintf("/%d", p.total)
	}
	if p.detail != nil {
		if d := p.detail(); d != "" {
			line += ", " + d
		}
	}
	p.draw(line)
}

// Show replaces the line with text: a phase that has no count, such as a
// push.
func (p *Progress) Show(text string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(text)
}

// Tick shows text() now and then every interval, until stop is called;
// stop shows it a last time, so the final figure is what remains until
// Finish.
func (p *Progress) Tick(every time.Duration, text func() string) (stop func()) {
	if p == nil {
		return func() {}
	}
	p.Show(text())
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.Show(text())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			p.Show(text())
		})
	}
}

func (p *Progress) draw(line string) {
	if p.plain {
		p.pending = line
		if now := p.now(); now.Sub(p.last) >= p.every {
			fmt.Fprintln(p.w, line)
			p.last, p.pending, p.printed = now, "", true
		}
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.printed = true
}

// Finish erases the line, so the report starts on a clean one; a plain
// progress writes its last state instead, if it wrote any before.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.plain {
		if p.printed && p.pending != "" {
			fmt.Fprintln(p.w, p.pending)
		}
		p.pending, p.printed = "", false
		return
	}
	if p.printed {
		fmt.Fprint(p.w, "\r\033[K")
		p.printed = false
	}
}
